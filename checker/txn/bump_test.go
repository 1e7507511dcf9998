package txn

import (
	"testing"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/tracer"
)

// A transaction still open when InitProducerId is answered ends there,
// aborted by the coordinator (kgo aborts so after an EndTxn whose outcome
// it does not know): the next batch is the next transaction's, and a
// commit marker over the first one's record is a commit of an aborted
// transaction.
func TestInitProducerIDEndsOpenTransaction(t *testing.T) {
	run := func(firstCommit bool) ([]checker.Violation, Stats) {
		c := New(tracer.Header{TransactionalID: "t", TxnVersion: 2, Partitions: 1})
		evs := []tracer.Event{
			{Kind: tracer.InitProducerID, PID: 7, Epoch: 0, TxnID: "t"},
			{Kind: tracer.SendNew, Batch: 1, PID: 7, Epoch: 0, Records: []int64{1}},
			{Kind: tracer.Receive, Batch: 1, PID: 7, Epoch: 0, Err: "NONE", Offset: 0},
			{Kind: tracer.InitProducerID, PID: 7, Epoch: 1, TxnID: "t"},
			{Kind: tracer.SendNew, Batch: 2, PID: 7, Epoch: 1, Records: []int64{2}},
			{Kind: tracer.Receive, Batch: 2, PID: 7, Epoch: 1, Err: "NONE", Offset: 2},
			{Kind: tracer.EndTxn, PID: 7, Epoch: 1, Commit: true, Tx: 2},
			{Kind: tracer.EndTxnReceive, PID: 7, Epoch: 1, Err: "NONE", Commit: true, NewEpoch: 2, Tx: 2},
			{Kind: tracer.ReadBack, Log: []tracer.LogRecord{{Offset: 0, PID: 7, ID: 1}, {Offset: 2, PID: 7, Epoch: 1, ID: 2}},
				Ctl: []tracer.Marker{{Offset: 1, PID: 7, Epoch: 1, Commit: firstCommit}, {Offset: 3, PID: 7, Epoch: 2, Commit: true}}},
		}
		for i := range evs {
			if err := c.Add(i+2, &evs[i]); err != nil {
				t.Fatalf("line %d: %v", i+2, err)
			}
		}
		return c.Finish()
	}
	vs, st := run(false)
	if len(vs) != 0 || st.Transactions != 2 || st.Aborted != 1 || st.Committed != 1 {
		t.Fatalf("aborted by InitProducerId, then committed: violations %v, stats %+v", vs, st)
	}
	vs, _ = run(true)
	if len(vs) != 1 || vs[0].Kind != checker.AbortCommitted || vs[0].Records[0] != 1 {
		t.Fatalf("its record committed: %v, want one abort-committed of record 1", vs)
	}
}
