package matrix

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kcheck/kcheck/tracer"
)

// readTxnView holds each transaction's records, as the application was
// told its end, to the read_committed read: a committed one's records
// absent and an aborted one's returned are counted; a failed commit takes
// the abort that follows it; a failed or unended one counts in neither.
func TestReadTxnView(t *testing.T) {
	w := &traceBuf{}
	// The wire: record 0 sent, its transaction's EndTxn, then a poll
	// returns it (in time); record 2 sent and polled before any EndTxn
	// after it (early).
	send := func(id int64) {
		w.Emit(&tracer.Event{Kind: tracer.SendNew, Partition: 0, Batch: id + 1, PID: 1, Seq: int32(id), Records: []int64{id}})
	}
	poll := func(id int64) {
		w.Emit(&tracer.Event{Kind: tracer.Poll, Poller: 1, Partition: 0, Offset: id, Log: []tracer.LogRecord{{Offset: id, PID: 1, Seq: -1, ID: id}}})
	}
	send(0)
	w.Emit(&tracer.Event{Kind: tracer.EndTxn, PID: 1, Tx: 1, Commit: true})
	poll(0)
	send(2)
	poll(2)
	told := func(id int64) { w.Emit(&tracer.Event{Kind: tracer.Told, RecordID: id, Result: tracer.Delivered}) }
	end := func(tx int64, res string) {
		w.Emit(&tracer.Event{Kind: tracer.TxnTold, Tx: tx, Result: res, Commit: res == tracer.Committed})
	}
	told(0)
	told(1)
	end(1, tracer.Committed) // 1 read, 0 not: one lost though committed
	told(2)
	told(3)
	end(2, tracer.Aborted) // 3 read: one aborted yet read
	told(4)
	end(3, tracer.Failed)
	end(3, tracer.Aborted) // the failed commit's abort: 4 read, one more
	told(5)
	told(7)
	end(4, tracer.Failed) // 5 absent: no outcome, counted in neither
	told(6)               // never ended: counted in neither
	var log []tracer.LogRecord
	for _, id := range []int64{1, 3, 4, 6} {
		log = append(log, tracer.LogRecord{Offset: id, PID: 1, ID: id})
	}
	w.Emit(&tracer.Event{Kind: tracer.ReadCommitted, Partition: 0, Log: log})
	// The markers: transaction 1's commit closes its own records; one abort
	// closes transaction 2's and 3's (mingled: 3 records); transaction 4's
	// records are aborted and committed (torn: 2).
	rb := func(off, id int64) tracer.LogRecord { return tracer.LogRecord{Offset: off, PID: 1, ID: id} }
	w.Emit(&tracer.Event{Kind: tracer.ReadBack, Partition: 0,
		Log: []tracer.LogRecord{rb(0, 0), rb(1, 1), rb(3, 2), rb(4, 3), rb(5, 4), rb(7, 5), rb(9, 7), rb(11, 6)},
		Ctl: []tracer.Marker{{Offset: 2, PID: 1, Commit: true}, {Offset: 6, PID: 1}, {Offset: 8, PID: 1}, {Offset: 10, PID: 1, Commit: true}}})
	v := viewOf(t, w)
	if want := (txnView{LostCommitted: 1, AbortedRead: 2, Mingled: 3, Torn: 2, ReadEarly: 1}); v != want {
		t.Errorf("got %+v, want %+v", v, want)
	}
	h := Happened{txnView: txnView{LostCommitted: v.LostCommitted, AbortedRead: v.AbortedRead, Mingled: v.Mingled, Torn: v.Torn}}
	if !h.Anomaly() || !h.LostAcknowledged() || h.String() != "lost though committed 1, aborted yet read committed 2, in another transaction's commit or abort 3, in a torn transaction 2" {
		t.Errorf("Happened %+v: anomaly %v, lost acknowledged %v, %q", h, h.Anomaly(), h.LostAcknowledged(), h.String())
	}
}

// A transaction the client asked to abort whose record a poll returned
// anyway counts as aborted yet read; its record left open by every marker,
// though its EndTxn was answered, as hanging.
func TestReadTxnViewAbortAsked(t *testing.T) {
	w := &traceBuf{}
	w.Emit(&tracer.Event{Kind: tracer.SendNew, Partition: 0, Batch: 1, PID: 1, Records: []int64{0}})
	w.Emit(&tracer.Event{Kind: tracer.EndTxn, PID: 1, Tx: 1})
	w.Emit(&tracer.Event{Kind: tracer.EndTxnReceive, PID: 1, Tx: 1, Err: "INVALID_TXN_STATE", NewEpoch: -1})
	w.Emit(&tracer.Event{Kind: tracer.Poll, Poller: 1, Partition: 0, Log: []tracer.LogRecord{{Offset: 0, PID: 1, Seq: -1, ID: 0}}})
	w.Emit(&tracer.Event{Kind: tracer.ReadBack, Partition: 0, Log: []tracer.LogRecord{{Offset: 0, PID: 1, ID: 0}}})
	v := viewOf(t, w)
	if want := (txnView{AbortedRead: 1, Hanging: 1}); v != want {
		t.Errorf("got %+v, want %+v", v, want)
	}
}

// traceBuf collects a test's events for viewOf.
type traceBuf struct{ evs []tracer.Event }

func (b *traceBuf) Emit(e *tracer.Event) { b.evs = append(b.evs, *e) }

// viewOf writes b's events as a transactional proxy trace (TV1, one
// partition) and returns readTxnView's view of it.
func viewOf(t *testing.T, b *traceBuf) txnView {
	t.Helper()
	path := filepath.Join(t.TempDir(), "txn.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := tracer.NewWriter(f, tracer.Header{Writer: tracer.ProxyWriter, Client: "test", Topic: "t", Partitions: 1, MaxInFlight: 5,
		TransactionalID: "x", TxnVersion: 1, Broker: tracer.Broker{Kind: "kafka", Version: "4.4.0", NoStateRule: "v25to44"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.evs {
		w.Emit(&b.evs[i])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	v, err := readTxnView(path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
