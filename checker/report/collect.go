package report

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/kafkaerr"
	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/tracer"
)

// What the HTML report draws at most, so that a trace of a million events
// still gives a page of a few megabytes. Whatever a violation names is drawn
// beyond these (up to maxInvolved per partition); the page says what it left
// out.
const (
	attemptBudget = 8000  // attempts drawn over all partitions, shared out
	minAttempts   = 40    // attempts drawn per partition, at least ...
	maxAttempts   = 500   // ... and at most
	maxInvolved   = 1000  // attempts or marks drawn per partition because a violation names them
	maxGlobal     = 200   // Disconnects and partition-less Faults drawn
	recordBudget  = 16000 // log records listed over all partitions, shared out
	minRecords    = 100
	maxRecords    = 1000
	maxLogExtra   = 2000 // log records listed per partition around named records and gaps
	maxGaps       = 50   // sequence gaps marked per partition log
	maxViolations = 500  // violations listed
	maxIDs        = 40   // record ids spelled out per list
	maxParts      = 200  // partitions drawn: those violations name first, then the lowest
)

// outcome is how an attempt ended.
type outcome uint8

const (
	acked      outcome = iota // NONE or DUPLICATE_SEQUENCE_NUMBER
	errAnswer                 // any other error answer
	outOfOrder                // OUT_OF_ORDER_SEQUENCE_NUMBER
	noAnswer                  // disconnected, expired, failed, or unanswered at the end
)

var outcomeClass = [...]string{"ok", "err", "oos", "none"}

type batchKey struct {
	p int32
	b int64
}

// attempt is one send of a batch (SendNew or Resend) to what ended it.
type attempt struct {
	key           batchKey
	resend        bool
	start, end    int64
	line, endLine int
	req, node     int32
	epoch         int16
	seq, n        int32
	out           outcome
	result        string // how it ended, for its tooltip; "" when acknowledged with NONE (see how)
	off           int64  // the offset NONE gave, -1 for none
	nth           int    // it is its partition's nth attempt
}

// how says how a ended, for its tooltip.
func (a *attempt) how() string {
	if a.out != acked || a.result != "" {
		return a.result
	}
	if a.off >= 0 {
		return "acknowledged at offset " + strconv.FormatInt(a.off, 10)
	}
	return "acknowledged"
}

// batchDraw is a batch with at least one attempt drawn.
type batchDraw struct {
	key      batchKey
	attempts []*attempt
	endT     int64 // ExpireBatch or Fail, if one came
	endLine  int
	endWhy   string
}

// mark is an event drawn as a tick: Fault, Disconnect, Bump,
// ResolveSequences, ExpireBatch, Fail.
type mark struct {
	kind  tracer.Kind
	t     int64
	line  int
	batch int64
	tip   string
}

// partData is what the report draws of one partition.
type partData struct {
	p         int32
	batches   map[int64]*batchDraw
	marks     []mark
	started   int // attempts
	sent      int // batches (SendNew)
	outcomes  [4]int
	extra     int   // attempts drawn because a violation names them
	left      int   // attempts not drawn
	cut       int64 // start of the first attempt not drawn; -1 when all are
	marksSeen int
	leftMarks int
	log       *logData
}

// logData is the excerpt of a partition's read-back the report lists.
type logData struct {
	line   int // the ReadBack's trace line
	total  int
	recs   []tracer.LogRecord
	idx    []int           // each excerpt record's index in the whole log
	gaps   map[int]gap     // by excerpt index: sequences missing before it
	absent map[int]*idList // by violation number: named records not in the log
}

// idList is a capped list of record ids and how many there were.
type idList struct {
	ids   []int64
	total int
}

// gap is a run of sequences of one producer epoch missing from a log.
type gap struct {
	pid      int64
	epoch    int16
	from, to int32
	later    bool // some of them come later in the log
}

// involved indexes what the violations name, by 1-based violation number
// (the first one naming it).
type involved struct {
	batch  map[batchKey]int
	line   map[int]int
	record map[int64]int
	byPart map[int32][]int
}

func newInvolved(vs []checker.Violation) *involved {
	inv := &involved{batch: map[batchKey]int{}, line: map[int]int{}, record: map[int64]int{}, byPart: map[int32][]int{}}
	for i, v := range vs {
		n := i + 1
		if v.Partition >= 0 {
			inv.byPart[v.Partition] = append(inv.byPart[v.Partition], n)
			if v.Batch != 0 {
				setFirst(inv.batch, batchKey{v.Partition, v.Batch}, n)
			}
		}
		for _, l := range v.Lines {
			setFirst(inv.line, l, n)
		}
		for _, id := range v.Records {
			setFirst(inv.record, id, n)
		}
	}
	return inv
}

// vref links violation n: its entry, or the list when it is past those listed.
func vref(n int) string {
	if n > maxViolations {
		return "#violations"
	}
	return "#v" + strconv.Itoa(n)
}

// firstOf returns the smaller of two violation numbers, ignoring 0 (none).
func firstOf(a, b int) int {
	if a == 0 || b != 0 && b < a {
		return b
	}
	return a
}

func setFirst[K comparable, V any](m map[K]V, k K, v V) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// attempt returns the violation naming a's batch or one of its lines, or 0.
func (inv *involved) attempt(a *attempt) int {
	if n := inv.batch[a.key]; n > 0 {
		return n
	}
	if n := inv.line[a.line]; n > 0 {
		return n
	}
	return inv.line[a.endLine]
}

func (inv *involved) mark(p int32, m *mark) int {
	if n := inv.line[m.line]; n > 0 {
		return n
	}
	if m.batch != 0 {
		return inv.batch[batchKey{p, m.batch}]
	}
	return 0
}

// Collector gathers, in verify's one pass over a trace, what the HTML
// report draws: give it to verify as an Observer (verify.Options.Observers),
// then to HTML with the report. It keeps every attempt, mark and read-back,
// in proportion to the trace: which of them the page draws depends on the
// violations, known only once the pass is over.
type Collector struct {
	parts  map[int32]*partEvents
	open   map[batchKey][]*attempt // attempts not ended yet
	global []mark                  // Disconnects and partition-less Faults
	sends  []sent                  // every SendNew, in order
	last   int64                   // time of the last event before the read-back
	closed bool                    // the attempts still open at the end are ended
}

// partEvents is what the pass saw of one partition.
type partEvents struct {
	started  int        // attempts
	sent     int        // batches (SendNew)
	ends     []*attempt // attempts, in the order they ended
	batchEnd []batchEnd // batches ExpireBatch or Fail ended, in order
	marks    []mark
	read     bool // a ReadBack came: the last one's line and log
	readLine int
	log      []tracer.LogRecord
}

// batchEnd is a batch that ExpireBatch or Fail ended, once after of its
// partition's attempts had ended.
type batchEnd struct {
	after int
	batch int64
	t     int64
	line  int
	why   string
}

// sent is a SendNew's batch and records.
type sent struct {
	batch int64
	recs  []int64
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{parts: map[int32]*partEvents{}, open: map[batchKey][]*attempt{}}
}

func (c *Collector) part(p int32) *partEvents {
	pe := c.parts[p]
	if pe == nil {
		pe = &partEvents{}
		c.parts[p] = pe
	}
	return pe
}

// ended records that attempt a ended.
func (c *Collector) ended(a *attempt) {
	pe := c.part(a.key.p)
	pe.ends = append(pe.ends, a)
}

// mark records a mark of partition p, or of none (p < 0).
func (c *Collector) mark(p int32, m mark) {
	if p < 0 {
		c.global = append(c.global, m)
		return
	}
	pe := c.part(p)
	pe.marks = append(pe.marks, m)
}

// Observe takes the event at line (verify.Observer).
func (c *Collector) Observe(line int, e *tracer.Event) {
	switch e.Kind {
	case tracer.ReadBack, tracer.ReadBackShort, tracer.Poll, tracer.PollEnd:
		// Reads, not the client's steps: a poller's final polls come after the run.
	default:
		c.last = e.T
	}
	switch e.Kind {
	case tracer.SendNew, tracer.Resend:
		pe := c.part(e.Partition)
		pe.started++
		if e.Kind == tracer.SendNew {
			pe.sent++
		}
		k := batchKey{e.Partition, e.Batch}
		c.open[k] = append(c.open[k], &attempt{key: k, resend: e.Kind == tracer.Resend, start: e.T, line: line,
			req: e.Req, node: e.Node, epoch: e.Epoch, seq: e.Seq, n: e.N, nth: pe.started})
		if e.Kind == tracer.SendNew {
			c.sends = append(c.sends, sent{e.Batch, e.Records})
		}
	case tracer.Receive:
		k := batchKey{e.Partition, e.Batch}
		list := c.open[k]
		if len(list) == 0 {
			return
		}
		i := slices.IndexFunc(list, func(a *attempt) bool { return a.req == e.Req && a.node == e.Node })
		if i < 0 {
			i = 0
		}
		a := list[i]
		if list = slices.Delete(list, i, i+1); len(list) == 0 {
			delete(c.open, k)
		} else {
			c.open[k] = list
		}
		a.end, a.endLine = e.T, line
		switch answer := kafkaerr.Classify(e.Err); {
		case e.Err == kafkaerr.None:
			a.out, a.off = acked, e.Offset // its result, how(), when drawn
		case answer == kafkaerr.Acked:
			a.out, a.result = acked, e.Err+" (acknowledged, no offset)"
		case answer == kafkaerr.OutOfOrder:
			a.out, a.result = outOfOrder, e.Err
		default:
			a.out, a.result = errAnswer, e.Err
		}
		c.ended(a)
	case tracer.Disconnect:
		var cut []*attempt
		for k, list := range c.open {
			keep := list[:0]
			for _, a := range list {
				if a.node == e.Node {
					cut = append(cut, a)
				} else {
					keep = append(keep, a)
				}
			}
			if len(keep) == 0 {
				delete(c.open, k)
			} else {
				c.open[k] = keep
			}
		}
		c.endAll(cut, e.T, line, fmt.Sprintf("no answer: the connection to node %d was lost", e.Node))
		c.mark(-1, mark{kind: e.Kind, t: e.T, line: line,
			tip: fmt.Sprintf("Disconnect (line %d): the connection to node %d was lost; its outstanding batches go back to be retried", line, e.Node)})
	case tracer.ExpireBatch, tracer.Fail:
		k := batchKey{e.Partition, e.Batch}
		why := "expired (delivery.timeout.ms)"
		if e.Kind == tracer.Fail {
			why = "failed: " + e.Reason
		}
		c.endAll(c.open[k], e.T, line, "no answer: "+why)
		delete(c.open, k)
		pe := c.part(e.Partition)
		pe.batchEnd = append(pe.batchEnd, batchEnd{after: len(pe.ends), batch: e.Batch, t: e.T, line: line, why: why})
		c.mark(e.Partition, mark{kind: e.Kind, t: e.T, line: line, batch: e.Batch,
			tip: fmt.Sprintf("%s (line %d): batch %d (epoch %d, seq %d) %s", e.Kind, line, e.Batch, e.Epoch, e.Seq, why)})
	case tracer.Bump:
		c.mark(e.Partition, mark{kind: e.Kind, t: e.T, line: line,
			tip: fmt.Sprintf("Bump (line %d): epoch bumped to %d; the partition's in-flight batches are renumbered from 0", line, e.Epoch)})
	case tracer.ResolveSequences:
		c.mark(e.Partition, mark{kind: e.Kind, t: e.T, line: line,
			tip: fmt.Sprintf("ResolveSequences (line %d): an unresolved sequence was settled (bump requested: %v)", line, e.Bumped)})
	case tracer.Fault:
		tip := fmt.Sprintf("Fault %s (line %d) on node %d", e.Fault, line, e.Node)
		if e.Seq >= 0 {
			tip += fmt.Sprintf(", hitting epoch %d seq %d", e.Epoch, e.Seq)
		}
		if e.Err != "" {
			tip += ", answered " + e.Err
		}
		c.mark(e.Partition, mark{kind: e.Kind, t: e.T, line: line, tip: tip})
	case tracer.ReadBack:
		pe := c.part(e.Partition)
		pe.read, pe.readLine, pe.log = true, line, e.Log
	}
}

// endAll ends attempts that got no answer, in trace order.
func (c *Collector) endAll(as []*attempt, t int64, line int, why string) {
	as = slices.Clone(as)
	slices.SortFunc(as, func(a, b *attempt) int { return a.line - b.line })
	for _, a := range as {
		a.end, a.endLine, a.out, a.result = t, line, noAnswer, why
		c.ended(a)
	}
}

// drawing is what the page draws: what a Collector gathered, chosen by
// what the violations name and the caps above.
type drawing struct {
	violations  []checker.Violation
	inv         *involved
	perAttempts int
	perMarks    int
	perRecords  int
	parts       map[int32]*partData
	global      []mark
	globalLeft  int
	last        int64 // time of the last event before the read-back
}

// drawing chooses what the page draws for report r, and maps the log
// records it lists to their batches.
func (c *Collector) drawing(r *verify.Report) (*drawing, map[int64]int64) {
	if !c.closed {
		// What is still open at the end ends there, after everything else.
		var rest []*attempt
		for _, list := range c.open {
			rest = append(rest, list...)
		}
		c.endAll(rest, c.last, 0, "no answer by the end of the trace")
		c.open, c.closed = nil, true
	}
	parts := 1 // the partitions the trace names, not the header's count, which it only claims
	if lr := r.LinzResult(); lr != nil {
		parts = max(len(lr.Partitions), 1)
	}
	d := &drawing{
		violations:  r.Violations,
		inv:         newInvolved(r.Violations),
		perAttempts: min(max(attemptBudget/parts, minAttempts), maxAttempts),
		perRecords:  min(max(recordBudget/parts, minRecords), maxRecords),
		parts:       map[int32]*partData{},
		last:        c.last,
	}
	d.perMarks = d.perAttempts / 2
	for p, pe := range c.parts {
		pd := &partData{p: p, batches: map[int64]*batchDraw{}, cut: -1, started: pe.started, sent: pe.sent}
		d.parts[p] = pd
		ends := pe.batchEnd
		for i := 0; i <= len(pe.ends); i++ {
			// The batches that ended before attempt i did, as they were.
			for ; len(ends) > 0 && ends[0].after == i; ends = ends[1:] {
				if bd := pd.batches[ends[0].batch]; bd != nil {
					bd.endT, bd.endLine, bd.endWhy = ends[0].t, ends[0].line, ends[0].why
				}
			}
			if i < len(pe.ends) {
				d.finish(pe.ends[i])
			}
		}
		for _, m := range pe.marks {
			d.mark(p, m)
		}
		if pe.read {
			d.readBack(pd, pe.readLine, pe.log)
		}
	}
	for _, m := range c.global {
		d.mark(-1, m)
	}

	want := map[int64]bool{}
	for _, pd := range d.parts {
		if pd.log != nil {
			for _, rec := range pd.log.recs {
				if rec.ID >= 0 {
					want[rec.ID] = true
				}
			}
		}
	}
	batchOf := map[int64]int64{}
	if len(want) == 0 {
		return d, batchOf
	}
	for _, s := range c.sends {
		for _, id := range s.recs {
			if want[id] {
				batchOf[id] = s.batch
			}
		}
	}
	return d, batchOf
}

// finish counts an ended attempt and keeps it if it is drawn.
func (c *drawing) finish(a *attempt) {
	pd := c.parts[a.key.p]
	pd.outcomes[a.out]++
	switch {
	case a.nth <= c.perAttempts: // among its partition's first attempts: drawn whatever it shows
	case c.inv.attempt(a) > 0 && pd.extra < maxInvolved:
		pd.extra++
	default:
		pd.left++
		if pd.cut < 0 || a.start < pd.cut {
			pd.cut = a.start
		}
		return
	}
	bd := pd.batches[a.key.b]
	if bd == nil {
		bd = &batchDraw{key: a.key}
		pd.batches[a.key.b] = bd
	}
	bd.attempts = append(bd.attempts, a)
}

func (c *drawing) mark(p int32, m mark) {
	if p < 0 {
		if len(c.global) < maxGlobal || c.inv.line[m.line] > 0 && len(c.global) < maxGlobal+maxInvolved {
			c.global = append(c.global, m)
		} else {
			c.globalLeft++
		}
		return
	}
	pd := c.parts[p]
	pd.marksSeen++
	if pd.marksSeen <= c.perMarks || c.inv.mark(p, &m) > 0 && len(pd.marks) < c.perMarks+maxInvolved {
		pd.marks = append(pd.marks, m)
	} else {
		pd.leftMarks++
	}
}

// readBack keeps an excerpt of a partition's log: its first records, those
// around records a violation names, and those around gaps in a producer
// epoch's sequences.
func (c *drawing) readBack(pd *partData, line int, log []tracer.LogRecord) {
	ld := &logData{line: line, total: len(log), gaps: map[int]gap{}, absent: map[int]*idList{}}
	pd.log = ld
	extra := map[int]bool{}
	around := func(i int) {
		for j := max(i-2, 0); j <= min(i+2, len(log)-1); j++ {
			if len(extra) < maxLogExtra {
				extra[j] = true
			}
		}
	}
	type pe struct {
		pid   int64
		epoch int16
	}
	next := map[pe]int32{}
	found := map[int64]bool{}
	var gapAt []int
	for i, r := range log {
		if r.ID >= 0 && c.inv.record[r.ID] > 0 {
			found[r.ID] = true
			around(i)
		}
		if r.PID < 0 || r.Seq < 0 {
			continue
		}
		k := pe{r.PID, r.Epoch}
		want := next[k]
		if r.Seq > want && len(gapAt) < maxGaps {
			gapAt = append(gapAt, i)
			ld.gaps[i] = gap{pid: r.PID, epoch: r.Epoch, from: want, to: r.Seq - 1}
			around(i)
		}
		if r.Seq >= want {
			next[k] = r.Seq + 1
		}
	}
	// Whether a gap's sequences turn up later (a reorder, not a loss).
	for _, i := range gapAt {
		g := ld.gaps[i]
		for _, r := range log[i+1:] {
			if r.PID == g.pid && r.Epoch == g.epoch && r.Seq >= g.from && r.Seq <= g.to {
				g.later = true
				break
			}
		}
		ld.gaps[i] = g
	}
	for i := range log {
		if i < c.perRecords || extra[i] {
			ld.recs = append(ld.recs, log[i])
			ld.idx = append(ld.idx, i)
		}
	}
	// The gaps, re-keyed by excerpt index.
	gaps := map[int]gap{}
	for j, i := range ld.idx {
		if g, ok := ld.gaps[i]; ok {
			gaps[j] = g
		}
	}
	ld.gaps = gaps
	for _, n := range c.inv.byPart[pd.p] {
		for _, id := range c.violations[n-1].Records {
			if found[id] {
				continue
			}
			l := ld.absent[n]
			if l == nil {
				l = &idList{}
				ld.absent[n] = l
			}
			if l.total++; len(l.ids) < maxIDs {
				l.ids = append(l.ids, id)
			}
		}
	}
}
