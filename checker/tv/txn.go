package tv

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/tracer"
)

// A transactional trace (a header with a transactional_id, format 5 and
// later) is translated for spec/TraceTransactional.tla: the coordinator and
// the leaders of TransactionalProducer held to every transactional answer
// (InitProducerId, AddPartitionsToTxn, EndTxn and its epoch, TV2's implicit
// add on a produce, the markers read back, what read_committed returned),
// the client's requests taken as given, then the spec's properties
// evaluated on the log read back. It serves our producer's traces and
// kcheck proxy's alike. The idempotent side of the produce answers is the
// Go mirror's (checker/replay).
//
// The translation decides which transaction each record belongs to, as
// tracer/FORMAT.md defines it: the one its batch was sent in, a batch
// belonging to the transaction after the last one ended (EndTxn answered
// NONE, or the application told committed or aborted) when it was first
// sent. A record read back is matched to its batch by (partition, epoch,
// sequence) within an attempt, else by its kcheck id.

// TxnSpec names the trace spec for transactional traces.
const TxnSpec = "TraceTransactional"

// txnBatch is what the translation keeps of a batch: its transaction.
type txnBatch struct {
	tx int64
}

// txnAttempt is a batch's sequences in one epoch, to match records read
// back to their batch.
type txnAttempt struct {
	seq, n int32
	b      int64
}

type txnKey struct {
	p  int32
	ep int16
}

// txnTrace collects a transactional trace's events for txnModule.
type txnTrace struct {
	evs   []tracer.Event
	lines []int
}

func (w *txnTrace) add(line int, e *tracer.Event) {
	switch e.Kind {
	case tracer.InitProducerID, tracer.SendNew, tracer.Resend, tracer.Receive, tracer.AddPartitionsToTxn,
		tracer.EndTxn, tracer.EndTxnReceive, tracer.TxnTold, tracer.ReadBack:
	case tracer.Poll, tracer.PollEnd:
		// A read_committed consumer's polls while the run went on (format
		// 7) are left out on purpose: TraceTransactional's Visible is the
		// final log's, and a poll sees the log as it was at some moment the
		// spec's states do not name (the poll's time against the markers
		// is checker/txn's poll check). Translating them would need the
		// spec to model a consumer's position and the last stable offset
		// over time, which it does not.
		return
	default:
		if !isReadCommitted(e) {
			return // not the transaction's: the Go checks judge it
		}
	}
	c := *e
	if e.Kind != tracer.SendNew {
		c.Records = nil
	}
	w.evs, w.lines = append(w.evs, c), append(w.lines, line)
}

// txnModule translates a transactional trace for TraceTransactional: one
// module for the whole trace (the coordinator ties every partition to
// every other, so it is not split).
func (t *Translator) txnModule() (*Module, error) {
	h := t.h
	evs, lines := t.txn.evs, t.txn.lines
	str := strconv.Quote
	num := func(v int64) string { return strconv.FormatInt(v, 10) }
	tf := func(b bool) string { return strings.ToUpper(strconv.FormatBool(b)) }
	tv := "TV1"
	if h.TxnVersion == 2 {
		tv = "TV2"
	}

	var pid int64
	havePid := false
	parts := map[int32]bool{}
	batches := map[int64]*txnBatch{}
	idBatch := map[int64]int64{}
	attempts := map[txnKey][]txnAttempt{}
	type sentRec struct {
		p  int32
		id int64
	}
	sent := map[int64][]sentRec{} // tx -> records
	curTx, maxTx, begun := int64(1), int64(1), int64(0)
	var log []entry
	var tail []entry // ReadBack lines, then ReadCommitted lines: after every other line
	var rcs []int    // indices into evs of the ReadCommitted lines
	read := map[int32]bool{}
	windows := map[int32][]txnWindow{}
	markers := map[int32][]string{}
	add := func(i int, p int32, f ...string) {
		log = append(log, entry{line: lines[i], p: p, fields: f})
	}
	for i := range evs {
		e := &evs[i]
		switch {
		case e.Kind == tracer.InitProducerID:
			if havePid && e.PID != pid {
				return nil, fmt.Errorf("line %d: a new producer id (the transactional spec follows one): %w", lines[i], ErrUnsupported)
			}
			add(i, -1, `ev |-> "Init"`, "ep |-> "+num(int64(e.Epoch)), "new |-> "+tf(!havePid))
			pid, havePid = e.PID, true
		case e.Kind == tracer.SendNew || e.Kind == tracer.Resend:
			parts[e.Partition] = true
			if e.Kind == tracer.SendNew {
				batches[e.Batch] = &txnBatch{tx: curTx}
				for _, id := range e.Records {
					if id >= 0 {
						idBatch[id] = e.Batch
						sent[curTx] = append(sent[curTx], sentRec{e.Partition, id})
					}
				}
				begun = max(begun, curTx)
			}
			k := txnKey{e.Partition, e.Epoch}
			attempts[k] = append(attempts[k], txnAttempt{seq: e.Seq, n: e.N, b: e.Batch})
		case e.Kind == tracer.Receive:
			if tv == "TV2" && (e.Err == "NONE" || e.Err == "DUPLICATE_SEQUENCE_NUMBER") {
				add(i, e.Partition, `ev |-> "Appended"`, "p |-> "+num(int64(e.Partition)), "ep |-> "+num(int64(e.Epoch)))
			}
		case e.Kind == tracer.AddPartitionsToTxn:
			parts[e.Partition] = true
			begun, maxTx = max(begun, e.Tx), max(maxTx, e.Tx)
			add(i, e.Partition, `ev |-> "AddPartitions"`, "p |-> "+num(int64(e.Partition)), "ep |-> "+num(int64(e.Epoch)),
				"err |-> "+str(e.Err))
		case e.Kind == tracer.EndTxn:
			begun, maxTx = max(begun, e.Tx), max(maxTx, e.Tx)
		case e.Kind == tracer.EndTxnReceive:
			maxTx = max(maxTx, e.Tx)
			if e.Err == "NONE" {
				curTx = max(curTx, e.Tx+1)
			}
			add(i, -1, `ev |-> "EndTxnReceive"`, "ep |-> "+num(int64(e.Epoch)), "commit |-> "+tf(e.Commit),
				"err |-> "+str(e.Err), "nep |-> "+num(int64(e.NewEpoch)), "tx |-> "+num(e.Tx))
		case e.Kind == tracer.TxnTold:
			maxTx = max(maxTx, e.Tx)
			if e.Result == tracer.Committed || e.Result == tracer.Aborted {
				curTx = max(curTx, e.Tx+1)
			}
			add(i, -1, `ev |-> "TxnTold"`, "tx |-> "+num(e.Tx), "res |-> "+str(e.Result))
		case e.Kind == tracer.ReadBack:
			p := e.Partition
			if read[p] {
				continue // a partition read back again: the first is the run's
			}
			read[p], parts[p] = true, true
			ws, mks := txnWindows(e, pid, attempts, idBatch, batches)
			windows[p], markers[p] = ws, mks
			for k, w := range ws {
				tail = append(tail, entry{line: lines[i], p: p, fields: []string{`ev |-> "Segment"`, "p |-> " + num(int64(p)),
					"log |-> " + w.text, "open |-> " + tf(w.open), "last |-> " + tf(k == len(ws)-1)}})
			}
		default: // ReadCommitted
			rcs = append(rcs, i)
		}
	}
	for _, i := range rcs {
		// One line for each window of p with a record the consumer
		// returned or skipped: the records it returned must be Visible,
		// those it skipped not (read_committed returns exactly what the
		// markers and the last stable offset allow). A record it returned
		// that the read-back does not hold gets a line of its own, with no
		// window.
		e := &evs[i]
		p, offs := readCommitted(e, pid)
		parts[p] = true
		held := map[int64]bool{}
		for _, w := range windows[p] {
			var ret, skip []string
			for _, off := range slices.Sorted(maps.Keys(w.index)) {
				held[off] = true
				if offs[off] {
					ret = append(ret, num(int64(w.index[off])))
				} else {
					skip = append(skip, num(int64(w.index[off])))
				}
			}
			if len(ret) > 0 {
				tail = append(tail, rcLine(lines[i], "ReadCommitted", p, w, ret))
			}
			if len(skip) > 0 {
				tail = append(tail, rcLine(lines[i], "ReadCommittedSkipped", p, w, skip))
			}
		}
		for off := range offs {
			if !held[off] {
				tail = append(tail, rcLine(lines[i], "ReadCommitted", p, txnWindow{text: "<<>>"}, []string{"0"}))
				break
			}
		}
	}
	if len(tail) > 0 {
		tail = append(tail, entry{line: tail[len(tail)-1].line, p: -1, fields: []string{`ev |-> "End"`}})
	}
	log = append(log, tail...)
	if !havePid {
		return nil, fmt.Errorf("the trace has no InitProducerId: %w", ErrUnsupported)
	}
	if len(parts) == 0 {
		parts[0] = true
	}
	maxTx = max(maxTx, curTx, begun)
	begun = max(begun, 1)
	for i := 1; i < len(log); i++ {
		log[i].before = log[i-1].line
	}

	m := &Module{Spec: TxnSpec}
	m.Partitions = slices.Sorted(maps.Keys(parts))
	var ps, conn, mk []string
	for _, p := range m.Partitions {
		ps = append(ps, num(int64(p)))
		conn = append(conn, fmt.Sprintf("%d :> 1", p))
		mk = append(mk, fmt.Sprintf("%d :> <<%s>>", p, strings.Join(markers[p], ", ")))
	}
	var ts []string
	for t := int64(1); t <= maxTx; t++ {
		// Only the records of partitions read back: of the others the
		// log is not known (a run cut off before its read-back).
		var ids []int64
		for _, r := range sent[t] {
			if read[r.p] {
				ids = append(ids, r.id)
			}
		}
		slices.Sort(ids)
		var q []string
		for _, id := range ids {
			q = append(q, num(id))
		}
		ts = append(ts, "{"+strings.Join(q, ", ")+"}")
	}
	var data strings.Builder
	data.WriteString("---- MODULE TraceData ----\n\\* Generated by kcheck verify --tlc from a transactional trace. DO NOT EDIT.\nEXTENDS Integers, Sequences, TLC\n\n")
	var rd []string
	for _, p := range slices.Sorted(maps.Keys(read)) {
		rd = append(rd, num(int64(p)))
	}
	fmt.Fprintf(&data, "TParts == {%s}\n\nTConnOf == %s\n\nTTxns == %d\n\nTBegun == %d\n\nTRead == {%s}\n\nTMarkers == %s\n\nTSent == <<%s>>\n\n",
		strings.Join(ps, ", "), strings.Join(conn, " @@ "), maxTx, begun, strings.Join(rd, ", "), strings.Join(mk, " @@ "), strings.Join(ts, ", "))
	format := compactLines(&data, log)
	data.WriteString("TraceLog == <<\n")
	m.writeLog(&data, log, format)
	m.Data = data.String()
	m.Config = fmt.Sprintf(`\* Generated by kcheck verify --tlc from a transactional trace. DO NOT EDIT.
INIT TraceInit
NEXT TraceNext
CONSTANTS
    Partitions <- TParts
    ConnOf <- TConnOf
    NumBatches = %d
    NumTxns = %d
    TV = %q
    Verification = FALSE
    DelayProduce = FALSE
    DelayEndTxn = FALSE
    LoseTxnAnswers = FALSE
    TxnTimeout = TRUE
    Restarts = FALSE
    AppAborts = TRUE
    TxnBumpOnExpiry = TRUE
    TxnBumpOnError = TRUE
    ExpiryAborts = TRUE
    EndTxnLost = "resend"
    MaxInFlight = 5
    DedupWindow = 5
    FirstAckRule = TRUE
    HoldWhileRetrying = FALSE
    RearmAfterIdle = FALSE
    NoStateRule = "v25to44"
    PreWritten = FALSE
    ErrorsBeforeAppend = {}
    ErrorsAfterAppend = {}
    Disconnects = FALSE
    MaxFaults = 0
    DeliveryTimeout = FALSE
    StateExpiry = FALSE
    MaxExpiries = 0
    AppResends = FALSE
    AppSerial = FALSE
    HandBackOnError = FALSE
    ImplicitAck = FALSE
    PipelineAfterOk = FALSE
    LateAnswerFails = FALSE
    BumpRule = "java"
CONSTRAINT TraceFurthest
VIEW TraceView
`, maxTx, maxTx, tv)
	return m, nil
}

// rcLine is a ReadCommitted (or ReadCommittedSkipped) line of
// TraceTransactional: the window w of p, and the indices in it of the
// records a read_committed consumer returned (or skipped).
func rcLine(line int, ev string, p int32, w txnWindow, idx []string) entry {
	return entry{line: line, p: p, fields: []string{"ev |-> " + strconv.Quote(ev), "p |-> " + strconv.Itoa(int(p)),
		"log |-> " + w.text, "open |-> " + strings.ToUpper(strconv.FormatBool(w.open)),
		"idx |-> <<" + strings.Join(idx, ", ") + ">>"}}
}

// txnWindow is one window of a partition's read-back, as a Segment line of
// TraceTransactional gives it: our producer's data records closed by one of
// its markers, or those after its last (open), reduced to one record per
// transaction (with the ids of the records it stands for), then the marker.
type txnWindow struct {
	text  string
	open  bool
	index map[int64]int // a data record's offset -> the index of the record standing for it (from 1)
}

// txnWindows cuts partition e.Partition's read-back into windows for
// TraceTransactional, and lists producer pid's markers in offset order
// (TMarkers). Each data record counts for the transaction its batch was
// sent in; a record no batch of the trace sent is left out (the Go checks
// name it), as are other producers' records and markers.
func txnWindows(e *tracer.Event, pid int64, attempts map[txnKey][]txnAttempt, idBatch map[int64]int64,
	batches map[int64]*txnBatch) (ws []txnWindow, mks []string) {
	txOf := func(r tracer.LogRecord) int64 {
		for _, a := range attempts[txnKey{e.Partition, r.Epoch}] {
			if r.Seq >= a.seq && int64(r.Seq) < int64(a.seq)+int64(a.n) {
				return batches[a.b].tx
			}
		}
		if b, ok := idBatch[r.ID]; ok && r.ID >= 0 {
			return batches[b].tx
		}
		return 0
	}
	type rep struct {
		tx  int64
		ep  int16
		seq int32
		ids []string
	}
	var reps []*rep
	cur := txnWindow{index: map[int64]int{}}
	flush := func(marker string) {
		var rs []string
		for _, r := range reps {
			rs = append(rs, fmt.Sprintf(`[b |-> %d, ep |-> %d, seq |-> %d, ctl |-> "DATA", ids |-> {%s}]`, r.tx, r.ep, r.seq, strings.Join(r.ids, ", ")))
		}
		if marker != "" {
			rs = append(rs, marker)
		}
		cur.text = "<<" + strings.Join(rs, ", ") + ">>"
		ws = append(ws, cur)
		reps, cur = nil, txnWindow{index: map[int64]int{}}
	}
	j := 0
	ctl := func(m tracer.Marker) {
		c := "ABORT"
		if m.Commit {
			c = "COMMIT"
		}
		mks = append(mks, fmt.Sprintf(`[ctl |-> %q, ep |-> %d]`, c, m.Epoch))
		flush(fmt.Sprintf(`[b |-> -1, ep |-> %d, seq |-> -1, ctl |-> %q, ids |-> {}]`, m.Epoch, c))
	}
	for _, r := range e.Log {
		for ; j < len(e.Ctl) && e.Ctl[j].Offset < r.Offset; j++ {
			if e.Ctl[j].PID == pid {
				ctl(e.Ctl[j])
			}
		}
		if r.PID != pid {
			continue
		}
		tx := txOf(r)
		if tx == 0 {
			continue
		}
		k := slices.IndexFunc(reps, func(x *rep) bool { return x.tx == tx })
		if k < 0 {
			reps = append(reps, &rep{tx: tx, ep: r.Epoch, seq: r.Seq})
			k = len(reps) - 1
		}
		if r.ID >= 0 {
			reps[k].ids = append(reps[k].ids, strconv.FormatInt(r.ID, 10))
		}
		cur.index[r.Offset] = k + 1
	}
	for ; j < len(e.Ctl); j++ {
		if e.Ctl[j].PID == pid {
			ctl(e.Ctl[j])
		}
	}
	if len(reps) > 0 || len(ws) == 0 {
		cur.open = len(reps) > 0
		flush("")
	}
	return ws, mks
}

// txnProperties are TraceTransactional's properties, each with the kind
// checker/txn names it by, in the order a finding is named when the final
// state violates several: one anomaly can break more than one property (a
// batch delayed into the next transaction, KAFKA-17754, also commits part of
// an aborted one), and the Go check names it once, by its cause (a write in
// another transaction before an aborted transaction committed or a commit
// lost, those before the torn transaction they leave: tracer/FORMAT.md).
var txnProperties = []struct {
	name string
	kind checker.Kind
}{
	{"NoWriteInOtherTxn", checker.WriteInOtherTxn},
	{"NoAbortedRead", checker.AbortCommitted},
	{"AckedCommitInLog", checker.LostCommit},
	{"CommittedAtomically", checker.TornTxn},
	{"LSOAdvances", checker.HangingTxn},
}

// TxnKind names TLC's finding on a transactional trace (TxnSpec) by the
// kind checker/txn gives the same anomaly: for a trace every line of which
// was explained, the first violated property's (txnProperties), "" for none;
// for one rejected, a ReadCommitted line's (aborted-read: a record returned
// that is not Visible; committed-unread: one skipped that is), else
// nonconformance (an answer of the coordinator or the leaders no rule
// explains). ok is false when TLC did not conclude.
func TxnKind(v *Verdict) (kind checker.Kind, ok bool) {
	switch {
	case v.Inconclusive != "":
		return "", false
	case !v.Accepted && v.AtEvent == "ReadCommitted":
		return checker.AbortedRead, true
	case !v.Accepted && v.AtEvent == "ReadCommittedSkipped":
		return checker.CommittedUnread, true
	case !v.Accepted:
		return checker.NonConformance, true
	}
	for _, p := range txnProperties {
		if slices.Contains(v.Violated, p.name) {
			return p.kind, true
		}
	}
	return "", true
}
