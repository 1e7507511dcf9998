package tracer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// SyntaxError is a trace line that is not what the format says.
type SyntaxError struct {
	File  string // the trace's name, as given to NewReader
	Line  int    // 1-based line number; the header is line 1
	Field string // the offending key, if one
	Err   error
}

func (e *SyntaxError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s:%d: field %q: %v", e.File, e.Line, e.Field, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// Reader reads a trace written by Writer, checking every line against the
// format: the header's version, each event's kind and exact fields, and the
// events' order.
type Reader struct {
	name    string
	maxLine int // MaxLineBytes, but in tests
	sc      *bufio.Scanner
	line    int
	off     int64 // where the line read last starts in the input
	next    int64 // where the next line starts
	header  Header
	last    int64 // I of the previous event
	lastT   int64
	mem     slabs // what events are decoded into
	run     toldRun
	untold  map[int64]sent // version 4, not a proxy's: the batches sent new whose ToldBatch has not been read
}

// sent is a batch's SendNew as a ToldBatch needs it: its partition and
// records.
type sent struct {
	p    int32
	recs []int64
}

// toldRun is a ToldRun or ToldBatch line being returned as its Told
// events: the line's event, and how many of its records have been returned.
type toldRun struct {
	e    Event
	done int
}

// next fills e with the run's next Told event.
func (t *toldRun) next(e *Event) {
	*e = told(&t.e, t.done, t.e.Records[t.done])
	t.done++
}

func (t *toldRun) pending() bool { return t.done < len(t.e.Records) }

// NewReader reads and checks the header line of the trace in r; name is used
// in errors (usually the file's path).
func NewReader(r io.Reader, name string) (*Reader, error) {
	return newReader(r, name, MaxLineBytes)
}

// newReader is NewReader with a limit on lines of its own, for tests.
func newReader(r io.Reader, name string, maxLine int) (*Reader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(128<<10, maxLine+1)), maxLine+1) // +1: bufio counts a line's newline against the limit
	sc.Split(scanFullLines)
	rd := &Reader{name: name, maxLine: maxLine, sc: sc, untold: map[int64]sent{}}
	line, err := rd.readLine()
	if err == io.EOF {
		return nil, rd.errorf("", "empty trace: no header line")
	}
	if err != nil {
		return nil, err
	}
	var probe struct {
		Version *int `json:"kcheck_trace"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return nil, rd.errorf("", "header is not a JSON object: %v", err)
	}
	if probe.Version == nil {
		return nil, rd.errorf("kcheck_trace", "missing: the first line must be a kcheck trace header")
	}
	if v := *probe.Version; v < MinVersion || v > Version {
		if v > Version {
			return nil, rd.errorf("kcheck_trace", "version %d is newer than this kcheck reads (%d): upgrade kcheck", v, Version)
		}
		return nil, rd.errorf("kcheck_trace", "version %d is not supported (want %d to %d)", v, MinVersion, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rd.header); err != nil {
		return nil, rd.errorf("", "header: %v", err)
	}
	if key, err := duplicateKey(line); err != nil || key != "" {
		if err != nil {
			return nil, rd.errorf("", "header: %v", err)
		}
		return nil, rd.errorf(key, "appears twice")
	}
	if key, err := checkHeader(&rd.header); err != nil {
		return nil, rd.errorf(key, "%v", err)
	}
	return rd, nil
}

// Header returns the trace's header.
func (r *Reader) Header() Header { return r.header }

// Line returns the line number of the event Next returned last.
func (r *Reader) Line() int { return r.line }

// Name returns the trace's name, as given to NewReader.
func (r *Reader) Name() string { return r.name }

// Offset returns where the line read last starts in the input, in bytes:
// the header's 0, then the event's that Next or ReadInto returned last.
func (r *Reader) Offset() int64 { return r.off }

// Text returns the bytes of the line read last, without its newline: the
// header's until the first event is read, then the event's that Next or
// ReadInto returned last. They are valid until the next read.
func (r *Reader) Text() []byte { return r.sc.Bytes() }

// errTruncated marks a last line with no newline: the writer was killed mid-line.
var errTruncated = errors.New("truncated last line (no newline): the run was cut off mid-write")

// scanFullLines is bufio.ScanLines, except that a final line without a newline
// is an error rather than a line.
func scanFullLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return 0, nil, errTruncated
	}
	return 0, nil, nil
}

func (r *Reader) readLine() ([]byte, error) {
	if !r.sc.Scan() {
		r.line++
		if err := r.sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				err = fmt.Errorf("line longer than %d bytes, the limit on one line (tracer/FORMAT.md, Limits)", r.maxLine)
			}
			return nil, &SyntaxError{File: r.name, Line: r.line, Err: err}
		}
		return nil, io.EOF
	}
	r.line++
	r.off = r.next
	r.next += int64(len(r.sc.Bytes())) + 1 // a line ends in its newline
	return r.sc.Bytes(), nil
}

func (r *Reader) errorf(field, format string, args ...any) error {
	return &SyntaxError{File: r.name, Line: r.line, Field: field, Err: fmt.Errorf(format, args...)}
}

// Next returns the next event, or io.EOF after the last one. Every event is
// a value of its own, never reused: a caller may keep it.
func (r *Reader) Next() (*Event, error) {
	e := r.mem.event()
	if _, err := r.ReadInto(e); err != nil {
		return nil, err
	}
	return e, nil
}

// ReadInto decodes the next event into e, all of which it overwrites, and
// returns its line; io.EOF after the last event. It lets a caller reuse
// Events: the Records and Log it sets are never shared with another event,
// so they stay valid after e is reused.
//
// A ToldRun or ToldBatch line gives one Told event per record, each with
// the line's number, offset and text.
func (r *Reader) ReadInto(e *Event) (line int, err error) {
	if r.run.pending() {
		r.run.next(e)
		r.last = e.I
		return r.line, nil
	}
	text, err := r.readLine()
	if err != nil {
		return 0, err
	}
	*e = Event{}
	var present field
	kind, key, err := parseEvent(text, e, &present, &r.mem)
	if err != nil {
		if key != "" {
			return 0, r.errorf(key, "%v", err)
		}
		return 0, r.errorf("", "not a valid event: %v", err)
	}
	if present&(fI|fT|fKind) != fI|fT|fKind {
		for _, must := range keyTable[:3] {
			if present&must.f == 0 {
				return 0, r.errorf(must.name, "missing")
			}
		}
	}
	if kind < 0 {
		return 0, r.errorf("ev", "unknown event %q (known: %v)", e.Kind, Kinds())
	}
	want := kindTable[kind].want
	if e.I != r.last+1 {
		return 0, r.errorf("i", "event %d out of order: expected %d", e.I, r.last+1)
	}
	if e.T < r.lastT {
		return 0, r.errorf("t", "time %d goes backwards (previous event at %d)", e.T, r.lastT)
	}
	opt := kindOptional[e.Kind]
	for _, fn := range fieldNames {
		if opt&fn.f != 0 && r.header.Version < optionalSince(fn.f) {
			opt &^= fn.f
		}
	}
	if got := present &^ (fI | fT | fKind); got&^opt != want {
		for _, fn := range fieldNames {
			switch {
			case want&fn.f != 0 && present&fn.f == 0:
				return 0, r.errorf(fn.name, "missing: %s carries it", e.Kind)
			case want&fn.f == 0 && opt&fn.f == 0 && present&fn.f != 0:
				if kindOptional[e.Kind]&fn.f != 0 {
					return 0, r.errorf(fn.name, "a field of %s from format version %d; this trace's header says version %d", e.Kind, optionalSince(fn.f), r.header.Version)
				}
				return 0, r.errorf(fn.name, "not a field of %s", e.Kind)
			}
		}
	}
	if err := r.checkTxn(e); err != nil {
		return 0, err
	}
	if want&fPartition != 0 {
		if err := r.checkPartition(e); err != nil {
			return 0, err
		}
	}
	if e.Kind == Told && r.header.Version < 2 {
		return 0, r.errorf("ev", "Told is an event of format version 2; this trace's header says version %d", r.header.Version)
	}
	r.lastT = e.T
	switch e.Kind {
	case SendNew:
		if r.header.Version >= 4 && r.header.Writer != ProxyWriter { // a proxy writes no ToldBatch
			r.untold[e.Batch] = sent{e.Partition, e.Records}
		}
	case ToldBatch:
		if err := r.batchRecords(e); err != nil {
			return 0, err
		}
		fallthrough
	case ToldRun:
		if err := r.startRun(e); err != nil {
			return 0, err
		}
		r.run.next(e)
	}
	r.last = e.I
	return r.line, nil
}

// checkTxn holds the transactional events (format version 5) to their
// version and their results to theirs.
func (r *Reader) checkTxn(e *Event) error {
	switch e.Kind {
	case AddPartitionsToTxn, EndTxn, EndTxnReceive, TxnTold:
		if r.header.Version < 5 {
			return r.errorf("ev", "%s is an event of format version 5; this trace's header says version %d", e.Kind, r.header.Version)
		}
		if e.Tx < 1 {
			return r.errorf("tx", "%d: transactions are numbered from 1", e.Tx)
		}
	case ReadCommitted:
		if r.header.Version < 6 {
			return r.errorf("ev", "ReadCommitted is an event of format version 6; this trace's header says version %d", r.header.Version)
		}
	case Poll, PollEnd:
		return r.checkPoll(e)
	case Told:
		if e.Result == Committed || e.Result == Aborted {
			return r.errorf("res", "%q is a transaction's result (TxnTold), not a record's: %s, %s or %s", e.Result, Delivered, Failed, NoAnswer)
		}
	}
	if e.Kind == TxnTold && e.Result == Delivered {
		return r.errorf("res", "%q is a record's result: a transaction is told %s, %s, %s or %s", e.Result, Committed, Aborted, Failed, NoAnswer)
	}
	return nil
}

// checkPoll holds a Poll or PollEnd (format version 7) to its version and
// its keys: a poller numbered from 1, a poll asked from an offset and
// returning records in strictly increasing offsets, a PollEnd's error a
// Kafka error name or "" (gave up without one).
func (r *Reader) checkPoll(e *Event) error {
	if r.header.Version < 7 {
		return r.errorf("ev", "%s is an event of format version 7; this trace's header says version %d", e.Kind, r.header.Version)
	}
	if e.Poller < 1 {
		return r.errorf("poll", "%d: pollers are numbered from 1", e.Poller)
	}
	if e.Kind == PollEnd {
		if e.Err == "NONE" && e.Offset < 0 {
			return r.errorf("off", "%d: a poller that reached the end reached an offset (0 or more)", e.Offset)
		}
		return nil
	}
	if e.Offset < 0 {
		return r.errorf("off", "%d: a poll asks from an offset, 0 or more", e.Offset)
	}
	for i := 1; i < len(e.Log); i++ {
		if e.Log[i].Offset <= e.Log[i-1].Offset {
			return r.errorf("log", "offset %d after offset %d: the records of one poll are in increasing offset order (a fetch returns a partition's records in log order)", e.Log[i].Offset, e.Log[i-1].Offset)
		}
	}
	return nil
}

// batchRecords gives a ToldBatch line the records of its batch's SendNew,
// which it tells of: once, so the reader forgets them.
func (r *Reader) batchRecords(e *Event) error {
	if r.header.Version < 4 {
		return r.errorf("ev", "ToldBatch is an event of format version 4; this trace's header says version %d", r.header.Version)
	}
	if r.header.Writer == ProxyWriter {
		return r.errorf("ev", "ToldBatch is written by kcheck's producer, never by %s (its Told events come from the driver's report)", ProxyWriter)
	}
	b, ok := r.untold[e.Batch]
	if !ok {
		return r.errorf("b", "batch %d has no SendNew before this line, or its records were told already", e.Batch)
	}
	if b.p != e.Partition {
		return r.errorf("p", "partition %d, but batch %d was sent to partition %d", e.Partition, e.Batch, b.p)
	}
	delete(r.untold, e.Batch)
	e.Records = b.recs
	return nil
}

// startRun checks a ToldRun or ToldBatch line and keeps it to be returned
// as its Told events.
func (r *Reader) startRun(e *Event) error {
	if r.header.Version < 3 {
		return r.errorf("ev", "ToldRun is an event of format version 3; this trace's header says version %d", r.header.Version)
	}
	n := int64(len(e.Records))
	if n == 0 {
		if e.Kind == ToldBatch {
			return r.errorf("b", "batch %d's SendNew has no records: a ToldBatch tells of at least one", e.Batch)
		}
		return r.errorf("recs", "empty: a ToldRun tells of at least one record")
	}
	if e.Offset > math.MaxInt64-n {
		return r.errorf("off", "%d: the run's last record would be past the largest offset", e.Offset)
	}
	if e.I > math.MaxInt64-n {
		return r.errorf("i", "%d: the run's last event would be past the largest number", e.I)
	}
	r.run = toldRun{e: *e}
	return nil
}
