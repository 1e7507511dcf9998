package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/matrix"
)

// TestShardMergeOnKafka shards a small matrix 3 ways (the Baseline and the
// seed's scenario, ours with the rule on and off, one shape, Kafka 4.1.0:
// 4 cells, in shards of 1, 1 and 2), runs each shard as a CI runner would,
// merges them in another order, and compares the merge with the matrix run
// whole: the same matrix, the same cells in the same order (their outcomes
// are real runs, so each run's own), the same Markdown but for the cells'
// outcomes and the times. It fetches and starts Kafka four times, so it
// runs only with KCHECK_KAFKA=1 (make kafka-test); about a minute and a
// half on two cores.
func TestShardMergeOnKafka(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
	t.Setenv("KCHECK_TEST_AS_KCHECK", "1") // the cells run this binary as kcheck (TestMain)
	dir := t.TempDir()
	args := []string{"scenarios", "run", "--dir", "../../spec/scenarios", "--root", "../..", "--scenario", "Baseline,SeedGap.NoGap",
		"--brokers", "4.1.0", "--clients", "ours-on,ours-off", "--shapes", "1p-one"}
	read := func(path string) *matrix.Results {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := matrix.ReadResults(f, path)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	runMatrix := func(name string, more ...string) *matrix.Results {
		t.Helper()
		out := filepath.Join(dir, name+".json")
		code, _, stderr := runKcheck(t, append(append(slices.Clone(args), "--keep", filepath.Join(dir, "traces-"+name), "--json", out,
			"--results", filepath.Join(dir, name+".md")), more...)...)
		if code != exitOK && code != exitMismatch {
			t.Fatalf("%s: exit %d\nstderr:\n%s", name, code, stderr)
		}
		t.Logf("%s: exit %d\n%s", name, code, stderr)
		return read(out)
	}
	whole := runMatrix("whole")
	var files []string
	for k := 1; k <= 3; k++ {
		s := runMatrix(fmt.Sprintf("shard-%d", k), "--shard", fmt.Sprintf("%d/3", k))
		if s.Shard == nil || s.Shard.K != k || s.Shard.N != 3 || s.Matrix != whole.Matrix || len(s.Cells) != []int{1, 1, 2}[k-1] {
			t.Errorf("shard %d/3: %+v of matrix %s, %d cells; want shard %d/3 of %s, %d cells", k, s.Shard, s.Matrix, len(s.Cells), k, whole.Matrix, []int{1, 1, 2}[k-1])
		}
		files = append(files, filepath.Join(dir, fmt.Sprintf("shard-%d.json", k)))
	}
	mergedJSON, mergedMD := filepath.Join(dir, "merged.json"), filepath.Join(dir, "merged.md")
	code, stdout, stderr := runKcheck(t, "scenarios", "merge", "--json", mergedJSON, "--results", mergedMD, files[2], files[0], files[1])
	merged := read(mergedJSON)
	if want := map[bool]int{true: exitOK, false: exitMismatch}[merged.Tally().OK()]; code != want || stdout != "" {
		t.Errorf("merge: exit %d, want %d; stdout %q\nstderr:\n%s", code, want, stdout, stderr)
	}
	if len(whole.Cells) != 4 || len(merged.Cells) != len(whole.Cells) {
		t.Fatalf("%d cells whole, %d merged; want 4", len(whole.Cells), len(merged.Cells))
	}
	for i, m := range merged.Cells {
		w := whole.Cells[i]
		if m.Err != "" || w.Err != "" {
			t.Errorf("cell %d could not run: merged %q, whole %q", i+1, m.Err, w.Err)
		}
		mk := matrix.CellKey{Scenario: m.Scenario, Broker: m.Broker, Client: m.Client, Shape: m.Shape, Run: m.Run}
		wk := matrix.CellKey{Scenario: w.Scenario, Broker: w.Broker, Client: w.Client, Shape: w.Shape, Run: w.Run}
		if mk != wk || m.Family != w.Family || m.Predicted != w.Predicted {
			t.Errorf("cell %d: merged %+v (%s, %s), whole %+v (%s, %s)", i+1, mk, m.Family, m.Predicted, wk, w.Family, w.Predicted)
		}
		if m.Client == "ours-on" && (m.Happened.Anomaly() || m.Verdict != "valid") {
			t.Errorf("cell %d: ours-on %s, verify %s; want clean", i+1, m.What, m.Verdict)
		}
	}
	if merged.Matrix != whole.Matrix || merged.Shard != nil || len(merged.Shards) != 3 || !slices.Equal(merged.Brokers, whole.Brokers) ||
		!slices.Equal(merged.Clients, whole.Clients) || !reflect.DeepEqual(merged.Shapes, whole.Shapes) ||
		!reflect.DeepEqual(merged.Schedule, whole.Schedule) || !reflect.DeepEqual(merged.Notes, whole.Notes) {
		t.Errorf("the merged matrix is not the whole one:\nmerged %+v\nwhole  %+v", merged, whole)
	}
	// The Markdown: the same lines but for the times and the cells' outcomes.
	if got, want := skeleton(t, mergedMD), skeleton(t, filepath.Join(dir, "whole.md")); got != want {
		t.Errorf("the merged Markdown's skeleton:\n%s\nthe whole's:\n%s", got, want)
	}
	if b, err := os.ReadFile(mergedMD); err != nil || !strings.Contains(string(b), "Merged from 3 shards") {
		t.Errorf("%s does not name its shards: %v\n%s", mergedMD, err, b)
	}
}

var (
	// what differs between two runs of one matrix: the times, the tally,
	// each cell's outcome (a row's columns after its shape) and the cells
	// worse than the model, and the merge's line naming its shards
	timesLine = regexp.MustCompile(`(?m)^(Run .*|Wall time .*|\d+ cells: .*|Merged from .*|- .*)$`)
	rowCells  = regexp.MustCompile(`(?m)^(\| [^|]+ \| [^|]+ \| [^|]+ \|).*$`)
	blanks    = regexp.MustCompile(`\n\n+`)
)

// skeleton is the Markdown at path without what differs between two runs
// of one matrix.
func skeleton(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return blanks.ReplaceAllString(rowCells.ReplaceAllString(timesLine.ReplaceAllString(string(b), ""), "$1"), "\n\n")
}
