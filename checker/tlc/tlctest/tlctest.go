// Package tlctest gives tests the TLC jar: the one KCHECK_TLA2TOOLS names
// (make test sets it). Without it a test is skipped, unless
// KCHECK_REQUIRE_TLC=1, when it fails: CI never passes by not running TLC.
package tlctest

import (
	"os"
	"testing"
)

// Jar returns the path of the tla2tools jar, or skips (or fails) t.
func Jar(t testing.TB) string {
	t.Helper()
	jar := os.Getenv("KCHECK_TLA2TOOLS")
	if jar == "" {
		if os.Getenv("KCHECK_REQUIRE_TLC") == "1" {
			t.Fatal("KCHECK_REQUIRE_TLC=1 but KCHECK_TLA2TOOLS (the path of the tla2tools jar) is not set")
		}
		t.Skip("KCHECK_TLA2TOOLS is not set: set it to the tla2tools jar to run TLC")
	}
	return jar
}
