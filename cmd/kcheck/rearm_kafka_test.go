package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kcheck/kcheck/matrix"
)

// TestIdleRearmOnKafka takes our producer, with the idle re-arm rule and
// without it, to the scenario of producer-state expiry on a real broker
// (Kafka 4.4.0 with producer.id.expiration.ms 2 s, checked every 500 ms):
// a partition idle past the expiry, then the seed's rejection on the first
// attempt after it (spec/scenarios/ExpiryKgo.NoGap.scenario). With the rule
// the producer must be clean; without it the cell must reach the
// scenario's state and show the reorder or loss the model predicts. It
// fetches and starts Kafka, so it runs only with KCHECK_KAFKA=1 (make
// kafka-test).
func TestIdleRearmOnKafka(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
	t.Setenv("KCHECK_TEST_AS_KCHECK", "1") // the cells run this binary as kcheck (TestMain)
	dir := t.TempDir()
	out := filepath.Join(dir, "results.json")
	code, stdout, stderr := runKcheck(t, "scenarios", "run", "--dir", "../../spec/scenarios", "--root", "../..",
		"--scenario", "ExpiryKgo.NoGap", "--baseline=false", "--brokers", "4.4.0", "--clients", "ours-on,ours-norearm",
		"--shapes", "1p-one", "--keep", filepath.Join(dir, "cells"), "--json", out)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := matrix.ReadResults(f, out)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range res.Cells {
		seen[c.Client] = true
		t.Logf("%s: %s, %s, verify %s (trace %s)", c.Client, c.Reach.Status, c.What, c.Verdict, c.Trace)
		switch c.Client {
		case "ours-on":
			if c.Err != "" || c.Happened.Anomaly() || c.Verdict != "valid" {
				t.Errorf("ours-on (idle re-arm on): %s, verify %s %v, error %q; want clean", c.What, c.Verdict, c.Kinds, c.Err)
			}
		case "ours-norearm":
			if c.Err != "" || c.Reach.Status != matrix.Reached || !c.Happened.Anomaly() || c.Verdict != "violations" {
				t.Errorf("ours-norearm (idle re-arm off): %s, %s, verify %s, error %q; want the scenario reached and an anomaly verify reports",
					c.Reach.Status, c.What, c.Verdict, c.Err)
			}
		}
	}
	if !seen["ours-on"] || !seen["ours-norearm"] {
		t.Fatalf("cells for %v, want ours-on and ours-norearm", seen)
	}
}
