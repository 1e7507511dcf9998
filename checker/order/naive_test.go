package order

import (
	"cmp"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/kafkaerr"
	"github.com/kcheck/kcheck/tracer"
)

var (
	seedFlag   = flag.Uint64("order.seed", 0, "first seed of TestStreamingMatchesNaive (0: from the clock)")
	tracesFlag = flag.Int("order.traces", 3000, "random traces TestStreamingMatchesNaive checks")
)

// The streaming checker and a deliberately naive one (every question
// answered by scanning the whole trace or log) agree on random traces.
func TestStreamingMatchesNaive(t *testing.T) {
	base := *seedFlag
	if base == 0 {
		base = uint64(time.Now().UnixNano())
	}
	for i := range uint64(*tracesFlag) {
		seed := base + i
		tr := genTrace(rand.New(rand.NewPCG(seed, seed)))
		got := tr.run()
		wantV, wantS := naive(tr.evs)
		if g, w := normalize(got.Violations), normalize(wantV); !slices.Equal(g, w) || got.Stats != wantS {
			t.Errorf("seed %d: streaming and naive checkers disagree (rerun with -order.seed=%d -order.traces=1)", seed, seed)
			for _, e := range tr.evs {
				t.Logf("%s", tracer.AppendEvent(nil, e))
			}
			t.Logf("streaming: %+v", got.Stats)
			t.Logf("naive:     %+v", wantS)
			for _, s := range g {
				t.Logf("streaming: %s", s)
			}
			for _, s := range w {
				t.Logf("naive:     %s", s)
			}
			return
		}
		// The same trace gives the same report, to the letter.
		if again := tr.run(); !reflect.DeepEqual(again, got) {
			t.Fatalf("seed %d: two runs on one trace differ", seed)
		}
	}
}

// normalize renders violations without their detail, sorted.
func normalize(vs []checker.Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		recs := slices.Clone(v.Records)
		slices.Sort(recs)
		out[i] = fmt.Sprintf("%s p%d pid%d ep%d seq%d b%d recs%v lines%v", v.Kind, v.Partition, v.ProducerID, v.Epoch, v.Seq, v.Batch, recs, v.Lines)
	}
	slices.Sort(out)
	return out
}

// genTrace makes a random trace: batches of 1-4 records on 1-3 partitions
// from one or two producer ids, answered with errors, retried (sometimes
// renumbered by a bump), acknowledged, expired, failed or left without an
// outcome, and a read-back with the anomalies order reports: records
// missing, written twice, swapped, at the wrong offset or sequence, another
// producer's, never sent, or from another partition; sometimes no read-back.
func genTrace(rng *rand.Rand) *trace {
	tr := newTrace()
	parts := int32(1 + rng.IntN(3))
	pids := []int64{testPID, testPID + 1}[:1+rng.IntN(2)]
	type key struct {
		p   int32
		pid int64
	}
	type seqState struct {
		ep   int16
		next int32
	}
	states := map[key]*seqState{}
	type slot struct {
		ep  int16
		seq int32
	}
	type gbatch struct {
		id       int64
		p        int32
		pid      int64
		ids      []int64
		slots    []slot
		awaiting bool
		lastErr  string
		acks     []*tracer.Event // its NONE answers, whose offsets the read-back decides
		outcome  outcome
	}
	errs := []string{"NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT", "OUT_OF_ORDER_SEQUENCE_NUMBER", "INVALID_RECORD", "MESSAGE_TOO_LARGE"}
	var all, active []*gbatch
	nextB, nextID := int64(1), int64(1)
	steps := 3 + rng.IntN(40)
	for i := 0; i < steps+400; i++ {
		if i < steps && (len(active) == 0 || rng.IntN(3) == 0) {
			p := int32(rng.IntN(int(parts)))
			if rng.IntN(15) == 0 {
				tr.fail(p, nextB, -1, -1, "delivery timeout before the batch was sent")
				nextB++
				continue
			}
			g := &gbatch{id: nextB, p: p, pid: pids[rng.IntN(len(pids))], awaiting: true}
			nextB++
			for range 1 + rng.IntN(4) {
				g.ids = append(g.ids, nextID)
				nextID++
			}
			st := states[key{p, g.pid}]
			if st == nil {
				st = &seqState{}
				states[key{p, g.pid}] = st
			}
			g.slots = []slot{{st.ep, st.next}}
			st.next += int32(len(g.ids))
			e := tr.send(p, g.id, st.ep, g.slots[0].seq, g.ids...)
			e.PID = g.pid
			all, active = append(all, g), append(active, g)
			continue
		}
		if len(active) == 0 {
			break
		}
		j := rng.IntN(len(active))
		g := active[j]
		cur := g.slots[len(g.slots)-1]
		pe := func(e *tracer.Event) { e.PID = g.pid }
		done := false
		if g.awaiting {
			switch r := rng.IntN(10); {
			case r < 4:
				e := tr.recv(g.p, g.id, cur.ep, cur.seq, "NONE", 0)
				pe(e)
				g.acks = append(g.acks, e)
				done, g.outcome = true, acked
			case r < 5:
				pe(tr.recv(g.p, g.id, cur.ep, cur.seq, "DUPLICATE_SEQUENCE_NUMBER", -1))
				done, g.outcome = true, acked
			default:
				g.lastErr = errs[rng.IntN(len(errs))]
				pe(tr.recv(g.p, g.id, cur.ep, cur.seq, g.lastErr, -1))
				g.awaiting = false
			}
		} else {
			switch r := rng.IntN(12); {
			case r < 6:
				if rng.IntN(5) == 0 { // renumbered by an epoch bump
					st := states[key{g.p, g.pid}]
					st.ep, st.next = st.ep+1, 0
					cur = slot{st.ep, st.next}
					st.next += int32(len(g.ids))
					g.slots = append(g.slots, cur)
				}
				pe(tr.resend(g.p, g.id, cur.ep, cur.seq))
				g.awaiting, g.lastErr = true, ""
			case r < 7:
				pe(tr.expire(g.p, g.id, cur.ep, cur.seq))
				done, g.outcome = true, expired
			case r < 9:
				pe(tr.fail(g.p, g.id, cur.ep, cur.seq, g.lastErr))
				done, g.outcome = true, closed // or failed: the checker decides
			case r < 10:
				pe(tr.fail(g.p, g.id, cur.ep, cur.seq, "producer closed"))
				done, g.outcome = true, closed
			case r < 11:
				pe(tr.fail(g.p, g.id, -1, -1, "producer closed"))
				done, g.outcome = true, failed
			default:
				done = true // no outcome
			}
		}
		if done {
			active = slices.Delete(active, j, j+1)
			if rng.IntN(10) == 0 { // a late answer
				pe(tr.recv(g.p, g.id, cur.ep, cur.seq, []string{"NONE", "OUT_OF_ORDER_SEQUENCE_NUMBER"}[rng.IntN(2)], 0))
			}
		}
	}

	// The read-back: each partition's batches in send order, mostly.
	next := int64(1_000_000) // ids no SendNew lists
	for _, p := range rng.Perm(int(parts)) {
		if rng.IntN(15) == 0 {
			continue // no read-back of this partition
		}
		var order, others []*gbatch
		for _, g := range all {
			if g.p == int32(p) {
				order = append(order, g)
			} else {
				others = append(others, g)
			}
		}
		for j := 1; j < len(order); j++ {
			if rng.IntN(10) == 0 {
				order[j-1], order[j] = order[j], order[j-1]
			}
		}
		var log []tracer.LogRecord
		off := int64(rng.IntN(3))
		emit := func(lr tracer.LogRecord) {
			lr.Offset = off
			off++
			if rng.IntN(30) == 0 {
				off++ // offsets need not be dense
			}
			log = append(log, lr)
		}
		for _, g := range order {
			switch rng.IntN(40) {
			case 0:
				emit(tracer.LogRecord{PID: 2000, ID: -1})
			case 1:
				emit(tracer.LogRecord{PID: g.pid, Seq: int32(rng.IntN(8)), ID: next})
				next++
			case 2:
				if len(others) > 0 {
					o := others[rng.IntN(len(others))]
					emit(tracer.LogRecord{PID: o.pid, Epoch: o.slots[0].ep, Seq: o.slots[0].seq, ID: o.ids[0]})
				}
			}
			var copies int
			switch r := rng.IntN(20); g.outcome {
			case acked:
				copies = []int{0, 2}[r%2]
				if r >= 2 {
					copies = 1
				}
			case failed:
				copies = min(r/16, 1)
			default:
				copies = []int{0, 1, 2}[min(r/9, 2)]
			}
			for c := range copies {
				at := g.slots[len(g.slots)-1]
				if rng.IntN(4) == 0 {
					at = g.slots[rng.IntN(len(g.slots))]
				}
				start := off
				for i, id := range g.ids {
					if rng.IntN(25) == 0 {
						continue // this record is missing
					}
					seq := at.seq + int32(i)
					if rng.IntN(50) == 0 {
						seq += 100
					}
					emit(tracer.LogRecord{PID: g.pid, Epoch: at.ep, Seq: seq, ID: id})
				}
				if c == 0 {
					for _, a := range g.acks {
						a.Offset = start + int64(rng.IntN(10)/9)
					}
				}
			}
		}
		tr.readBack(int32(p), log...)
	}
	return tr
}

// naive checks evs as order does, answering every question by a scan.
func naive(evs []*tracer.Event) ([]checker.Violation, Stats) {
	line := func(e *tracer.Event) int { return int(e.I) + 1 }
	type nbatch struct {
		send    *tracer.Event
		sent    []attempt
		out     outcome
		ack     *tracer.Event
		end     *tracer.Event
		errLine int
		ooo     []*tracer.Event
	}
	var batches []*nbatch
	var st Stats
	var lastT int64
	for _, e := range evs {
		if e.Kind != tracer.ReadBack {
			lastT = max(lastT, e.T)
		}
		if e.Kind == tracer.SendNew {
			batches = append(batches, &nbatch{send: e})
		}
	}
	find := func(id int64) *nbatch {
		for _, b := range batches {
			if b.send.Batch == id {
				return b
			}
		}
		return nil
	}
	for _, e := range evs {
		if e.Kind == tracer.Fail && find(e.Batch) == nil {
			st.Unsent++
		}
		if e.Kind == tracer.Resend {
			st.Retries++
		}
		if e.Kind == tracer.Receive && e.Err == "OUT_OF_ORDER_SEQUENCE_NUMBER" {
			st.OutOfOrderAnswers++
		}
	}
	for _, b := range batches {
		var mine []*tracer.Event
		for _, e := range evs {
			if e.Kind != tracer.ReadBack && e.Kind != tracer.Fault && e.Kind != tracer.Disconnect && e.Batch == b.send.Batch {
				mine = append(mine, e)
			}
		}
		for i, e := range mine {
			switch e.Kind {
			case tracer.SendNew, tracer.Resend:
				if len(b.sent) == 0 || b.sent[len(b.sent)-1].ep != e.Epoch || b.sent[len(b.sent)-1].seq != e.Seq {
					b.sent = append(b.sent, attempt{ep: e.Epoch, seq: e.Seq, line: line(e)})
				}
			case tracer.Receive:
				if e.Err == "OUT_OF_ORDER_SEQUENCE_NUMBER" {
					b.ooo = append(b.ooo, e)
				}
			}
			if b.out != pending {
				continue
			}
			switch {
			case e.Kind == tracer.Receive && (e.Err == "NONE" || e.Err == "DUPLICATE_SEQUENCE_NUMBER"):
				b.out, b.ack = acked, e
			case e.Kind == tracer.ExpireBatch:
				b.out, b.end = expired, e
			case e.Kind == tracer.Fail:
				b.out, b.end = closed, e
				var prev *tracer.Event // the batch's last send or answer before the Fail
				for _, p := range mine[:i] {
					if p.Kind == tracer.SendNew || p.Kind == tracer.Resend || p.Kind == tracer.Receive {
						prev = p
					}
				}
				if e.Seq == -1 {
					b.out = failed
				} else if prev != nil && prev.Kind == tracer.Receive && prev.Err == e.Reason && kafkaerr.NotRetriable(prev.Err) {
					b.out, b.errLine = failed, line(prev)
				}
			}
		}
	}

	var out []checker.Violation
	n := func(b *nbatch) int { return len(b.send.Records) }
	cur := func(b *nbatch) attempt { return b.sent[len(b.sent)-1] }
	for _, b := range batches {
		st.Batches++
		st.Records += n(b)
		switch b.out {
		case acked:
			st.Acked += n(b)
			st.OutOfOrderAcked += len(b.ooo)
		case failed:
			st.Failed += n(b)
		default:
			st.Unknown += n(b)
			if len(b.ooo) > 0 {
				end, endLine := lastT, 0
				if b.end != nil {
					end, endLine = b.end.T, line(b.end)
				}
				st.Stalls++
				st.StallTime += time.Duration(end - b.ooo[0].T)
				out = append(out, checker.Violation{Kind: checker.Stall, Partition: b.send.Partition, ProducerID: b.send.PID,
					Epoch: cur(b).ep, Seq: cur(b).seq, Batch: b.send.Batch, Records: b.send.Records,
					Lines: lines(line(b.send), line(b.ooo[0]), endLine)})
			}
		}
	}

	// Partitions, in order.
	var ps []int32
	for _, e := range evs {
		if (e.Kind == tracer.SendNew || e.Kind == tracer.ReadBack) && !slices.Contains(ps, e.Partition) {
			ps = append(ps, e.Partition)
		}
	}
	slices.Sort(ps)
	sentTo := func(id int64) (*nbatch, int) {
		for _, b := range batches {
			if i := slices.Index(b.send.Records, id); i >= 0 {
				return b, i
			}
		}
		return nil, -1
	}
	for _, p := range ps {
		var rb *tracer.Event
		var mineB []*nbatch
		for _, e := range evs {
			if e.Kind == tracer.ReadBack && e.Partition == p && rb == nil {
				rb = e
			}
		}
		for _, b := range batches {
			if b.send.Partition == p {
				mineB = append(mineB, b)
			}
		}
		if rb == nil {
			continue // no log to check: Result.Unread, not a violation
		}
		L, rl := rb.Log, line(rb)
		for _, lr := range L {
			if lr.ID < 0 {
				st.Foreign++
			} else {
				st.ReadBack++
			}
		}
		where := func(id int64) []int {
			var ks []int
			for k, lr := range L {
				if lr.ID == id {
					ks = append(ks, k)
				}
			}
			return ks
		}
		has := func(pid int64, ep int16, pred func(int32) bool) bool {
			for _, lr := range L {
				if lr.ID >= 0 && lr.PID == pid && lr.Epoch == ep && pred(lr.Seq) {
					return true
				}
			}
			return false
		}
		hole := func(pid int64, ep int16, q int32) bool {
			return q >= 0 && has(pid, ep, func(s int32) bool { return s > q }) && !has(pid, ep, func(s int32) bool { return s == q })
		}
		for _, b := range mineB {
			ids := b.send.Records
			var lost, dup, present, gap, wrong []int64
			lostAt, gapAt := -1, -1
			for i, id := range ids {
				h := -1
				for si, at := range b.sent {
					if hole(b.send.PID, at.ep, at.seq+int32(i)) {
						h = si
						break
					}
				}
				ks := where(id)
				in := len(ks) > 0
				if len(ks) > 1 {
					dup = append(dup, id)
				}
				switch b.out {
				case acked:
					if !in {
						lost = append(lost, id)
					} else if b.ack.Err == "NONE" && b.ack.Offset >= 0 {
						k := slices.IndexFunc(L, func(lr tracer.LogRecord) bool { return lr.Offset == b.ack.Offset+int64(i) })
						if k < 0 || L[k].ID != id {
							wrong = append(wrong, id)
						}
					}
				case failed:
					if in {
						present = append(present, id)
					} else if h >= 0 {
						if gapAt < 0 {
							gapAt = h
						}
						gap = append(gap, id)
					}
				default:
					if !in && h >= 0 {
						if lostAt < 0 {
							lostAt = h
						}
						lost = append(lost, id)
					}
				}
			}
			v := func(kind checker.Kind, at attempt, recs []int64, ls ...int) checker.Violation {
				return checker.Violation{Kind: kind, Partition: p, ProducerID: b.send.PID, Epoch: at.ep, Seq: at.seq,
					Batch: b.send.Batch, Records: recs, Lines: lines(ls...)}
			}
			endLine, ackLine := 0, 0
			if b.end != nil {
				endLine = line(b.end)
			}
			if b.ack != nil {
				ackLine = line(b.ack)
			}
			if len(lost) > 0 {
				if b.out == acked {
					out = append(out, v(checker.Lost, cur(b), lost, line(b.send), ackLine, rl))
				} else {
					out = append(out, v(checker.Lost, b.sent[lostAt], lost, b.sent[lostAt].line, endLine, rl))
				}
			}
			if len(dup) > 0 {
				out = append(out, v(checker.Duplicate, cur(b), dup, line(b.send), rl))
			}
			if len(wrong) > 0 {
				out = append(out, v(checker.InconsistentOffset, cur(b), wrong, line(b.send), ackLine, rl))
			}
			if len(present) > 0 {
				out = append(out, v(checker.FailedPresent, cur(b), present, line(b.send), b.errLine, endLine, rl))
			}
			if len(gap) > 0 {
				out = append(out, v(checker.Gap, b.sent[gapAt], gap, b.sent[gapAt].line, endLine, rl))
			}
		}

		// Holes no sent batch had, per producer epoch.
		type ek struct {
			pid int64
			ep  int16
		}
		var eks []ek
		for _, lr := range L {
			if k := (ek{lr.PID, lr.Epoch}); lr.ID >= 0 && !slices.Contains(eks, k) {
				eks = append(eks, k)
			}
		}
		for _, k := range eks {
			var top int32 = -1
			for _, lr := range L {
				if lr.ID >= 0 && lr.PID == k.pid && lr.Epoch == k.ep {
					top = max(top, lr.Seq)
				}
			}
			for q := int32(0); q < top; q++ {
				if !hole(k.pid, k.ep, q) {
					continue
				}
				owned := false
				for _, b := range mineB {
					for _, at := range b.sent {
						if b.send.PID == k.pid && at.ep == k.ep && at.seq <= q && q < at.seq+int32(n(b)) {
							owned = true
						}
					}
				}
				if !owned {
					out = append(out, checker.Violation{Kind: checker.Gap, Partition: p, ProducerID: k.pid, Epoch: k.ep, Seq: q, Lines: []int{rl}})
					break
				}
			}
		}

		// Order: each producer's records in id order, first occurrences only.
		for _, pid := range []int64{testPID, testPID + 1} {
			type rec struct {
				id  int64
				k   int
				b   *nbatch
				idx int
			}
			var firsts []rec
			for k, lr := range L {
				b, i := sentTo(lr.ID)
				if lr.ID < 0 || b == nil || b.send.Partition != p || b.send.PID != pid || where(lr.ID)[0] != k {
					continue
				}
				firsts = append(firsts, rec{lr.ID, k, b, i})
			}
			slices.SortFunc(firsts, func(x, y rec) int { return cmp.Compare(x.id, y.id) })
			type pair struct{ a, b *nbatch }
			seen := map[pair]bool{}
			posOf := func(b *nbatch, i int) int {
				if ks := where(b.send.Records[i]); len(ks) > 0 {
					return ks[0]
				}
				return -1
			}
			for j := 1; j < len(firsts); j++ {
				ra, rb := firsts[j-1], firsts[j]
				pr := pair{ra.b, rb.b}
				if rb.k > ra.k || seen[pr] {
					continue
				}
				seen[pr] = true
				la := L[ra.k]
				vio := checker.Violation{Kind: checker.Reorder, Partition: p, ProducerID: pid, Batch: ra.b.send.Batch,
					Lines: lines(line(ra.b.send), line(rb.b.send), rl)}
				if ra.b == rb.b {
					vio.Epoch, vio.Seq, vio.Records = la.Epoch, la.Seq-int32(ra.idx), []int64{ra.id, rb.id}
					out = append(out, vio)
					continue
				}
				firstB, lastA := len(L), -1
				for i := range rb.b.send.Records {
					if k := posOf(rb.b, i); k >= 0 {
						firstB = min(firstB, k)
					}
				}
				for i := range ra.b.send.Records {
					lastA = max(lastA, posOf(ra.b, i))
				}
				lateFirst := -1
				for i, id := range ra.b.send.Records {
					if k := posOf(ra.b, i); k >= 0 && k > firstB {
						if lateFirst < 0 {
							lateFirst = i
						}
						vio.Records = append(vio.Records, id)
					}
				}
				for i, id := range rb.b.send.Records {
					if k := posOf(rb.b, i); k >= 0 && k < lastA {
						vio.Records = append(vio.Records, id)
					}
				}
				lf := L[posOf(ra.b, lateFirst)]
				vio.Epoch, vio.Seq = lf.Epoch, lf.Seq-int32(lateFirst)
				out = append(out, vio)
			}
		}

		// Strays.
		var unknown []int64
		var firstUnknown tracer.LogRecord
		misplaced := map[*nbatch][]int64{}
		mismatch := map[*nbatch][]tracer.LogRecord{}
		for _, lr := range L {
			if lr.ID < 0 {
				continue
			}
			b, i := sentTo(lr.ID)
			switch {
			case b == nil:
				if len(unknown) == 0 {
					firstUnknown = lr
				}
				unknown = append(unknown, lr.ID)
			case b.send.Partition != p:
				misplaced[b] = append(misplaced[b], lr.ID)
			default:
				ok := false
				for _, at := range b.sent {
					ok = ok || (lr.PID == b.send.PID && lr.Epoch == at.ep && lr.Seq == at.seq+int32(i))
				}
				if !ok {
					mismatch[b] = append(mismatch[b], lr)
				}
			}
		}
		if len(unknown) > 0 {
			out = append(out, checker.Violation{Kind: checker.NonConformance, Partition: p, ProducerID: firstUnknown.PID,
				Epoch: firstUnknown.Epoch, Seq: -1, Records: unknown, Lines: []int{rl}})
		}
		for b, ids := range misplaced {
			out = append(out, checker.Violation{Kind: checker.NonConformance, Partition: p, ProducerID: b.send.PID,
				Epoch: cur(b).ep, Seq: cur(b).seq, Batch: b.send.Batch, Records: ids, Lines: lines(line(b.send), rl)})
		}
		for b, lrs := range mismatch {
			var ids []int64
			for _, lr := range lrs {
				ids = append(ids, lr.ID)
			}
			out = append(out, checker.Violation{Kind: checker.NonConformance, Partition: p, ProducerID: b.send.PID,
				Epoch: lrs[0].Epoch, Seq: lrs[0].Seq, Batch: b.send.Batch, Records: ids, Lines: lines(line(b.send), rl)})
		}
	}
	return out, st
}
