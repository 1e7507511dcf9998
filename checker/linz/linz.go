package linz

import (
	"fmt"

	"github.com/kcheck/kcheck/tracer"
)

// reasonClosed is the Fail reason of a batch failed because the producer was
// closed: if it was sent, it may have been written.
const reasonClosed = "producer closed"

// Checker collects one trace's operations, partition by partition, for Check.
// It is not safe for concurrent use.
type Checker struct {
	h      tracer.Header
	parts  map[int32]*partition
	pids   map[int64]bool // producer ids of the trace (InitProducerId, SendNew)
	marks  []mark         // events about no one partition: Disconnect, Fault with p -1
	events int
	end    int64 // t of the last event: the end of the history

	segmentOps int // appends a segment holds before it may close (segmentOps; tests lower it)
}

// partition is what the trace says about one partition.
type partition struct {
	id       int32
	ops      []*op         // produce operations, in SendNew order
	batches  map[int64]*op // by batch id
	read     *op           // the ReadBack, nil until seen
	log      []tracer.LogRecord
	readBack *readLog // log's ids, shared by the operations' inputs
	marks    []mark   // its broker and client events, for the visualization
	problems []string // why its history cannot be checked (Inconclusive)
}

// op is one operation of a partition's history, as built from the trace.
type op struct {
	read     bool        // the ReadBack, or a segment's read of it (check.go)
	start    bool        // opens a segment from the read-back (check.go)
	in       *batchInput // produce operations only: nil for reads and starts
	out      outcome
	call     int64  // t of SendNew (reads and starts: history sets their times)
	ret      int64  // t of the outcome (unknown and pending: history returns them at the end)
	callLine int    // SendNew's line, or ReadBack's
	outLine  int    // the line that settled it, 0 if none
	cause    string // what settled it: the Receive's error, the Fail's reason, or "" (see how)
}

// mark is an event shown on the visualization but not an operation.
type mark struct {
	line  int
	t     int64
	kind  tracer.Kind
	batch *op // Receive with a retriable error: the operation it answered
	e     *tracer.Event
}

// New returns a Checker for the trace whose header is h.
func New(h tracer.Header) *Checker {
	return &Checker{h: h, parts: make(map[int32]*partition), pids: make(map[int64]bool), segmentOps: segmentOps}
}

func (c *Checker) partition(id int32) *partition {
	p := c.parts[id]
	if p == nil {
		p = &partition{id: id, batches: make(map[int64]*op), readBack: &readLog{}}
		c.parts[id] = p
	}
	return p
}

func (p *partition) problem(line int, format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

// Add feeds the event e, read from the trace's line line, in trace order. It
// keeps e (its Records and Log are not copied).
func (c *Checker) Add(line int, e *tracer.Event) {
	c.events++
	c.end = max(c.end, e.T)
	switch e.Kind {
	case tracer.InitProducerID:
		c.pids[e.PID] = true
	case tracer.SendNew:
		c.pids[e.PID] = true
		p := c.partition(e.Partition)
		if p.batches[e.Batch] != nil {
			p.problem(line, "SendNew for batch %d, which was already sent", e.Batch)
			return
		}
		if len(e.Records) == 0 {
			p.problem(line, "SendNew for batch %d with no records", e.Batch)
			return
		}
		o := &op{
			in:       newBatchInput(e.Partition, e.Batch, e.PID, e.Epoch, e.Seq, e.Records, p.readBack),
			out:      outcome{kind: pending},
			call:     e.T,
			callLine: line,
		}
		p.batches[e.Batch] = o
		p.ops = append(p.ops, o)
	case tracer.Receive:
		p := c.partition(e.Partition)
		o := p.batches[e.Batch]
		if o == nil {
			p.problem(line, "Receive for batch %d, which no SendNew sent", e.Batch)
			return
		}
		if o.out.kind != pending {
			return // a late answer: the first outcome stands
		}
		switch {
		case e.Err == "NONE" && e.Offset >= 0:
			o.settle(line, e.T, outcome{kind: acked, offset: e.Offset}, e.Err)
		case e.Err == "NONE", e.Err == "DUPLICATE_SEQUENCE_NUMBER":
			o.settle(line, e.T, outcome{kind: ackedAnyOffset, offset: -1}, e.Err)
		default: // retriable: the batch is retried, the operation goes on
			p.marks = append(p.marks, mark{line: line, t: e.T, kind: e.Kind, batch: o, e: e})
		}
	case tracer.ExpireBatch:
		p := c.partition(e.Partition)
		o := p.batches[e.Batch]
		if o == nil {
			p.problem(line, "ExpireBatch for batch %d, which no SendNew sent", e.Batch)
			return
		}
		if o.out.kind == pending {
			o.settle(line, e.T, outcome{kind: unknown}, "")
		}
	case tracer.Fail:
		p := c.partition(e.Partition)
		o := p.batches[e.Batch]
		if o == nil || o.out.kind != pending {
			return // never sent: nothing can have been written; or already settled
		}
		if e.Reason == reasonClosed {
			o.settle(line, e.T, outcome{kind: unknown}, e.Reason)
		} else {
			o.settle(line, e.T, outcome{kind: failed}, e.Reason)
		}
	case tracer.Fault:
		if e.Partition < 0 {
			c.marks = append(c.marks, mark{line: line, t: e.T, kind: e.Kind, e: e})
			return
		}
		p := c.partition(e.Partition)
		p.marks = append(p.marks, mark{line: line, t: e.T, kind: e.Kind, e: e})
	case tracer.Disconnect:
		c.marks = append(c.marks, mark{line: line, t: e.T, kind: e.Kind, e: e})
	case tracer.Bump, tracer.ResolveSequences:
		p := c.partition(e.Partition)
		p.marks = append(p.marks, mark{line: line, t: e.T, kind: e.Kind, e: e})
	case tracer.ReadBack:
		p := c.partition(e.Partition)
		if p.read != nil {
			p.problem(line, "a second ReadBack (the first is line %d)", p.read.callLine)
			return
		}
		p.read = &op{read: true, callLine: line}
		p.log = e.Log
		p.readBack.ids = make([]int64, len(e.Log))
		for i, r := range e.Log {
			p.readBack.ids[i] = r.ID
		}
	}
}

// settle records the operation's outcome.
func (o *op) settle(line int, t int64, out outcome, cause string) {
	o.out, o.outLine, o.ret, o.cause = out, line, t, cause
}

// how says in words how a produce operation ended.
func (o *op) how() string {
	switch o.out.kind {
	case acked:
		return fmt.Sprintf("acknowledged at offset %d", o.out.offset)
	case ackedAnyOffset:
		return "acknowledged without an offset (" + o.cause + ")"
	case failed:
		return "failed definitely (" + o.cause + ")"
	case unknown:
		if o.cause == reasonClosed {
			return "failed in flight (" + reasonClosed + ")"
		}
		return "expired (delivery.timeout.ms)"
	}
	return "had no outcome by the end of the trace"
}
