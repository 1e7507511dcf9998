// Tests of the txn phase's report: the verdicts on intervals, and the
// table in the seed's layout from synthetic runs (no broker).

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/bench/loadgen"
)

func TestTxnVerdicts(t *testing.T) {
	iv := func(med, lo, hi float64) interval { return interval{N: 8, Median: med, Lo: lo, Hi: hi} }
	for _, c := range []struct {
		iv   interval
		want string
	}{
		{iv(1.0, 0.985, 1.02), "**met**"},
		{iv(0.97, 0.95, 0.99), "**not met**"},
		{iv(0.99, 0.97, 1.01), "**not resolved**"},
		{interval{}, "**not measured**"},
	} {
		if got := judge(c.iv, 0.98); got != c.want {
			t.Errorf("judge(%v, 0.98) = %s, want %s", c.iv, got, c.want)
		}
	}
	if got := waitVerdict(iv(10, 5, 14), 10); !strings.HasPrefix(got, "**confirmed**") {
		t.Errorf("10 ms (5-14) against a 10 ms round trip: %s", got)
	}
	if got := waitVerdict(iv(20, 16, 30), 10); !strings.HasPrefix(got, "**not confirmed**") {
		t.Errorf("20 ms (16-30) against 10 ms: %s", got)
	}
	if got := waitVerdict(iv(12, 5, 30), 10); !strings.HasPrefix(got, "**not resolved**") {
		t.Errorf("12 ms (5-30) against 10 ms: %s", got)
	}
	if got := nothingVerdict(iv(1, 0.99, 1.01), iv(1, 0.99, 1.02)); got != "**confirmed**" {
		t.Errorf("both met: %s", got)
	}
	if got := nothingVerdict(iv(1, 0.99, 1.01), iv(0.9, 0.8, 0.95)); got != "**not confirmed**" {
		t.Errorf("latency not met: %s", got)
	}
	if got := nothingVerdict(iv(1, 0.97, 1.01), iv(1, 0.99, 1.02)); got != "**not resolved**" {
		t.Errorf("one not resolved: %s", got)
	}
}

// TestReportTxn: synthetic runs give the seed's rows in its order and
// layout, the ratios paired per repeat, and the budgets' verdicts.
func TestReportTxn(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found: bench/pool.py pools the ratios")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	rate := map[string]float64{"ours-on": 1000, "ours-off": 1000, "java": 800, "ceiling": 2000}
	var runs []txnRun
	for r := range 6 {
		for _, row := range txnRows {
			for _, c := range txnClients {
				res := &loadgen.Result{RecordsPerS: rate[c] * float64(1+r%3) * float64(row.Partitions), LatencyMs: loadgen.Latency{P50: 2, P99: 9}}
				if row.PerTxn > 0 {
					res.Txns = &loadgen.Txns{Committed: 10, Records: row.PerTxn, BeginToCommit: loadgen.TxnLatency{P50: 3, P99: 7}}
				}
				runs = append(runs, txnRun{Row: row, Client: c, Repeat: r, Result: res})
			}
		}
	}
	s := &suite{p: params{TxnRepeats: 6}, path: paths{Root: root}, res: &results{Mode: "full", Phases: []string{"txn"}, Txn: runs,
		Machine: machine{Kafka: "4.4.0", JavaClient: "4.4.0"}, TxnFeature: "finalized transaction.version 2"}}
	md, err := s.report()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| Workload | Partitions | Records/txn | records/s with | records/s without | records/s Java 4.4.0 | records/s ceiling | with ÷ without |",
		"| transactional | 1 | 10 | 2000 | 2000 | 1600 | 4000 | 1.00 (1.00–1.00) | 1.25 (1.25–1.25) | 0.500 (0.500–0.500) | 0.500 (0.500–0.500) | 0.400 (0.400–0.400) | 3.00 | 3.00 | 3.00 | 3.00 | 7.00 |",
		"| idempotent | 64 | - | 128k | 128k | 102k | 256k |",
		"| transactional | 64 | 2,000 | 1.00 (1.00–1.00) | **met** | 1.25 (1.25–1.25) | **met** |",
		"The broker's finalized transaction.version 2.",
		"records/s 1.00 (1.00–1.00), p50 1.00 (1.00–1.00): **confirmed**",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("RESULTS-txn.md lacks %q:\n%s", want, md)
		}
	}
	rows := []string{"| transactional | 1 | 10 |", "| transactional | 64 | 10 |", "| transactional | 1 | 2,000 |", "| transactional | 64 | 2,000 |", "| idempotent | 1 | - |", "| idempotent | 64 | - |"}
	last := -1
	for _, r := range rows {
		i := strings.Index(md, r)
		if i < last {
			t.Errorf("row %q out of the seed's order", r)
		}
		last = i
	}
	if f := s.res.files(); f.md != "RESULTS-txn.md" || f.json != "results-txn.json" {
		t.Errorf("files %+v", f)
	}
}
