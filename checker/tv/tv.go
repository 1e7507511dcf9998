// Package tv is TLC trace validation: it turns a trace into a TLA+ module
// (TraceData.tla) and a configuration for spec/TraceIdempotentProducer.tla,
// the spec constrained to follow the trace, and has TLC check it. It is the
// second opinion on what checker/replay decides in Go: the two must agree.
//
// The translation numbers batches by slot within their partition (a batch
// takes the lowest free slot when first sent and gives it back with a
// Recycle line once done, so states stay as small as the batches in
// flight), sequences per batch within their epoch (the spec has one record
// per batch; a gap in the real sequences stays a gap), and epochs from the
// first. Split cuts the trace into parts that share nothing, for TLC runs in
// parallel (split.go; spec/README.md has the argument).
// It leaves out what the spec has no action for (the read-back, faults that
// only cut connections) and refuses what it cannot express: a partition that
// moved between brokers, a batch failed for a reason outside the spec. The
// limit on requests in flight is the Go mirror's to check: the spec counts
// batches, a real request carries many.
package tv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kcheck/kcheck/checker/kafkaerr"
	"github.com/kcheck/kcheck/checker/tlc"
	"github.com/kcheck/kcheck/tracer"
)

// ErrUnsupported marks a trace the translation cannot express.
var ErrUnsupported = errors.New("not expressible in the spec")

// entry is one line of TraceLog and the trace line it came from.
type entry struct {
	line   int
	fields []string // TLA+ record fields, "name |-> value"
	// p is the partition the line acts on; -1 for a Disconnect, which acts
	// on parts, the partitions with attempts outstanding on its connection.
	p       int32
	parts   []int32
	matters []int32 // of a Disconnect with anyHandled TRUE: the partitions the prefix matters to
	bump    bool    // a Bump: other parts of a split see it as EpochMoves (split.go)
	before  int     // set by render: the line of the entry before it in the whole trace
}

// Module is a trace translated for TLC.
type Module struct {
	Spec   string // the trace spec to run: ClientSpec (TraceIdempotentProducer; "" too) or WireSpec (TraceWire)
	Data   string // TraceData.tla
	Config string // Spec.cfg
	Lines  []int  // Lines[i] is the trace line of TraceLog[i+1]
	// Partitions are the partitions the module follows: all of the trace's,
	// or one part of a split (Split).
	Partitions []int32
	// before[i] is the trace line of the whole trace's TraceLog line just
	// before TraceLog[i+1] (0: none), so that a part's furthest line is
	// the one the whole-trace check would give.
	before []int
	// evs[i] is TraceLog[i+1]'s ev, for Verdict.AtEvent.
	evs []string
}

type key struct {
	p  int32
	ep int16
}

// Translate reads the whole trace from r and translates it.
func Translate(r *tracer.Reader) (*Module, error) {
	t := NewTranslator(r.Header())
	if err := r.Each(func(line int, e *tracer.Event) error {
		t.Add(line, e)
		return nil
	}); err != nil {
		return nil, err
	}
	return t.Module()
}

// Translator translates a trace as it is read, so that verify's one pass
// over the trace feeds it too: Add each event, in order, then Module.
type Translator struct {
	h     tracer.Header
	evs   []tracer.Event // the events the translation looks at, without their records
	lines []int
	wire  wireTrace // a trace of the wire (kcheck proxy): wire.go
	txn   txnTrace  // a transactional trace: txn.go
}

// NewTranslator returns a Translator for the trace with header h.
func NewTranslator(h tracer.Header) *Translator { return &Translator{h: h} }

// Add takes the event at line. It keeps a copy of what the translation
// needs of e (not its records or log), so e may be reused.
func (t *Translator) Add(line int, e *tracer.Event) {
	switch SpecFor(t.h) {
	case TxnSpec:
		t.txn.add(line, e) // txn.go
		return
	case WireSpec:
		t.wire.add(line, e) // wire.go
		return
	}
	switch {
	case e.Kind == tracer.ReadBack, e.Kind == tracer.ReadBackShort, e.Kind == tracer.Told,
		e.Kind == tracer.Poll, e.Kind == tracer.PollEnd:
		return // no action of the spec
	}
	c := *e
	c.Records, c.Log = nil, nil
	t.evs, t.lines = append(t.evs, c), append(t.lines, line)
}

// Module translates the events added, or says why it cannot
// (ErrUnsupported): one module for the whole trace.
func (t *Translator) Module() (*Module, error) {
	if SpecFor(t.h) == TxnSpec {
		return t.txnModule() // txn.go
	}
	if SpecFor(t.h) == WireSpec {
		return t.wireModule() // wire.go
	}
	pl, err := t.plan()
	if err != nil {
		return nil, err
	}
	return pl.render(nil), nil
}

// plan is a trace translated: TraceLog's lines for every partition, and what
// the configuration needs. render writes it out for all of its partitions
// or for some (split.go).
type plan struct {
	h                     tracer.Header
	log                   []entry
	count                 map[int32]int   // batches per partition
	conn                  map[int32]int32 // partition -> node
	errsBefore, errsAfter map[string]bool
	maxPending            int
	// crossed are pairs of partitions whose attempts on one connection were
	// answered out of the order they were sent (split.go).
	crossed [][2]int32
	// noLogStart: the broker's UNKNOWN_PRODUCER_ID answers carry no log
	// start offset (kfake), so the client retries them with no bump
	// (IdempotentProducer.tla, AnswersLogStart).
	noLogStart bool
}

// plan translates the events added (Module and Split) of a trace of our
// producer's steps; a trace of the wire goes to wireModule instead.
func (t *Translator) plan() (*plan, error) {
	h, evs, lines := t.h, t.evs, t.lines
	unsupported := func(i int, format string, args ...any) error {
		return fmt.Errorf("line %d: %s: %w", lines[i], fmt.Sprintf(format, args...), ErrUnsupported)
	}

	// First pass: batch numbers, leaders, epochs and sequences per epoch.
	var baseEpoch int16
	inits := 0
	index := map[int64]int{}     // batch id -> its slot within its partition (Recycle)
	count := map[int32]int{}     // batches per partition
	conn := map[int32]int32{}    // partition -> node
	seqs := map[key][][2]int32{} // (partition, epoch) -> (seq, n) sent
	nOf := map[int64]int32{}
	withLSO, withoutLSO := false, false // UNKNOWN_PRODUCER_ID answers with and without a log start offset
	for i := range evs {
		e := &evs[i]
		if e.Kind == tracer.Receive && e.Err == "UNKNOWN_PRODUCER_ID" {
			if e.LogStart == -1 {
				withoutLSO = true
			} else {
				withLSO = true
			}
			if withLSO && withoutLSO {
				return nil, unsupported(i, "UNKNOWN_PRODUCER_ID answers with a log start offset and without one (the spec's AnswersLogStart is one for the trace)")
			}
		}
		switch e.Kind {
		case tracer.InitProducerID:
			if inits++; inits > 1 {
				return nil, unsupported(i, "a new producer id (the spec models one)")
			}
			baseEpoch = e.Epoch
		case tracer.SendNew, tracer.Resend:
			if e.Kind == tracer.SendNew {
				count[e.Partition] = 0 // the slots batches take are numbered in the second pass
				nOf[e.Batch] = e.N
			}
			if c, ok := conn[e.Partition]; ok && c != e.Node {
				return nil, unsupported(i, "partition %d moved from broker %d to %d (a leader move)", e.Partition, c, e.Node)
			}
			conn[e.Partition] = e.Node
			k := key{e.Partition, e.Epoch - baseEpoch}
			seqs[k] = append(seqs[k], [2]int32{e.Seq, e.N})
		}
	}
	rank := map[key]map[int32]int{}
	for k, sn := range seqs {
		slices.SortFunc(sn, func(a, b [2]int32) int { return int(a[0]) - int(b[0]) })
		sn = slices.Compact(sn)
		m := map[int32]int{}
		r := 0
		for j, s := range sn {
			if j > 0 {
				prev := sn[j-1]
				if s[0] != prev[0]+prev[1] {
					r++ // a gap in the real sequences stays a gap
				}
				r++
			}
			m[s[0]] = r
		}
		rank[k] = m
	}

	// Second pass: TraceLog.
	var log []entry
	errsBefore, errsAfter := map[string]bool{}, map[string]bool{}
	pending := map[int32]int{} // connection -> batches outstanding, for MaxInFlight
	maxPending := 1
	outstanding := map[int64]int32{}
	partOf := map[int64]int32{}
	lastErr := map[int64]string{}       // a batch's last answer
	faulted := map[key]map[int32]bool{} // attempts (partition, epoch, seq) a Fault line explains
	realBroker := h.Broker.Kind != "kfake"
	seqOf := func(p int32, ep int16, seq int32) int { return rank[key{p, ep - baseEpoch}][seq] }
	isOutstanding := func(b int64) bool { _, ok := outstanding[b]; return ok }
	// Each connection's attempts not yet answered, in the order sent, to
	// find the partitions whose steps on a connection cross (plan.crossed):
	// an attempt answered while an earlier one of another partition is not
	// yet (the answers come back in the order sent), or one handled by a
	// fault line while an earlier one of another partition is later handled
	// by its own (the broker handles them in that order too). An earlier
	// attempt answered as usual after a later one's fault line crosses
	// nothing: TLC may have handled it before that line.
	type attempt struct {
		b         int64
		p         int32
		ep        int16
		seq       int32
		overtaken []int32 // partitions whose fault lines acted while this attempt was ahead
	}
	queue := map[int32][]*attempt{}
	// Batches are numbered by slot: a batch sent for the first time takes
	// its partition's lowest free slot, and gives it back with a Recycle
	// line once it is done and no attempt of it is outstanding
	// (TraceIdempotentProducer.tla, Recycle).
	used := map[int32][]bool{} // partition -> slot (from 1) -> taken
	done := map[int64]bool{}
	take := func(p int32, b int64) {
		u := used[p]
		s := slices.Index(u, false)
		if s < 0 {
			s = len(u)
			u = append(u, false)
		}
		u[s] = true
		used[p], index[b] = u, s+1
		count[p] = max(count[p], s+1)
	}
	var crossed [][2]int32
	find := func(node int32, match func(a *attempt) bool) int { return slices.IndexFunc(queue[node], match) }
	// faultHandled notes a fault line acting on the attempt at index at of
	// node's queue.
	faultHandled := func(node int32, at int) {
		q := queue[node]
		x := q[at]
		for _, o := range x.overtaken {
			crossed = append(crossed, [2]int32{o, x.p})
		}
		for _, a := range q[:at] {
			if a.p != x.p {
				a.overtaken = append(a.overtaken, x.p)
			}
		}
	}
	// received notes the answer to the attempt at index at of node's queue.
	received := func(node int32, at int) {
		q := queue[node]
		for _, a := range q[:at] {
			if a.p != q[at].p {
				crossed = append(crossed, [2]int32{a.p, q[at].p})
			}
		}
		queue[node] = slices.Delete(q, at, at+1)
	}
	str := strconv.Quote
	num := func(v int64) string { return strconv.FormatInt(v, 10) }
	// A Disconnect leaves the broker free to have handled any prefix of the
	// connection's outstanding requests, and TLC keeps every such prefix
	// alive until the batches are answered again: with many partitions on
	// one connection, the states multiply. Which prefix it was matters to
	// the spec only through later answers: as long as every batch lost with
	// the connection is next answered NONE, and no other answer on its
	// partition comes first, "nothing was handled" explains the trace
	// whenever any prefix does (a resend of a handled batch is a duplicate
	// answered NONE; of an unhandled one, appended and answered NONE). So
	// the Disconnect line says anyHandled |-> FALSE and TLC takes that one
	// prefix; on any other answer, a fault, an expiry or a bump first, it
	// says TRUE and TLC tries them all, as before.
	type lost struct {
		entry int                // the Disconnect's index in log
		left  map[int64]struct{} // lost batches not yet answered NONE
		parts map[int32]bool
	}
	var open []*lost
	// stillLost reports whether d has a lost batch of p not yet answered.
	stillLost := func(d *lost, p int32) bool {
		for lb := range d.left {
			if partOf[lb] == p {
				return true
			}
		}
		return false
	}
	// settle applies an event on partition p to the open Disconnects that
	// lost a batch of p: batch b answered NONE (success) is one fewer left;
	// anything else makes the Disconnect's prefix matter.
	// The prefix matters only to the partitions whose events made it so
	// (entry.matters): for another, every prefix explains what follows if
	// the empty one does, and Split joins only the former (split.go). A
	// partition stops being followed once its lost batches are answered.
	settle := func(p int32, b int64, success bool) {
		kept := open[:0]
		for _, d := range open {
			if d.parts[p] {
				if _, isLost := d.left[b]; !success || !isLost {
					en := &log[d.entry]
					en.fields[len(en.fields)-1] = "anyHandled |-> TRUE"
					en.matters = append(en.matters, p)
					delete(d.parts, p)
					for lb := range d.left {
						if partOf[lb] == p {
							delete(d.left, lb)
						}
					}
				} else {
					delete(d.left, b)
					if !stillLost(d, p) {
						delete(d.parts, p)
					}
				}
			}
			if len(d.left) > 0 {
				kept = append(kept, d)
			}
		}
		open = kept
	}
	for i := range evs {
		e := &evs[i]
		var f []string
		switch e.Kind {
		case tracer.Receive:
			settle(e.Partition, e.Batch, kafkaerr.IsAck(e.Err))
		case tracer.Bump, tracer.ExpireBatch, tracer.Fail, tracer.ResolveSequences:
			settle(e.Partition, -1, false)
		case tracer.Fault:
			// A fault the spec has an action for on the partition; a cut
			// (DropConnection, DropResponse) acts through its Disconnect,
			// a held answer (Delay) not at all.
			switch e.Fault {
			case "RejectBeforeAppend", "AppendThenFail", "ExpireProducerState":
				settle(e.Partition, -1, false)
			}
		}
		switch e.Kind {
		case tracer.SendNew, tracer.Resend:
			if e.Kind == tracer.SendNew {
				take(e.Partition, e.Batch)
			}
			f = []string{"ev |-> " + str(string(e.Kind)), "p |-> " + num(int64(e.Partition)), "b |-> " + num(int64(index[e.Batch])),
				"ep |-> " + num(int64(e.Epoch-baseEpoch)), "seq |-> " + num(int64(seqOf(e.Partition, e.Epoch, e.Seq)))}
			outstanding[e.Batch] = e.Node
			partOf[e.Batch] = e.Partition
			queue[e.Node] = append(queue[e.Node], &attempt{b: e.Batch, p: e.Partition, ep: e.Epoch, seq: e.Seq})
			pending[e.Node]++
			maxPending = max(maxPending, pending[e.Node])
		case tracer.Receive:
			if node, ok := outstanding[e.Batch]; ok {
				pending[node]--
				delete(outstanding, e.Batch)
			}
			if kafkaerr.IsAck(e.Err) || kafkaerr.InSpecFatal(e.Err) {
				done[e.Batch] = true
			}
			lastErr[e.Batch] = e.Err
			at := find(e.Node, func(a *attempt) bool { return a.b == e.Batch })
			k := key{e.Partition, e.Epoch}
			if realBroker && !faulted[k][e.Seq] && kafkaerr.OwnBrokerError(e.Err) {
				if at >= 0 {
					faultHandled(e.Node, at)
				}
				// A real broker's own retriable error, placed by its kind: a
				// timeout (or NOT_ENOUGH_REPLICAS_AFTER_APPEND) after the
				// append, any other before it. Unlike the Go mirror, which
				// keeps both possibilities, TLC would have to keep their
				// product over every partition at once.
				act := "RejectBeforeAppend"
				if e.Err == "REQUEST_TIMED_OUT" || e.Err == "NOT_ENOUGH_REPLICAS_AFTER_APPEND" {
					act = "AppendThenFail"
					errsAfter[e.Err] = true
				} else {
					errsBefore[e.Err] = true
				}
				log = append(log, entry{line: lines[i], p: e.Partition, fields: []string{"ev |-> " + str(act), "c |-> " + num(int64(e.Node)),
					"p |-> " + num(int64(e.Partition)), "ep |-> " + num(int64(e.Epoch-baseEpoch)),
					"seq |-> " + num(int64(seqOf(e.Partition, e.Epoch, e.Seq))), "err |-> " + str(e.Err)}})
			}
			if at >= 0 {
				received(e.Node, at)
			}
			delete(faulted[k], e.Seq)
			errName := e.Err
			if errName == "DUPLICATE_SEQUENCE_NUMBER" {
				errName = "NONE" // the spec answers a duplicate as a success
			}
			f = []string{`ev |-> "Receive"`, "c |-> " + num(int64(e.Node)), "p |-> " + num(int64(e.Partition)),
				"b |-> " + num(int64(index[e.Batch])), "err |-> " + str(errName)}
		case tracer.Bump:
			f = []string{`ev |-> "Bump"`, "p |-> " + num(int64(e.Partition)), "ep |-> " + num(int64(e.Epoch-baseEpoch))}
		case tracer.ExpireBatch:
			done[e.Batch] = true
			f = []string{`ev |-> "ExpireBatch"`, "p |-> " + num(int64(e.Partition)), "b |-> " + num(int64(index[e.Batch]))}
		case tracer.ResolveSequences:
			f = []string{`ev |-> "ResolveSequences"`, "p |-> " + num(int64(e.Partition)), "bump |-> " + strings.ToUpper(strconv.FormatBool(e.Bumped))}
		case tracer.Disconnect:
			d := &lost{entry: len(log), left: map[int64]struct{}{}, parts: map[int32]bool{}}
			for b, node := range outstanding {
				if node == e.Node {
					pending[node]--
					delete(outstanding, b)
					d.left[b] = struct{}{}
					d.parts[partOf[b]] = true
				}
			}
			if len(d.left) > 0 {
				open = append(open, d)
			}
			queue[e.Node] = nil
			f = []string{`ev |-> "Disconnect"`, "c |-> " + num(int64(e.Node)), "anyHandled |-> FALSE"}
			log = append(log, entry{line: lines[i], fields: f, p: -1, parts: slices.Sorted(maps.Keys(d.parts)), matters: nil})
			continue
		case tracer.Fault:
			switch e.Fault {
			case "RejectBeforeAppend", "AppendThenFail":
				k := key{e.Partition, e.Epoch}
				if faulted[k] == nil {
					faulted[k] = map[int32]bool{}
				}
				faulted[k][e.Seq] = true
				if e.Fault == "RejectBeforeAppend" {
					errsBefore[e.Err] = true
				} else {
					errsAfter[e.Err] = true
				}
				if at := find(conn[e.Partition], func(a *attempt) bool {
					return a.p == e.Partition && a.ep == e.Epoch && a.seq == e.Seq
				}); at >= 0 {
					faultHandled(conn[e.Partition], at)
				}
				f = []string{"ev |-> " + str(e.Fault), "c |-> " + num(int64(conn[e.Partition])), "p |-> " + num(int64(e.Partition)),
					"ep |-> " + num(int64(e.Epoch-baseEpoch)), "seq |-> " + num(int64(seqOf(e.Partition, e.Epoch, e.Seq))), "err |-> " + str(e.Err)}
			case "ExpireProducerState":
				f = []string{`ev |-> "ExpireProducerState"`, "p |-> " + num(int64(e.Partition))}
			}
		case tracer.Fail:
			switch {
			case e.Seq == -1:
				// never sent: not a batch of the spec
			case e.Reason == "producer closed":
				done[e.Batch] = true
				f = []string{`ev |-> "Abandon"`, "p |-> " + num(int64(e.Partition)), "b |-> " + num(int64(index[e.Batch]))}
			case lastErr[e.Batch] == e.Reason && kafkaerr.InSpecFatal(e.Reason):
				// the spec's Receive already failed it (a Fail after one of the spec's Fatal errors)
			default:
				return nil, unsupported(i, "batch %d failed (%s) for a reason the spec has no action for", e.Batch, e.Reason)
			}
		}
		if f != nil {
			log = append(log, entry{line: lines[i], fields: f, p: e.Partition, bump: e.Kind == tracer.Bump})
		}
		if b := e.Batch; (e.Kind == tracer.Receive || e.Kind == tracer.ExpireBatch || e.Kind == tracer.Fail) && done[b] && !isOutstanding(b) && index[b] > 0 {
			log = append(log, entry{line: lines[i], p: e.Partition, fields: []string{`ev |-> "Recycle"`,
				"p |-> " + num(int64(e.Partition)), "b |-> " + num(int64(index[b]))}})
			used[e.Partition][index[b]-1] = false
			delete(done, b)
			index[b] = 0
		}
	}
	if len(count) == 0 {
		return nil, fmt.Errorf("the trace sends no batch: %w", ErrUnsupported)
	}
	return &plan{h: h, log: log, count: count, conn: conn, errsBefore: errsBefore, errsAfter: errsAfter,
		maxPending: maxPending, crossed: crossed, noLogStart: withoutLSO}, nil
}

// render writes the module for the partitions in only (all of them when
// only is nil): their lines of TraceLog, a Disconnect when it lost an
// attempt of theirs, and another partition's Bump as EpochMoves (split.go).
func (pl *plan) render(only map[int32]bool) *Module {
	in := func(p int32) bool { return only == nil || only[p] }
	num := func(v int64) string { return strconv.FormatInt(v, 10) }
	var log []entry
	faults, expiries, disconnects := 0, 0, 0
	prev := 0
	for _, e := range pl.log {
		e.before, prev = prev, e.line
		switch {
		case e.p == -1:
			// One with no attempt outstanding goes to every part: the
			// spec has no Disconnect of an idle connection (Split joins
			// every partition into one part then).
			if only != nil && len(e.parts) > 0 && !slices.ContainsFunc(e.parts, in) {
				continue
			}
			disconnects++
			// The partitions of this module the handled prefix matters to
			// (TraceIdempotentProducer.tla, NeedsHandling).
			var ms []string
			for _, p := range slices.Sorted(slices.Values(e.matters)) {
				if in(p) {
					ms = append(ms, num(int64(p)))
				}
			}
			e.fields = append(slices.Clip(e.fields), "matters |-> {"+strings.Join(ms, ", ")+"}")
		case in(e.p):
			switch e.fields[0] {
			case `ev |-> "RejectBeforeAppend"`, `ev |-> "AppendThenFail"`:
				faults++
			case `ev |-> "ExpireProducerState"`:
				expiries++
			}
		case e.bump:
			// e.fields: ev, p, ep
			e = entry{line: e.line, before: e.before, fields: []string{`ev |-> "EpochMoves"`, e.fields[2]}}
		default:
			continue
		}
		log = append(log, e)
	}
	h, count, conn := pl.h, pl.count, pl.conn

	m := &Module{Spec: ClientSpec}
	var data strings.Builder
	data.WriteString("---- MODULE TraceData ----\n\\* Generated by kcheck verify --tlc from a trace. DO NOT EDIT.\nEXTENDS Integers, Sequences, TLC\n\n")
	var ps, cl []string
	for _, p := range slices.Sorted(maps.Keys(count)) {
		if in(p) {
			m.Partitions = append(m.Partitions, p)
			ps = append(ps, num(int64(p)))
			cl = append(cl, fmt.Sprintf("%d :> %d", p, conn[p]))
		}
	}
	fmt.Fprintf(&data, "TracePartitions == {%s}\n\nTraceConnOf == %s\n\nTraceAnswersLogStart == %s\n\nTraceLog == <<\n",
		strings.Join(ps, ", "), strings.Join(cl, " @@ "), strings.ToUpper(strconv.FormatBool(!pl.noLogStart)))
	m.writeLog(&data, log, nil)
	m.Data = data.String()

	numBatches := 1
	for p, n := range count {
		if in(p) {
			numBatches = max(numBatches, n)
		}
	}
	set := func(s map[string]bool) string {
		var q []string
		for _, k := range slices.Sorted(maps.Keys(s)) {
			q = append(q, strconv.Quote(k))
		}
		return "{" + strings.Join(q, ", ") + "}"
	}
	tf := func(b bool) string { return strings.ToUpper(strconv.FormatBool(b)) }
	// RearmAfterIdle is FALSE whatever the trace's producer did: the rule
	// only removes client steps (SendNew held while the partition is aged),
	// so a trace that keeps it is a behaviour of the spec without it too,
	// and trace validation asks only that the trace's steps be allowed. The
	// client's clock is not in a trace, so the spec's aged is set by a
	// silent BoundPasses just before an expiry (TraceIdempotentProducer.tla),
	// which is exact only while nothing else reads aged, as with the rule
	// off. Checking the rule itself would need the trace to log when a
	// partition re-arms.
	m.Config = fmt.Sprintf(`\* Generated by kcheck verify --tlc from a trace. DO NOT EDIT.
INIT TraceInit
NEXT TraceNext
CONSTANTS
    Partitions <- TracePartitions
    ConnOf <- TraceConnOf
    AnswersLogStart <- TraceAnswersLogStart
    NumBatches = %d
    MaxInFlight = %d
    DedupWindow = 5
    HoldWhileRetrying = %s
    RearmAfterIdle = FALSE
    FirstAckRule = %s
    NoStateRule = %q
    PreWritten = FALSE
    ErrorsBeforeAppend = %s
    ErrorsAfterAppend = %s
    Disconnects = %s
    MaxFaults = %d
    DeliveryTimeout = %s
    StateExpiry = %s
    MaxExpiries = %d
    AppResends = FALSE
    AppSerial = FALSE
    HandBackOnError = FALSE
    ImplicitAck = FALSE
    PipelineAfterOk = FALSE
    LateAnswerFails = FALSE
    BumpRule = "java"
CONSTRAINT TraceFurthest
`, numBatches, pl.maxPending+1, tf(h.HoldWhileRetrying), tf(h.FirstAck), h.Broker.NoStateRule,
		set(pl.errsBefore), set(pl.errsAfter), tf(disconnects > 0), faults+disconnects,
		tf(h.DeliveryTimeoutMs > 0), tf(expiries > 0), expiries)
	return m
}

// writeLog writes TraceLog's lines and the module's end to data, and notes
// each line's trace line (Lines) and the whole trace's line before it. Each
// line is written by format, or as a record when format is nil.
func (m *Module) writeLog(data *strings.Builder, log []entry, format func(e entry) string) {
	if format == nil {
		format = func(e entry) string { return "[" + strings.Join(e.fields, ", ") + "]" }
	}
	for i, e := range log {
		sep := ","
		if i == len(log)-1 {
			sep = ""
		}
		fmt.Fprintf(data, "  %s%s\n", format(e), sep)
		m.Lines = append(m.Lines, e.line)
		m.before = append(m.before, e.before)
		_, ev, _ := strings.Cut(e.fields[0], " |-> ")
		m.evs = append(m.evs, strings.Trim(ev, `"`))
	}
	data.WriteString(">>\n====\n")
}

// Verdict is what TLC concluded about a trace.
type Verdict struct {
	Accepted bool
	Furthest int     // the furthest trace line explained (when rejected)
	Parts    int     // the TLC runs it took: 1, or the parts of a split (CheckAll)
	Rejected []int32 // the partitions of the part rejected (CheckAll)
	// Inconclusive says why TLC could not decide (it ran out of time, or
	// failed); then Accepted is false and nothing was rejected.
	Inconclusive string
	States       int64
	Duration     time.Duration
	TLC          *tlc.Result
	// Violated names the properties the final state violates, for a trace
	// every line of which was explained (TxnSpec only; sorted).
	Violated []string
	// At is the trace line TLC could not explain (when rejected): the line
	// after Furthest in TraceLog's order; AtEvent the ev of the TraceLog
	// line it could not explain (TxnSpec: "Segment" for a partition's
	// read-back, whose markers no decision explains; "ReadCommitted" for a
	// record read_committed returned that is not Visible,
	// "ReadCommittedSkipped" for one it skipped that is; or the line's own
	// kind: "Init", "AddPartitions", "Appended", "EndTxnReceive").
	At      int
	AtEvent string
}

var (
	furthestRE = regexp.MustCompile(`<<"kcheck-furthest", (\d+)>>`)
	violatedRE = regexp.MustCompile(`<<"kcheck-violated", "(\w+)">>`)
)

// Check has TLC validate m against the spec in specDir, with the jar given.
func Check(ctx context.Context, m *Module, specDir, jar string, timeout time.Duration) (*Verdict, error) {
	dir, err := os.MkdirTemp("", "kcheck-tv-")
	if err != nil {
		return nil, fmt.Errorf("tv: %w", err)
	}
	defer os.RemoveAll(dir)
	spec := m.Spec
	if spec == "" {
		spec = ClientSpec
	}
	names := []string{"IdempotentProducer.tla", spec + ".tla"}
	if spec == TxnSpec {
		names = append(names, "TransactionalProducer.tla")
	}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(specDir, name))
		if err != nil {
			return nil, fmt.Errorf("tv: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, fmt.Errorf("tv: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "TraceData.tla"), []byte(m.Data), 0o644); err != nil {
		return nil, fmt.Errorf("tv: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, spec+".cfg"), []byte(m.Config), 0o644); err != nil {
		return nil, fmt.Errorf("tv: %w", err)
	}
	res, err := tlc.Run(ctx, tlc.Options{Jar: jar, Dir: dir, Module: spec, Config: spec + ".cfg",
		Workers: 1, Timeout: timeout})
	if err != nil {
		return nil, err
	}
	v := &Verdict{States: res.States, Duration: res.Duration, TLC: res, Parts: 1}
	if res.Outcome.Kind != tlc.Pass {
		v.Inconclusive = fmt.Sprintf("TLC did not conclude (%s) after %d states: %s", res.Outcome, res.States, strings.Join(res.Messages, "; "))
		return v, nil
	}
	v.Accepted = strings.Contains(res.Output, `<<"kcheck-accepted", `)
	furthest := 0
	for _, mm := range furthestRE.FindAllStringSubmatch(res.Output, -1) {
		n, _ := strconv.Atoi(mm[1])
		furthest = max(furthest, n)
	}
	// TraceLog line k was explained when l reached k + 1; the whole trace
	// is explained up to the line before the first that was not.
	if k := furthest - 1; !v.Accepted && k >= 0 && k < len(m.before) {
		v.Furthest = m.before[k]
		v.At, v.AtEvent = m.Lines[k], m.evs[k]
	}
	if v.Accepted {
		for _, mm := range violatedRE.FindAllStringSubmatch(res.Output, -1) {
			v.Violated = append(v.Violated, mm[1])
		}
		slices.Sort(v.Violated)
		v.Violated = slices.Compact(v.Violated)
	}
	return v, nil
}
