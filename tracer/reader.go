package tracer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// maxLine bounds one line (a ReadBack of a large partition is the longest).
const maxLine = 256 << 20

// Reader reads a trace written by Writer, checking every line against the
// format: the header's version, each event's kind and exact fields, and the
// events' order.
type Reader struct {
	name   string
	sc     *bufio.Scanner
	line   int
	header Header
	last   int64 // I of the previous event
	lastT  int64
}

// NewReader reads and checks the header line of the trace in r; name is used
// in errors (usually the file's path).
func NewReader(r io.Reader, name string) (*Reader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	sc.Split(scanFullLines)
	rd := &Reader{name: name, sc: sc}
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
	if *probe.Version != Version {
		if *probe.Version > Version {
			return nil, rd.errorf("kcheck_trace", "version %d is newer than this kcheck reads (%d): upgrade kcheck", *probe.Version, Version)
		}
		return nil, rd.errorf("kcheck_trace", "version %d is not supported (want %d)", *probe.Version, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rd.header); err != nil {
		return nil, rd.errorf("", "header: %v", err)
	}
	return rd, nil
}

// Header returns the trace's header.
func (r *Reader) Header() Header { return r.header }

// Line returns the line number of the event Next returned last.
func (r *Reader) Line() int { return r.line }

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
			return nil, &SyntaxError{File: r.name, Line: r.line, Err: err}
		}
		return nil, io.EOF
	}
	r.line++
	return r.sc.Bytes(), nil
}

func (r *Reader) errorf(field, format string, args ...any) error {
	return &SyntaxError{File: r.name, Line: r.line, Field: field, Err: fmt.Errorf(format, args...)}
}

// wire is an event line as decoded; pointers tell which fields were present.
type wire struct {
	I      *int64      `json:"i"`
	T      *int64      `json:"t"`
	Kind   *Kind       `json:"ev"`
	P      *int32      `json:"p"`
	B      *int64      `json:"b"`
	PID    *int64      `json:"pid"`
	Ep     *int16      `json:"ep"`
	Seq    *int32      `json:"seq"`
	N      *int32      `json:"n"`
	Req    *int32      `json:"req"`
	Node   *int32      `json:"node"`
	Err    *string     `json:"err"`
	Off    *int64      `json:"off"`
	LSO    *int64      `json:"lso"`
	Recs   *[]int64    `json:"recs"`
	Bump   *bool       `json:"bump"`
	Fault  *string     `json:"fault"`
	Reason *string     `json:"reason"`
	Log    *[][5]int64 `json:"log"`
}

// Next returns the next event, or io.EOF after the last one.
func (r *Reader) Next() (*Event, error) {
	line, err := r.readLine()
	if err != nil {
		return nil, err
	}
	var w wire
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, r.errorf("", "not a valid event: %v", err)
	}
	if w.I == nil {
		return nil, r.errorf("i", "missing")
	}
	if w.T == nil {
		return nil, r.errorf("t", "missing")
	}
	if w.Kind == nil {
		return nil, r.errorf("ev", "missing")
	}
	want, ok := kindFields[*w.Kind]
	if !ok {
		return nil, r.errorf("ev", "unknown event %q (known: %v)", *w.Kind, Kinds())
	}
	if *w.I != r.last+1 {
		return nil, r.errorf("i", "event %d out of order: expected %d", *w.I, r.last+1)
	}
	if *w.T < r.lastT {
		return nil, r.errorf("t", "time %d goes backwards (previous event at %d)", *w.T, r.lastT)
	}
	e := &Event{I: *w.I, T: *w.T, Kind: *w.Kind}
	present := w.fields(e)
	for _, fn := range fieldNames {
		switch {
		case want&fn.f != 0 && present&fn.f == 0:
			return nil, r.errorf(fn.name, "missing: %s carries it", e.Kind)
		case want&fn.f == 0 && present&fn.f != 0:
			return nil, r.errorf(fn.name, "not a field of %s", e.Kind)
		}
	}
	r.last, r.lastT = e.I, e.T
	return e, nil
}

// fields copies the present fields into e and reports which were present.
func (w *wire) fields(e *Event) field {
	var f field
	set := func(ok bool, bit field) {
		if ok {
			f |= bit
		}
	}
	if set(w.P != nil, fPartition); w.P != nil {
		e.Partition = *w.P
	}
	if set(w.B != nil, fBatch); w.B != nil {
		e.Batch = *w.B
	}
	if set(w.PID != nil, fPID); w.PID != nil {
		e.PID = *w.PID
	}
	if set(w.Ep != nil, fEpoch); w.Ep != nil {
		e.Epoch = *w.Ep
	}
	if set(w.Seq != nil, fSeq); w.Seq != nil {
		e.Seq = *w.Seq
	}
	if set(w.N != nil, fN); w.N != nil {
		e.N = *w.N
	}
	if set(w.Req != nil, fReq); w.Req != nil {
		e.Req = *w.Req
	}
	if set(w.Node != nil, fNode); w.Node != nil {
		e.Node = *w.Node
	}
	if set(w.Err != nil, fErr); w.Err != nil {
		e.Err = *w.Err
	}
	if set(w.Off != nil, fOffset); w.Off != nil {
		e.Offset = *w.Off
	}
	if set(w.LSO != nil, fLogStart); w.LSO != nil {
		e.LogStart = *w.LSO
	}
	if set(w.Recs != nil, fRecords); w.Recs != nil {
		e.Records = *w.Recs
	}
	if set(w.Bump != nil, fBumped); w.Bump != nil {
		e.Bumped = *w.Bump
	}
	if set(w.Fault != nil, fFault); w.Fault != nil {
		e.Fault = *w.Fault
	}
	if set(w.Reason != nil, fReason); w.Reason != nil {
		e.Reason = *w.Reason
	}
	if set(w.Log != nil, fLog); w.Log != nil {
		e.Log = make([]LogRecord, len(*w.Log))
		for i, r := range *w.Log {
			e.Log[i] = LogRecord{Offset: r[0], PID: r[1], Epoch: int16(r[2]), Seq: int32(r[3]), ID: r[4]}
		}
	}
	return f
}
