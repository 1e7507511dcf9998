package linz

import (
	"math/rand/v2"

	"github.com/kcheck/kcheck/tracer"
)

// synthBatch is a batch of a synthetic trace.
type synthBatch struct {
	id       int64
	seq      int32
	recs     []int64
	appended bool
	offset   int64
}

// synth builds a linearizable trace of about n events over parts partitions,
// as an idempotent producer under faults would write it: batches of five
// records, up to five in flight per partition, answered in send order, so
// each partition's log is in send order. Of the answers, 2% are retriable
// errors before the append (the batch is resent), 2% timeouts after it (the
// resend is answered with the original offset), 1% delivery timeouts (half of
// them after the append), 1% DUPLICATE_SEQUENCE_NUMBER; batches still in
// flight at the end are left without an outcome, the oldest of them written.
// Events are numbered from 1 (line = I+1).
func synth(n, parts int, seed uint64) (tracer.Header, []*tracer.Event) {
	const pid, perBatch, inFlight = 4242, 5, 5
	rng := rand.New(rand.NewPCG(seed, seed))
	h := tracer.Header{Version: tracer.Version, Writer: "synth", Partitions: int32(parts), MaxInFlight: inFlight}
	events := make([]*tracer.Event, 0, n+parts)
	var t int64
	emit := func(e *tracer.Event) {
		t += 1 + rng.Int64N(1000)
		e.I, e.T, e.PID = int64(len(events)+1), t, pid
		events = append(events, e)
	}
	queues := make([][]*synthBatch, parts)
	logs := make([][]tracer.LogRecord, parts)
	seqs := make([]int32, parts)
	var batches, records int64
	appendBatch := func(p int, b *synthBatch) {
		if b.appended {
			return
		}
		b.appended, b.offset = true, int64(len(logs[p]))
		for i, id := range b.recs {
			logs[p] = append(logs[p], tracer.LogRecord{Offset: int64(len(logs[p])), PID: pid, Seq: b.seq + int32(i), ID: id})
		}
	}
	emit(&tracer.Event{Kind: tracer.InitProducerID, Node: -1})
	for len(events) < n-parts {
		p := rng.IntN(parts)
		q := queues[p]
		batchEvent := func(kind tracer.Kind, b *synthBatch) *tracer.Event {
			return &tracer.Event{Kind: kind, Partition: int32(p), Batch: b.id, Seq: b.seq, N: int32(len(b.recs))}
		}
		if len(q) < inFlight && (len(q) == 0 || rng.IntN(2) == 0) {
			batches++
			b := &synthBatch{id: batches, seq: seqs[p]}
			for range perBatch {
				records++
				b.recs = append(b.recs, records)
			}
			seqs[p] += perBatch
			queues[p] = append(q, b)
			e := batchEvent(tracer.SendNew, b)
			e.Records = b.recs
			emit(e)
			continue
		}
		b := q[0]
		answer := func(err string, off int64) {
			e := batchEvent(tracer.Receive, b)
			e.Err, e.Offset, e.LogStart = err, off, -1
			emit(e)
		}
		switch r := rng.IntN(1000); {
		case r < 20: // rejected before the append; resent
			answer("NOT_ENOUGH_REPLICAS", -1)
			emit(batchEvent(tracer.Resend, b))
		case r < 40: // appended, the answer lost; resent
			appendBatch(p, b)
			emit(&tracer.Event{Kind: tracer.Fault, Fault: "AppendThenFail", Partition: int32(p), Seq: b.seq, Err: "REQUEST_TIMED_OUT"})
			answer("REQUEST_TIMED_OUT", -1)
			emit(batchEvent(tracer.Resend, b))
		case r < 50: // delivery timeout, half of them written
			if r < 45 {
				appendBatch(p, b)
			}
			emit(batchEvent(tracer.ExpireBatch, b))
			queues[p] = q[1:]
		case r < 60:
			appendBatch(p, b)
			answer("DUPLICATE_SEQUENCE_NUMBER", -1)
			queues[p] = q[1:]
		default:
			appendBatch(p, b)
			answer("NONE", b.offset)
			queues[p] = q[1:]
		}
		if r := rng.IntN(5000); r == 0 {
			emit(&tracer.Event{Kind: tracer.Disconnect, Node: int32(p % 3)})
		}
	}
	for p := range parts {
		q := queues[p]
		for _, b := range q[:rng.IntN(len(q)+1)] {
			appendBatch(p, b)
		}
		emit(&tracer.Event{Kind: tracer.ReadBack, Partition: int32(p), Log: logs[p]})
	}
	return h, events
}

// feed adds events to a new Checker.
func feed(h tracer.Header, events []*tracer.Event) *Checker {
	c := New(h)
	for _, e := range events {
		c.Add(int(e.I)+1, e)
	}
	return c
}
