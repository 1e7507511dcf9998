// Package txn holds a transactional trace (format version 5 on) to the
// transaction properties of spec/TransactionalProducer.tla: it learns from
// the events which transaction each record was sent in and how each
// transaction ended, and from the read-back's markers and the
// read_committed read what became of each record, and names the aborted
// reads, commits of aborted transactions, torn transactions, writes into
// another transaction, lost commits and hanging transactions it finds; and
// a read_committed consumer's polls (poll.go) to the same markers.
// Duplicates and reorders within an epoch are checker/order's. A trace whose
// transactional events contradict each other is bad input (*BadInput).
package txn

import (
	"fmt"
	"slices"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/tracer"
)

// BadInput is a trace whose transactional events cannot all be true: the
// line that shows it, and why.
type BadInput struct {
	Line int
	Msg  string
}

func (e *BadInput) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Checker is fed a trace's events in order (Add), then says what it found
// (Finish). It keeps one entry per record sent and the read-backs' logs.
type Checker struct {
	txnal  bool           // the header names a transactional id
	tv2    bool           // the header claims transaction version 2
	pids   map[int64]bool // the producer ids of this trace (InitProducerId, sends)
	cur    int64          // the transaction a new batch is sent in
	open   bool           // it has sent a batch or added a partition
	txs    map[int64]*txState
	batch  map[int64]int64 // batch id -> its transaction
	recs   map[int64]sent  // record id -> where and when it was sent
	reads  map[int32]read
	rc     map[int32]read // ReadCommitted, by partition
	commit int            // the line of the first EndTxn that asked to commit; 0: none
	polls  map[pollKey]*pollSeq
}

type txState struct {
	endLine int // the last EndTxn sent for it
	// commitAsked is the line of its first EndTxn that asked to commit;
	// 0: none (a poll may return its records only after it).
	commitAsked int
	pending     bool // that EndTxn is unanswered
	endOK       int  // the line of the EndTxnReceive NONE that ended it; 0: none
	// notOngoing is the line of an EndTxnReceive INVALID_TXN_STATE: the
	// coordinator held no such transaction ongoing (a late EndTxn of an
	// earlier one had ended it), so nothing of it will close what it
	// wrote after that; 0: none.
	notOngoing int
	commit     bool // what that EndTxn asked
	told       string
	toldLine   int
}

// decidedAbort: the coordinator accepted its abort, or the application was
// told it aborted.
func (t *txState) decidedAbort() bool {
	return t.endOK > 0 && !t.commit || t.told == tracer.Aborted
}

// decisionLine is the line that shows how the transaction ended.
func (t *txState) decisionLine() int {
	if t.endOK > 0 {
		return t.endOK
	}
	return t.toldLine
}

type sent struct {
	tx   int64
	line int // its batch's SendNew
	p    int32
}

type read struct {
	line int
	log  []tracer.LogRecord
	ctl  []tracer.Marker
}

// New returns a Checker for a trace with header h.
func New(h tracer.Header) *Checker {
	return &Checker{txnal: h.TransactionalID != "", tv2: h.TxnVersion == 2, pids: map[int64]bool{}, cur: 1, txs: map[int64]*txState{},
		batch: map[int64]int64{}, recs: map[int64]sent{}, reads: map[int32]read{}, rc: map[int32]read{},
		polls: map[pollKey]*pollSeq{}}
}

func (c *Checker) tx(n int64) *txState {
	t := c.txs[n]
	if t == nil {
		t = &txState{}
		c.txs[n] = t
	}
	return t
}

func bad(line int, format string, args ...any) error {
	return &BadInput{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Add takes the trace's next event, at line. Logs are kept, not copied.
// Of an idempotent producer's trace it only checks that no read-back has
// markers, and keeps nothing.
func (c *Checker) Add(line int, e *tracer.Event) error {
	if !c.txnal {
		if e.Kind == tracer.ReadBack && len(e.Ctl) > 0 {
			return bad(line, "partition %d: control records (ctl), but the header names no transactional_id: an idempotent producer writes no transaction markers", e.Partition)
		}
		if e.Kind == tracer.Poll || e.Kind == tracer.PollEnd {
			return bad(line, "%s, but the header names no transactional_id: kcheck polls as read_committed only in a transactional run, and its checks judge polls by the markers", e.Kind)
		}
		return nil
	}
	switch e.Kind {
	case tracer.InitProducerID:
		c.pids[e.PID] = true
		if c.open {
			// The coordinator aborts a transaction still open when its
			// producer asks again (KIP-360's bump; kgo aborts so an EndTxn
			// whose outcome it does not know): it ended, aborted.
			t := c.tx(c.cur)
			t.endOK, t.commit, t.pending = line, false, false
			c.cur++
			c.open = false
		}
	case tracer.SendNew:
		c.pids[e.PID] = true
		c.open = true
		c.batch[e.Batch] = c.cur
		for _, id := range e.Records {
			if _, ok := c.recs[id]; !ok {
				c.recs[id] = sent{tx: c.cur, line: line, p: e.Partition}
			}
		}
	case tracer.AddPartitionsToTxn:
		if e.Err == "NONE" {
			c.open = true
		}
		return c.inCurrent(line, e, "AddPartitionsToTxn")
	case tracer.EndTxn:
		if err := c.inCurrent(line, e, "EndTxn"); err != nil {
			return err
		}
		t := c.tx(e.Tx)
		t.endLine, t.pending, t.commit = line, true, e.Commit
		if e.Commit && c.commit == 0 {
			c.commit = line
		}
		if e.Commit && t.commitAsked == 0 {
			t.commitAsked = line
		}
	case tracer.EndTxnReceive:
		t := c.txs[e.Tx]
		if t == nil || !t.pending || t.commit != e.Commit {
			return bad(line, "EndTxnReceive for transaction %d (%s), which no unanswered EndTxn asked for", e.Tx, decision(e.Commit))
		}
		t.pending = false
		if e.Err == "INVALID_TXN_STATE" && t.notOngoing == 0 {
			t.notOngoing = line
		}
		if e.Err != "NONE" {
			return nil
		}
		if c.tv2 && e.NewEpoch <= e.Epoch {
			return bad(line, "the header claims transaction version 2, but EndTxn of epoch %d was answered epoch %d: under TV2 every EndTxn bumps the epoch (KIP-890 part 2)", e.Epoch, e.NewEpoch)
		}
		t.endOK = line
		c.cur = e.Tx + 1
		c.open = false
	case tracer.TxnTold:
		if e.Tx > c.cur {
			return bad(line, "TxnTold for transaction %d, never begun: the trace is in transaction %d", e.Tx, c.cur)
		}
		t := c.tx(e.Tx)
		t.told, t.toldLine = e.Result, line
		// A transaction with nothing sent ends with no EndTxn, and one
		// whose batch failed before its EndTxn ends with its abort's
		// TxnTold: both end here. A failed commit is not an end: its
		// abort follows (FORMAT.md).
		if t.endLine == 0 && e.Tx == c.cur && !(e.Result == tracer.Failed && e.Commit) {
			c.cur++
			c.open = false
		}
	case tracer.ReadBack:
		return c.readBack(line, e)
	case tracer.ReadCommitted:
		c.rc[e.Partition] = read{line: line, log: e.Log}
	case tracer.Poll, tracer.PollEnd:
		return c.addPoll(line, e) // poll.go
	}
	return nil
}

// inCurrent holds a request for transaction e.Tx to the transaction the
// trace is in.
func (c *Checker) inCurrent(line int, e *tracer.Event, what string) error {
	switch {
	case e.Tx > c.cur:
		return bad(line, "%s for transaction %d, never begun: the trace is in transaction %d", what, e.Tx, c.cur)
	case e.Tx < c.cur:
		return bad(line, "%s for transaction %d, which ended at line %d", what, e.Tx, c.tx(e.Tx).decisionLine())
	}
	return nil
}

func decision(commit bool) string {
	if commit {
		return "a commit"
	}
	return "an abort"
}

// readBack keeps a partition's read-back, its markers held to the events.
func (c *Checker) readBack(line int, e *tracer.Event) error {
	data := map[int64]bool{}
	for _, r := range e.Log {
		data[r.Offset] = true
	}
	for _, m := range e.Ctl {
		switch {
		case data[m.Offset]:
			return bad(line, "partition %d: a control record and a data record at offset %d", e.Partition, m.Offset)
		case !c.pids[m.PID]:
			return bad(line, "partition %d: a control record at offset %d for producer %d, which no InitProducerId or batch of this trace has", e.Partition, m.Offset, m.PID)
		case m.Commit && c.commit == 0:
			return bad(line, "partition %d: a commit marker at offset %d, but no EndTxn of this trace asked to commit (a coordinator aborts on its own, never commits)", e.Partition, m.Offset)
		}
	}
	c.reads[e.Partition] = read{line: line, log: e.Log, ctl: e.Ctl}
	return nil
}

// Stats counts what the transactional check saw.
type Stats struct {
	Transactions       int // transactions the trace ended or was in
	Committed, Aborted int // of them, ended by an EndTxn answered NONE (or told aborted)
	// The fates of the records of this trace's producer read back.
	RecCommitted, RecAborted, RecOpen int
	ReadCommitted                     int // partitions with a read_committed read (ReadCommitted)
	Poll                              PollStats
}

// where is one record of a transaction in a read-back.
type where struct {
	p    int32
	id   int64
	line int // the partition's ReadBack
	sent int // its batch's SendNew
}

// Finish returns the violations found, in trace order, and what the check
// saw. Of an idempotent producer's trace: none, and a zero Stats.
func (c *Checker) Finish() ([]checker.Violation, Stats) {
	var out []checker.Violation
	var st Stats
	if !c.txnal {
		return nil, st
	}
	st.ReadCommitted = len(c.rc)
	type fates struct{ committed, aborted, open []where }
	byTx := map[int64]*fates{}
	present := map[int64]bool{}
	parts := make([]int32, 0, len(c.reads))
	for p := range c.reads {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	for _, p := range parts {
		rd := c.reads[p]
		closers := tracer.Closers(rd.log, rd.ctl)
		// Records closed by one marker (or all still open), by producer:
		// one transaction's (NoWriteInOtherTxn).
		type span struct {
			pid    int64
			closer int
		}
		last := map[span]int64{}
		for i, r := range rd.log {
			if s, ok := c.recs[r.ID]; ok && c.pids[r.PID] {
				k := span{r.PID, closers[i]}
				last[k] = max(last[k], s.tx)
			}
		}
		for i, r := range rd.log {
			s, ok := c.recs[r.ID]
			if !ok || !c.pids[r.PID] {
				continue
			}
			present[r.ID] = true
			w := where{p: p, id: r.ID, line: rd.line, sent: s.line}
			if later := last[span{r.PID, closers[i]}]; later > s.tx {
				lines := []int{s.line}
				if t := c.txs[s.tx]; t != nil && t.decisionLine() > 0 {
					lines = append(lines, t.decisionLine())
				}
				out = append(out, checker.Violation{Kind: checker.WriteInOtherTxn, Partition: p, ProducerID: r.PID,
					Epoch: r.Epoch, Seq: r.Seq, Records: []int64{r.ID}, Lines: sorted(append(lines, rd.line)),
					Detail: fmt.Sprintf("record %d, sent in transaction %d, is at offset %d among transaction %d's records, %s",
						r.ID, s.tx, r.Offset, later, closedBy(rd.ctl, closers[i]))})
				continue
			}
			f := byTx[s.tx]
			if f == nil {
				f = &fates{}
				byTx[s.tx] = f
			}
			switch tracer.FateOf(rd.ctl, closers[i]) {
			case tracer.FateCommitted:
				f.committed = append(f.committed, w)
				st.RecCommitted++
			case tracer.FateAborted:
				f.aborted = append(f.aborted, w)
				st.RecAborted++
			default:
				f.open = append(f.open, w)
				st.RecOpen++
			}
		}
	}
	txs := make([]int64, 0, len(c.txs)+len(byTx))
	for n := range c.txs {
		txs = append(txs, n)
	}
	for n := range byTx {
		if c.txs[n] == nil {
			txs = append(txs, n)
		}
	}
	slices.Sort(txs)
	st.Transactions = len(txs)
	absent := c.absent(present)
	for _, n := range txs {
		t, f := c.tx(n), byTx[n]
		switch {
		case t.decidedAbort():
			st.Aborted++
		case t.endOK > 0:
			st.Committed++
		}
		if f == nil {
			f = &fates{}
		}
		dl := t.decisionLine()
		switch {
		case t.decidedAbort() && len(f.committed) > 0:
			out = append(out, txViolation(checker.AbortCommitted, f.committed, dl,
				fmt.Sprintf("transaction %d was aborted, but the markers commit %s", n, records(f.committed))))
		case t.told == tracer.Committed && (len(f.aborted) > 0 || len(absent[n]) > 0):
			what := ""
			if len(f.aborted) > 0 {
				what = fmt.Sprintf("the markers abort %s", records(f.aborted))
			}
			if len(absent[n]) > 0 {
				if what != "" {
					what += ", and "
				}
				what += fmt.Sprintf("%s absent from the log", records(absent[n]))
			}
			out = append(out, txViolation(checker.LostCommit, append(f.aborted, absent[n]...), t.toldLine,
				fmt.Sprintf("the application was told transaction %d committed, but %s", n, what)))
		case len(f.committed) > 0 && len(f.aborted) > 0:
			out = append(out, txViolation(checker.TornTxn, append(f.committed, f.aborted...), dl,
				fmt.Sprintf("transaction %d is torn: the markers commit %s and abort %s", n, records(f.committed), records(f.aborted))))
		}
		if len(f.open) > 0 && (t.endOK > 0 || t.notOngoing > 0 || n < c.cur) {
			why := fmt.Sprintf("EndTxn was answered at line %d", t.endOK)
			switch {
			case t.endOK == 0 && t.notOngoing > 0:
				why = fmt.Sprintf("the coordinator answered its EndTxn INVALID_TXN_STATE at line %d: it held no such transaction open to end", t.notOngoing)
			case t.endOK == 0:
				why = fmt.Sprintf("the trace went on to transaction %d", c.cur)
			}
			out = append(out, txViolation(checker.HangingTxn, f.open, dl,
				fmt.Sprintf("transaction %d hangs: no marker closes %s, though %s (the last stable offset stays behind it)", n, records(f.open), why)))
		}
	}
	out = append(out, c.abortedReads()...)
	out = append(out, c.pollChecks(&st.Poll)...)
	slices.SortStableFunc(out, func(a, b checker.Violation) int { return a.Lines[0] - b.Lines[0] })
	return out, st
}

// absent lists, by transaction, the records sent in it that no read-back
// holds, for the partitions read back.
func (c *Checker) absent(present map[int64]bool) map[int64][]where {
	out := map[int64][]where{}
	for id, s := range c.recs {
		rd, ok := c.reads[s.p]
		if !ok || present[id] {
			continue
		}
		out[s.tx] = append(out[s.tx], where{p: s.p, id: id, line: rd.line, sent: s.line})
	}
	for _, ws := range out {
		slices.SortFunc(ws, func(a, b where) int { return int(a.id - b.id) })
	}
	return out
}

// abortedReads holds each ReadCommitted to its partition's markers: a
// record it returned must be committed, or of a producer with no
// transaction (no marker, not this trace's); and every record the markers
// commit below the first one of this trace's producer they leave open (so
// below the last stable offset) must be returned.
func (c *Checker) abortedReads() []checker.Violation {
	var out []checker.Violation
	parts := make([]int32, 0, len(c.rc))
	for p := range c.rc {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	for _, p := range parts {
		rc, rd := c.rc[p], c.reads[p]
		lines := []int{rc.line}
		if rd.line > 0 {
			lines = []int{rd.line, rc.line}
		}
		fate := map[int64]tracer.Fate{}
		firstOpen := int64(-1)
		for i, cl := range tracer.Closers(rd.log, rd.ctl) {
			r := rd.log[i]
			f := tracer.FateOf(rd.ctl, cl)
			fate[r.Offset] = f
			if f == tracer.FateOpen && c.pids[r.PID] && firstOpen < 0 {
				firstOpen = r.Offset
			}
		}
		returned := map[int64]bool{}
		var bad []int64
		var desc []string
		for _, r := range rc.log {
			returned[r.Offset] = true
			f, ok := fate[r.Offset]
			if !ok || f == tracer.FateCommitted || f == tracer.FateOpen && !c.pids[r.PID] {
				continue
			}
			bad = append(bad, r.ID)
			desc = append(desc, fmt.Sprintf("offset %d (record %d, %s)", r.Offset, r.ID, f))
		}
		if len(bad) > 0 {
			out = append(out, checker.Violation{Kind: checker.AbortedRead, Partition: p, Seq: -1, Records: bad, Lines: lines,
				Detail: fmt.Sprintf("read_committed returned %s: a read_committed consumer sees only records the markers commit", list(desc))})
		}
		bad, desc = nil, nil
		for _, r := range rd.log {
			if fate[r.Offset] == tracer.FateCommitted && !returned[r.Offset] && (firstOpen < 0 || r.Offset < firstOpen) {
				bad = append(bad, r.ID)
				desc = append(desc, fmt.Sprintf("offset %d (record %d)", r.Offset, r.ID))
			}
		}
		if len(bad) > 0 {
			out = append(out, checker.Violation{Kind: checker.CommittedUnread, Partition: p, Seq: -1, Records: bad, Lines: lines,
				Detail: fmt.Sprintf("read_committed did not return %s, which the markers commit below any open transaction", list(desc))})
		}
	}
	return out
}

func txViolation(k checker.Kind, ws []where, decision int, detail string) checker.Violation {
	v := checker.Violation{Kind: k, Partition: ws[0].p, Seq: -1, Detail: detail}
	lines := []int{}
	if decision > 0 {
		lines = append(lines, decision)
	}
	for _, w := range ws {
		if w.p != v.Partition {
			v.Partition = -1
		}
		v.Records = append(v.Records, w.id)
		lines = append(lines, w.line)
	}
	if k == checker.HangingTxn || k == checker.LostCommit && decision == 0 {
		lines = append(lines, ws[0].sent)
	}
	v.Lines = sorted(lines)
	return v
}

// sorted returns lines in order, each once.
func sorted(lines []int) []int {
	slices.Sort(lines)
	return slices.Compact(lines)
}

func closedBy(ctl []tracer.Marker, c int) string {
	if c < 0 {
		return "all still open (no marker closes them)"
	}
	m := ctl[c]
	kind := "abort"
	if m.Commit {
		kind = "commit"
	}
	return fmt.Sprintf("closed by the same marker (the %s at offset %d)", kind, m.Offset)
}

func records(ws []where) string {
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("record %d (partition %d)", w.id, w.p))
	}
	return list(parts)
}

// list joins at most five items, saying how many more there are.
func list(items []string) string {
	const show = 5
	s := ""
	for i, it := range items {
		if i == show {
			return s + fmt.Sprintf(" and %d more", len(items)-show)
		}
		if i > 0 {
			s += ", "
		}
		s += it
	}
	return s
}
