package linz

import (
	"fmt"
	"slices"

	"github.com/kcheck/kcheck/checker/intern"
	"github.com/kcheck/kcheck/checker/kafkaerr"
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
	byNum  []*partition   // partitions in the order they first appear
	last   *partition     // the previous event's partition
	pids   map[int64]bool // producer ids of the trace (InitProducerId, SendNew)
	pid    int64          // the last producer id added to pids
	hasPID bool
	marks  []mark // events about no one partition: Disconnect, Fault with p -1
	events int
	end    int64 // t of the last event: the end of the history

	// batches locates each batch id's operation in the first partition
	// that sent it; others holds any further partition's (a batch id sent
	// to two partitions is two operations, as the trace is per partition).
	batches index
	others  map[batchKey]int
	// sent holds every record id sent, for Check to know whether one was
	// sent twice (shared), which makes it look for where each operation
	// lies in the read-back the slow way.
	sent   idSet
	shared bool
	// byRecord locates each record id's operation, for Told events: built
	// at the first Told (toldSeen), then kept up by every SendNew.
	byRecord index
	toldSeen bool
	texts    intern.Table // the causes operations name
	// checked: a Result of Check may still read the operations as they
	// were, so the next Add copies them before it changes one.
	checked bool

	segmentOps int // appends a segment holds before it may close (segmentOps; tests lower it)
}

// batchKey is a batch in a partition.
type batchKey struct {
	partition int32
	batch     int64
}

// partition is what the trace says about one partition.
type partition struct {
	id       int32
	num      int             // its index in Checker.byNum
	ops      chunks[opTrace] // produce operations, in SendNew order
	ids      chunks[[]int64] // their record ids, in slabs an operation's ids are not split across
	read     *op             // the ReadBack, nil until seen
	log      []tracer.LogRecord
	ctl      []tracer.Marker // the read-back's transaction markers (skipMarkers)
	readBack *readLog        // log's ids, shared by the operations' inputs
	marks    []mark          // its broker and client events, for the visualization
	problems []string        // why its history cannot be checked (Inconclusive)
}

// opTrace is what the trace says of a produce operation: an op without its
// pointers. A long trace has millions, which the garbage collector need not
// scan; a history turns them into ops (opsOf).
type opTrace struct {
	batch, pid int64
	epoch      int16
	seq        int32
	slab       int32 // its records are the partition's ids slab slab[first : first+n]
	first, n   int32
	out        outcome
	call, ret  int64
	callLine   int
	outLine    int
	cause      text
}

// idSlab is how many record ids a slab of a partition's ids holds, unless
// one operation has more.
const idSlab = 2048

// keepIDs copies ids into p's slabs and returns where they are.
func (p *partition) keepIDs(ids []int64) (slab, first int32) {
	if p.ids.n == 0 || len(ids) > cap(*p.ids.at(p.ids.n - 1))-len(*p.ids.at(p.ids.n - 1)) {
		p.ids.add(make([]int64, 0, max(idSlab, len(ids))))
	}
	last := p.ids.at(p.ids.n - 1)
	first = int32(len(*last))
	*last = append(*last, ids...)
	return int32(p.ids.n - 1), first
}

// recs returns the record ids of t, an operation of p's.
func (p *partition) recs(t *opTrace) []int64 {
	end := t.first + t.n
	return (*p.ids.at(int(t.slab)))[t.first:end:end]
}

// chunks is an append-only list kept in chunks of chunkLen elements:
// growing it copies nothing, and an element stays where it is.
type chunks[T any] struct {
	c [][]T
	n int
}

const chunkLen = 256

func (l *chunks[T]) add(v T) {
	if l.n%chunkLen == 0 {
		l.c = append(l.c, make([]T, 0, chunkLen))
	}
	last := &l.c[len(l.c)-1]
	*last = append(*last, v)
	l.n++
}

func (l *chunks[T]) at(i int) *T { return &l.c[i/chunkLen][i%chunkLen] }

// clone returns a copy of l that shares no element with it.
func (l *chunks[T]) clone() chunks[T] {
	c := make([][]T, len(l.c))
	for i, ch := range l.c {
		c[i] = append(make([]T, 0, chunkLen), ch...)
	}
	return chunks[T]{c: c, n: l.n}
}

// text is a string an operation names: its index in Checker.texts.
type text = intern.ID

// text returns the text for s.
func (c *Checker) text(s string) text { return c.texts.ID(s) }

// str returns the string t stands for.
func (c *Checker) str(t text) string { return c.texts.String(t) }

// settle records the operation's outcome.
func (o *opTrace) settle(line int, t int64, out outcome, cause text) {
	o.out, o.outLine, o.ret, o.cause = out, line, t, cause
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

// opsOf returns p's produce operations as ops, in SendNew order, as they
// are in ops (p's, or what they were when Check ran).
func (p *partition) opsOf(ops *chunks[opTrace], texts []string) []*op {
	n := ops.n
	type slot struct {
		o  op
		in batchInput
	}
	slots := make([]slot, n) // one allocation, in order in memory
	out := make([]*op, n)
	for i := range n {
		t, s := ops.at(i), &slots[i]
		setBatchInput(&s.in, p.id, t.batch, t.pid, t.epoch, t.seq, p.recs(t), p.readBack)
		s.o = op{in: &s.in, out: t.out, call: t.call, ret: t.ret, callLine: t.callLine, outLine: t.outLine}
		if t.cause != 0 {
			s.o.cause = texts[t.cause]
		}
		out[i] = &s.o
	}
	return out
}

// mark is an event shown on the visualization but not an operation.
type mark struct {
	line int
	t    int64
	kind tracer.Kind
	e    *tracer.Event
}

// New returns a Checker for the trace whose header is h.
func New(h tracer.Header) *Checker {
	return &Checker{h: h, parts: make(map[int32]*partition), pids: make(map[int64]bool), segmentOps: segmentOps}
}

func (c *Checker) partition(id int32) *partition {
	if c.last != nil && c.last.id == id {
		return c.last
	}
	p := c.parts[id]
	if p == nil {
		p = &partition{id: id, num: len(c.byNum), readBack: &readLog{}}
		c.parts[id] = p
		c.byNum = append(c.byNum, p)
	}
	c.last = p
	return p
}

// addPID notes a producer id of the trace.
func (c *Checker) addPID(pid int64) {
	if !c.hasPID || pid != c.pid {
		c.pids[pid] = true
		c.pid, c.hasPID = pid, true
	}
}

// batch returns p's operation for batch id b, or nil.
func (c *Checker) batch(p *partition, b int64) *opTrace {
	if r, ok := c.batches.Get(b); ok && r.Part() == p.num {
		return p.ops.at(r.I())
	}
	if i, ok := c.others[batchKey{p.id, b}]; ok {
		return p.ops.at(i)
	}
	return nil
}

// addBatch records that batch b of p is p's operation i; p has no batch b yet.
func (c *Checker) addBatch(p *partition, b int64, i int) {
	if _, ok := c.batches.Get(b); !ok {
		c.batches.Put(b, refOf(p.num, i))
		return
	}
	if c.others == nil {
		c.others = make(map[batchKey]int)
	}
	c.others[batchKey{p.id, b}] = i
}

func (p *partition) problem(line int, format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
}

// Add feeds the event e, read from the trace's line line, in trace order. It
// keeps e's Log (it is not copied), and a copy of the events it shows as
// marks; e itself is not kept.
func (c *Checker) Add(line int, e *tracer.Event) {
	if c.checked {
		for _, p := range c.byNum {
			p.ops = p.ops.clone()
		}
		c.checked = false
	}
	c.events++
	c.end = max(c.end, e.T)
	switch e.Kind {
	case tracer.InitProducerID:
		c.addPID(e.PID)
	case tracer.SendNew:
		c.addPID(e.PID)
		p := c.partition(e.Partition)
		if c.batch(p, e.Batch) != nil {
			p.problem(line, "SendNew for batch %d, which was already sent", e.Batch)
			return
		}
		if len(e.Records) == 0 {
			p.problem(line, "SendNew for batch %d with no records", e.Batch)
			return
		}
		c.addBatch(p, e.Batch, p.ops.n)
		slab, first := p.keepIDs(e.Records)
		p.ops.add(opTrace{batch: e.Batch, pid: e.PID, epoch: e.Epoch, seq: e.Seq, slab: slab, first: first,
			n: int32(len(e.Records)), out: outcome{kind: pending}, call: e.T, callLine: line})
		for _, id := range e.Records {
			if c.shared {
				break
			}
			c.shared = !c.sent.add(id)
		}
		if c.toldSeen {
			c.indexRecords(p, p.ops.n-1)
		}
	case tracer.Told:
		c.told(line, e)
	case tracer.Receive:
		p := c.partition(e.Partition)
		o := c.batch(p, e.Batch)
		if o == nil {
			p.problem(line, "Receive for batch %d, which no SendNew sent", e.Batch)
			return
		}
		if o.out.kind != pending {
			return // a late answer: the first outcome stands
		}
		switch {
		case e.Err == kafkaerr.None && e.Offset >= 0:
			o.settle(line, e.T, outcome{kind: acked, offset: e.Offset}, c.text(e.Err))
		case kafkaerr.IsAck(e.Err):
			o.settle(line, e.T, outcome{kind: ackedAnyOffset, offset: -1}, c.text(e.Err))
		default: // retriable: the batch is retried, the operation goes on
			p.marks = append(p.marks, newMark(line, e))
		}
	case tracer.ExpireBatch:
		p := c.partition(e.Partition)
		o := c.batch(p, e.Batch)
		if o == nil {
			p.problem(line, "ExpireBatch for batch %d, which no SendNew sent", e.Batch)
			return
		}
		if o.out.kind == pending {
			o.settle(line, e.T, outcome{kind: unknown}, 0)
		}
	case tracer.Fail:
		p := c.partition(e.Partition)
		o := c.batch(p, e.Batch)
		if o == nil || o.out.kind != pending {
			return // never sent: nothing can have been written; or already settled
		}
		if e.Reason == reasonClosed {
			o.settle(line, e.T, outcome{kind: unknown}, c.text(e.Reason))
		} else {
			o.settle(line, e.T, outcome{kind: failed}, c.text(e.Reason))
		}
	case tracer.Fault:
		if e.Partition < 0 {
			c.marks = append(c.marks, newMark(line, e))
			return
		}
		p := c.partition(e.Partition)
		p.marks = append(p.marks, newMark(line, e))
	case tracer.Disconnect:
		c.marks = append(c.marks, newMark(line, e))
	case tracer.Bump, tracer.ResolveSequences:
		p := c.partition(e.Partition)
		p.marks = append(p.marks, newMark(line, e))
	case tracer.ReadBack:
		p := c.partition(e.Partition)
		if p.read != nil {
			p.problem(line, "a second ReadBack (the first is line %d)", p.read.callLine)
			return
		}
		p.read = &op{read: true, callLine: line}
		p.log, p.ctl = e.Log, e.Ctl
		p.readBack.ids = make([]int64, len(e.Log))
		for i, r := range e.Log {
			p.readBack.ids[i] = r.ID
		}
	}
}

// skipMarkers takes p's transaction markers out of its offsets: the model
// is a log of records at 0, 1, 2, ..., and a marker takes an offset that no
// record has. Each record's offset, and each acknowledged operation's,
// becomes its position among the records: the offset less the markers
// before it. An aborted transaction's records stay in the log, as a
// read_uncommitted read sees them; their fate is verify's transactional
// check's to judge (checker/txn), not the log's model's.
func (p *partition) skipMarkers() {
	if len(p.ctl) == 0 {
		return
	}
	offs := make([]int64, len(p.ctl))
	for i, m := range p.ctl {
		offs[i] = m.Offset
	}
	slices.Sort(offs)
	pos := func(off int64) int64 {
		n, _ := slices.BinarySearch(offs, off) // markers below off
		return off - int64(n)
	}
	log := make([]tracer.LogRecord, len(p.log))
	for i, r := range p.log {
		r.Offset = pos(r.Offset)
		log[i] = r
	}
	p.log = log
	for i := range p.ops.n {
		if o := p.ops.at(i); o.out.kind == acked && o.out.offset >= 0 {
			o.out.offset = pos(o.out.offset)
		}
	}
	p.ctl = nil
}

// indexRecords puts operation i of p's records in byRecord; a record sent
// twice stays with its first.
func (c *Checker) indexRecords(p *partition, i int) {
	for _, id := range p.recs(p.ops.at(i)) {
		if _, ok := c.byRecord.Get(id); !ok {
			c.byRecord.Put(id, refOf(p.num, i))
		}
	}
}

// causeTold is the cause of an operation settled by what the application
// was told of it.
const causeTold = "told to the application"

// told applies what the application was told about a record to its
// operation where the wire left the outcome open (pending, or unknown): a
// delivery is an acknowledgement at the reported offset (less the record's
// place in its batch), a failure with an error the spec calls fatal
// (kafkaerr.Fatal) a definite failure. Any other report leaves it open. The
// first report that settles an operation stands.
func (c *Checker) told(line int, e *tracer.Event) {
	if !c.toldSeen {
		c.toldSeen = true
		for _, p := range c.byNum {
			for i := range p.ops.n {
				c.indexRecords(p, i)
			}
		}
	}
	r, ok := c.byRecord.Get(e.RecordID)
	if !ok {
		return // no operation: checker/order reports it
	}
	p := c.byNum[r.Part()]
	o := p.ops.at(r.I())
	if o.out.kind != pending && o.out.kind != unknown {
		return
	}
	switch {
	case e.Result == tracer.Delivered && e.Offset >= 0:
		pos := int64(slices.Index(p.recs(o), e.RecordID))
		o.settle(line, e.T, outcome{kind: acked, offset: e.Offset - pos}, c.text(causeTold))
	case e.Result == tracer.Delivered:
		o.settle(line, e.T, outcome{kind: ackedAnyOffset, offset: -1}, c.text(causeTold))
	case e.Result == tracer.Failed && kafkaerr.Fatal(e.Err):
		o.settle(line, e.T, outcome{kind: failed}, c.text("the application was told "+e.Err))
	}
}

// newMark returns the mark of event e at line, with a copy of e: a reader
// may hand out events many to an allocation, and a mark is kept to the end.
func newMark(line int, e *tracer.Event) mark {
	ev := *e
	return mark{line: line, t: e.T, kind: e.Kind, e: &ev}
}

// how says in words how a produce operation ended.
func (o *op) how() string {
	switch o.out.kind {
	case acked:
		if o.cause == causeTold {
			return fmt.Sprintf("acknowledged to the application at offset %d", o.out.offset)
		}
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
