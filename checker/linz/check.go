package linz

import (
	"cmp"
	"container/heap"
	"fmt"
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
	Partitions []PartitionResult   // one per partition, in increasing order
	Violations []checker.Violation // one per Illegal partition, in partition order

	Events     int           // events added
	Operations int           // operations Porcupine was given: batches, and per segment a read (and a start)
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
	run     *partRun // nil if Porcupine was not run
}

// partRun is one partition's Porcupine history and what the check found.
type partRun struct {
	p       *partition
	ops     []porcupine.Operation // every segment's operations (start, batches, read), in call order
	mine    []*op                 // ops[i]'s op (a segment's read is the ReadBack's op)
	segs    [][]int               // per segment, its operations' indices in ops
	segFrom []int64               // per segment, the offset it starts at
	segTo   []int64               // per segment, the offset it ends before
	clients int                   // visualization rows used
	info    porcupine.LinearizationInfo
}

// Check runs Porcupine on every partition's history, in parallel, within
// timeout (0 or less: no limit). A partition Porcupine cannot finish in time
// is Inconclusive, never Ok. Check does not change c.
func (c *Checker) Check(timeout time.Duration) Result {
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
		if p != nil {
			pr.count(p)
		}
		if reason := c.uncheckable(p); reason != "" {
			pr.Verdict, pr.Reason = Inconclusive, reason
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			pr.run = c.history(p)
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
			res.Operations += len(pr.run.ops)
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

// partitionIDs are the header's partitions and any other the trace named.
func (c *Checker) partitionIDs() []int32 {
	ids := make([]int32, 0, max(int(c.h.Partitions), len(c.parts)))
	for p := int32(0); p < c.h.Partitions; p++ {
		ids = append(ids, p)
	}
	for p := range c.parts {
		if p < 0 || p >= c.h.Partitions {
			ids = append(ids, p)
		}
	}
	slices.Sort(ids)
	return ids
}

func (pr *PartitionResult) count(p *partition) {
	pr.Batches, pr.Records = len(p.ops), len(p.log)
	for _, o := range p.ops {
		switch o.out.kind {
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
	for i, r := range p.log {
		if r.ID < 0 || !c.pids[r.PID] {
			if foreign++; first < 0 {
				first = i
			}
		}
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
	log := p.readBack.ids
	// Where each operation's records lie in the read-back, whole and in
	// order: it can append only there. Failed ones never append.
	at := make([]int64, len(p.ops))
	byFirst := make(map[int64]int, len(p.ops)) // first record id → operation
	for i, o := range p.ops {
		at[i] = -1
		byFirst[o.in.recs[0]] = i
	}
	for off, id := range log {
		if i, ok := byFirst[id]; ok && at[i] < 0 && p.readBack.holds(int64(off), p.ops[i].in.recs) {
			at[i] = int64(off)
		}
	}
	var appenders []int
	for i, o := range p.ops {
		if at[i] >= 0 && o.out.kind != failed {
			appenders = append(appenders, i)
		}
	}
	slices.SortStableFunc(appenders, func(a, b int) int { return cmp.Compare(at[a], at[b]) })
	// Cut before an appender when it and every later one were called no
	// sooner than every earlier one.
	seg := make([]int32, len(p.ops))
	from := []int64{0}         // per segment, its first offset
	firstCall := []int64{minT} // per segment, its appenders' earliest call
	later := make([]int64, len(appenders)+1)
	later[len(appenders)] = maxT
	for j := len(appenders) - 1; j >= 0; j-- {
		later[j] = min(later[j+1], p.ops[appenders[j]].call)
	}
	maxCall, n := int64(minT), 0
	for j, i := range appenders {
		if n >= c.segmentOps && maxCall <= later[j] && at[i] > at[appenders[j-1]] {
			from, firstCall, n = append(from, at[i]), append(firstCall, later[j]), 0
		}
		seg[i] = int32(len(from) - 1)
		maxCall, n = max(maxCall, p.ops[i].call), n+1
	}
	for i, o := range p.ops {
		if at[i] < 0 || o.out.kind == failed { // by call time
			k, _ := slices.BinarySearch(firstCall, o.call+1)
			seg[i] = int32(max(k-1, 0))
		}
	}
	type item struct {
		o         *op
		seg       int32
		in, out   any
		call, ret int64
	}
	items := make([]item, 0, len(p.ops)+2*len(from))
	segCall := make([]int64, len(from)) // per segment, its earliest call
	for k := range segCall {
		segCall[k] = maxT
	}
	for i, o := range p.ops {
		ret := o.ret
		if o.out.kind == pending || o.out.kind == unknown {
			ret = c.end // it may be appended at any time before the read
		}
		items = append(items, item{o, seg[i], o.in, o.out, o.call, ret})
		segCall[seg[i]] = min(segCall[seg[i]], o.call)
	}
	// The states the segments start and end in: the read-back's prefixes.
	bounds := append(slices.Clone(from[1:]), int64(len(log))) // per segment, its end
	states := prefixStates(log, append(slices.Clone(from), int64(len(log))))
	for k := range from {
		if k > 0 {
			start := &op{start: true, callLine: p.read.callLine}
			items = append(items, item{start, int32(k), startInput{p.id, states[from[k]]}, nil, segCall[k] - 2, segCall[k] - 1})
		}
		// The read is after every other operation returned (intervals are closed).
		items = append(items, item{p.read, int32(k), readInput{p.id}, readOutput{states[bounds[k]]}, c.end + 1, c.end + 2})
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.call, b.call) })
	run := &partRun{p: p, ops: make([]porcupine.Operation, 0, len(items)), mine: make([]*op, 0, len(items)),
		segs: make([][]int, len(from)), segFrom: from, segTo: bounds}
	var rows rowHeap // the rows in use, the one free soonest first
	for _, it := range items {
		row := len(rows)
		if len(rows) > 0 && rows[0].until < it.call {
			row = rows[0].row
			rows[0].until = it.ret
			heap.Fix(&rows, 0)
		} else {
			heap.Push(&rows, busyRow{it.ret, row})
		}
		run.segs[it.seg] = append(run.segs[it.seg], len(run.ops))
		run.ops = append(run.ops, porcupine.Operation{ClientId: row, Input: it.in, Call: it.call, Output: it.out, Return: it.ret, Metadata: meta{it.o, it.seg}})
		run.mine = append(run.mine, it.o)
	}
	run.clients = len(rows)
	return run
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
			pr.Reason = fmt.Sprintf("timed out: the %v budget was spent before Porcupine could start on this partition (%d operations)", timeout, len(pr.run.ops))
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
