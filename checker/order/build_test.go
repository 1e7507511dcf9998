package order

import (
	"testing"

	"github.com/kcheck/kcheck/tracer"
)

// testPID is the producer id of traces built in tests, as in the fixtures.
const testPID = 1000

// trace is a trace built in memory: events numbered from 1, each at line
// I+1 (the header is line 1), 1ms apart unless at says otherwise.
type trace struct {
	h   tracer.Header
	evs []*tracer.Event
}

func newTrace() *trace {
	return &trace{h: tracer.Header{Version: tracer.Version, Writer: "test", Partitions: 1, FirstAck: true,
		HoldWhileRetrying: true, MaxInFlight: 5, DeliveryTimeoutMs: 3000,
		Broker: tracer.Broker{Kind: "kafka", Version: "4.1.0", NoStateRule: "v25to44"}}}
}

func (t *trace) add(e *tracer.Event) *tracer.Event {
	e.I = int64(len(t.evs) + 1)
	e.T = e.I * 1e6
	t.evs = append(t.evs, e)
	return e
}

// line is the line the next event will be on.
func (t *trace) line() int { return len(t.evs) + 2 }

func (t *trace) send(p int32, b int64, ep int16, seq int32, ids ...int64) *tracer.Event {
	return t.add(&tracer.Event{Kind: tracer.SendNew, Partition: p, Batch: b, PID: testPID, Epoch: ep, Seq: seq,
		N: int32(len(ids)), Node: 1, Records: ids})
}

func (t *trace) resend(p int32, b int64, ep int16, seq int32) *tracer.Event {
	return t.add(&tracer.Event{Kind: tracer.Resend, Partition: p, Batch: b, PID: testPID, Epoch: ep, Seq: seq, Node: 1})
}

func (t *trace) recv(p int32, b int64, ep int16, seq int32, err string, off int64) *tracer.Event {
	return t.add(&tracer.Event{Kind: tracer.Receive, Partition: p, Batch: b, PID: testPID, Epoch: ep, Seq: seq,
		Node: 1, Err: err, Offset: off, LogStart: -1})
}

func (t *trace) expire(p int32, b int64, ep int16, seq int32) *tracer.Event {
	return t.add(&tracer.Event{Kind: tracer.ExpireBatch, Partition: p, Batch: b, PID: testPID, Epoch: ep, Seq: seq})
}

func (t *trace) fail(p int32, b int64, ep int16, seq int32, reason string) *tracer.Event {
	return t.add(&tracer.Event{Kind: tracer.Fail, Partition: p, Batch: b, PID: testPID, Epoch: ep, Seq: seq, Reason: reason})
}

// told is a Told event: record id told res ("delivered" at off, "failed"
// with err, "none").
func (t *trace) told(p int32, id int64, res string, off int64, err string) *tracer.Event {
	return t.add(&tracer.Event{Kind: tracer.Told, Partition: p, RecordID: id, Result: res, Offset: off, Err: err, Reason: "client's words"})
}

func (t *trace) readBack(p int32, log ...tracer.LogRecord) *tracer.Event {
	return t.add(&tracer.Event{Kind: tracer.ReadBack, Partition: p, Log: log})
}

// run feeds the trace to a Checker.
func (t *trace) run() Result {
	c := New(t.h)
	for _, e := range t.evs {
		c.Add(int(e.I)+1, e)
	}
	return c.Finish()
}

// logOf lays out records (pid testPID) at offsets from off: each is
// {epoch, seq, id}.
func logOf(off int64, recs ...[3]int64) []tracer.LogRecord {
	out := make([]tracer.LogRecord, len(recs))
	for i, r := range recs {
		out[i] = tracer.LogRecord{Offset: off + int64(i), PID: testPID, Epoch: int16(r[0]), Seq: int32(r[1]), ID: r[2]}
	}
	return out
}

// batchLog is the log records of ids sent as epoch ep from seq, at offsets from off.
func batchLog(off int64, ep int16, seq int32, ids ...int64) []tracer.LogRecord {
	out := make([]tracer.LogRecord, len(ids))
	for i, id := range ids {
		out[i] = tracer.LogRecord{Offset: off + int64(i), PID: testPID, Epoch: ep, Seq: seq + int32(i), ID: id}
	}
	return out
}

// checkFile reads the trace at path through tracer.Reader into a Checker.
func checkFile(t testing.TB, path string) Result {
	t.Helper()
	f, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := New(f.Header())
	if err := f.Each(func(line int, e *tracer.Event) error { c.Add(line, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return c.Finish()
}
