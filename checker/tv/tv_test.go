package tv

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kcheck/kcheck/tracer"
)

func jar(t *testing.T) string {
	t.Helper()
	j := os.Getenv("KCHECK_TLA2TOOLS")
	if j == "" {
		if os.Getenv("KCHECK_REQUIRE_TLC") == "1" {
			t.Fatal("KCHECK_REQUIRE_TLC=1 but KCHECK_TLA2TOOLS is not set")
		}
		t.Skip("KCHECK_TLA2TOOLS is not set")
	}
	return j
}

func translate(t *testing.T, path string) *Module {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := tracer.NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Translate(r)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRealTracesAccepted(t *testing.T) {
	j := jar(t)
	for _, name := range []string{"run.jsonl", "first-ack-off.jsonl"} {
		t.Run(name, func(t *testing.T) {
			m := translate(t, filepath.Join("..", "..", "traces", name))
			v, err := Check(context.Background(), m, filepath.Join("..", "..", "spec"), j, 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !v.Accepted {
				t.Fatalf("TLC rejected %s: explained up to line %d\n%s", name, v.Furthest, v.TLC.Output)
			}
			t.Logf("%s: %d TraceLog lines, %d states, %v", name, len(m.Lines), v.States, v.Duration)
		})
	}
}
