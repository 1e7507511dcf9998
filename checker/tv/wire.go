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
// a trace of the wire (kcheck proxy) shows a client's attempts but not its
// own steps, so it goes to the broker side of the spec (WireSpec); any
// other to the whole spec (ClientSpec).
func SpecFor(h tracer.Header) string {
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
	fault string
}

// wireTrace collects a proxy trace's events for wireModule.
type wireTrace struct {
	evs []wireEvent
}

func (w *wireTrace) add(line int, e *tracer.Event) {
	if e.Kind == tracer.Told {
		return // what the application was told is checker/order's
	}
	w.evs = append(w.evs, wireEvent{line: line, kind: e.Kind, p: e.Partition, b: e.Batch, pid: e.PID, ep: e.Epoch,
		seq: e.Seq, n: e.N, nrecs: len(e.Records), req: e.Req, node: e.Node, err: e.Err, off: e.Offset, t: e.T,
		fault: e.Fault})
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
	ep     int16
	seq    int32
	n      int32
	sentAt int64
	line   int
}

type wireCut struct {
	node int32
	ep   int16
	seq  int32
}

// wireModule translates a proxy trace for TraceWire.
func (t *Translator) wireModule() (*Module, error) {
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

	var log []entry
	for i := range t.wire.evs {
		e := &t.wire.evs[i]
		var f []string
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
				maxSentEpoch = e.ep
			}
		case tracer.SendNew, tracer.Resend:
			parts[e.p], conns[e.node] = true, true
			k := keyOf(e.p, e.b)
			b := batches[k]
			f = []string{`ev |-> "Send"`, "new |-> " + tf(e.kind == tracer.SendNew), "c |-> " + num(int64(e.node)),
				"req |-> " + num(int64(e.req)), "p |-> " + num(int64(e.p)), "k |-> " + num(int64(k)),
				"ep |-> " + num(int64(e.ep)), "seq |-> " + num(int64(e.seq)), "n |-> " + num(int64(e.n)),
				"nrecs |-> " + num(int64(e.nrecs)), "pid |-> " + num(int64(pidOf(e.pid)))}
			*b = wireBatch{st: "sent", node: e.node, ep: e.ep, seq: e.seq, n: e.n, sentAt: e.t, line: e.line}
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
				"ack |-> " + tf(ack), "own |-> " + tf(realBroker && kafkaerr.OwnBrokerError(e.err)),
				"kstale |-> " + tf(kfake && e.err == "INVALID_PRODUCER_EPOCH" && e.ep < maxSentEpoch),
				"expire |-> " + tf(expire), "pid |-> " + num(int64(pidOf(e.pid)))}
			if ack {
				lastAppend[e.p], appended[e.p] = max(lastAppend[e.p], b.sentAt), true
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
			var ls []string
			for _, k := range lost {
				b, p := batches[k], keyPart[k-1]
				cut := slices.Contains(cuts[p], wireCut{e.node, b.ep, b.seq})
				ls = append(ls, fmt.Sprintf("[k |-> %d, p |-> %d, ep |-> %d, seq |-> %d, n |-> %d, cut |-> %s]",
					k, p, b.ep, b.seq, b.n, tf(cut)))
				b.st = "retry"
			}
			for p := range cuts {
				cuts[p] = slices.DeleteFunc(cuts[p], func(c wireCut) bool { return c.node == e.node })
			}
			f = []string{`ev |-> "Disconnect"`, "c |-> " + num(int64(e.node)), "lost |-> <<" + strings.Join(ls, ", ") + ">>"}
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
			case "DropResponse", "TimeoutBeforeAppend", "Delay":
				// Acts through the Disconnect the client sees, or not at all.
			default:
				if tracer.IsClusterFault(e.fault) {
					// A node paused, killed, cut off or slowed: it acts
					// through the answers, delays and Disconnects that follow.
					break
				}
				// No action explains it: TLC stops here, as the Go mirror does.
				f = []string{`ev |-> "UnknownFault"`, "fault |-> " + str(e.fault)}
			}
		case tracer.ReadBack, tracer.ReadBackShort:
			if !readBack {
				readBack = true
				f = []string{`ev |-> "ReadBack"`}
			}
		default:
			return nil, fmt.Errorf("line %d: %s in a trace of the wire (the wire spec has no client steps): %w", e.line, e.kind, ErrUnsupported)
		}
		if f != nil {
			log = append(log, entry{line: e.line, fields: f})
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("the trace sends no batch: %w", ErrUnsupported)
	}

	set := func(s map[int32]bool) string {
		var q []string
		for _, v := range slices.Sorted(maps.Keys(s)) {
			q = append(q, num(int64(v)))
		}
		return "{" + strings.Join(q, ", ") + "}"
	}
	var kp []string
	for _, p := range keyPart {
		kp = append(kp, num(int64(p)))
	}
	m := &Module{Spec: WireSpec}
	var data strings.Builder
	data.WriteString("---- MODULE TraceData ----\n\\* Generated by kcheck verify --tlc from a trace of the wire. DO NOT EDIT.\nEXTENDS Integers, Sequences, TLC\n\n")
	fmt.Fprintf(&data, "WNoStateRule == %s\n\nWParts == %s\n\nWConns == %s\n\nWKeys == 1..%d\n\nKeyPart == <<%s>>\n\nTraceLog == <<\n",
		str(h.Broker.NoStateRule), set(parts), set(conns), len(keys), strings.Join(kp, ", "))
	for i := 1; i < len(log); i++ {
		log[i].before = log[i-1].line // Check's furthest line: the one before the first not explained
	}
	m.writeLog(&data, log)
	m.Data = data.String()
	m.Config = "\\* Generated by kcheck verify --tlc from a trace of the wire. DO NOT EDIT.\nINIT TraceInit\nNEXT TraceNext\nCONSTRAINT TraceFurthest\n"
	return m, nil
}
