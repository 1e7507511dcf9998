package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/matrix"
)

// The broker axis: --brokers kfake-4.1 runs our producer, rule on and off,
// through SeedGap.NoGap on kfake started in the matrix's process; the
// expiry scenario, which needs a setting kfake lacks, is listed as skipped
// on it, with why, and has no cells. kfake is in-process: no KCHECK_KAFKA.
func TestScenariosOnKfake(t *testing.T) {
	t.Setenv("KCHECK_TEST_AS_KCHECK", "1") // the cells run this binary as kcheck (TestMain)
	dir := t.TempDir()
	out := filepath.Join(dir, "results.json")
	code, _, stderr := runKcheck(t, "scenarios", "run", "--dir", "../../spec/scenarios", "--root", "../..",
		"--scenario", "SeedGap.NoGap,ExpiryKgo.NoGap", "--brokers", "kfake-4.1", "--clients", "ours-on,ours-off",
		"--shapes", "1p-one", "--keep", filepath.Join(dir, "keep"), "--json", out, "--results", filepath.Join(dir, "results.md"))
	t.Logf("exit %d\n%s", code, stderr)
	if code != exitOK && code != exitMismatch {
		t.Fatalf("exit %d", code)
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
	if len(res.Cells) != 2 {
		t.Fatalf("%d cells, want 2 (SeedGap.NoGap, ours on and off)", len(res.Cells))
	}
	for _, c := range res.Cells {
		if c.Err != "" || c.Broker != "kfake-4.1" || c.Scenario != "SeedGap.NoGap" || c.Agreement != "agrees" || c.Predicted == "" {
			t.Errorf("cell %+v: want SeedGap.NoGap on kfake-4.1, run, verify agreeing, a prediction", c)
		}
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Broker != "kfake-4.1" || !strings.Contains(res.Skipped[0].Why, "producer.id.expiration.ms") {
		t.Errorf("skipped %+v: want the expiry scenario, on kfake-4.1, for its setting", res.Skipped)
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil || !strings.Contains(string(md), "on kfake 4.1: it needs brokers set to forget an idle producer") {
		t.Errorf("results.md: %v\n%s", err, md)
	}
}
