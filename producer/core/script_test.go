package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/kcheck/kcheck/checker/replay"
	"github.com/kcheck/kcheck/tracer"
)

// The scripts in testdata drive a Core through a scenario and show, after
// each command, what it asked for (Ready). Commands:
//
//	init [partitions=1] [first-ack=true] [hold=true] [rearm-ms=0] [max-in-flight=5]
//	     [linger-ms=0] [delivery-ms=120000] [backoff-ms=100] [max-epoch=32767]
//	     [pid=1000] [epoch=0] [broker=v25to44]    partitions led by node 1, connected
//	batch p=P [n=1] [ts=MS] [open]             a batch of n records created now (open: Produce still appends to it)
//	tick t=MS [flush]                          the time is MS; a step
//	respond req=R [err=NONE] [off=O] [lso=-1]  the answer to request R, for each of its batches
//	                                           (or one line per partition as input: p=P err=E off=O lso=L)
//	disconnect node=N | connect node=N         a lost connection, a dial that succeeded
//	new-pid pid=ID [epoch=0]                   InitProducerId's answer after need-id
//	fault kind=K p=P [ep=E seq=S err=ERR]      a broker fault, in the trace only (for replay);
//	      [appended]                           appended: the attempt (one record) was written
//	state p=P                                  the partition's sequence state
//	abort                                      the producer closes
//
// Request numbers are the correlation ids, 1, 2, ... in the order sent.
// Offsets default to the next of the partition's log (the broker appended
// the batch). Each script's trace, as the sender would write it, is then
// replayed by checker/replay (TestScripts).

// fakeBuf is the partition buffers: each partition's unsent batches, the
// last one open unless sealed.
type fakeBuf struct {
	q map[Part][]*fakeBatch
}

type fakeBatch struct {
	b      *Batch
	sealed bool
}

func (f *fakeBuf) Head(p Part) (time.Time, bool, bool) {
	q := f.q[p]
	if len(q) == 0 {
		return time.Time{}, false, false
	}
	// Only the last batch can be open: the ones before it were sealed when
	// the next one opened.
	return q[0].b.Created, q[0].sealed || len(q) > 1, true
}

func (f *fakeBuf) pop(p Part) *Batch {
	q := f.q[p]
	if len(q) == 0 {
		return nil
	}
	f.q[p] = q[1:]
	return q[0].b
}

func (f *fakeBuf) HeadBytes(p Part) int {
	if q := f.q[p]; len(q) > 0 {
		return q[0].b.Bytes
	}
	return 0
}

func (f *fakeBuf) Take(p Part) *Batch { return f.pop(p) }
func (f *fakeBuf) Drop(p Part) *Batch { return f.pop(p) }

// env is one script's world: the core, its buffers, the broker's log ends
// and the trace so far.
type env struct {
	c      *Core
	cfg    Config
	buf    fakeBuf
	now    time.Time
	parts  []Part
	nextB  int64
	reqs   map[int32]*Request
	adds   []Part         // the last AddPartitions asked
	end    *EndTxnRequest // the last EndTxn asked
	inTxn  map[int32]bool // partitions of the open transaction: added, or a batch appended (its end writes a marker to each)
	nextR  int32
	logEnd map[int32]int64
	hdr    tracer.Header
	trace  []tracer.Event
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func (e *env) record(ev tracer.Event) {
	ev.T = e.now.UnixNano()
	e.trace = append(e.trace, ev)
}

func (e *env) init(t *testing.T, d *datadriven.TestData) string {
	parts, maxIn := 1, 5
	firstAck, hold := true, true
	var rearm, linger int64
	delivery, backoff := int64(120000), int64(100)
	maxEpoch, epoch := 32767, 0
	pid := int64(1000)
	broker := "v25to44"
	maxReq := 0
	txn, tv2, wait := false, false, false
	d.MaybeScanArgs(t, "txn", &txn)
	d.MaybeScanArgs(t, "tv2", &tv2)
	d.MaybeScanArgs(t, "wait-markers", &wait)
	d.MaybeScanArgs(t, "partitions", &parts)
	d.MaybeScanArgs(t, "first-ack", &firstAck)
	d.MaybeScanArgs(t, "hold", &hold)
	d.MaybeScanArgs(t, "rearm-ms", &rearm)
	d.MaybeScanArgs(t, "max-in-flight", &maxIn)
	d.MaybeScanArgs(t, "linger-ms", &linger)
	d.MaybeScanArgs(t, "delivery-ms", &delivery)
	d.MaybeScanArgs(t, "backoff-ms", &backoff)
	d.MaybeScanArgs(t, "max-epoch", &maxEpoch)
	d.MaybeScanArgs(t, "pid", &pid)
	d.MaybeScanArgs(t, "epoch", &epoch)
	d.MaybeScanArgs(t, "broker", &broker)
	d.MaybeScanArgs(t, "max-request-bytes", &maxReq)
	e.cfg = Config{MaxInFlight: maxIn, MaxRequestBytes: maxReq, Linger: time.Duration(linger) * time.Millisecond,
		DeliveryTimeout: time.Duration(delivery) * time.Millisecond, RetryBackoff: time.Duration(backoff) * time.Millisecond,
		MaxEpoch: int16(maxEpoch), Rules: Rules{FirstAck: firstAck, HoldWhileRetrying: hold, RearmMs: rearm}, Trace: true,
		Txn: txn, TV2: txn && tv2, WaitMarkers: wait}
	e.c = New(e.cfg, pid, int16(epoch))
	e.buf = fakeBuf{q: map[Part][]*fakeBatch{}}
	e.reqs, e.logEnd = map[int32]*Request{}, map[int32]int64{}
	e.now = time.UnixMilli(0)
	for i := 0; i < parts; i++ {
		e.parts = append(e.parts, e.c.AddPartition(int32(i), 1))
	}
	e.c.Connected(1)
	e.hdr = tracer.Header{Writer: "kcheck-producer", Client: "kcheck/producer", Topic: "t", Partitions: int32(parts),
		FirstAck: firstAck, HoldWhileRetrying: hold, MaxInFlight: maxIn, IdleRearmMs: rearm, DeliveryTimeoutMs: delivery,
		Broker: tracer.Broker{Kind: "kafka", Version: "4.1.0", NoStateRule: broker}}
	if rearm > 0 {
		e.hdr.IdleRearmFrom = "script"
	}
	init := tracer.Event{Kind: tracer.InitProducerID, PID: pid, Epoch: int16(epoch), Node: -1}
	if txn {
		e.hdr.TransactionalID, e.hdr.TxnVersion = "script", 1
		if tv2 {
			e.hdr.TxnVersion = 2
		}
		init.TxnID = "script"
	}
	e.record(init)
	return "ok"
}

func (e *env) part(t *testing.T, d *datadriven.TestData) (int32, Part) {
	var p int32
	d.ScanArgs(t, "p", &p)
	if int(p) >= len(e.parts) {
		d.Fatalf(t, "no partition %d", p)
	}
	return p, e.parts[p]
}

func (e *env) run(t *testing.T, d *datadriven.TestData) string {
	if e.c == nil && d.Cmd != "init" {
		d.Fatalf(t, "init first")
	}
	switch d.Cmd {
	case "init":
		return e.init(t, d)
	case "batch":
		_, p := e.part(t, d)
		n, ts, size := int32(1), ms(e.now), 100
		d.MaybeScanArgs(t, "n", &n)
		d.MaybeScanArgs(t, "ts", &ts)
		d.MaybeScanArgs(t, "bytes", &size)
		e.nextB++
		b := &Batch{ID: e.nextB, N: n, Created: e.now, MaxTs: ts, Bytes: size}
		for i := int32(0); i < n; i++ {
			b.Records = append(b.Records, e.nextB*1000+int64(i))
		}
		q := e.buf.q[p]
		if len(q) > 0 {
			q[len(q)-1].sealed = true // a new batch seals the open one
		}
		e.buf.q[p] = append(q, &fakeBatch{b: b, sealed: !d.HasArg("open")})
		e.c.Touch(p)
		return fmt.Sprintf("b%d", b.ID)
	case "tick":
		var at int64
		d.ScanArgs(t, "t", &at)
		if at < ms(e.now) {
			d.Fatalf(t, "time goes back: %d after %d", at, ms(e.now))
		}
		e.now = time.UnixMilli(at)
		e.c.Tick(e.now, d.HasArg("flush"), &e.buf)
	case "respond":
		e.respond(t, d)
	case "disconnect", "connect", "timeout":
		var n int32
		d.ScanArgs(t, "node", &n)
		switch d.Cmd {
		case "connect":
			e.c.Connected(n)
			return "ok"
		case "timeout": // request.timeout.ms: the loop closes the connection
			e.c.RequestTimedOut(n)
		}
		e.c.Disconnect(n, e.now)
	case "new-pid":
		var pid int64
		var ep int16
		d.ScanArgs(t, "pid", &pid)
		d.MaybeScanArgs(t, "epoch", &ep)
		e.record(tracer.Event{Kind: tracer.InitProducerID, PID: pid, Epoch: ep, Node: -1})
		e.c.NewProducerID(pid, ep)
	case "fault":
		var kind, errName string
		var ep int16 = -1
		var seq int32 = -1
		d.ScanArgs(t, "kind", &kind)
		p, _ := e.part(t, d)
		d.MaybeScanArgs(t, "ep", &ep)
		d.MaybeScanArgs(t, "seq", &seq)
		d.MaybeScanArgs(t, "err", &errName)
		e.record(tracer.Event{Kind: tracer.Fault, Fault: kind, Partition: p, Epoch: ep, Seq: seq, Node: 1, Err: errName})
		if d.HasArg("appended") {
			e.logEnd[p]++ // the broker appended the attempt (a one-record batch) before it failed
		}
		return "ok"
	case "begin":
		if err := e.c.BeginTxn(); err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprintf("tx %d", e.c.Tx())
	case "commit", "abort-txn":
		if err := e.c.EndTxn(d.Cmd == "commit"); err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	case "added":
		errName := "NONE"
		d.MaybeScanArgs(t, "err", &errName)
		code := e.code(t, d, errName)
		for _, p := range e.adds {
			if code == 0 {
				e.txnPart(e.c.parts[p].id)
			}
			e.record(tracer.Event{Kind: tracer.AddPartitionsToTxn, Partition: e.c.parts[p].id, PID: e.c.pid, Epoch: e.c.epoch, Node: 2, Err: errName, Tx: e.c.Tx()})
		}
		e.c.PartitionsAdded(e.adds, code, e.now)
	case "end-answer":
		errName := "NONE"
		ep := int16(-1)
		d.MaybeScanArgs(t, "err", &errName)
		d.MaybeScanArgs(t, "epoch", &ep)
		code := e.code(t, d, errName)
		if code != 0 {
			ep = -1
		}
		if code == 0 {
			for p := range e.inTxn {
				e.logEnd[p]++ // the coordinator's marker
			}
			e.inTxn = nil
		}
		e.record(tracer.Event{Kind: tracer.EndTxnReceive, PID: e.end.PID, Epoch: e.end.Epoch, Node: 2, Err: errName, Commit: e.end.Commit, NewEpoch: ep, Tx: e.end.Tx})
		e.c.EndTxnAnswered(code, e.end.PID, ep, e.now)
	case "described":
		state, errName := "", "NONE"
		d.MaybeScanArgs(t, "state", &state)
		d.MaybeScanArgs(t, "err", &errName)
		e.c.TxnDescribed(state, e.code(t, d, errName), e.now)
	case "bumped":
		var ep int16
		d.ScanArgs(t, "epoch", &ep)
		e.record(tracer.Event{Kind: tracer.InitProducerID, PID: e.c.pid, Epoch: ep, Node: 2, TxnID: "script"})
		e.c.Bumped(e.c.pid, ep)
	case "state":
		_, p := e.part(t, d)
		return e.state(p)
	case "abort":
		e.c.Abort(&e.buf)
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	return e.ready()
}

// txnPart notes partition p in the open transaction.
func (e *env) txnPart(p int32) {
	if e.inTxn == nil {
		e.inTxn = map[int32]bool{}
	}
	e.inTxn[p] = true
}

// code is the Kafka error code of name ("NONE": 0).
func (e *env) code(t *testing.T, d *datadriven.TestData, name string) int16 {
	if name == "NONE" {
		return 0
	}
	ke, ok := tracer.ErrorByName(name)
	if !ok {
		d.Fatalf(t, "unknown error %q", name)
	}
	return ke.Code
}

func (e *env) respond(t *testing.T, d *datadriven.TestData) {
	var id int32
	d.ScanArgs(t, "req", &id)
	r := e.reqs[id]
	if r == nil {
		d.Fatalf(t, "no request %d", id)
	}
	type answer struct {
		err      string
		off, lso int64
		offSet   bool
	}
	all := answer{err: "NONE", lso: -1}
	d.MaybeScanArgs(t, "err", &all.err)
	all.offSet = d.MaybeScanArgs(t, "off", &all.off)
	d.MaybeScanArgs(t, "lso", &all.lso)
	per := map[int32]answer{}
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		if line == "" {
			continue
		}
		a := answer{err: "NONE", lso: -1}
		var p int32 = -1
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			var err error
			switch k {
			case "p":
				_, err = fmt.Sscan(v, &p)
			case "err":
				a.err = v
			case "off":
				_, err = fmt.Sscan(v, &a.off)
				a.offSet = true
			case "lso":
				_, err = fmt.Sscan(v, &a.lso)
			default:
				err = fmt.Errorf("unknown key %q", k)
			}
			if err != nil {
				d.Fatalf(t, "answer %q: %v", line, err)
			}
		}
		per[p] = a
	}
	res := make([]Result, len(r.Batches))
	for i, b := range r.Batches {
		a := all
		if len(per) > 0 {
			var ok bool
			if a, ok = per[b.kp]; !ok {
				d.Fatalf(t, "no answer for partition %d", b.kp)
			}
		}
		ke, ok := tracer.ErrorByName(a.err)
		code := int16(0)
		switch {
		case a.err == "NONE":
		case ok:
			code = ke.Code
		default:
			d.Fatalf(t, "unknown error %q", a.err)
		}
		off := a.off
		switch {
		case a.offSet:
		case code == 0:
			off = e.logEnd[b.kp]
		default:
			off = -1
		}
		if code == 0 {
			e.logEnd[b.kp] = max(e.logEnd[b.kp], off+int64(b.N))
			if e.cfg.Txn {
				e.txnPart(b.kp)
			}
		}
		res[i] = Result{Code: code, Offset: off, LogStart: a.lso}
	}
	e.c.Respond(r, id, res, e.now)
}

// ready prints what the core asks for and records it in the trace, as the
// sender would emit it.
func (e *env) ready() string {
	rd := e.c.Ready()
	var out strings.Builder
	if len(rd.Events) > 0 {
		out.WriteString("events:\n")
		for _, ev := range rd.Events {
			fmt.Fprintf(&out, "  %s\n", eventString(ev))
			e.record(ev)
		}
	}
	if len(rd.Requests) > 0 {
		out.WriteString("requests:\n")
		for _, r := range rd.Requests {
			e.nextR++
			e.reqs[e.nextR] = r
			var parts []string
			for i := range r.Batches {
				ev := r.Event(i, e.nextR)
				e.record(ev)
				parts = append(parts, fmt.Sprintf("%s p=%d b%d ep=%d seq=%d n=%d", ev.Kind, ev.Partition, ev.Batch, ev.Epoch, ev.Seq, ev.N))
			}
			fmt.Fprintf(&out, "  req=%d node=%d: %s\n", e.nextR, r.Node, strings.Join(parts, "; "))
		}
	}
	if len(rd.Outcomes) > 0 {
		out.WriteString("outcomes:\n")
		for _, o := range rd.Outcomes {
			switch o.Cause {
			case Acked:
				fmt.Fprintf(&out, "  b%d acked off=%d\n", o.Batch.ID, o.Offset)
			case BrokerError:
				fmt.Fprintf(&out, "  b%d failed %s\n", o.Batch.ID, tracer.ErrorName(o.Code))
			case DeliveryTimeout:
				fmt.Fprintf(&out, "  b%d failed delivery timeout\n", o.Batch.ID)
			case Closed:
				fmt.Fprintf(&out, "  b%d failed closed\n", o.Batch.ID)
			case TxnAborted:
				fmt.Fprintf(&out, "  b%d failed transaction aborted\n", o.Batch.ID)
			}
		}
	}
	if len(rd.AddPartitions) > 0 {
		e.adds = slices.Clone(rd.AddPartitions)
		var ps []string
		for _, p := range rd.AddPartitions {
			ps = append(ps, fmt.Sprint(e.c.parts[p].id))
		}
		fmt.Fprintf(&out, "add partitions to txn: %s\n", strings.Join(ps, " "))
	}
	if rd.DescribeTxn {
		out.WriteString("describe txn\n")
	}
	if r := rd.EndTxn; r != nil {
		e.end = r
		e.record(tracer.Event{Kind: tracer.EndTxn, PID: r.PID, Epoch: r.Epoch, Node: 2, Commit: r.Commit, Tx: r.Tx})
		fmt.Fprintf(&out, "end txn: tx=%d commit=%v pid=%d ep=%d\n", r.Tx, r.Commit, r.PID, r.Epoch)
	}
	if r := rd.TxnDone; r != nil {
		ev := tracer.Event{Kind: tracer.TxnTold, Commit: r.Commit, Tx: r.Tx, Result: tracer.Aborted}
		switch {
		case r.Err != "":
			ev.Result, ev.Reason = tracer.Failed, r.Err
			if r.Code != 0 {
				ev.Err = tracer.ErrorName(r.Code)
			}
		case r.Commit:
			ev.Result = tracer.Committed
		}
		e.record(ev)
		fmt.Fprintf(&out, "txn done: tx=%d %s", r.Tx, ev.Result)
		if r.Err != "" {
			fmt.Fprintf(&out, " (%s) fatal=%v abortable=%v", r.Err, r.Fatal, r.Abortable)
		}
		if r.Bump {
			out.WriteString(" bump")
		}
		out.WriteString("\n")
	}
	if len(rd.Dial) > 0 {
		fmt.Fprintf(&out, "dial: %v\n", rd.Dial)
	}
	if rd.Refresh {
		out.WriteString("refresh metadata\n")
	}
	if rd.NeedID {
		out.WriteString("need a new producer id\n")
	}
	if !rd.Wake.IsZero() {
		fmt.Fprintf(&out, "wake: %d\n", ms(rd.Wake))
	}
	if out.Len() == 0 {
		return "nothing"
	}
	return out.String()
}

func eventString(ev tracer.Event) string {
	switch ev.Kind {
	case tracer.Receive:
		return fmt.Sprintf("Receive p=%d b%d ep=%d seq=%d req=%d err=%s off=%d lso=%d", ev.Partition, ev.Batch, ev.Epoch, ev.Seq, ev.Req, ev.Err, ev.Offset, ev.LogStart)
	case tracer.Bump:
		return fmt.Sprintf("Bump p=%d pid=%d ep=%d", ev.Partition, ev.PID, ev.Epoch)
	case tracer.ResolveSequences:
		return fmt.Sprintf("ResolveSequences p=%d bump=%v", ev.Partition, ev.Bumped)
	case tracer.Disconnect:
		return fmt.Sprintf("Disconnect node=%d", ev.Node)
	case tracer.Fail:
		return fmt.Sprintf("Fail p=%d b%d ep=%d seq=%d reason=%q", ev.Partition, ev.Batch, ev.Epoch, ev.Seq, ev.Reason)
	}
	return fmt.Sprintf("%s p=%d b%d ep=%d seq=%d", ev.Kind, ev.Partition, ev.Batch, ev.Epoch, ev.Seq)
}

func (e *env) state(p Part) string {
	pt := e.c.parts[p]
	s := &pt.seq
	var b strings.Builder
	fmt.Fprintf(&b, "pid=%d epoch=%d next=%d lastAcked=%d bumpReq=%v unresolved=%v inflight=[", s.pid, s.epoch, s.next, s.lastAcked, s.bumpReq, s.unresolved)
	for i, bt := range s.inflight {
		if i > 0 {
			b.WriteString(" ")
		}
		st := [...]string{"unsent", "sent", "retry", "acked", "failed"}[bt.st]
		fmt.Fprintf(&b, "b%d:%s@%d/%d", bt.ID, st, bt.epoch, bt.seq)
	}
	fmt.Fprintf(&b, "] unsent=%d", len(e.buf.q[p]))
	return b.String()
}

// traceOf writes e's trace as the sender would (tracer's format).
func traceOf(t *testing.T, hdr tracer.Header, evs []tracer.Event) *bytes.Buffer {
	t.Helper()
	// Written line by line, not with tracer.Writer, which would stamp each
	// event with the time it was written: the script's clock is the trace's.
	hdr.Version = tracer.Version
	line, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	buf := bytes.NewBuffer(append(line, '\n'))
	out := buf.AvailableBuffer()
	for i := range evs {
		ev := evs[i]
		ev.I = int64(i + 1)
		out = append(tracer.AppendEvent(out, &ev), '\n')
	}
	buf.Write(out)
	return buf
}

func replayTrace(name string, buf *bytes.Buffer) error {
	r, err := tracer.NewReader(bytes.NewReader(buf.Bytes()), name)
	if err != nil {
		return fmt.Errorf("reading the trace of %s: %w", name, err)
	}
	return replay.Trace(r)
}

// runScript runs one script and returns its trace's header and events.
func runScript(t *testing.T, path string) (tracer.Header, []tracer.Event) {
	e := &env{}
	datadriven.RunTest(t, path, e.run)
	return e.hdr, e.trace
}

// TestScripts runs every script in testdata and replays the trace each one
// makes with checker/replay, which must accept it: the core's decisions are
// the spec's.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	sort.Strings(files)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			hdr, evs := runScript(t, path)
			if err := replayTrace(path, traceOf(t, hdr, evs)); err != nil {
				t.Fatalf("replay rejects the script's trace: %v", err)
			}
		})
	}
}

// TestReplayRejectsMutation checks that the replay in TestScripts can fail:
// a script's trace with one SendNew's sequence skipped ahead is rejected, and
// so are the traces of the rules-off scripts claiming the rules were on
// (the first-ack rule, HoldWhileRetrying, the idle re-arm).
func TestReplayRejectsMutation(t *testing.T) {
	cases := []struct {
		name, script string
		mutate       func(h *tracer.Header, evs []tracer.Event) bool
		reason       string // in the replay's error
	}{
		{"a SendNew with a skipped sequence", "first_ack.txt", func(_ *tracer.Header, evs []tracer.Event) bool {
			sends := 0
			for i := range evs {
				if evs[i].Kind == tracer.SendNew {
					if sends++; sends == 2 {
						evs[i].Seq++
						return true
					}
				}
			}
			return false
		}, "but the next is epoch 0 seq 1"},
		{"pipelining with the first-ack rule on", "first_ack_off.txt", func(h *tracer.Header, _ []tracer.Event) bool {
			h.FirstAck = true
			return true
		}, "first-ack rule"},
		{"a new batch while one is retried, with HoldWhileRetrying on", "hold_off.txt", func(h *tracer.Header, _ []tracer.Event) bool {
			h.HoldWhileRetrying = true
			return true
		}, "HoldWhileRetrying"},
		{"pipelining after an idle, with the idle re-arm on", "idle_norearm.txt", func(h *tracer.Header, _ []tracer.Event) bool {
			h.IdleRearmMs = 1000
			return true
		}, "idle re-arm rule"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr, evs := runScript(t, filepath.Join("testdata", c.script))
			if !c.mutate(&hdr, evs) {
				t.Fatalf("%s has nothing to mutate", c.script)
			}
			err := replayTrace("mutated", traceOf(t, hdr, evs))
			var re *replay.Error
			if !errors.As(err, &re) || re.Action != "SendNew" || !strings.Contains(re.Reason, c.reason) {
				t.Fatalf("replay: %v, want SendNew not enabled (%s)", err, c.reason)
			}
			t.Log(err)
		})
	}
}

// TestReplayRejectsEarlyEndTxn: the replay holds our producer to sending
// EndTxn only once every batch of the transaction is answered
// (TransactionManager.nextRequest): txn_tv2.txt's first EndTxn moved before
// the answer to its last batch is rejected.
func TestReplayRejectsEarlyEndTxn(t *testing.T) {
	hdr, evs := runScript(t, filepath.Join("testdata", "txn_tv2.txt"))
	end := slices.IndexFunc(evs, func(e tracer.Event) bool { return e.Kind == tracer.EndTxn })
	if end < 0 {
		t.Fatal("txn_tv2.txt has no EndTxn")
	}
	recv := slices.IndexFunc(evs[:end], func(e tracer.Event) bool { return e.Kind == tracer.Receive && e.Batch == 2 })
	if recv < 0 {
		t.Fatal("txn_tv2.txt answers no b2 before its EndTxn")
	}
	moved := slices.Clone(evs[:recv])
	moved = append(moved, evs[end])
	moved = append(moved, evs[recv:end]...)
	moved = append(moved, evs[end+1:]...)
	err := replayTrace("moved", traceOf(t, hdr, moved))
	var re *replay.Error
	if !errors.As(err, &re) || re.Action != "EndTxn" || !strings.Contains(re.Reason, "in flight") {
		t.Fatalf("replay: %v, want EndTxn not enabled with a batch in flight", err)
	}
	t.Log(err)
}
