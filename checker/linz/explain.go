package linz

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/kcheck/kcheck/checker"
)

// stepAll is step over a set of states, as Porcupine's nondeterministic model
// applies it.
func stepAll(states []state, o porcupine.Operation) []state {
	var next []state
	for _, s := range states {
		next = append(next, step(s, o.Input, o.Output)...)
	}
	return uniqueStates(next)
}

// explain turns an Illegal verdict into a violation: in the first segment
// Porcupine could not linearize, it replays the longest partial linearization
// and names the operations that could come next in real time but that no
// state reached allows, and why.
func (r *partRun) explain(info porcupine.LinearizationInfo) checker.Violation {
	parts := info.PartialLinearizations()
	for k, idx := range r.segs {
		if k >= len(parts) {
			break
		}
		var partial []int
		for _, l := range parts[k] {
			if len(l) > len(partial) {
				partial = l
			}
		}
		if len(partial) == len(idx) {
			continue // linearized
		}
		global := make([]int, len(partial))
		for i, l := range partial {
			global[i] = idx[l]
		}
		if v, ok := r.explainSegment(k, global); ok {
			return v
		}
	}
	// Only when a timeout cut Porcupine's search short elsewhere: say what
	// the read-back shows.
	d := r.readDiag()
	v := checker.Violation{Kind: checker.NotLinearizable, Partition: r.p.id, Seq: -1,
		Detail: fmt.Sprintf("Porcupine found no linearization, and the read-back (line %d) shows: %s", r.p.read.callLine, d.text)}
	if d.o != nil {
		setBatch(&v, d.o)
	}
	v.Lines = cleanLines(append(d.lines, r.p.read.callLine))
	return v
}

// explainSegment explains segment k's partial linearization (indices into
// r.ops); it reports false if some operation could still follow it (the
// search was cut short, not stuck).
func (r *partRun) explainSegment(k int, partial []int) (checker.Violation, bool) {
	idx := r.segs[k]
	placed := make(map[int]bool, len(partial))
	states := []state{{}}
	produced := 0
	for _, id := range partial {
		states = stepAll(states, r.ops[id])
		placed[id] = true
		if r.mine[id].in != nil {
			produced++
		}
	}
	// The operations that may be linearized next: no unplaced operation
	// returned before they were called.
	firstRet := int64(math.MaxInt64)
	for _, id := range idx {
		if !placed[id] {
			firstRet = min(firstRet, r.ops[id].Return)
		}
	}
	var blocked []int // in call order; the segment's read, if there, is last
	for _, id := range idx {
		if !placed[id] && r.ops[id].Call <= firstRet && len(stepAll(states, r.ops[id])) == 0 {
			blocked = append(blocked, id)
		}
	}
	if len(blocked) == 0 {
		return checker.Violation{}, false
	}
	v := checker.Violation{Kind: checker.NotLinearizable, Partition: r.p.id, Seq: -1}
	var lines []int
	if f := r.mine[blocked[0]]; f.read {
		d := r.readDiag()
		what := fmt.Sprintf("the read-back (line %d, %d records)", f.callLine, len(r.p.log))
		if len(r.segs) > 1 {
			what = fmt.Sprintf("offsets %d to %d of the read-back (line %d, %d records; segment %d of %d)",
				r.segFrom[k], r.segTo[k]-1, f.callLine, len(r.p.log), k+1, len(r.segs))
		}
		v.Detail = fmt.Sprintf("%s cannot be built by the operations: %s (Porcupine linearized all %s before the read)",
			what, d.text, plural(produced, "produce operation"))
		if d.o != nil {
			setBatch(&v, d.o)
		}
		lines = append(d.lines, f.callLine)
	} else {
		ends := make([]string, 0, len(states))
		for _, s := range states {
			ends = append(ends, fmt.Sprint(s.n))
		}
		ends = slices.Compact(ends)
		before := "no operation can be linearized before it, so the log is empty"
		switch {
		case r.segFrom[k] > 0 && produced == 0:
			before = fmt.Sprintf("no operation can be linearized before it in its segment, so the log ends at offset %d", r.segFrom[k])
		case produced > 0:
			before = fmt.Sprintf("after the %s Porcupine could linearize before it, the log ends at offset %s", plural(produced, "operation"), strings.Join(ends, " or "))
			if r.segFrom[k] > 0 {
				before = fmt.Sprintf("after the %s Porcupine could linearize before it in its segment (from offset %d), the log ends at offset %s",
					plural(produced, "operation"), r.segFrom[k], strings.Join(ends, " or "))
			}
		}
		v.Detail = fmt.Sprintf("%s, sent on line %d and %s on line %d, cannot be placed: %s; %s",
			describeBatch(f), f.callLine, f.how(), f.outLine, before, r.whyNot(blocked[0], partial, &lines))
		setBatch(&v, f)
		lines = append(lines, f.callLine, f.outLine)
		if n := len(blocked) - 1; n > 0 {
			v.Detail += fmt.Sprintf(" (%s cannot come next either)", plural(n, "other operation"))
		}
		lines = append(lines, r.p.read.callLine)
	}
	v.Lines = cleanLines(lines)
	return v, true
}

// whyNot explains why the acknowledged operation ops[id] cannot follow the
// partial linearization, adding the lines it cites.
func (r *partRun) whyNot(id int, partial []int, lines *[]int) string {
	f := r.mine[id]
	if f.out.kind == acked {
		// Real time: an operation acknowledged before f was sent, at an
		// offset f's cannot be below.
		for _, j := range partial {
			y := r.mine[j]
			if y.in == nil || y.out.kind != acked || r.ops[j].Return >= r.ops[id].Call || y.out.offset+int64(len(y.in.recs)) <= f.out.offset {
				continue
			}
			*lines = append(*lines, y.outLine)
			if y.out.offset <= f.out.offset {
				return fmt.Sprintf("batch %d, acknowledged at offset %d on line %d before batch %d was sent, already holds offset %d",
					y.in.batch, y.out.offset, y.outLine, f.in.batch, f.out.offset)
			}
			return fmt.Sprintf("batch %d was acknowledged at offset %d on line %d before batch %d was sent, so batch %d cannot be at the lower offset %d",
				y.in.batch, y.out.offset, y.outLine, f.in.batch, f.in.batch, f.out.offset)
		}
	}
	log := r.p.readBack.ids
	at := int64(slices.Index(log, f.in.recs[0]))
	switch {
	case at < 0 || !r.p.readBack.holds(at, f.in.recs):
		var missing []int64
		for _, id := range f.in.recs {
			if !slices.Contains(log, id) {
				missing = append(missing, id)
			}
		}
		switch len(missing) {
		case len(f.in.recs):
			return "the read-back holds none of its records"
		case 0:
			return "the read-back holds its records, but not together and in order"
		}
		return fmt.Sprintf("the read-back holds %d of its %d records (missing: %s)", len(f.in.recs)-len(missing), len(f.in.recs), idRange(missing))
	case f.out.kind == acked && at != f.out.offset:
		if f.out.offset >= int64(len(log)) {
			return fmt.Sprintf("the read-back holds it at offset %d and ends at offset %d", at, len(log))
		}
		if r.p.readBack.holds(f.out.offset, f.in.recs) {
			return fmt.Sprintf("the read-back holds it twice, at offsets %d and %d, and nothing else can fill offsets %d to %d",
				at, f.out.offset, at, at+int64(len(f.in.recs))-1)
		}
		text := fmt.Sprintf("the read-back holds it at offset %d and record %d at offset %d", at, log[f.out.offset], f.out.offset)
		if j, ok := r.owners()[log[f.out.offset]]; ok {
			o := r.mine[j]
			*lines = append(*lines, o.lines()...)
			text += fmt.Sprintf(", of batch %d (%s)", o.in.batch, o.how())
		}
		return text
	}
	// f is where it belongs: what lies below it is wrong.
	byID := r.owners()
	for _, rec := range log[:at] {
		if j, ok := byID[rec]; ok && r.ops[j].Call > r.ops[id].Return {
			b := r.mine[j]
			*lines = append(*lines, b.callLine)
			return fmt.Sprintf("the read-back holds it at offset %d, above batch %d, which was sent on line %d, after batch %d was acknowledged",
				at, b.in.batch, b.callLine, f.in.batch)
		}
	}
	d := r.readDiag()
	*lines = append(*lines, d.lines...)
	return fmt.Sprintf("the read-back holds it at offset %d, but %s", at, d.text)
}

// owners maps each record id to the index of the operation that sent it.
func (r *partRun) owners() map[int64]int {
	byID := make(map[int64]int)
	for i, o := range r.mine {
		if o.in != nil {
			for _, id := range o.in.recs {
				byID[id] = i
			}
		}
	}
	return byID
}

// diag is a finding about the read-back: what is wrong, the lines that show
// it, and the batch it is about (or nil).
type diag struct {
	text  string
	lines []int
	o     *op
}

// readDiag says why the read-back is no log the operations can build, from
// the log's contents: a record written twice, a record no batch carries, a
// failed batch present, an acknowledged batch missing or elsewhere, a batch
// split, or two batches in an order real time forbids.
func (r *partRun) readDiag() diag {
	log := r.p.log
	byID := r.owners()
	owner := func(id int64) string {
		if i, ok := byID[id]; ok {
			return fmt.Sprintf("record %d of batch %d", id, r.mine[i].in.batch)
		}
		return fmt.Sprintf("record %d", id)
	}
	pos := make(map[int64]int64, len(log)) // record id → its first offset
	for i, rec := range log {
		if first, dup := pos[rec.ID]; dup {
			d := diag{text: fmt.Sprintf("%s is in the log twice, at offsets %d and %d", owner(rec.ID), first, i)}
			if j, ok := byID[rec.ID]; ok {
				d.o = r.mine[j]
				d.lines = r.mine[j].lines()
			}
			return d
		}
		pos[rec.ID] = int64(i)
	}
	for i, rec := range log {
		j, ok := byID[rec.ID]
		if !ok {
			return diag{text: fmt.Sprintf("offset %d holds record %d, which no SendNew of this trace carries", i, rec.ID)}
		}
		if o := r.mine[j]; o.out.kind == failed {
			return diag{text: fmt.Sprintf("offset %d holds record %d of %s, which %s on line %d, so it must not have been written",
				i, rec.ID, describeBatch(o), o.how(), o.outLine), lines: o.lines(), o: o}
		}
	}
	for _, o := range r.mine {
		if o.in == nil || (o.out.kind != acked && o.out.kind != ackedAnyOffset) {
			continue
		}
		missing := 0
		for _, id := range o.in.recs {
			if _, ok := pos[id]; !ok {
				missing++
			}
		}
		switch {
		case missing == len(o.in.recs):
			return diag{text: fmt.Sprintf("%s, %s on line %d, is missing from the read-back", describeBatch(o), o.how(), o.outLine), lines: o.lines(), o: o}
		case missing > 0:
			return diag{text: fmt.Sprintf("%d of the %d records of %s, %s on line %d, are missing from the read-back", missing, len(o.in.recs), describeBatch(o), o.how(), o.outLine), lines: o.lines(), o: o}
		}
		if at := pos[o.in.recs[0]]; o.out.kind == acked && at != o.out.offset {
			text := fmt.Sprintf("%s was acknowledged at offset %d on line %d, but the read-back holds it at offset %d", describeBatch(o), o.out.offset, o.outLine, at)
			if o.out.offset < int64(len(log)) {
				text += fmt.Sprintf(" and %s at offset %d", owner(log[o.out.offset].ID), o.out.offset)
			} else {
				text += fmt.Sprintf(" and ends at offset %d", len(log))
			}
			return diag{text: text, lines: o.lines(), o: o}
		}
	}
	// Every batch present is whole and in order.
	type placedOp struct {
		i  int
		at int64
	}
	var present []placedOp
	for i, o := range r.mine {
		if o.in == nil {
			continue
		}
		at, ok := pos[o.in.recs[0]]
		for k, id := range o.in.recs {
			p, in := pos[id]
			if in != ok || (ok && p != at+int64(k)) {
				return diag{text: fmt.Sprintf("%s is not whole and in order in the log: %s is %s", describeBatch(o), owner(id), where(p, in)), lines: o.lines(), o: o}
			}
		}
		if ok {
			present = append(present, placedOp{i, at})
		}
	}
	// Real time: if a returned before b was called, a is below b in the log.
	slices.SortFunc(present, func(a, b placedOp) int { return cmp.Compare(b.at, a.at) })
	earliest := -1 // among the batches above, the one that returned first
	for _, b := range present {
		if earliest >= 0 && r.ops[earliest].Return < r.ops[b.i].Call {
			a, bo := r.mine[earliest], r.mine[b.i]
			return diag{text: fmt.Sprintf("batch %d is at offset %d, below batch %d at offset %d, though batch %d was %s on line %d before batch %d was sent on line %d",
				bo.in.batch, b.at, a.in.batch, pos[a.in.recs[0]], a.in.batch, a.how(), a.outLine, bo.in.batch, bo.callLine),
				lines: []int{a.outLine, bo.callLine}, o: bo}
		}
		if earliest < 0 || r.ops[b.i].Return < r.ops[earliest].Return {
			earliest = b.i
		}
	}
	return diag{text: "no order of the operations that real time allows builds this log"}
}

func where(p int64, in bool) string {
	if !in {
		return "missing"
	}
	return fmt.Sprintf("at offset %d", p)
}

// lines are the trace lines of a produce operation: its SendNew and outcome.
func (o *op) lines() []int {
	if o.outLine > 0 {
		return []int{o.callLine, o.outLine}
	}
	return []int{o.callLine}
}

// describeBatch names a batch the first time a detail mentions it.
func describeBatch(o *op) string {
	return fmt.Sprintf("batch %d (producer %d, epoch %d, seq %d, records %s)", o.in.batch, o.in.pid, o.in.epoch, o.in.seq, idRange(o.in.recs))
}

// setBatch fills in the violation's batch fields from o.
func setBatch(v *checker.Violation, o *op) {
	v.ProducerID, v.Epoch, v.Seq, v.Batch, v.Records = o.in.pid, o.in.epoch, o.in.seq, o.in.batch, o.in.recs
}

// cleanLines sorts lines and drops zeros and repeats.
func cleanLines(lines []int) []int {
	lines = slices.DeleteFunc(lines, func(l int) bool { return l <= 0 })
	slices.Sort(lines)
	return slices.Compact(lines)
}

// plural is "1 operation", "2 operations".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
