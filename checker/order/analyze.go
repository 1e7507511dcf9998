package order

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/tracer"
)

// epKey names a producer epoch.
type epKey struct {
	pid int64
	ep  int16
}

// epoch is what the read-back of one partition holds of one producer epoch:
// the sequences of the records kcheck wrote.
type epoch struct {
	n        int
	min, max int32
	last     int32
	inOrder  bool // every sequence higher than the one before it in the log

	// Built only when the epoch has a hole (holey): the sequences present
	// (from 0), the same in order with where each first is in the log, and
	// the missing sequences that some sent batch was sent with.
	holes   bool
	present seqSet
	seqs    []seqAt
	owned   map[int32]struct{}
}

// seqAt is a sequence present in the log and its first position there.
type seqAt struct{ seq, pos int32 }

// seqSet is a set of sequences from 0: a bitset while they are dense (as a
// producer's are), a map otherwise, so that its size follows what it holds.
type seqSet struct {
	bits []uint64
	m    map[int32]struct{}
}

func newSeqSet(top int32, n int) seqSet {
	if top < 0 {
		return seqSet{} // nothing from 0 to hold
	}
	if int64(top) < 64*int64(n)+4096 {
		return seqSet{bits: make([]uint64, top/64+1)}
	}
	return seqSet{m: map[int32]struct{}{}}
}

func (s *seqSet) has(q int32) bool {
	if s.m != nil {
		_, ok := s.m[q]
		return ok
	}
	return int(q/64) < len(s.bits) && s.bits[q/64]&(1<<(q%64)) != 0
}

// add puts q, which is not negative, in the set.
func (s *seqSet) add(q int32) {
	if s.m != nil {
		s.m[q] = struct{}{}
		return
	}
	s.bits[q/64] |= 1 << (q % 64)
}

func (e *epoch) add(seq int32) {
	if e.n == 0 {
		e.min, e.max, e.inOrder = seq, seq, true
	} else {
		if seq <= e.last {
			e.inOrder = false
		}
		e.min, e.max = min(e.min, seq), max(e.max, seq)
	}
	e.last = seq
	e.n++
}

// holey reports whether some sequence below the highest is missing (or the
// log is not simply 0, 1, 2, ...: then the sets tell).
func (e *epoch) holey() bool {
	return !(e.inOrder && e.min == 0 && int64(e.n) == int64(e.max)+1)
}

// hole reports whether sequence q is missing while a higher one is present.
func (e *epoch) hole(q int32) bool {
	return e != nil && e.holes && q >= 0 && q < e.max && !e.present.has(q)
}

// above returns the lowest sequence present above q and its log position.
func (e *epoch) above(q int32) (int32, int) {
	i, _ := slices.BinarySearchFunc(e.seqs, q+1, func(s seqAt, q int32) int { return cmp.Compare(s.seq, q) })
	i = min(i, len(e.seqs)-1) // the highest is present
	return e.seqs[i].seq, int(e.seqs[i].pos)
}

// analysis is Finish's scratch state, reused from partition to partition:
// per record sent to the partition (index into part.ids), where it is in
// the partition's log.
type analysis struct {
	pos   []int32 // first position in the log, -1 if absent
	pos2  []int32 // second position, if cnt > 1
	cnt   []uint8 // occurrences, saturating
	stats *Stats  // where the partition's counts go
}

// partScan is what one pass over a partition's read-back finds.
type partScan struct {
	c     *Checker
	pt    *part
	log   []tracer.LogRecord
	eps   map[epKey]*epoch
	holey bool // some epoch has a hole
	dense bool // offsets are log[0].Offset, +1, +2, ...
	byOff map[int64]int
}

// at returns the log position of offset off, or -1.
func (s *partScan) at(off int64) int {
	if len(s.log) == 0 {
		return -1
	}
	if s.dense {
		k := off - s.log[0].Offset
		if k < 0 || k >= int64(len(s.log)) {
			return -1
		}
		return int(k)
	}
	if s.byOff == nil {
		s.byOff = make(map[int64]int, len(s.log))
		for k := len(s.log) - 1; k >= 0; k-- {
			s.byOff[s.log[k].Offset] = k
		}
	}
	if k, ok := s.byOff[off]; ok {
		return k
	}
	return -1
}

// firstHole returns the index in b's attempts of the first whose sequence
// for b's record i is a hole in the log, or -1; it marks every such hole as
// owned by a sent batch. eps are the epochs of b's attempts.
func (s *partScan) firstHole(b *batch, eps []*epoch, i int) int {
	found := -1
	for si, e := range eps {
		q := s.c.attempt(b, si).seq + int32(i)
		if e.hole(q) {
			e.owned[q] = struct{}{}
			if found < 0 {
				found = si
			}
		}
	}
	return found
}

// sentAs reports whether b's record i was sent as (pid, ep, seq) in some attempt.
func (c *Checker) sentAs(b *batch, pid int64, ep int16, seq int32, i int) bool {
	if pid != b.pid {
		return false
	}
	for si := range c.attempts(b) {
		if at := c.attempt(b, si); at.ep == ep && at.seq+int32(i) == seq {
			return true
		}
	}
	return false
}

// run checks partition pt's read-back against what was sent to it and
// appends what it finds to out.
func (a *analysis) run(c *Checker, pt *part, out []checker.Violation) []checker.Violation {
	n := pt.ids.n
	a.pos, a.pos2, a.cnt = slices.Grow(a.pos[:0], n)[:n], slices.Grow(a.pos2[:0], n)[:n], slices.Grow(a.cnt[:0], n)[:n]
	for i := range n {
		a.pos[i], a.pos2[i], a.cnt[i] = -1, -1, 0
	}
	s := &partScan{c: c, pt: pt, log: pt.log, eps: map[epKey]*epoch{}, dense: true}
	log := pt.log

	// One pass over the log: where each record is, each epoch's sequences,
	// and whether each producer's records are in id order.
	type sendOrder struct {
		last int64
		bad  bool
	}
	orders := map[int64]*sendOrder{}
	var unknown []int               // positions of ids no SendNew listed
	misplaced := map[*batch][]int{} // another partition's batch -> positions of its records
	mismatch := map[*batch][]int{}  // batch -> positions where it is not as it was sent
	var lastKey epKey
	var lastEp *epoch
	var lastPID int64
	var lastOrd *sendOrder
	next := 0 // the record the log most likely holds next: the one after the last found
	for k := range log {
		lr := &log[k]
		if lr.Offset != log[0].Offset+int64(k) {
			s.dense = false
		}
		if lr.ID < 0 {
			a.stats.Foreign++
			continue
		}
		a.stats.ReadBack++
		if key := (epKey{lr.PID, lr.Epoch}); lastEp == nil || key != lastKey {
			lastKey, lastEp = key, s.eps[key]
			if lastEp == nil {
				lastEp = &epoch{}
				s.eps[key] = lastEp
			}
		}
		lastEp.add(lr.Seq)
		// A record sent once is where c.rec says; checking the likely one
		// first spares most lookups in c.rec, which are cache misses.
		var rf ref
		if next < n && pt.reused == nil && pt.ids.at(next) == lr.ID {
			rf = refOf(pt.num, next)
		} else {
			var ok bool
			if rf, ok = c.rec.Get(lr.ID); !ok {
				unknown = append(unknown, k)
				continue
			}
		}
		if rf.Part() != pt.num {
			b := c.owner(rf)
			misplaced[b] = append(misplaced[b], k)
			continue
		}
		r := rf.I()
		next = r + 1
		b := pt.bs.at(int(pt.owner.at(r)))
		if !c.sentAs(b, lr.PID, lr.Epoch, lr.Seq, r-b.first) {
			mismatch[b] = append(mismatch[b], k)
		}
		switch a.cnt[r] {
		case 0:
			a.pos[r] = int32(k)
			if lastOrd == nil || b.pid != lastPID {
				lastPID, lastOrd = b.pid, orders[b.pid]
				if lastOrd == nil {
					lastOrd = &sendOrder{last: lr.ID}
					orders[b.pid] = lastOrd
				}
			}
			if lr.ID < lastOrd.last {
				lastOrd.bad = true
			}
			lastOrd.last = lr.ID
		case 1:
			a.pos2[r] = int32(k)
		}
		if a.cnt[r] < 255 {
			a.cnt[r]++
		}
	}

	// Epochs with a hole get their sets, from a second pass.
	for _, e := range s.eps {
		if e.holey() {
			e.holes, e.present, e.owned = true, newSeqSet(e.max, e.n), map[int32]struct{}{}
			s.holey = true
		}
	}
	if s.holey {
		for k := range log {
			lr := &log[k]
			if lr.ID < 0 {
				continue
			}
			e := s.eps[epKey{lr.PID, lr.Epoch}]
			if !e.holes || lr.Seq < 0 || e.present.has(lr.Seq) {
				continue
			}
			e.present.add(lr.Seq)
			e.seqs = append(e.seqs, seqAt{lr.Seq, int32(k)})
		}
		for _, e := range s.eps {
			// Sorted already unless the log is out of order.
			byseq := func(a, b seqAt) int { return cmp.Compare(a.seq, b.seq) }
			if !slices.IsSortedFunc(e.seqs, byseq) {
				slices.SortFunc(e.seqs, byseq)
			}
		}
	}

	for i := range pt.bs.n {
		out = a.batch(s, pt.bs.at(i), out)
	}
	out = s.unowned(out)
	for pid, o := range orders {
		if o.bad {
			out = a.reorder(s, pid, out)
		}
	}
	out = s.strays(unknown, misplaced, mismatch, out)
	return out
}

// batch checks one batch's records against the read-back.
func (a *analysis) batch(s *partScan, b *batch, out []checker.Violation) []checker.Violation {
	c, pt, log := s.c, s.pt, s.log
	var lost, dup, present, gap, wrong []int // indexes of b's records
	// What the application was told against the log: told delivered and
	// absent (lostApp, of a batch the wire did not acknowledge; toldToo, of
	// one it did), delivered elsewhere (wrongApp), told definitely failed
	// and present (presentApp).
	var lostApp, toldToo, wrongApp, presentApp []int
	lostAt, gapAt := -1, -1
	var eps []*epoch // the epochs of b's attempts in the log
	if s.holey {
		for si := range c.attempts(b) {
			eps = append(eps, s.eps[epKey{b.pid, c.attempt(b, si).ep}])
		}
	}
	for i := 0; i < b.n; i++ {
		r := b.first + i
		h := -1
		if s.holey {
			h = s.firstHole(b, eps, i) // also for a reused id: its sequence was sent
		}
		if pt.reused[r] {
			continue
		}
		in := a.cnt[r] > 0
		if a.cnt[r] > 1 {
			dup = append(dup, i)
		}
		tr := pt.toldAt(r)
		if tr != nil && tr.res == toldDelivered {
			switch {
			case !in:
				a.stats.LostTold++
				if b.out == acked {
					toldToo = append(toldToo, i)
				} else {
					lostApp = append(lostApp, i)
					continue // the application's word is the loss, whatever the wire left unknown
				}
			case tr.p >= 0 && tr.p != pt.id, tr.off >= 0 && log[a.pos[r]].Offset != tr.off:
				if !(b.out == acked && b.ackOff >= 0 && tr.off == b.ackOff+int64(i) && tr.p == pt.id) {
					wrongApp = append(wrongApp, i) // not where the application was told; the wire's own offset is checked below
				}
			}
		}
		if in && b.out != failed && c.definite(tr) {
			presentApp = append(presentApp, i)
		}
		switch b.out {
		case acked:
			if !in {
				lost = append(lost, i)
			} else if b.ackOff >= 0 {
				if k := s.at(b.ackOff + int64(i)); k < 0 || log[k].ID != pt.ids.at(r) {
					wrong = append(wrong, i)
				}
			}
		case failed:
			if in {
				present = append(present, i)
			} else if h >= 0 {
				if gapAt < 0 {
					gapAt = h
				}
				gap = append(gap, i)
			}
		default:
			if !in && h >= 0 {
				if lostAt < 0 {
					lostAt = h
				}
				lost = append(lost, i)
			}
		}
	}
	ids := func(is []int) []int64 {
		out := make([]int64, len(is))
		for j, i := range is {
			out[j] = pt.ids.at(b.first + i)
		}
		return out
	}
	seqs := func(at attempt, is []int) []int64 {
		out := make([]int64, len(is))
		for j, i := range is {
			out[j] = int64(at.seq) + int64(i)
		}
		return out
	}
	offs := func(pos []int32, is []int) []int64 {
		out := make([]int64, len(is))
		for j, i := range is {
			out[j] = log[pos[b.first+i]].Offset
		}
		return out
	}
	v := func(kind checker.Kind, at attempt, is []int, ls ...int) checker.Violation {
		return checker.Violation{Kind: kind, Partition: pt.id, ProducerID: b.pid, Epoch: at.ep, Seq: at.seq,
			Batch: b.id, Records: ids(is), Lines: lines(ls...)}
	}
	name := func(at attempt, is []int) string {
		return fmt.Sprintf("%s (batch %d; epoch %d, %s)", recordList(ids(is)), b.id, at.ep, plural("sequence", seqs(at, is)))
	}

	if len(lost) > 0 {
		if b.out == acked {
			at := c.cur(b)
			x := v(checker.Lost, at, lost, b.sent0.line, b.ackLine, pt.shortLine, pt.readLine)
			where := "with no offset (DUPLICATE_SEQUENCE_NUMBER)"
			if b.ackOff >= 0 {
				o := make([]int64, len(lost))
				for j, i := range lost {
					o[j] = b.ackOff + int64(i)
				}
				where = "at " + plural("offset", o)
			}
			app := ""
			if len(toldToo) > 0 {
				app = fmt.Sprintf(" (and to the application: %s)", c.toldList(pt, b, toldToo))
			}
			x.Detail = fmt.Sprintf("%s %s acknowledged on the wire %s%s but %s not in the read-back of partition %d%s.",
				upper(name(at, lost)), were(lost), where, app, are(lost), pt.id, shortfall(pt))
			x.Lines = lines(append(x.Lines, c.toldLines(pt, b, toldToo)...)...)
			out = append(out, x)
		} else {
			at := c.attempt(b, lostAt)
			q, k := s.eps[epKey{b.pid, at.ep}].above(at.seq + int32(lost[0]))
			x := v(checker.Lost, at, lost, at.line, b.endLine, pt.shortLine, pt.readLine)
			x.Detail = fmt.Sprintf("%s %s not in the log, yet sequence %d of epoch %d is (offset %d): the broker took a later sequence without them, so they can no longer be written in epoch %d (KAFKA-14359). The batch %s.",
				upper(name(at, lost)), are(lost), q, at.ep, log[k].Offset, at.ep, c.fate(b))
			out = append(out, x)
		}
	}
	if len(lostApp) > 0 {
		at := c.cur(b)
		x := v(checker.Lost, at, lostApp, append([]int{b.sent0.line, b.ackLine, b.errLine, b.endLine, pt.shortLine, pt.readLine}, c.toldLines(pt, b, lostApp)...)...)
		wire := "the wire shows no success answer for the batch: it " + c.fate(b)
		switch {
		case b.out == pending && b.lastErr != 0:
			wire = fmt.Sprintf("the wire shows no success answer for the batch: its last answer was %s", c.str(b.lastErr))
		case b.out == failed:
			wire = fmt.Sprintf("on the wire the batch definitely failed (%s)", c.str(b.reason))
		}
		x.Detail = fmt.Sprintf("%s %s acknowledged to the application (%s) but %s not in the read-back of partition %d%s; %s.",
			upper(name(at, lostApp)), were(lostApp), c.toldList(pt, b, lostApp), are(lostApp), pt.id, shortfall(pt), wire)
		out = append(out, x)
	}
	if len(wrongApp) > 0 {
		at := c.cur(b)
		x := v(checker.InconsistentOffset, at, wrongApp, append([]int{b.sent0.line, b.ackLine, pt.readLine}, c.toldLines(pt, b, wrongApp)...)...)
		x.Detail = fmt.Sprintf("%s %s told to the application as delivered (%s) but %s at %s of partition %d in the read-back.",
			upper(name(at, wrongApp)), were(wrongApp), c.toldList(pt, b, wrongApp), are(wrongApp), plural("offset", offs(a.pos, wrongApp)), pt.id)
		out = append(out, x)
	}
	if len(presentApp) > 0 {
		at := c.cur(b)
		x := v(checker.FailedPresent, at, presentApp, append([]int{b.sent0.line, pt.readLine}, c.toldLines(pt, b, presentApp)...)...)
		x.Detail = fmt.Sprintf("%s %s in the log at %s, yet the application was told they definitely failed (%s), an error that says the broker refused them.",
			upper(name(at, presentApp)), are(presentApp), plural("offset", offs(a.pos, presentApp)), c.toldList(pt, b, presentApp))
		out = append(out, x)
	}
	if len(dup) > 0 {
		at := c.cur(b)
		x := v(checker.Duplicate, at, dup, b.sent0.line, pt.readLine)
		x.Detail = fmt.Sprintf("%s %s in the log more than once: at %s and again at %s.",
			upper(name(at, dup)), are(dup), plural("offset", offs(a.pos, dup)), plural("offset", offs(a.pos2, dup)))
		out = append(out, x)
	}
	if len(wrong) > 0 {
		at := c.cur(b)
		x := v(checker.InconsistentOffset, at, wrong, b.sent0.line, b.ackLine, pt.readLine)
		acked := make([]int64, len(wrong))
		for j, i := range wrong {
			acked[j] = b.ackOff + int64(i)
		}
		holds := "nothing"
		if k := s.at(acked[0]); k >= 0 {
			if id := log[k].ID; id >= 0 {
				holds = fmt.Sprintf("record %d", id)
			} else {
				holds = fmt.Sprintf("a record kcheck did not write (producer %d)", log[k].PID)
			}
		}
		x.Detail = fmt.Sprintf("%s %s acknowledged at %s but %s at %s in the read-back; offset %d holds %s.",
			upper(name(at, wrong)), were(wrong), plural("offset", acked), are(wrong), plural("offset", offs(a.pos, wrong)), acked[0], holds)
		out = append(out, x)
	}
	if len(present) > 0 {
		at := c.cur(b)
		why := fmt.Sprintf("it was failed as never sent (%s)", c.str(b.reason))
		switch {
		case b.errLine > 0 && c.wire && b.resent:
			why = fmt.Sprintf("its last attempt was answered %s, which is not retriable, every earlier attempt was refused before the append, and the client never sent it again", c.str(b.reason))
		case b.errLine > 0 && c.wire:
			why = fmt.Sprintf("its only attempt was answered %s, which is not retriable, and the client never sent it again", c.str(b.reason))
		case b.errLine > 0:
			why = fmt.Sprintf("the batch failed with %s, which is not retriable", c.str(b.reason))
		}
		x := v(checker.FailedPresent, at, present, b.sent0.line, b.errLine, b.endLine, pt.readLine)
		told := "the application"
		if c.wire {
			told = "the client"
		}
		x.Detail = fmt.Sprintf("%s %s in the log at %s, yet %s was told they definitely failed: %s.",
			upper(name(at, present)), are(present), plural("offset", offs(a.pos, present)), told, why)
		out = append(out, x)
	}
	if len(gap) > 0 {
		at := c.attempt(b, gapAt)
		q, k := s.eps[epKey{b.pid, at.ep}].above(at.seq + int32(gap[0]))
		x := v(checker.Gap, at, gap, at.line, b.endLine, pt.readLine)
		x.Detail = fmt.Sprintf("%s of epoch %d (%s of batch %d) %s missing from the log while sequence %d is at offset %d: the batch definitely failed (%s), yet the producer kept numbering after it without bumping its epoch.",
			upper(plural("sequence", seqs(at, gap))), at.ep, recordList(ids(gap)), b.id, are(gap), q, log[k].Offset, c.str(b.reason))
		out = append(out, x)
	}
	return out
}

// toldLines returns the lines of the Told events of b's records is.
func (c *Checker) toldLines(pt *part, b *batch, is []int) []int {
	out := make([]int, 0, len(is))
	for _, i := range is {
		if tr := pt.toldAt(b.first + i); tr != nil {
			out = append(out, tr.line)
		}
	}
	return out
}

// toldList says what the application was told of b's records is: as
// "delivered at offsets 3-5" or "failed: INVALID_RECORD (the client's
// words)", from the first of them, and the line of its Told.
func (c *Checker) toldList(pt *part, b *batch, is []int) string {
	tr := pt.toldAt(b.first + is[0])
	if tr == nil {
		return "nothing"
	}
	switch tr.res {
	case toldDelivered:
		where := "with no offset"
		if tr.off >= 0 {
			o := make([]int64, len(is))
			for j, i := range is {
				o[j] = pt.toldAt(b.first + i).off
			}
			where = "at " + plural("offset", o)
		}
		if tr.p != pt.id && tr.p >= 0 {
			where += fmt.Sprintf(" of partition %d", tr.p)
		}
		return fmt.Sprintf("delivered %s, line %d", where, tr.line)
	case toldFailed:
		why := c.str(tr.err)
		if w := c.str(tr.why); w != "" {
			why += ": " + w
		}
		return fmt.Sprintf("failed with %s, line %d", why, tr.line)
	}
	return fmt.Sprintf("no answer, line %d", tr.line)
}

// fate says how a batch with an unknown outcome ended.
func (c *Checker) fate(b *batch) string {
	switch b.out {
	case expired:
		return "ended in a delivery timeout, its outcome unknown"
	case closed:
		return fmt.Sprintf("was failed (%s) with its outcome unknown", c.str(b.reason))
	}
	return "had no outcome by the end of the trace"
}

func were(is []int) string {
	if len(is) == 1 {
		return "was"
	}
	return "were"
}

func are(is []int) string {
	if len(is) == 1 {
		return "is"
	}
	return "are"
}

// unowned reports holes in an epoch that no sent batch had the sequence of:
// the producer skipped sequences, or the log holds what the trace never sent.
func (s *partScan) unowned(out []checker.Violation) []checker.Violation {
	keys := make([]epKey, 0, len(s.eps))
	for k, e := range s.eps {
		if e.holes {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b epKey) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.ep, b.ep))
	})
	for _, k := range keys {
		e := s.eps[k]
		if int64(len(e.seqs))+int64(len(e.owned)) >= int64(e.max)+1 {
			continue // every hole is a sent batch's, reported with it
		}
		owned := make([]int32, 0, len(e.owned))
		for q := range e.owned {
			owned = append(owned, q)
		}
		slices.Sort(owned)
		// Walk the holes between present sequences, minus the owned ones.
		var free []int64 // unowned sequences, as range ends: [a0, b0, a1, b1, ...]
		next, o := int32(0), 0
		add := func(lo, hi int32) { // [lo, hi] is missing
			for lo <= hi {
				for o < len(owned) && owned[o] < lo {
					o++
				}
				if o < len(owned) && owned[o] <= hi {
					if owned[o] > lo {
						free = append(free, int64(lo), int64(owned[o])-1)
					}
					lo = owned[o] + 1
					continue
				}
				free = append(free, int64(lo), int64(hi))
				return
			}
		}
		for _, sa := range e.seqs {
			if sa.seq > next {
				add(next, sa.seq-1)
			}
			next = sa.seq + 1
		}
		if len(free) == 0 {
			continue
		}
		var desc []string
		for j := 0; j < len(free); j += 2 {
			if len(desc) == maxListed {
				desc = append(desc, "...")
				break
			}
			if free[j] == free[j+1] {
				desc = append(desc, fmt.Sprint(free[j]))
			} else {
				desc = append(desc, fmt.Sprintf("%d-%d", free[j], free[j+1]))
			}
		}
		word, verb := "Sequences", "are"
		if len(free) == 2 && free[0] == free[1] {
			word, verb = "Sequence", "is"
		}
		q, at := e.above(int32(free[0]))
		out = append(out, checker.Violation{
			Kind: checker.Gap, Partition: s.pt.id, ProducerID: k.pid, Epoch: k.ep, Seq: int32(free[0]),
			Lines: []int{s.pt.readLine},
			Detail: fmt.Sprintf("%s %s of epoch %d (producer %d) %s missing from the log while sequence %d is at offset %d, and no batch the trace sent had them.",
				word, joinAnd(desc), k.ep, k.pid, verb, q, s.log[at].Offset),
		})
	}
	return out
}

// reorder reports where producer pid's records are not in the log in the
// order they were produced (Jepsen's nonmonotonic-send). Taken in id order,
// a record whose first occurrence comes before the previous record's is out
// of order; one violation per such pair of batches (a produced before b),
// naming a's records that come after one of b's and b's that come before one
// of a's.
func (a *analysis) reorder(s *partScan, pid int64, out []checker.Violation) []checker.Violation {
	c, pt, log := s.c, s.pt, s.log
	var firsts []int // indexes in pt.ids: first occurrences of pid's records
	for k := range log {
		if log[k].ID < 0 {
			continue
		}
		rf, ok := c.rec.Get(log[k].ID)
		if !ok || rf.Part() != pt.num || int(a.pos[rf.I()]) != k {
			continue
		}
		if r := rf.I(); pt.bs.at(int(pt.owner.at(r))).pid == pid {
			firsts = append(firsts, r)
		}
	}
	slices.SortFunc(firsts, func(x, y int) int { return cmp.Compare(pt.ids.at(x), pt.ids.at(y)) })
	type pair struct{ a, b *batch } // a produced first
	seen := map[pair]bool{}
	listedA, listedB := map[*batch]bool{}, map[*batch]bool{}
	for j := 1; j < len(firsts); j++ {
		ra, rb := firsts[j-1], firsts[j]
		ba, bb := pt.bs.at(int(pt.owner.at(ra))), pt.bs.at(int(pt.owner.at(rb)))
		p := pair{ba, bb}
		if a.pos[rb] > a.pos[ra] || seen[p] {
			continue
		}
		seen[p] = true
		la := log[a.pos[ra]]
		v := checker.Violation{Kind: checker.Reorder, Partition: pt.id, ProducerID: pid, Batch: ba.id,
			Lines: lines(ba.sent0.line, bb.sent0.line, pt.readLine)}
		if ba == bb {
			lb := log[a.pos[rb]]
			v.Epoch, v.Seq = la.Epoch, la.Seq-int32(ra-ba.first)
			v.Records = []int64{pt.ids.at(ra), pt.ids.at(rb)}
			v.Detail = fmt.Sprintf("Batch %d is out of order in the log: record %d (epoch %d, sequence %d) at offset %d comes after record %d (epoch %d, sequence %d) at offset %d, which was produced after it.",
				ba.id, pt.ids.at(ra), la.Epoch, la.Seq, la.Offset, pt.ids.at(rb), lb.Epoch, lb.Seq, lb.Offset)
			out = append(out, v)
			continue
		}
		// a's records after b's first, and b's before a's last. Only the
		// first time each batch is on its side of a pair: with ids
		// interleaved across batches, the pair alone, so that the work
		// stays linear.
		late, early := []int{ra}, []int{rb}
		if !listedA[ba] && !listedB[bb] {
			listedA[ba], listedB[bb] = true, true
			firstB, lastA := int32(len(log)), int32(-1)
			for r := bb.first; r < bb.first+bb.n; r++ {
				if k := a.pos[r]; k >= 0 {
					firstB = min(firstB, k)
				}
			}
			for r := ba.first; r < ba.first+ba.n; r++ {
				lastA = max(lastA, a.pos[r])
			}
			late = a.involved(ba, func(k int32) bool { return k > firstB })
			early = a.involved(bb, func(k int32) bool { return k < lastA })
		}
		first := log[a.pos[late[0]]]
		v.Epoch, v.Seq = first.Epoch, first.Seq-int32(late[0]-ba.first)
		for _, r := range late {
			v.Records = append(v.Records, pt.ids.at(r))
		}
		for _, r := range early {
			v.Records = append(v.Records, pt.ids.at(r))
		}
		v.Detail = fmt.Sprintf("Batch %d overtook batch %d, produced before it: %s at %s, after %s at %s.",
			bb.id, ba.id, s.describe(a, ba, late), s.where(a, late), s.describe(a, bb, early), s.where(a, early))
		out = append(out, v)
	}
	return out
}

// involved returns the indexes of b's records present in the log at a
// position for which in holds, in id order.
func (a *analysis) involved(b *batch, in func(k int32) bool) []int {
	var rs []int
	for r := b.first; r < b.first+b.n; r++ {
		if k := a.pos[r]; k >= 0 && in(k) {
			rs = append(rs, r)
		}
	}
	return rs
}

// describe names records rs of b with the epoch and sequences they have in
// the log: "batch 2's records 4, 5 and 6 (epoch 1, sequences 0-2)".
func (s *partScan) describe(a *analysis, b *batch, rs []int) string {
	ids, seqs := make([]int64, len(rs)), make([]int64, len(rs))
	for j, r := range rs {
		ids[j], seqs[j] = s.pt.ids.at(r), int64(s.log[a.pos[r]].Seq)
	}
	return fmt.Sprintf("batch %d's %s (epoch %d, %s)", b.id, recordList(ids), s.log[a.pos[rs[0]]].Epoch, plural("sequence", seqs))
}

// where is the offsets of records rs: "offsets 6-8".
func (s *partScan) where(a *analysis, rs []int) string {
	offs := make([]int64, len(rs))
	for j, r := range rs {
		offs[j] = s.log[a.pos[r]].Offset
	}
	return plural("offset", offs)
}

// strays reports records in the read-back that do not match what was sent:
// ids no SendNew listed, records of another partition, and records whose
// producer, epoch or sequence no attempt of their batch had.
func (s *partScan) strays(unknown []int, misplaced, mismatch map[*batch][]int, out []checker.Violation) []checker.Violation {
	pt, log := s.pt, s.log
	if len(unknown) > 0 {
		ids, offs := s.idsAt(unknown)
		first := log[unknown[0]]
		out = append(out, checker.Violation{
			Kind: checker.NonConformance, Partition: pt.id, ProducerID: first.PID, Epoch: first.Epoch, Seq: -1,
			Records: ids, Lines: []int{pt.readLine},
			Detail: fmt.Sprintf("The read-back of partition %d holds %s at %s, which no SendNew of the trace listed.",
				pt.id, recordList(ids), plural("offset", offs)),
		})
	}
	for b, ks := range misplaced {
		ids, offs := s.idsAt(ks)
		at := s.c.cur(b)
		out = append(out, checker.Violation{
			Kind: checker.NonConformance, Partition: pt.id, ProducerID: b.pid, Epoch: at.ep, Seq: at.seq, Batch: b.id,
			Records: ids, Lines: lines(b.sent0.line, pt.readLine),
			Detail: fmt.Sprintf("%s of batch %d, sent to partition %d, %s in the read-back of partition %d at %s.",
				upper(recordList(ids)), b.id, b.part, are(ks), pt.id, plural("offset", offs)),
		})
	}
	for b, ks := range mismatch {
		ids, offs := s.idsAt(ks)
		lr := log[ks[0]]
		out = append(out, checker.Violation{
			Kind: checker.NonConformance, Partition: pt.id, ProducerID: b.pid, Epoch: lr.Epoch, Seq: lr.Seq, Batch: b.id,
			Records: ids, Lines: lines(b.sent0.line, pt.readLine),
			Detail: fmt.Sprintf("%s of batch %d %s in the log at %s with producer %d, epoch %d, sequence %d (first of them), which no attempt of the batch had (it was sent as epoch %d, %s).",
				upper(recordList(ids)), b.id, are(ks), plural("offset", offs), lr.PID, lr.Epoch, lr.Seq, b.sent0.ep, seqRange(b.sent0.seq, b.n)),
		})
	}
	return out
}

func (s *partScan) idsAt(ks []int) (ids, offs []int64) {
	ids, offs = make([]int64, len(ks)), make([]int64, len(ks))
	for j, k := range ks {
		ids[j], offs[j] = s.log[k].ID, s.log[k].Offset
	}
	return ids, offs
}
