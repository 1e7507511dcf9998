package outcomes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/kcheck/kcheck/tracer"
)

// maxOutcomeLine bounds one line of a driver's report: a line is a few
// numbers and an error's text, which 64 KiB holds many times over.
const maxOutcomeLine = 64 << 10

// Line is one line of a driver's report (drivers/OUTCOMES.md): what its
// client told the application about one record (a Told event) or about
// the end of one transaction (a TxnTold event, its Tx the driver's own
// number), and the line it came from.
type Line struct {
	Told tracer.Event // Kind Told or TxnTold; I and T are the trace's
	Line int
	// Txn is, of a record's line in a transactional report (one with a
	// transaction's line), the transaction it was reported in: the one after
	// the last transaction named by an earlier line. 0 otherwise.
	Txn int64
}

// outcomeLine is a report line as JSON: a record's, exactly one of off
// (delivered), err (failed) and none; or a transaction's, tx with commit
// and res (and err with res failed).
type outcomeLine struct {
	ID     *int64  `json:"id"`
	P      *int64  `json:"p"`
	Off    *int64  `json:"off"`
	Err    *string `json:"err"`
	Code   *int64  `json:"code"`
	None   *bool   `json:"none"`
	Tx     *int64  `json:"tx"`
	Commit *bool   `json:"commit"`
	Res    *string `json:"res"`
}

// Read reads a driver's report from r (called name in errors), one Line a
// line, refusing anything drivers/OUTCOMES.md does not allow
// with an error naming the file and the line: a record named twice, a
// transaction's line out of the order the driver begins them (one never
// begun, or going backwards), a transaction's second line that is not the
// abort after a failed commit, a transaction with no record reported in
// it. Memory follows the report's size.
func Read(r io.Reader, name string) ([]Line, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxOutcomeLine)
	var out []Line
	seen := map[int64]int{}
	var txs txnOrder
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			return nil, fmt.Errorf("%s:%d: an empty line: each line is one record's outcome or one transaction's (drivers/OUTCOMES.md)", name, line)
		}
		e, err := parseOutcome(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w (drivers/OUTCOMES.md)", name, line, err)
		}
		if e.Kind == tracer.TxnTold {
			if err := txs.end(&e, line); err != nil {
				return nil, fmt.Errorf("%s:%d: %w (drivers/OUTCOMES.md)", name, line, err)
			}
			out = append(out, Line{Told: e, Line: line})
			continue
		}
		if prev, ok := seen[e.RecordID]; ok {
			return nil, fmt.Errorf("%s:%d: record %d was reported already on line %d", name, line, e.RecordID, prev)
		}
		seen[e.RecordID] = line
		txs.records++
		out = append(out, Line{Told: e, Line: line, Txn: txs.last + 1})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: a line longer than %d bytes", name, line+1, maxOutcomeLine)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if txs.last == 0 {
		for i := range out {
			out[i].Txn = 0 // not a transactional report
		}
	}
	return out, nil
}

// txnOrder holds a report's transaction lines to the order the driver
// begins transactions in.
type txnOrder struct {
	last     int64  // the last transaction a line named; 0: none yet
	lastLine int    // its line
	lastRes  string // its result
	lastCmt  bool   // its commit
	records  int    // record lines since then
}

// end takes the line of transaction e.Tx's end.
func (o *txnOrder) end(e *tracer.Event, line int) error {
	switch {
	case e.Tx > o.last+1:
		return fmt.Errorf("transaction %d was never begun: the last transaction reported is %d (transactions are numbered 1, 2, ... as the driver begins them)", e.Tx, o.last)
	case e.Tx < o.last:
		return fmt.Errorf("transaction %d after transaction %d (line %d): transactions end in the order they begin", e.Tx, o.last, o.lastLine)
	case e.Tx == o.last && (o.lastRes != tracer.Failed || !o.lastCmt || e.Commit):
		return fmt.Errorf("transaction %d was reported ended already on line %d (only a failed commit may be followed by the transaction's abort)", e.Tx, o.lastLine)
	case e.Tx == o.last+1 && o.records == 0:
		return fmt.Errorf("transaction %d ends with no record reported in it: every transaction holds at least one record, reported before its end", e.Tx)
	}
	o.last, o.lastLine, o.lastRes, o.lastCmt, o.records = e.Tx, line, e.Result, e.Commit, 0
	return nil
}

// parseOutcome decodes one report line into a Told event.
func parseOutcome(text []byte) (tracer.Event, error) {
	var l outcomeLine
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return tracer.Event{}, fmt.Errorf("not an outcome: %v", err)
	}
	if dec.More() {
		return tracer.Event{}, errors.New("not an outcome: text after the object")
	}
	if l.Tx != nil || l.Commit != nil || l.Res != nil {
		return parseTxn(&l)
	}
	e := tracer.Event{Kind: tracer.Told, Partition: -1, Offset: -1}
	if l.ID == nil || *l.ID < 0 {
		return e, errors.New(`"id", the record's kcheck-id, is missing or negative`)
	}
	e.RecordID = *l.ID
	kinds := 0
	for _, set := range []bool{l.Off != nil, l.Err != nil, l.None != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return e, errors.New(`want exactly one of "off" (delivered), "err" (failed) and "none"`)
	}
	if l.Code != nil && l.Err == nil {
		return e, errors.New(`"code" goes with "err" only`)
	}
	switch {
	case l.None != nil:
		if !*l.None || l.P != nil {
			return e, errors.New(`a record with no answer is {"id":N,"none":true}, with no "p"`)
		}
		e.Result = tracer.NoAnswer
		return e, nil
	case l.P == nil || *l.P < -1 || *l.P > math.MaxInt32:
		return e, errors.New(`"p", the partition (-1 if unknown), is missing or out of range`)
	}
	e.Partition = int32(*l.P)
	if l.Off != nil {
		if *l.Off < -1 {
			return e, fmt.Errorf(`"off" %d is not an offset (-1 if none)`, *l.Off)
		}
		e.Result, e.Offset = tracer.Delivered, *l.Off
		return e, nil
	}
	e.Result, e.Reason = tracer.Failed, *l.Err
	if l.Code != nil {
		if *l.Code <= 0 || *l.Code > math.MaxInt16 {
			return e, fmt.Errorf(`"code" %d is not a Kafka error code (1 to %d)`, *l.Code, math.MaxInt16)
		}
		e.Err = tracer.ErrorName(int16(*l.Code))
	}
	return e, nil
}

// parseTxn decodes a transaction's line into a TxnTold event.
func parseTxn(l *outcomeLine) (tracer.Event, error) {
	e := tracer.Event{Kind: tracer.TxnTold, Partition: -1, Offset: -1}
	switch {
	case l.ID != nil || l.P != nil || l.Off != nil || l.None != nil:
		return e, errors.New(`a line is a record's ("id") or a transaction's ("tx"), not both`)
	case l.Tx == nil || *l.Tx < 1:
		return e, errors.New(`"tx", the transaction's number (1 for the first the driver began), is missing or below 1`)
	case l.Commit == nil:
		return e, errors.New(`"commit" (true: the driver asked to commit, false: to abort) is missing`)
	case l.Res == nil:
		return e, errors.New(`"res" (committed, aborted or failed) is missing`)
	}
	e.Tx, e.Commit, e.Result = *l.Tx, *l.Commit, *l.Res
	switch e.Result {
	case tracer.Committed, tracer.Aborted:
		if l.Err != nil || l.Code != nil {
			return e, fmt.Errorf(`a transaction %s has no "err" or "code"`, e.Result)
		}
		if e.Commit != (e.Result == tracer.Committed) {
			return e, fmt.Errorf(`a transaction %s with "commit" %v: a commit is told committed, an abort aborted`, e.Result, e.Commit)
		}
		return e, nil
	case tracer.Failed:
	default:
		return e, fmt.Errorf(`"res" %q: want committed, aborted or failed`, e.Result)
	}
	if l.Err == nil {
		return e, errors.New(`a failed transaction has "err", the error's text`)
	}
	e.Reason = *l.Err
	if l.Code != nil {
		if *l.Code <= 0 || *l.Code > math.MaxInt16 {
			return e, fmt.Errorf(`"code" %d is not a Kafka error code (1 to %d)`, *l.Code, math.MaxInt16)
		}
		e.Err = tracer.ErrorName(int16(*l.Code))
	}
	return e, nil
}
