package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/matrix"
)

// Bad input to kcheck scenarios run: exit 2 and a message naming what,
// before any broker starts.
func TestScenariosRunBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "X.Y.scenario"), []byte("scenario X.Y\nbogus line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	specs := filepath.Join("..", "..", "spec", "scenarios")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dir", specs, "--scenario", "NoSuch.Thing"}, "--scenario NoSuch.Thing: no such scenario"},
		{[]string{"--dir", specs, "--clients", "ours-on,nope"}, `unknown client "nope"`},
		{[]string{"--dir", specs, "--shapes", "huge"}, `unknown shape "huge" (known: 1p-one, 16p-many, 1p-txn, 2p-deep)`},
		{[]string{"--dir", specs, "--runs", "0"}, "--runs 0"},
		{[]string{"--dir", specs, "--brokers", ""}, "--brokers"},
		{[]string{"--dir", specs, "--root", dir}, "no drivers/ there"},
		{[]string{"--dir", bad}, "X.Y.scenario:2"},
		{[]string{"--dir", filepath.Join(dir, "none")}, "none"},
		{[]string{"--dir", specs, "extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := runKcheck(t, append([]string{"scenarios", "run"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestScenariosRunFrom: --from tabulates a previous run's cells again with
// the scenario files' predictions, which decide what was worse than the
// model; bad --from files are exit 2.
func TestScenariosRunFrom(t *testing.T) {
	dir := t.TempDir()
	specs := filepath.Join("..", "..", "spec", "scenarios")
	res := &matrix.Results{Brokers: []string{"4.1.0"}, Seconds: map[string]float64{}, Schedule: map[string][]string{}, Cells: []matrix.Cell{
		{Scenario: "SeedGap.NoGap", Broker: "4.1.0", Client: "sarama", Family: "one-in-flight", Shape: "1p-one", Predicted: "stale",
			Reach: matrix.Reach{Status: matrix.Reached}, Happened: matrix.Happened{Reordered: 1}, Verdict: "violations", Agreement: matrix.Agrees},
		{Scenario: "SeedGap.NoGap", Broker: "4.1.0", Client: "java-4.3.1", Family: "java", Shape: "1p-one", Predicted: "stale",
			Reach: matrix.Reach{Status: matrix.Reached}, Happened: matrix.Happened{Reordered: 1}, Verdict: "violations", Agreement: matrix.Agrees},
	}}
	from := filepath.Join(dir, "results.json")
	if err := writeFileAtomic(from, res.WriteJSON); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "again.json")
	code, _, stderr := runKcheck(t, "scenarios", "run", "--dir", specs, "--from", from, "--json", out, "--results", filepath.Join(dir, "again.md"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	again, err := matrix.ReadResults(f, out)
	if err != nil {
		t.Fatal(err)
	}
	if c := again.Cells[0]; c.Predicted != "pass" || !c.Worse {
		t.Errorf("sarama: predicted %q, worse %v; want pass and worse (SeedGap.NoGap's one-in-flight prediction)", c.Predicted, c.Worse)
	}
	if c := again.Cells[1]; c.Predicted != "invariant:NoGap" || c.Worse {
		t.Errorf("java: predicted %q, worse %v; want invariant:NoGap, not worse", c.Predicted, c.Worse)
	}
	if again.Repredicted == "" {
		t.Error("no Repredicted time")
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"cells":[{"scenario":"Nope.Nope"}]}`), 0o644)
	for file, want := range map[string]string{filepath.Join(dir, "none.json"): "no such file", bad: `scenario "Nope.Nope" is not in the scenario files`} {
		if code, _, stderr := runKcheck(t, "scenarios", "run", "--dir", specs, "--from", file); code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("--from %s: exit %d, %q; want 2 and %q", file, code, stderr, want)
		}
	}
}
