package order

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/intern"
	"github.com/kcheck/kcheck/checker/kafkaerr"
	"github.com/kcheck/kcheck/tracer"
)

// Result is what Finish found.
type Result struct {
	Violations []checker.Violation // sorted by partition, then first line
	Stats      Stats
	// Unread are the partitions batches were sent to that have no
	// ReadBack, in order: only their stalls are checked, not the log.
	Unread []int32
}

// Stats counts what the trace shows, for a report. Record counts are over
// records of sent batches (SendNew); Acked + Failed + Unknown = Records.
type Stats struct {
	Batches  int // batches sent (SendNew events)
	Records  int // records in those batches
	Acked    int // records acknowledged: NONE or DUPLICATE_SEQUENCE_NUMBER
	Failed   int // records definitely failed: a non-retriable error (on the wire: to the only attempt), or a Fail with sequence -1
	Unknown  int // records with an indefinite outcome: delivery timeout, producer closed, or none at the end
	Unsent   int // batches failed before they were ever sent (Fail with no SendNew); their records are not in the trace
	Retries  int // Resend events
	ReadBack int // records kcheck wrote found in the read-back, each occurrence counted
	Foreign  int // records in the read-back that kcheck did not write (id -1)

	// OutOfOrderAnswers counts every OUT_OF_ORDER_SEQUENCE_NUMBER answer;
	// OutOfOrderAcked the part of them to batches acknowledged in the end,
	// which are harmless retries and not violations.
	OutOfOrderAnswers int
	OutOfOrderAcked   int
	Stalls            int           // batches reported as Stall
	StallTime         time.Duration // summed over stalled batches: first OUT_OF_ORDER_SEQUENCE_NUMBER answer to the batch's end

	// What the application was told (Told events), in records: delivered,
	// failed and no answer; LostTold is the part of the delivered ones
	// that the read-back lacks ("lost though acknowledged to the
	// application"), counted only for partitions read back.
	ToldDelivered int
	ToldFailed    int
	ToldNone      int
	LostTold      int
}

// outcome is a batch's outcome as the application saw it.
type outcome uint8

const (
	pending outcome = iota // no outcome yet; unknown if still so at the end
	acked                  // NONE or DUPLICATE_SEQUENCE_NUMBER
	failed                 // definitely failed: not written
	expired                // delivery.timeout.ms: unknown
	closed                 // failed for a reason that does not say it was not written: unknown
)

// attempt is an epoch and base sequence a batch was sent with, and the line
// of the SendNew or Resend that first used it.
type attempt struct {
	ep   int16
	seq  int32
	line int
}

// batch is one sent batch and what became of it.
type batch struct {
	id    int64
	part  int32
	pid   int64
	first int // index of its first record in its partition's ids
	n     int // its records are ids[first : first+n]

	// The distinct (epoch, sequence) it was sent with: sent0 by SendNew,
	// more (in Checker.more) only after a Bump renumbered it.
	sent0 attempt
	more  int

	out     outcome
	ackLine int   // the Receive that acknowledged it
	ackOff  int64 // its base offset, -1 if unknown (DUPLICATE_SEQUENCE_NUMBER)
	endLine int   // the ExpireBatch or Fail that ended it
	endT    int64
	reason  text // the Fail's reason
	errLine int  // for a batch failed by a non-retriable error, the Receive with it

	// The last Receive since the batch was last sent, for telling a Fail
	// caused by a non-retriable error from one for another reason.
	lastErr  text
	lastRecv int
	resent   bool // a Resend of it was seen

	// On the wire (onWire): its last attempt's request, how many of its
	// attempts are not known to have been refused before the append, and
	// whether the answer in lastErr is its last attempt's, and a refusal.
	lastReq, lastNode int32
	unsure            int32
	lastIsLast        bool
	lastRefused       bool

	ooo      int // OUT_OF_ORDER_SEQUENCE_NUMBER answers
	oooLine  int // the first of them
	oooFirst int64
}

// A batch holds no pointers, so the garbage collector need not scan the
// millions a long trace has: its rarer parts live in the Checker, its
// further attempts in more and its strings in texts.

// attempts is how many distinct (epoch, sequence) b was sent with.
func (c *Checker) attempts(b *batch) int { return 1 + b.more }

// attempt returns the i-th of them.
func (c *Checker) attempt(b *batch, i int) attempt {
	if i == 0 {
		return b.sent0
	}
	return c.more[b.id][i-1]
}

// cur is the last (epoch, sequence) b was sent with.
func (c *Checker) cur(b *batch) attempt { return c.attempt(b, b.more) }

// text is a string a batch names: its index in Checker.texts, 0 for "".
type text = intern.ID

// text returns the text for s.
func (c *Checker) text(s string) text { return c.texts.ID(s) }

// str returns the string t stands for.
func (c *Checker) str(t text) string { return c.texts.String(t) }

// part is one partition: the batches sent to it, their records and its
// read-back. Keeping them by partition keeps Finish's passes over one
// partition's log and batches sequential in memory.
type part struct {
	id        int32
	num       int           // its index in Checker.byNum
	bs        batches       // its batches, in SendNew order
	ids       column[int64] // its batches' record ids, batch after batch
	owner     column[int32] // index in ids -> index in bs
	reused    map[int]bool
	readLine  int // the ReadBack line, 0 if none
	log       []tracer.LogRecord
	readTwice []int         // lines of further ReadBack events for it
	short     *tracer.Event // its ReadBackShort: the high watermark never passed what was acknowledged
	shortLine int
	told      []toldRec // index in ids -> what the application was told; nil if no Told named one of them
}

// toldRec is what the application was told about one record (its Told).
type toldRec struct {
	res  uint8 // 0 if no Told: toldDelivered, toldFailed or toldNone
	p    int32 // the partition it was told, -1 if none
	line int
	off  int64
	err  text // the Kafka error of a failure
	why  text // the client's words
}

const (
	toldDelivered = 1 + iota
	toldFailed
	toldNone
)

// toldAt returns what the application was told of the partition's record
// i, nil if nothing.
func (pt *part) toldAt(i int) *toldRec {
	if i >= len(pt.told) || pt.told[i].res == 0 {
		return nil
	}
	return &pt.told[i]
}

// Checker checks one trace. It is not safe for concurrent use.
type Checker struct {
	h     tracer.Header
	parts map[int32]*part
	byNum []*part             // partitions in the order they first appear
	last  *part               // the previous event's partition
	byID  index               // batch id -> its partition and index in bs
	rec   index               // record id -> its partition and index in ids
	found []checker.Violation // NonConformance seen while adding
	stats Stats
	lastT int64 // the time of the last event before the read-back: the end of the run
	done  bool
	// wire: the trace shows the wire, not the application (a proxy's
	// trace): no Fail tells a definite failure, the answers do (onWire).
	wire bool

	more  map[int64][]attempt // batch id -> its attempts after sent0
	texts intern.Table        // a batch's strings

	// faults: on the wire, the injected fault each attempt not yet
	// answered met, by its partition, epoch and sequence (refused).
	faults map[attemptKey]wireFault

	// lastEndTxn is the time of a transactional producer's last EndTxn
	// (0: none): it ends every batch of its transaction, so a batch
	// answered OUT_OF_ORDER_SEQUENCE_NUMBER before it is no stall, but
	// its transaction's (checker/txn judges what became of it).
	lastEndTxn int64
}

// New returns a Checker for a trace with header h.
func New(h tracer.Header) *Checker {
	return &Checker{h: h, parts: map[int32]*part{}, wire: h.Writer == tracer.ProxyWriter}
}

func (c *Checker) part(p int32) *part {
	if c.last != nil && c.last.id == p {
		return c.last
	}
	pt := c.parts[p]
	if pt == nil {
		pt = &part{id: p, num: len(c.byNum)}
		c.parts[p] = pt
		c.byNum = append(c.byNum, pt)
	}
	c.last = pt
	return pt
}

// Add takes the trace's next event, at line. Events must come in trace
// order. A ReadBack's Log is kept, not copied, until Finish.
func (c *Checker) Add(line int, e *tracer.Event) {
	if c.done {
		panic("order: Add after Finish")
	}
	if e.Kind != tracer.ReadBack && e.Kind != tracer.ReadBackShort && e.Kind != tracer.ReadCommitted && e.Kind != tracer.Poll && e.Kind != tracer.PollEnd {
		c.lastT = max(c.lastT, e.T)
	}
	switch e.Kind {
	case tracer.SendNew:
		c.sendNew(line, e)
	case tracer.Resend:
		b := c.batch(e.Batch)
		if b == nil {
			return
		}
		c.stats.Retries++
		if cur := c.cur(b); cur.ep != e.Epoch || cur.seq != e.Seq {
			if c.more == nil {
				c.more = map[int64][]attempt{}
			}
			c.more[b.id] = append(c.more[b.id], attempt{ep: e.Epoch, seq: e.Seq, line: line})
			b.more++
		}
		b.lastErr, b.lastRecv, b.resent = 0, 0, true
		b.lastReq, b.lastNode, b.lastIsLast, b.lastRefused = e.Req, e.Node, false, false
		b.unsure++
	case tracer.Receive:
		c.receive(line, e)
	case tracer.ExpireBatch:
		if b := c.batch(e.Batch); b != nil && b.out == pending {
			b.out, b.endLine, b.endT = expired, line, e.T
		}
	case tracer.Fail:
		c.fail(line, e)
	case tracer.Told:
		c.toldEvent(line, e)
	case tracer.Fault:
		if c.wire && e.Partition >= 0 && e.Seq >= 0 {
			if c.faults == nil {
				c.faults = map[attemptKey]wireFault{}
			}
			c.faults[attemptKey{e.Partition, e.Epoch, e.Seq}] = wireFault{kind: c.text(e.Fault), node: e.Node}
		}
	case tracer.EndTxn:
		c.lastEndTxn = e.T
	case tracer.Disconnect:
		// A fault on an attempt lost with its connection names no answer.
		for k, f := range c.faults {
			if f.node == e.Node {
				delete(c.faults, k)
			}
		}
	case tracer.ReadBackShort:
		pt := c.part(e.Partition)
		ev := *e
		pt.short, pt.shortLine = &ev, line
	case tracer.ReadBack:
		pt := c.part(e.Partition)
		if pt.readLine != 0 {
			pt.readTwice = append(pt.readTwice, line)
			return
		}
		pt.readLine, pt.log = line, e.Log
	}
}

func (c *Checker) batch(id int64) *batch {
	r, ok := c.byID.Get(id)
	if !ok {
		return nil
	}
	return c.byNum[r.Part()].bs.at(r.I())
}

// owner returns the batch of the record at r.
func (c *Checker) owner(r ref) *batch {
	pt := c.byNum[r.Part()]
	return pt.bs.at(int(pt.owner.at(r.I())))
}

func (c *Checker) sendNew(line int, e *tracer.Event) {
	if b := c.batch(e.Batch); b != nil {
		c.found = append(c.found, checker.Violation{
			Kind: checker.NonConformance, Partition: e.Partition, ProducerID: e.PID, Epoch: e.Epoch, Seq: e.Seq,
			Batch: e.Batch, Lines: []int{b.sent0.line, line},
			Detail: fmt.Sprintf("Batch %d was sent new twice: this SendNew (epoch %d, sequence %d) is ignored.", e.Batch, e.Epoch, e.Seq),
		})
		return
	}
	pt := c.part(e.Partition)
	bi := pt.bs.n
	c.byID.Put(e.Batch, refOf(pt.num, bi))
	b := batch{id: e.Batch, part: e.Partition, pid: e.PID, first: pt.ids.n, ackOff: -1,
		sent0: attempt{ep: e.Epoch, seq: e.Seq, line: line}, lastReq: e.Req, lastNode: e.Node, unsure: 1}
	var twice []int64
	for _, id := range e.Records {
		if _, ok := c.rec.Get(id); ok {
			// The id stays with the batch that sent it first; this
			// slot keeps the sequence numbering but is not checked.
			twice = append(twice, id)
			if pt.reused == nil {
				pt.reused = map[int]bool{}
			}
			pt.reused[pt.ids.n] = true
		} else {
			c.rec.Put(id, refOf(pt.num, pt.ids.n))
		}
		pt.ids.add(id)
		pt.owner.add(int32(bi))
	}
	b.n = pt.ids.n - b.first
	pt.bs.add(b)
	c.stats.Batches++
	c.stats.Records += b.n
	if len(twice) > 0 {
		r, _ := c.rec.Get(twice[0])
		first := c.owner(r).sent0.line
		c.found = append(c.found, checker.Violation{
			Kind: checker.NonConformance, Partition: e.Partition, ProducerID: e.PID, Epoch: e.Epoch, Seq: e.Seq,
			Batch: e.Batch, Records: twice, Lines: []int{first, line},
			Detail: fmt.Sprintf("Batch %d lists %s, already sent in an earlier batch: record ids must be unique in a run.", e.Batch, recordList(twice)),
		})
	}
}

func (c *Checker) receive(line int, e *tracer.Event) {
	b := c.batch(e.Batch)
	if b == nil {
		return
	}
	answer := kafkaerr.Classify(e.Err)
	refused := false
	if c.wire {
		refused = c.refused(e)
	}
	if answer == kafkaerr.OutOfOrder {
		c.stats.OutOfOrderAnswers++
		if b.ooo == 0 {
			b.oooLine, b.oooFirst = line, e.T
		}
		b.ooo++
	}
	if b.out != pending {
		return // a late answer: the application already has its outcome
	}
	switch answer {
	case kafkaerr.Acked:
		b.out, b.ackLine, b.ackOff = acked, line, e.Offset
		if e.Err != kafkaerr.None {
			b.ackOff = -1 // acknowledged with no offset
		}
	default:
		b.lastErr, b.lastRecv = c.text(e.Err), line
		b.lastIsLast = e.Req == b.lastReq && e.Node == b.lastNode
		b.lastRefused = b.lastIsLast && refused
		if refused {
			b.unsure--
		}
	}
}

// attemptKey names an attempt on the wire: its partition, epoch and base
// sequence, as a Fault names it.
type attemptKey struct {
	p   int32
	ep  int16
	seq int32
}

// wireFault is a Fault on an attempt not yet answered.
type wireFault struct {
	kind text
	node int32
}

// refused reports whether the answer e, on the wire, says its attempt was
// refused before the append, and so not written: an injected
// RejectBeforeAppend, or, with no fault, an answer a broker gives only
// before it appends (the sequence and epoch checks: the spec's HandleProduce
// answers OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID and
// INVALID_PRODUCER_EPOCH without appending). A real broker's own retriable
// errors (NOT_LEADER_OR_FOLLOWER, a timeout) may come after the append.
func (c *Checker) refused(e *tracer.Event) bool {
	k := attemptKey{e.Partition, e.Epoch, e.Seq}
	if f, ok := c.faults[k]; ok {
		delete(c.faults, k)
		return c.str(f.kind) == "RejectBeforeAppend"
	}
	switch e.Err {
	case kafkaerr.OutOfOrderSequence, kafkaerr.UnknownProducerID, kafkaerr.InvalidProducerEpoch:
		return true
	}
	return false
}

// fail applies a Fail event. A batch never sent (sequence -1) was never
// written; a Fail whose reason is the non-retriable error the batch was just
// answered with is definite; any other Fail of a sent batch (the producer
// closed with it in flight, or a reason this checker does not know) leaves its
// records possibly written.
func (c *Checker) fail(line int, e *tracer.Event) {
	b := c.batch(e.Batch)
	if b == nil {
		c.stats.Unsent++
		return
	}
	if b.out != pending {
		return
	}
	b.endLine, b.endT, b.reason = line, e.T, c.text(e.Reason)
	switch {
	case e.Seq == -1:
		b.out = failed
	case b.lastErr != 0 && e.Reason == c.str(b.lastErr) && kafkaerr.NotRetriable(c.str(b.lastErr)):
		b.out, b.errLine = failed, b.lastRecv
	default:
		b.out = closed
	}
}

// toldEvent applies a Told event: what the application was told about one
// record, which a SendNew before it must have sent, and no Told before it
// have named.
func (c *Checker) toldEvent(line int, e *tracer.Event) {
	rf, ok := c.rec.Get(e.RecordID)
	nonConformance := func(lines []int, format string, args ...any) {
		c.found = append(c.found, checker.Violation{Kind: checker.NonConformance, Partition: e.Partition, Seq: -1,
			Records: []int64{e.RecordID}, Lines: lines, Detail: fmt.Sprintf(format, args...)})
	}
	if !ok {
		nonConformance([]int{line}, "The application was told of record %d, which no SendNew before it sent: a Told must follow the record's SendNew.", e.RecordID)
		return
	}
	pt := c.byNum[rf.Part()]
	r := rf.I()
	if r >= len(pt.told) {
		pt.told = slices.Grow(pt.told, pt.ids.n-len(pt.told))[:pt.ids.n]
	}
	tr := &pt.told[r]
	if tr.res != 0 {
		nonConformance([]int{tr.line, line}, "The application was told of record %d twice: only the first Told is checked.", e.RecordID)
		return
	}
	*tr = toldRec{p: e.Partition, line: line, off: e.Offset, err: c.text(e.Err), why: c.text(e.Reason)}
	switch e.Result {
	case tracer.Delivered:
		tr.res = toldDelivered
		c.stats.ToldDelivered++
	case tracer.Failed:
		tr.res = toldFailed
		c.stats.ToldFailed++
	default:
		tr.res = toldNone
		c.stats.ToldNone++
	}
}

// definite reports whether the application's failure tr says the record
// was not written: the client's error is one the spec calls fatal
// (kafkaerr.Fatal), a refusal of the batch. A timeout, a local error or none
// leaves it unknown.
func (c *Checker) definite(tr *toldRec) bool {
	return tr != nil && tr.res == toldFailed && tr.err != 0 && kafkaerr.Fatal(c.str(tr.err))
}

// onWire settles, in a trace of the wire, a batch with no outcome at the
// end: a fatal answer (kafkaerr.Fatal) to its last attempt, which the client
// never sent again, failed it definitely when it was its only attempt, or
// when every earlier attempt was refused before the append (refused). Any
// other earlier attempt might have been written, so such a batch keeps its
// unknown outcome.
func (c *Checker) onWire(b *batch) {
	if b.out != pending || b.lastErr == 0 || !kafkaerr.Fatal(c.str(b.lastErr)) {
		return
	}
	// The attempts not known refused: the last one alone, or none.
	earlierRefused := b.lastIsLast && (b.unsure == 0 || b.unsure == 1 && !b.lastRefused)
	if !b.resent || earlierRefused {
		b.out, b.errLine, b.endLine, b.reason = failed, b.lastRecv, b.lastRecv, b.lastErr
	}
}

// Finish matches every sent record against the read-back and returns what it
// found. The Checker is done after it. Partitions are matched in parallel,
// each on its own: what Finish returns is the same as one by one.
func (c *Checker) Finish() Result {
	c.done = true
	ps := slices.Clone(c.byNum)
	slices.SortFunc(ps, func(a, b *part) int { return cmp.Compare(a.id, b.id) })
	found := make([][]checker.Violation, len(ps))
	stats := make([]Stats, len(ps))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(ps)) {
		wg.Go(func() {
			var a analysis
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ps) {
					return
				}
				found[i] = c.finish(&a, ps[i], &stats[i])
			}
		})
	}
	wg.Wait()
	out := c.found
	var unread []int32
	for i, pt := range ps {
		out = append(out, found[i]...)
		c.stats.add(&stats[i])
		if pt.readLine == 0 {
			unread = append(unread, pt.id)
		}
	}
	sortViolations(out)
	return Result{Violations: out, Stats: c.stats, Unread: unread}
}

// finish matches partition pt, counting in st, with a's scratch space.
func (c *Checker) finish(a *analysis, pt *part, st *Stats) []checker.Violation {
	var out []checker.Violation
	p := pt.id
	for i := range pt.bs.n {
		b := pt.bs.at(i)
		if c.wire {
			c.onWire(b)
		}
		switch b.out {
		case acked:
			st.Acked += b.n
			st.OutOfOrderAcked += b.ooo
		case failed:
			st.Failed += b.n
		default:
			st.Unknown += b.n
			if b.ooo > 0 && c.lastEndTxn <= b.oooFirst {
				out = append(out, c.stall(pt, b, st))
			}
		}
	}
	for _, l := range pt.readTwice {
		out = append(out, checker.Violation{Kind: checker.NonConformance, Partition: p, Seq: -1,
			Lines:  []int{pt.readLine, l},
			Detail: fmt.Sprintf("Partition %d was read back twice; only the first ReadBack is checked.", p)})
	}
	if v := shortContradicted(pt); v != nil {
		out = append(out, *v)
	}
	if pt.readLine == 0 {
		return out // no log to match: an incomplete trace (Result.Unread), not a violation
	}
	a.stats = st
	return a.run(c, pt, out)
}

// add adds o's counts to s.
func (s *Stats) add(o *Stats) {
	s.Batches += o.Batches
	s.Records += o.Records
	s.Acked += o.Acked
	s.Failed += o.Failed
	s.Unknown += o.Unknown
	s.Unsent += o.Unsent
	s.Retries += o.Retries
	s.ReadBack += o.ReadBack
	s.Foreign += o.Foreign
	s.OutOfOrderAnswers += o.OutOfOrderAnswers
	s.OutOfOrderAcked += o.OutOfOrderAcked
	s.Stalls += o.Stalls
	s.StallTime += o.StallTime
	s.ToldDelivered += o.ToldDelivered
	s.ToldFailed += o.ToldFailed
	s.ToldNone += o.ToldNone
	s.LostTold += o.LostTold
}

// stall reports b, which was answered OUT_OF_ORDER_SEQUENCE_NUMBER and ended
// without an acknowledgement.
func (c *Checker) stall(pt *part, b *batch, st *Stats) checker.Violation {
	end, how := c.lastT, "had no outcome by the end of the trace"
	switch b.out {
	case expired:
		end, how = b.endT, "ended in a delivery timeout"
	case closed:
		end, how = b.endT, fmt.Sprintf("ended failed (%s) with its outcome unknown", c.str(b.reason))
	}
	d := time.Duration(end - b.oooFirst)
	st.Stalls++
	st.StallTime += d
	cur := c.cur(b)
	times := "once"
	if b.ooo > 1 {
		times = fmt.Sprintf("%d times", b.ooo)
	}
	return checker.Violation{
		Kind: checker.Stall, Partition: b.part, ProducerID: b.pid, Epoch: cur.ep, Seq: cur.seq, Batch: b.id,
		Records: pt.recordsOf(b),
		Lines:   lines(b.sent0.line, b.oooLine, b.endLine),
		Detail: fmt.Sprintf("Batch %d (%s; epoch %d, %s) was answered OUT_OF_ORDER_SEQUENCE_NUMBER %s over %s and never acknowledged: it %s (the KAFKA-14359 retry loop).",
			b.id, recordList(pt.recordsOf(b)), cur.ep, seqRange(cur.seq, b.n), times, roundDuration(d), how),
	}
}

// recordsOf returns b's record ids.
func (pt *part) recordsOf(b *batch) []int64 {
	ids := make([]int64, b.n)
	for i := range ids {
		ids[i] = pt.ids.at(b.first + i)
	}
	return ids
}

// lines returns the non-zero lines, sorted and without repeats.
func lines(ls ...int) []int {
	out := make([]int, 0, len(ls))
	for _, l := range ls {
		if l > 0 {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sortViolations orders vs by partition, then first line, then kind, batch,
// sequence and detail, so that a report is the same on every run.
func sortViolations(vs []checker.Violation) {
	first := func(v *checker.Violation) int {
		if len(v.Lines) == 0 {
			return 0
		}
		return v.Lines[0]
	}
	slices.SortFunc(vs, func(a, b checker.Violation) int {
		return cmp.Or(
			cmp.Compare(a.Partition, b.Partition),
			cmp.Compare(first(&a), first(&b)),
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Batch, b.Batch),
			cmp.Compare(a.Seq, b.Seq),
			cmp.Compare(a.Detail, b.Detail),
		)
	})
}

// shortContradicted returns the nonconformance of pt's ReadBackShort with
// the ReadBack it precedes, or nil. A read-back that falls short
// (tracer/readback) stops where the log meets the high watermark it
// reports, which is at or below the acknowledged offset it names: so the
// log read back ends below that high watermark. A ReadBackShort whose high
// watermark passed its acknowledged offset, or whose log holds a record at
// or past its high watermark (every acknowledged offset read back),
// contradicts what it is the evidence of.
func shortContradicted(pt *part) *checker.Violation {
	s := pt.short
	if s == nil || pt.readLine == 0 || pt.shortLine > pt.readLine {
		return nil
	}
	v := &checker.Violation{Kind: checker.NonConformance, Partition: pt.id, Seq: -1, Lines: []int{pt.shortLine, pt.readLine}}
	if s.HWM > s.Offset {
		v.Detail = fmt.Sprintf("The ReadBackShort of partition %d says its high watermark never passed the acknowledged offset %d, yet reports the high watermark %d, past it.",
			pt.id, s.Offset, s.HWM)
		return v
	}
	if n := len(pt.log); n > 0 && pt.log[n-1].Offset >= s.HWM {
		v.Detail = fmt.Sprintf("The ReadBackShort of partition %d says its high watermark stayed at %d, at or below the acknowledged offset %d, yet its ReadBack holds offsets up to %d: a read-back reads below the high watermark, so the log contradicts the shortfall.",
			pt.id, s.HWM, s.Offset, pt.log[n-1].Offset)
		return v
	}
	return nil
}
