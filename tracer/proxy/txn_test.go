package proxy_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/proxy"
	"github.com/kcheck/kcheck/workload"
)

// TestTransactionsThroughProxy: a transactional client (ours, in TV2 and
// TV1) through the proxy, with a fault that appends then times out: the
// proxy's trace has the transactional steps on the wire (InitProducerId's
// transactional id, AddPartitionsToTxn under TV1, EndTxn and its answer
// with TV2's new epoch), the read-back's markers, and kcheck verify judges
// it VALID.
func TestTransactionsThroughProxy(t *testing.T) {
	for _, tv := range []int{2, 1} {
		cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(workload.Emulations["4.1"].Versions))
		if err != nil {
			t.Fatal(err)
		}
		defer cluster.Close()
		path := filepath.Join(t.TempDir(), "proxy.jsonl")
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
			DeliveryTimeout: 5 * time.Second, RequestTimeout: time.Second, Seed: 1, TracePath: filepath.Join(t.TempDir(), "own.jsonl"),
			Txn: &workload.Txn{ID: "through", Records: 40, AbortEvery: 3, Version: tv},
		})
		if err != nil {
			t.Fatalf("TV%d: %v", tv, err)
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
		err = tf.Each(func(_ int, e *tracer.Event) error {
			count[e.Kind]++
			switch e.Kind {
			case tracer.InitProducerID:
				txnID = e.TxnID
			case tracer.EndTxnReceive:
				if e.NewEpoch == e.Epoch+1 {
					bumped++
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
		if txnID != "through" || count[tracer.EndTxn] < 10 || count[tracer.EndTxnReceive] < 10 || markers < 10 {
			t.Errorf("TV%d: transactional id %q, %d EndTxn, %d EndTxnReceive, %d markers", tv, txnID, count[tracer.EndTxn], count[tracer.EndTxnReceive], markers)
		}
		if tv == 2 && (bumped != count[tracer.EndTxnReceive] || count[tracer.AddPartitionsToTxn] > 0) ||
			tv == 1 && (bumped > 0 || count[tracer.AddPartitionsToTxn] == 0) {
			t.Errorf("TV%d: %d of %d EndTxn answers bumped the epoch, %d AddPartitionsToTxn", tv, bumped, count[tracer.EndTxnReceive], count[tracer.AddPartitionsToTxn])
		}
	}
}
