package proxy_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/outcomes"
	"github.com/kcheck/kcheck/tracer/proxy"
	"github.com/kcheck/kcheck/workload"
)

// TestTransactionsThroughProxy: a transactional client (ours, in TV2 and
// TV1) through the proxy, with a fault that appends then times out: the
// proxy's trace has the transactional steps on the wire (InitProducerId's
// transactional id, AddPartitionsToTxn under TV1, EndTxn and its answer
// with TV2's new epoch), the read-back's markers, and kcheck verify judges
// it VALID. The client's report (drivers/OUTCOMES.md) is merged: each
// transaction's end as a TxnTold numbered as the wire's transaction, which
// agrees with the EndTxn the wire answered NONE.
func TestTransactionsThroughProxy(t *testing.T) {
	for _, tv := range []int{2, 1} {
		cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(workload.Emulations["4.1"].Versions))
		if err != nil {
			t.Fatal(err)
		}
		defer cluster.Close()
		dir := t.TempDir()
		path := filepath.Join(dir, "proxy.jsonl")
		report := filepath.Join(dir, "outcomes.jsonl")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ctx := context.Background()
		flt, err := fault.Parse("timeout-after-append:rate=0.05")
		if err != nil {
			t.Fatal(err)
		}
		p, err := proxy.Start(ctx, proxy.Config{
			Listen: "127.0.0.1:0", Upstream: cluster.ListenAddrs()[0], Topic: "t",
			Broker: tracer.Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"},
			Faults: []fault.Fault{flt}, Seed: 1, Trace: f, Logf: t.Logf,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		sum, err := workload.Run(ctx, workload.Config{
			Brokers: []string{p.Addr()}, BrokerVersion: "4.1.0", Topic: "t", Partitions: 4, Records: 400, ValueBytes: 50, Keys: 64,
			Codec: recordbatch.CodecNone, FirstAck: true, HoldWhileRetrying: true, MaxInFlight: 5, Linger: time.Millisecond, BatchBytes: 512,
			DeliveryTimeout: 5 * time.Second, RequestTimeout: time.Second, Seed: 1, TracePath: filepath.Join(dir, "own.jsonl"), OutcomesPath: report,
			Txn: &workload.Txn{ID: "through", Records: 40, AbortEvery: 3, Version: tv},
		})
		if err != nil {
			t.Fatalf("TV%d: %v", tv, err)
		}
		outs := readReport(t, report)
		st, err := p.Tell(outs, report)
		if err != nil || st.Merged != 400 || st.TxnMerged != 10 || st.TxnUnsent != 0 {
			t.Fatalf("TV%d: Tell: %+v, %v", tv, st, err)
		}
		if err := p.Finish(ctx); err != nil {
			t.Fatal(err)
		}
		if !sum.Clean() || sum.TxnCommitted != 7 || sum.TxnAborted != 3 {
			t.Fatalf("TV%d: run: %+v", tv, sum)
		}
		rep, err := verify.File(ctx, path, verify.Options{LinzTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != verify.Valid {
			t.Fatalf("TV%d: verify %s: %s, conformance %q, violations %v", tv, path, rep.Verdict, rep.Conformance, rep.Violations)
		}
		tf, err := tracer.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		count := map[tracer.Kind]int{}
		var txnID string
		markers, bumped := 0, 0
		ended := map[int64]bool{} // the wire's transactions answered NONE: commit?
		err = tf.Each(func(line int, e *tracer.Event) error {
			count[e.Kind]++
			switch e.Kind {
			case tracer.InitProducerID:
				txnID = e.TxnID
			case tracer.EndTxnReceive:
				if e.NewEpoch == e.Epoch+1 {
					bumped++
				}
				if e.Err == "NONE" {
					ended[e.Tx] = e.Commit
				}
			case tracer.TxnTold:
				want := tracer.Aborted
				if e.Commit {
					want = tracer.Committed
				}
				if commit, ok := ended[e.Tx]; !ok || commit != e.Commit || e.Result != want {
					t.Errorf("TV%d: line %d: TxnTold %+v, but the wire's transaction %d ended %v (answered: %v)", tv, line, e, e.Tx, commit, ok)
				}
			case tracer.ReadBack:
				markers += len(e.Ctl)
			}
			return nil
		})
		tf.Close()
		if err != nil {
			t.Fatal(err)
		}
		if h := rep.Header; h.TransactionalID != "through" || h.TxnVersion != tv {
			t.Errorf("TV%d: header transactional_id %q, txn_version %d", tv, h.TransactionalID, h.TxnVersion)
		}
		if count[tracer.TxnTold] != 10 || count[tracer.Told] != 400 {
			t.Errorf("TV%d: %d TxnTold, %d Told", tv, count[tracer.TxnTold], count[tracer.Told])
		}
		if txnID != "through" || count[tracer.EndTxn] < 10 || count[tracer.EndTxnReceive] < 10 || markers < 10 {
			t.Errorf("TV%d: transactional id %q, %d EndTxn, %d EndTxnReceive, %d markers", tv, txnID, count[tracer.EndTxn], count[tracer.EndTxnReceive], markers)
		}
		if tv == 2 && (bumped != count[tracer.EndTxnReceive] || count[tracer.AddPartitionsToTxn] > 0) ||
			tv == 1 && (bumped > 0 || count[tracer.AddPartitionsToTxn] == 0) {
			t.Errorf("TV%d: %d of %d EndTxn answers bumped the epoch, %d AddPartitionsToTxn", tv, bumped, count[tracer.EndTxnReceive], count[tracer.AddPartitionsToTxn])
		}
	}
}

// readReport reads a driver's report as kcheck proxy does.
func readReport(t *testing.T, path string) []outcomes.Line {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	outs, err := outcomes.Read(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

// Tell refuses a transaction's end it cannot place on the wire, naming the
// report's line: a commit of a transaction none of whose records reached
// the wire, a transaction whose records went in an earlier one's. An abort
// of one that never reached the wire is only counted.
func TestTellTransactions(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(workload.Emulations["4.1"].Versions))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	dir := t.TempDir()
	report := filepath.Join(dir, "outcomes.jsonl")
	ctx := context.Background()
	p, err := proxy.Start(ctx, proxy.Config{Listen: "127.0.0.1:0", Upstream: cluster.ListenAddrs()[0], Topic: "t",
		Broker: tracer.Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"}, Trace: io.Discard, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := workload.Run(ctx, workload.Config{
		Brokers: []string{p.Addr()}, BrokerVersion: "4.1.0", Topic: "t", Partitions: 2, Records: 20, ValueBytes: 10, Keys: 8,
		Codec: recordbatch.CodecNone, FirstAck: true, HoldWhileRetrying: true, MaxInFlight: 5, Linger: time.Millisecond, BatchBytes: 512,
		DeliveryTimeout: 5 * time.Second, RequestTimeout: time.Second, Seed: 1, TracePath: filepath.Join(dir, "own.jsonl"), OutcomesPath: report,
		Txn: &workload.Txn{ID: "tell", Records: 5, AbortEvery: 2},
	}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 24 || lines[5] != `{"tx":1,"commit":true,"res":"committed"}`+"\n" || lines[11] != `{"tx":2,"commit":false,"res":"aborted"}`+"\n" {
		t.Fatalf("the report:\n%s", data)
	}
	unsent := `{"id":99999,"p":-1,"err":"x"}` + "\n"
	// Transaction 1 ended after its first record, and its other records
	// in a transaction 2 of their own: all renumbered.
	split := lines[0] + `{"tx":1,"commit":true,"res":"committed"}` + "\n" + strings.Join(lines[1:], "")
	for n := 4; n >= 1; n-- {
		split = strings.ReplaceAll(split, fmt.Sprintf(`{"tx":%d,`, n), fmt.Sprintf(`{"tx":%d,`, n+1))
	}
	split = strings.Replace(split, `{"tx":2,`, `{"tx":1,`, 1)
	for _, tc := range []struct{ name, report, want string }{
		{"a commit never on the wire", string(data) + unsent + `{"tx":5,"commit":true,"res":"committed"}` + "\n",
			"o.jsonl:26: transaction 5 is reported committed, but none of its records reached the wire through the proxy: a commit of a transaction the wire never saw begin"},
		{"two in one", split, "o.jsonl:7: transaction 2's records went in the wire's transaction 1, as transaction 1's did (line 2): the wire never saw transaction 2 begin"},
	} {
		outs, err := outcomes.Read(strings.NewReader(tc.report), "o.jsonl")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := p.Tell(outs, "o.jsonl"); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v\nwant %s", tc.name, err, tc.want)
		}
	}
	outs, err := outcomes.Read(strings.NewReader(string(data)+unsent+`{"tx":5,"commit":false,"res":"aborted"}`+"\n"), "o.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := p.Tell(outs, "o.jsonl"); err != nil || st.Merged != 20 || st.Unsent != 1 || st.TxnMerged != 4 || st.TxnUnsent != 1 {
		t.Errorf("an abort never on the wire: %+v, %v", st, err)
	}
}
