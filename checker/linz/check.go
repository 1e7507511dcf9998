package linz

import (
	"cmp"
	"container/heap"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/kcheck/kcheck/checker"
)

// Verdict is the outcome of a linearizability check.
type Verdict string

const (
	// Ok: Porcupine found a linearization of every partition's history.
	Ok Verdict = "ok"
	// Illegal: some partition's history has no linearization.
	Illegal Verdict = "illegal"
	// Inconclusive: some partition could not be decided (a timeout, records
	// kcheck did not write, no read-back, ...) and none is Illegal.
	Inconclusive Verdict = "inconclusive"
)

// Result is what Check found, per partition and in total.
type Result struct {
	Verdict    Verdict             // Illegal if any partition is, else Inconclusive if any is, else Ok
	Partitions []PartitionResult   // one per partition the trace names, in increasing order
	Violations []checker.Violation // one per Illegal partition, in partition order

	Events     int           // events added
	Operations int           // operations of the histories: batches, and per segment a read (and a start)
	Timeout    time.Duration // the budget Check was given (0: none)
	Elapsed    time.Duration // Check's wall time

	model  porcupine.Model
	global []mark
}

// PartitionResult is one partition's verdict.
type PartitionResult struct {
	Partition int32
	Verdict   Verdict
	// Reason says why the partition is Inconclusive, or repeats the
	// violation's Detail when it is Illegal.
	Reason    string
	Violation *checker.Violation // Illegal only

	Batches int // produce operations
	Acked   int // of which acknowledged (with or without an offset)
	Failed  int // of which failed definitely
	Unknown int // of which expired, closed in flight, or with no outcome
	Records int // records read back
	Elapsed time.Duration
	run     *partRun // nil if the partition could not be checked
}

// partRun is one partition's Porcupine history and what the check found.
type partRun struct {
	p       *partition
	segFrom []int64 // per segment, the offset it starts at
	segTo   []int64 // per segment, the offset it ends before
	size    int     // operations in the history
	// linearized: certify built a linearization of every segment, so
	// Porcupine need not search, and the history is built only if a
	// visualization asks for it.
	linearized bool

	// What build needs: the operations as Check saw them, where each is
	// in the read-back and its segment.
	trace chunks[opTrace]
	texts []string
	end   int64
	at    []int64
	seg   []int32

	built   sync.Once
	ops     []porcupine.Operation // every segment's operations (start, batches, read), in call order
	mine    []*op                 // ops[i]'s op (a segment's read is the ReadBack's op)
	segs    [][]int               // per segment, its operations' indices in ops
	clients int                   // visualization rows used

	infoOnce sync.Once
	info     porcupine.LinearizationInfo
}

// Check runs Porcupine on every partition's history, in parallel, within
// timeout (0 or less: no limit), unless certify linearizes it directly. A
// partition Porcupine cannot finish in time is Inconclusive, never Ok.
// Check does not change what c has been given.
func (c *Checker) Check(timeout time.Duration) Result {
	c.checked = true // the Result keeps the operations as they are now
	start := time.Now()
	timeout = max(timeout, 0)
	var deadline time.Time
	if timeout > 0 {
		deadline = start.Add(timeout)
	}
	res := Result{Events: c.events, Timeout: timeout, model: newModel(), global: c.marks}
	ids := c.partitionIDs()
	res.Partitions = make([]PartitionResult, len(ids))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, id := range ids {
		pr := &res.Partitions[i]
		pr.Partition = id
		p := c.parts[id]
		sem <- struct{}{} // before the goroutine: a trace of a million partitions starts no million goroutines
		wg.Go(func() {
			defer func() { <-sem }()
			if p != nil {
				pr.count(p)
				p.skipMarkers()
			}
			if reason := c.uncheckable(p); reason != "" {
				pr.Verdict, pr.Reason = Inconclusive, reason
				return
			}
			pr.run = c.plan(p)
			if pr.run.linearized && (deadline.IsZero() || time.Now().Before(deadline)) {
				pr.Verdict = Ok // see certify
				return
			}
			pr.run.build()
			pr.check(res.model, timeout, deadline)
		})
	}
	wg.Wait()
	res.Verdict = Ok
	if len(ids) == 0 {
		res.Verdict = Inconclusive
	}
	for i := range res.Partitions {
		pr := &res.Partitions[i]
		if pr.run != nil {
			res.Operations += pr.run.size
		}
		switch pr.Verdict {
		case Illegal:
			res.Verdict = Illegal
			res.Violations = append(res.Violations, *pr.Violation)
		case Inconclusive:
			if res.Verdict == Ok {
				res.Verdict = Inconclusive
			}
		}
	}
	res.Elapsed = time.Since(start)
	return res
}

// partitionIDs are the partitions the trace names, in order: not the
// header's count, which a trace only claims (a partition the header has and
// no event names has no history, and its missing read-back is the caller's
// to see).
func (c *Checker) partitionIDs() []int32 {
	return slices.Sorted(maps.Keys(c.parts))
}

func (pr *PartitionResult) count(p *partition) {
	pr.Batches, pr.Records = p.ops.n, len(p.log)
	for i := range p.ops.n {
		switch p.ops.at(i).out.kind {
		case acked, ackedAnyOffset:
			pr.Acked++
		case failed:
			pr.Failed++
		default:
			pr.Unknown++
		}
	}
}

// uncheckable says why p's history cannot be decided by the model, or "".
func (c *Checker) uncheckable(p *partition) string {
	if p == nil || p.read == nil {
		return "no ReadBack: the partition's log was not read back, so nothing can be checked"
	}
	if len(p.problems) > 0 {
		return "the trace cannot be turned into operations: " + strings.Join(p.problems, "; ")
	}
	foreign, first := 0, -1
	known, isKnown := int64(0), false // the last producer id found the trace's: most records have it
	for i := range p.log {
		r := &p.log[i]
		if r.ID >= 0 && isKnown && r.PID == known {
			continue
		}
		if r.ID < 0 || !c.pids[r.PID] {
			if foreign++; first < 0 {
				first = i
			}
			continue
		}
		known, isKnown = r.PID, true
	}
	if foreign > 0 {
		r := p.log[first]
		return fmt.Sprintf("%d of the %d records read back were not written by kcheck (id -1 or a producer id the trace never had), the first at offset %d (producer %d, id %d): no operation can explain them",
			foreign, len(p.log), r.Offset, r.PID, r.ID)
	}
	for i, r := range p.log {
		if r.Offset != int64(i) {
			return fmt.Sprintf("the read-back has offset %d at position %d: the model needs a log at offsets 0, 1, 2, … (no retention, compaction or transaction markers)", r.Offset, i)
		}
	}
	return ""
}

// segmentOps is how many appends a segment holds before it may close.
const segmentOps = 1024

// history builds p's Porcupine history in segments (see doc.go, "Segments"):
// each segment's produce operations in call order, an operation that starts
// it from the read-back (all but the first) and a read of the read-back up to
// its end, every operation on a visualization row no other overlaps.
func (c *Checker) history(p *partition) *partRun {
	run := c.plan(p)
	run.build()
	return run
}

// plan places p's operations in the read-back, cuts the history into
// segments and has certify try to linearize them; build makes the history.
func (c *Checker) plan(p *partition) *partRun {
	log := p.readBack.ids
	t := &p.ops
	at := placeOps(p, c.shared)
	var appenders []int
	for i := range t.n {
		if at[i] >= 0 && t.at(i).out.kind != failed {
			appenders = append(appenders, i)
		}
	}
	byAt := func(a, b int) int { return cmp.Compare(at[a], at[b]) }
	if !slices.IsSortedFunc(appenders, byAt) {
		slices.SortStableFunc(appenders, byAt)
	}
	// Cut before an appender when it and every later one were called no
	// sooner than every earlier one.
	seg := make([]int32, t.n)
	from := []int64{0}         // per segment, its first offset
	firstCall := []int64{minT} // per segment, its appenders' earliest call
	later := make([]int64, len(appenders)+1)
	later[len(appenders)] = maxT
	for j := len(appenders) - 1; j >= 0; j-- {
		later[j] = min(later[j+1], t.at(appenders[j]).call)
	}
	maxCall, n := int64(minT), 0
	for j, i := range appenders {
		if n >= c.segmentOps && maxCall <= later[j] && at[i] > at[appenders[j-1]] {
			from, firstCall, n = append(from, at[i]), append(firstCall, later[j]), 0
		}
		seg[i] = int32(len(from) - 1)
		maxCall, n = max(maxCall, t.at(i).call), n+1
	}
	for i := range t.n {
		if o := t.at(i); at[i] < 0 || o.out.kind == failed { // by call time
			k, _ := slices.BinarySearch(firstCall, o.call+1)
			seg[i] = int32(max(k-1, 0))
		}
	}
	bounds := append(slices.Clone(from[1:]), int64(len(log))) // per segment, its end
	return &partRun{p: p, segFrom: from, segTo: bounds, size: t.n + 2*len(from) - 1,
		linearized: certify(p, c.end, at, seg, appenders, from, bounds),
		trace:      *t, texts: c.texts.All(), end: c.end, at: at, seg: seg}
}

// build makes the history plan planned, once.
func (run *partRun) build() {
	run.built.Do(func() {
		p, seg, from, bounds := run.p, run.seg, run.segFrom, run.segTo
		log := p.readBack.ids
		ops := p.opsOf(&run.trace, run.texts)
		// The states the segments start and end in: the read-back's prefixes.
		states := prefixStates(log, append(slices.Clone(from), int64(len(log))))
		run.ops, run.mine = make([]porcupine.Operation, 0, run.size), make([]*op, 0, run.size)
		run.segs = make([][]int, len(from))
		metas := make([]meta, run.size)
		add := func(o *op, seg int32, in, out any, call, ret int64) {
			metas[len(run.ops)] = meta{o, seg}
			run.ops = append(run.ops, porcupine.Operation{Input: in, Call: call, Output: out, Return: ret, Metadata: &metas[len(run.ops)]})
			run.mine = append(run.mine, o)
		}
		segCall := make([]int64, len(from)) // per segment, its earliest call
		for k := range segCall {
			segCall[k] = maxT
		}
		for i, o := range ops {
			add(o, seg[i], o.in, o.out, o.call, returns(o.out.kind, o.ret, run.end))
			segCall[seg[i]] = min(segCall[seg[i]], o.call)
		}
		for k := range from {
			if k > 0 {
				start := &op{start: true, callLine: p.read.callLine}
				add(start, int32(k), startInput{p.id, states[from[k]]}, nil, segCall[k]-2, segCall[k]-1)
			}
			// The read is after every other operation returned (intervals are closed).
			add(p.read, int32(k), readInput{p.id}, readOutput{states[bounds[k]]}, run.end+1, run.end+2)
		}
		// In call order, ties in the order added.
		byCall := func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) }
		if !slices.IsSortedFunc(run.ops, byCall) {
			perm := make([]int, len(run.ops))
			for i := range perm {
				perm[i] = i
			}
			slices.SortStableFunc(perm, func(a, b int) int { return byCall(run.ops[a], run.ops[b]) })
			ops, mine := make([]porcupine.Operation, len(perm)), make([]*op, len(perm))
			for i, j := range perm {
				ops[i], mine[i] = run.ops[j], run.mine[j]
			}
			run.ops, run.mine = ops, mine
		}
		segLen := make([]int, len(from))
		for _, m := range metas {
			segLen[m.seg]++
		}
		for k := range run.segs {
			run.segs[k] = make([]int, 0, segLen[k])
		}
		var rows rowHeap // the rows in use, the one free soonest first
		for i := range run.ops {
			o := &run.ops[i]
			row := len(rows)
			if len(rows) > 0 && rows[0].until < o.Call {
				row = rows[0].row
				rows[0].until = o.Return
				heap.Fix(&rows, 0)
			} else {
				heap.Push(&rows, busyRow{o.Return, row})
			}
			o.ClientId = row
			seg := o.Metadata.(*meta).seg
			run.segs[seg] = append(run.segs[seg], i)
		}
		run.clients = len(rows)
		run.trace, run.texts, run.at, run.seg = chunks[opTrace]{}, nil, nil, nil // built: no longer needed
	})
}

// returns is when an operation that ended as kind at ret returns in the
// history: at ret, or for an unknown outcome at the end of the history, as
// it may be appended at any time before the read.
func returns(kind outcomeKind, ret, end int64) int64 {
	if kind == pending || kind == unknown {
		return end
	}
	return ret
}

// certify reports whether it can build a linearization of every segment of
// p's history directly, as it can for any log an idempotent producer wrote
// correctly; false says only that Porcupine must search. end is the end of
// the history; at, seg, appenders, from and to are plan's.
//
// The linearization: in each segment, the appenders (operations placed in
// the read-back, other than failed ones) append in offset order, and every
// other operation leaves the log as it is. It is legal if
//
//   - the appenders' records tile the segment's part of the read-back, from
//     its first offset to its end, so that each appends where the log ends
//     (its step allows it: the read-back holds its records there), the log
//     after them is the segment's end of the read-back (the read allows it),
//     and each acknowledged one with an offset appends at that offset;
//   - every acknowledged operation is an appender: no other step allows it;
//     a failed operation, or one with an unknown outcome left out, leaves
//     the log as it is, which its step always allows;
//   - real time allows the order: give each appender, in offset order, the
//     point max(its call, the previous appender's point) and every other
//     operation its call; if each point is at most its operation's return,
//     then sorting the operations by point (appenders among themselves in
//     offset order) puts a before b whenever a returned before b was
//     called. The start comes before every call and the read after every
//     return, as build places them.
//
// So the history is linearizable and Porcupine, which is complete, would
// find it Ok: certify changes no verdict, it spares the search.
func certify(p *partition, end int64, at []int64, seg []int32, appenders []int, from, to []int64) bool {
	for i := range p.ops.n {
		o := p.ops.at(i)
		if o.call > returns(o.out.kind, o.ret, end) {
			return false
		}
		appends := at[i] >= 0 && o.out.kind != failed
		switch {
		case o.out.kind == acked && (!appends || o.out.offset != at[i]):
			return false
		case o.out.kind == ackedAnyOffset && !appends:
			return false
		}
	}
	k, tail, point := 0, from[0], int64(minT) // the segment, where its log ends, the last point
	for _, i := range appenders {
		if int(seg[i]) != k { // the segment is over: its log must end at its end
			if tail != to[k] || int(seg[i]) != k+1 {
				return false
			}
			k, tail, point = k+1, from[k+1], minT
		}
		o := p.ops.at(i)
		if at[i] != tail {
			return false
		}
		tail += int64(o.n)
		if point = max(point, o.call); point > returns(o.out.kind, o.ret, end) {
			return false
		}
	}
	if tail != to[k] {
		return false
	}
	return k == len(from)-1
}

// placeOps returns, for each of p's operations, the offset where the
// read-back holds its records, whole and in order: the first such offset
// that holds its first record; -1 if none. Only there can it append. Of
// operations whose records begin with the same id, only the last sent is
// placed. shared says whether a record id was sent twice.
func placeOps(p *partition, shared bool) []int64 {
	log := p.readBack.ids
	t := &p.ops
	at := make([]int64, t.n)
	for i := range at {
		at[i] = -1
	}
	firstOf := func(i int) int64 { o := t.at(i); return (*p.ids.at(int(o.slab)))[o.first] }
	if shared {
		byFirst := make(map[int64]int, t.n) // first record id → operation
		for i := range t.n {
			byFirst[firstOf(i)] = i
		}
		for off, id := range log {
			if i, ok := byFirst[id]; ok && at[i] < 0 && p.readBack.holds(int64(off), p.recs(t.at(i))) {
				at[i] = int64(off)
			}
		}
		return at
	}
	// No record id was sent twice, so at most one operation begins with an
	// id, and an operation's records after its first begin none: once it
	// is placed, the search goes on after them. The operation is most often
	// the one after the last placed, or one of the next few (those before
	// it failed, or expired unwritten); failing that, a map finds it.
	next := 0
	var byFirst map[int64]int
	for off := 0; off < len(log); off++ {
		id := log[off]
		i := -1
		for j := next; j < min(next+4, t.n); j++ {
			if firstOf(j) == id {
				i = j
				break
			}
		}
		if i < 0 {
			if byFirst == nil {
				byFirst = make(map[int64]int, t.n)
				for j := range t.n {
					byFirst[firstOf(j)] = j
				}
			}
			j, ok := byFirst[id]
			if !ok {
				continue
			}
			i = j
		}
		if recs := p.recs(t.at(i)); at[i] < 0 && p.readBack.holds(int64(off), recs) {
			at[i] = int64(off)
			next = i + 1
			off += len(recs) - 1
		}
	}
	return at
}

// busyRow is a visualization row and when its last operation returns.
type busyRow struct {
	until int64
	row   int
}

// rowHeap is a min-heap of rows by until.
type rowHeap []busyRow

func (h rowHeap) Len() int           { return len(h) }
func (h rowHeap) Less(i, j int) bool { return h[i].until < h[j].until }
func (h rowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rowHeap) Push(x any)        { *h = append(*h, x.(busyRow)) }
func (h *rowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

const minT, maxT = math.MinInt64, math.MaxInt64

// prefixStates returns the states of the log's prefixes of the given lengths.
func prefixStates(log []int64, lengths []int64) map[int64]state {
	slices.Sort(lengths)
	out := make(map[int64]state, len(lengths)+1)
	var s state
	var n int64
	for _, l := range lengths {
		h1, h2, p1, p2 := hashIDs(log[n:l])
		s = state{n: l, h1: s.h1*p1 + h1, h2: s.h2*p2 + h2}
		out[l], n = s, l
	}
	return out
}

// check runs Porcupine on the partition's history and sets its verdict.
func (pr *PartitionResult) check(model porcupine.Model, timeout time.Duration, deadline time.Time) {
	start := time.Now()
	defer func() { pr.Elapsed = time.Since(start) }()
	var budget time.Duration // 0: Porcupine's no limit
	if !deadline.IsZero() {
		if budget = time.Until(deadline); budget <= 0 {
			pr.Verdict = Inconclusive
			pr.Reason = fmt.Sprintf("timed out: the %v budget was spent before Porcupine could start on this partition (%d operations)", timeout, pr.run.size)
			return
		}
	}
	res, info := porcupine.CheckOperationsVerbose(model, pr.run.ops, budget)
	pr.run.info = info
	switch res {
	case porcupine.Ok:
		pr.Verdict = Ok
	case porcupine.Illegal:
		v := pr.run.explain(info)
		pr.Verdict, pr.Reason, pr.Violation = Illegal, v.Detail, &v
	default:
		pr.Verdict = Inconclusive
		pr.Reason = fmt.Sprintf("timed out: Porcupine did not finish within the %v budget (%d operations)", timeout, len(pr.run.ops))
	}
}
