package tv

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kcheck/kcheck/checker/kafkaerr"
	"github.com/kcheck/kcheck/checker/replay"
	"github.com/kcheck/kcheck/tracer"
)

// A trace written by kcheck proxy (tracer.ProxyWriter) shows a client's
// attempts on the wire and the broker's answers, not the client's steps; it
// is translated for spec/TraceWire.tla, the broker side of the spec held to
// every answer, with the attempts taken as given (see that module). The
// translation numbers batches over (partition, batch id) and producer ids in
// the order seen, and keeps real epochs, sequences and offsets (TraceWire
// counts records, as Kafka does). It also works out what follows from the
// trace alone and not from the broker, as checker/replay's wire rules do,
// and hands it to TLC on the lines: which injected fault was written for
// which attempt, which lost attempts were cut before the broker saw them
// (Fault DropConnection), which answers a real broker may have given on its
// own (kafkaerr.OwnBrokerError), and which attempts the header's state
// expiry may precede.

// WireSpec and ClientSpec name the trace specs a Module is for.
const (
	ClientSpec = "TraceIdempotentProducer"
	WireSpec   = "TraceWire"
)

// SpecFor names the trace spec a trace with header h is validated against:
// a transactional trace (our producer's or the proxy's) goes to the
// coordinator's and leaders' side of TransactionalProducer (TxnSpec); a
// trace of the wire (kcheck proxy) shows a client's attempts but not its
// own steps, so it goes to the broker side of the spec (WireSpec); any
// other to the whole spec (ClientSpec).
func SpecFor(h tracer.Header) string {
	if h.TransactionalID != "" {
		return TxnSpec
	}
	if h.Writer == tracer.ProxyWriter {
		return WireSpec
	}
	return ClientSpec
}

// wireEvent is what the wire translation keeps of an event.
type wireEvent struct {
	line  int
	kind  tracer.Kind
	p     int32
	b     int64
	pid   int64
	ep    int16
	seq   int32
	n     int32
	nrecs int
	req   int32
	node  int32
	err   string
	off   int64
	t     int64
	bts   int64 // a SendNew's or Resend's BatchTime (0: not known)
	fault string
}

// wireTrace collects a proxy trace's events for wireModule.
type wireTrace struct {
	evs []wireEvent
}

func (w *wireTrace) add(line int, e *tracer.Event) {
	switch e.Kind {
	case tracer.Told:
		return // what the application was told is checker/order's
	case tracer.Poll, tracer.PollEnd:
		return // a consumer's polls: no broker answer to a produce; checker/txn's
	}
	w.evs = append(w.evs, wireEvent{line: line, kind: e.Kind, p: e.Partition, b: e.Batch, pid: e.PID, ep: e.Epoch,
		seq: e.Seq, n: e.N, nrecs: len(e.Records), req: e.Req, node: e.Node, err: e.Err, off: e.Offset, t: e.T,
		bts: e.BatchTime, fault: e.Fault})
}

type wireKey struct {
	p int32
	b int64
}

// wireBatch is the translation's view of a batch's latest attempt: what
// checker/replay's wire rules keep, enough to list a Disconnect's lost
// attempts and to flag an attempt state expiry may precede.
type wireBatch struct {
	st     string // none, sent, retry
	node   int32
	req    int32
	ep     int16
	seq    int32
	n      int32
	sentAt int64
	stamp  int64 // replay's batch stamp: its max timestamp, else sentAt
	line   int
}

type wireCut struct {
	node int32
	ep   int16
	seq  int32
}

// wireModule translates a proxy trace for TraceWire: one module for the
// whole trace.
func (t *Translator) wireModule() (*Module, error) {
	pl, err := t.wirePlan()
	if err != nil {
		return nil, err
	}
	return pl.render(nil), nil
}

// A wireLine is one line of TraceLog and the parts of a split it goes to.
type wireLine struct {
	entry
	// every: the line goes to every part (Init, ReadBack, UnknownFault:
	// what they check or change is the same in each).
	every bool
	// disc: a Disconnect, whose fields end with its lost attempts, each
	// rendered for the part its partition is in; it goes to the parts with
	// a request outstanding on the connection (touches).
	disc    bool
	lost    []wireLost
	touches []int32
}

// wireLost is one attempt a Disconnect lost, as TraceLog writes it.
type wireLost struct {
	p    int32
	text string
}

// wireReq is a produce request outstanding on a connection, as TraceWire's
// out has it: the batches not yet answered (left) and the partitions whose
// batches were (answered; begun is answered not empty).
type wireReq struct {
	req      int32
	left     map[int]bool
	answered map[int32]bool
}

// wirePlan is a trace of the wire translated: TraceLog's lines for every
// partition, and the pairs of partitions a split must keep in one part
// (split.go). render writes it out for all of its partitions or for some.
type wirePlan struct {
	rule    string
	log     []wireLine
	parts   map[int32]bool // WParts
	conns   map[int32]bool // WConns
	keyPart []int32        // KeyPart: batch k's partition is keyPart[k-1]
	joins   [][2]int32
}

// wirePlan translates a proxy trace for TraceWire.
func (t *Translator) wirePlan() (*wirePlan, error) {
	h := t.h
	expiry := replay.ExpiryDelay(h)
	switch h.Broker.NoStateRule {
	case "pre25", "v25to44", "v45", "kafka19880":
	default:
		return nil, fmt.Errorf("tv: header names no_state_rule %q; want pre25, v25to44, v45 or kafka19880", h.Broker.NoStateRule)
	}
	realBroker := h.Broker.Kind != "kfake"
	kfake := h.Broker.Kind == "kfake"

	str := strconv.Quote
	num := func(v int64) string { return strconv.FormatInt(v, 10) }
	tf := func(b bool) string { return strings.ToUpper(strconv.FormatBool(b)) }

	pids := map[int64]int{}
	pidOf := func(pid int64) int {
		if i, ok := pids[pid]; ok {
			return i
		}
		pids[pid] = len(pids) + 1
		return pids[pid]
	}
	keys := map[wireKey]int{}
	var keyPart []int32
	batches := []*wireBatch{nil}
	keyOf := func(p int32, b int64) int {
		k := wireKey{p, b}
		if i, ok := keys[k]; ok {
			return i
		}
		keys[k] = len(keys) + 1
		keyPart = append(keyPart, p)
		batches = append(batches, &wireBatch{st: "none"})
		return keys[k]
	}
	parts, conns := map[int32]bool{}, map[int32]bool{}
	cuts := map[int32][]wireCut{}
	lastAppend, appended := map[int32]int64{}, map[int32]bool{}
	curPid := 0
	var maxSentEpoch int16
	readBack := false

	// Each connection's requests outstanding, as TraceWire's out would
	// have them, to find where a part of the partitions would see the
	// connection differently from the whole trace (split.go; spec/README.md,
	// "Trace validation of the wire, one partition at a time"): a part
	// sees only the requests with a batch of its own left, and a request
	// as begun only when a batch of its own was answered.
	out := map[int32][]*wireReq{}
	var joins [][2]int32
	join := func(p int32, with ...map[int32]bool) {
		for _, s := range with {
			for q := range s {
				if q != p {
					joins = append(joins, [2]int32{p, q})
				}
			}
		}
	}
	partsOf := func(ks map[int]bool) map[int32]bool {
		s := map[int32]bool{}
		for k := range ks {
			s[keyPart[k-1]] = true
		}
		return s
	}

	var log []wireLine
	for i := range t.wire.evs {
		e := &t.wire.evs[i]
		var f []string
		every := false
		switch e.kind {
		case tracer.InitProducerID:
			switch pid := pidOf(e.pid); {
			case curPid == 0:
				f = []string{`ev |-> "Init"`, "pid |-> " + num(int64(pid)), "new |-> FALSE"}
				curPid = pid
			case pid != curPid:
				// A new producer id: the broker has no state for it, and
				// the old one's batches are forgotten.
				f = []string{`ev |-> "Init"`, "pid |-> " + num(int64(pid)), "new |-> TRUE"}
				curPid = pid
				for _, b := range batches[1:] {
					b.st = "none"
				}
				clear(cuts)
				clear(out)
				maxSentEpoch = e.ep
			}
			every = true
		case tracer.SendNew, tracer.Resend:
			parts[e.p], conns[e.node] = true, true
			k := keyOf(e.p, e.b)
			b := batches[k]
			f = []string{`ev |-> "Send"`, "new |-> " + tf(e.kind == tracer.SendNew), "c |-> " + num(int64(e.node)),
				"req |-> " + num(int64(e.req)), "p |-> " + num(int64(e.p)), "k |-> " + num(int64(k)),
				"ep |-> " + num(int64(e.ep)), "seq |-> " + num(int64(e.seq)), "n |-> " + num(int64(e.n)),
				"nrecs |-> " + num(int64(e.nrecs)), "pid |-> " + num(int64(pidOf(e.pid)))}
			if b.st == "sent" {
				// Sent again while its last attempt is outstanding: that
				// request must not be begun (TraceWire's Send), which a part
				// sees only if it holds the partitions answered in it.
				for _, r := range out[b.node] {
					if r.req == b.req {
						join(e.p, r.answered)
					}
				}
			}
			q := out[e.node]
			at := slices.IndexFunc(q, func(r *wireReq) bool { return r.req == e.req })
			if at >= 0 {
				// Another batch of a request already outstanding: a part
				// that has not the request (none of its batches left in it)
				// would put it last, as a new one; the same only when it is
				// last and not begun.
				if r := q[at]; at < len(q)-1 || len(r.answered) > 0 {
					join(e.p, partsOf(r.left), r.answered)
				}
				q[at].left[k] = true
			} else {
				out[e.node] = append(q, &wireReq{req: e.req, left: map[int]bool{k: true}, answered: map[int32]bool{}})
			}
			*b = wireBatch{st: "sent", node: e.node, req: e.req, ep: e.ep, seq: e.seq, n: e.n, sentAt: e.t, stamp: e.t, line: e.line}
			if e.bts != 0 {
				b.stamp = e.bts
			}
			maxSentEpoch = max(maxSentEpoch, e.ep)
		case tracer.Receive:
			parts[e.p], conns[e.node] = true, true
			if e.off > math.MaxInt32 || e.off < math.MinInt32 {
				return nil, fmt.Errorf("line %d: offset %d is beyond TLC's integers: %w", e.line, e.off, ErrUnsupported)
			}
			k := keyOf(e.p, e.b)
			b := batches[k]
			expire := replay.MayExpire(expiry, lastAppend[e.p], b.sentAt, appended[e.p])
			ack := kafkaerr.IsAck(e.err)
			f = []string{`ev |-> "Receive"`, "c |-> " + num(int64(e.node)), "req |-> " + num(int64(e.req)),
				"p |-> " + num(int64(e.p)), "k |-> " + num(int64(k)), "ep |-> " + num(int64(e.ep)),
				"seq |-> " + num(int64(e.seq)), "err |-> " + str(e.err), "off |-> " + num(e.off),
				"ack |-> " + tf(ack), "own |-> " + tf(realBroker && (kafkaerr.OwnBrokerError(e.err) || replay.Unverified(h.TransactionalID != "", e.err))),
				"kstale |-> " + tf(kfake && e.err == "INVALID_PRODUCER_EPOCH" && e.ep < maxSentEpoch),
				"expire |-> " + tf(expire), "pid |-> " + num(int64(pidOf(e.pid)))}
			// The answer must be to the oldest request outstanding on its
			// connection: a part that has not that request (none of its
			// batches left in it) would take a later one as the oldest.
			q := out[e.node]
			if len(q) > 0 && (q[0].req != e.req || !q[0].left[k]) {
				join(e.p, partsOf(q[0].left))
			}
			if at := slices.IndexFunc(q, func(r *wireReq) bool { return r.req == e.req && r.left[k] }); at >= 0 {
				r := q[at]
				delete(r.left, k)
				r.answered[e.p] = true
				if len(r.left) == 0 {
					out[e.node] = slices.Delete(q, at, at+1)
				}
			}
			if ack {
				if !appended[e.p] || b.stamp > lastAppend[e.p] {
					lastAppend[e.p] = b.stamp
				}
				appended[e.p] = true
				b.st = "none"
			} else if b.st == "sent" {
				b.st = "retry"
			}
		case tracer.Disconnect:
			conns[e.node] = true
			var lost []int
			for k, b := range batches {
				if k > 0 && b.st == "sent" && b.node == e.node {
					lost = append(lost, k)
				}
			}
			// In the order sent, the order the broker would have handled them in.
			slices.SortFunc(lost, func(a, b int) int { return batches[a].line - batches[b].line })
			ln := wireLine{entry: entry{line: e.line, p: -1}, disc: true}
			touches := map[int32]bool{}
			for _, k := range lost {
				b, p := batches[k], keyPart[k-1]
				cut := slices.Contains(cuts[p], wireCut{e.node, b.ep, b.seq})
				ln.lost = append(ln.lost, wireLost{p, fmt.Sprintf("[k |-> %d, p |-> %d, ep |-> %d, seq |-> %d, n |-> %d, cut |-> %s]",
					k, p, b.ep, b.seq, b.n, tf(cut))})
				touches[p] = true
				b.st = "retry"
			}
			// A connection cannot be lost between the partitions of one
			// response: a part sees a request begun only if it holds the
			// partitions answered in it and one with a batch left.
			for _, r := range out[e.node] {
				left := partsOf(r.left)
				maps.Copy(touches, left)
				for p := range r.answered {
					join(p, left)
				}
			}
			delete(out, e.node)
			for p := range cuts {
				cuts[p] = slices.DeleteFunc(cuts[p], func(c wireCut) bool { return c.node == e.node })
			}
			ln.fields = []string{`ev |-> "Disconnect"`, "c |-> " + num(int64(e.node))}
			ln.touches = slices.Sorted(maps.Keys(touches))
			log = append(log, ln)
			continue
		case tracer.Fault:
			switch e.fault {
			case "RejectBeforeAppend", "AppendThenFail":
				parts[e.p] = true
				f = []string{`ev |-> "Fault"`, "p |-> " + num(int64(e.p)), "ep |-> " + num(int64(e.ep)),
					"seq |-> " + num(int64(e.seq)), "kind |-> " + str(e.fault), "err |-> " + str(e.err)}
			case "ExpireProducerState":
				parts[e.p] = true
				f = []string{`ev |-> "ExpireState"`, "p |-> " + num(int64(e.p))}
			case "DropConnection":
				// The Disconnect that follows loses the attempt named
				// unhandled: the broker never saw it.
				if e.p >= 0 {
					cuts[e.p] = append(cuts[e.p], wireCut{e.node, e.ep, e.seq})
				}
			default:
				if tracer.ActsThroughClient(e.fault) {
					// Acts through the Disconnect the client sees, or not at all.
					break
				}
				if tracer.IsClusterFault(e.fault) {
					// A node paused, killed, cut off or slowed: it acts
					// through the answers, delays and Disconnects that follow.
					break
				}
				// No action explains it: TLC stops here, as the Go mirror does.
				f = []string{`ev |-> "UnknownFault"`, "fault |-> " + str(e.fault)}
				every = true
			}
		case tracer.ReadBack, tracer.ReadBackShort:
			if !readBack {
				readBack = true
				f = []string{`ev |-> "ReadBack"`}
				every = true
			}
		default:
			return nil, fmt.Errorf("line %d: %s in a trace of the wire (the wire spec has no client steps): %w", e.line, e.kind, ErrUnsupported)
		}
		if f != nil {
			log = append(log, wireLine{entry: entry{line: e.line, p: e.p, fields: f}, every: every})
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("the trace sends no batch: %w", ErrUnsupported)
	}
	for i := 1; i < len(log); i++ {
		log[i].before = log[i-1].line // Check's furthest line: the one before the first not explained
	}
	return &wirePlan{rule: h.Broker.NoStateRule, log: log, parts: parts, conns: conns, keyPart: keyPart, joins: joins}, nil
}

// render writes the module for the partitions in only (all of them when
// only is nil): their lines of TraceLog, the lines every part has, and a
// Disconnect when a request of theirs was outstanding on its connection,
// with the attempts of theirs it lost.
func (pl *wirePlan) render(only map[int32]bool) *Module {
	in := func(p int32) bool { return only == nil || only[p] }
	str := strconv.Quote
	num := func(v int64) string { return strconv.FormatInt(v, 10) }
	set := func(s []int32) string {
		var q []string
		for _, v := range s {
			q = append(q, num(int64(v)))
		}
		return "{" + strings.Join(q, ", ") + "}"
	}
	m := &Module{Spec: WireSpec}
	for _, p := range slices.Sorted(maps.Keys(pl.parts)) {
		if in(p) {
			m.Partitions = append(m.Partitions, p)
		}
	}
	var log []entry
	for _, ln := range pl.log {
		switch {
		case ln.every:
		case ln.disc:
			if only != nil && !slices.ContainsFunc(ln.touches, in) {
				continue // nothing of this part on the connection: a no-op for it
			}
			var ls []string
			for _, l := range ln.lost {
				if in(l.p) {
					ls = append(ls, l.text)
				}
			}
			ln.fields = append(slices.Clip(ln.fields), "lost |-> <<"+strings.Join(ls, ", ")+">>")
		case !in(ln.p):
			continue
		}
		log = append(log, ln.entry)
	}
	var kp []string
	for _, p := range pl.keyPart {
		kp = append(kp, num(int64(p)))
	}
	var data strings.Builder
	data.WriteString("---- MODULE TraceData ----\n\\* Generated by kcheck verify --tlc from a trace of the wire. DO NOT EDIT.\nEXTENDS Integers, Sequences, TLC\n\n")
	fmt.Fprintf(&data, "WNoStateRule == %s\n\nWParts == %s\n\nWConns == %s\n\nWKeys == 1..%d\n\nKeyPart == <<%s>>\n\n",
		str(pl.rule), set(m.Partitions), set(slices.Sorted(maps.Keys(pl.conns))), len(pl.keyPart), strings.Join(kp, ", "))
	format := compactLines(&data, log)
	data.WriteString("TraceLog == <<\n")
	m.writeLog(&data, log, format)
	m.Data = data.String()
	m.Config = "\\* Generated by kcheck verify --tlc from a trace of the wire. DO NOT EDIT.\nINIT TraceInit\nNEXT TraceNext\nCONSTRAINT TraceFurthest\n"
	return m
}

// compactLines writes to data an operator for each kind of line in log
// (the same ev and field names): Ln(v1, ..., vn) == [ev |-> "...",
// f1 |-> v1, ...], and returns the format that writes a line as Ln's
// application to its values. TLC holds the records the same, but SANY
// parses a tenth of the expression a record literal is: a proxy trace of
// 100,000 events had TLC spend most of its time and gigabytes of memory in
// SANY's semantic processing of TraceLog's records.
func compactLines(data *strings.Builder, log []entry) func(e entry) string {
	ops := map[string]string{} // ev and field names -> operator
	split := func(e entry) (sig string, vals []string) {
		var names []string
		for _, f := range e.fields[1:] {
			name, val, _ := strings.Cut(f, " |-> ")
			names, vals = append(names, name), append(vals, val)
		}
		return e.fields[0] + " " + strings.Join(names, " "), vals
	}
	for _, e := range log {
		sig, _ := split(e)
		if _, ok := ops[sig]; ok {
			continue
		}
		op := fmt.Sprintf("L%d", len(ops)+1)
		ops[sig] = op
		var args, fields []string
		for i, f := range e.fields[1:] {
			name, _, _ := strings.Cut(f, " |-> ")
			a := fmt.Sprintf("a%d", i+1)
			args, fields = append(args, a), append(fields, name+" |-> "+a)
		}
		if len(args) == 0 {
			fmt.Fprintf(data, "%s == [%s]\n\n", op, e.fields[0])
		} else {
			fmt.Fprintf(data, "%s(%s) == [%s, %s]\n\n", op, strings.Join(args, ", "), e.fields[0], strings.Join(fields, ", "))
		}
	}
	return func(e entry) string {
		sig, vals := split(e)
		if len(vals) == 0 {
			return ops[sig]
		}
		return ops[sig] + "(" + strings.Join(vals, ", ") + ")"
	}
}
