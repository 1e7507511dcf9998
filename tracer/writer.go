package tracer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Sink receives trace events. The producer calls it at every step the spec
// has an action for; a nil Sink means tracing is off and costs nothing.
// Emit may set e.I but must not keep e once it returns: the producer
// reuses its events.
type Sink interface {
	Emit(e *Event)
}

// RunSink is a Sink that also takes, in one call, the Told events of
// records told the same thing at once: a batch's, the traced hot path.
type RunSink interface {
	Sink
	// EmitRun emits the Told event e (RecordID aside) for each of ids in
	// turn: RecordID ids[k] and, when e.Offset >= 0, Offset e.Offset+k (else
	// -1). A nonzero e.Batch says that ids are that batch's, as its SendNew
	// listed them. It must not keep e or ids.
	EmitRun(e *Event, ids []int64)
}

// EmitRun gives s the Told event e for each of ids, as RunSink.EmitRun
// says: in one call when s is a RunSink, else one Emit each, e reused for
// them (told says what each holds).
func EmitRun(s Sink, e *Event, ids []int64) {
	if rs, ok := s.(RunSink); ok {
		rs.EmitRun(e, ids)
		return
	}
	run := *e
	for k, id := range ids {
		*e = told(&run, k, id)
		s.Emit(e)
	}
}

// told is the Told event of a run's k-th record, id: run's partition,
// error, reason, result and time, number run.I+k, and offset run.Offset+k
// when run.Offset >= 0, else -1. The one place a run's events are made,
// by EmitRun and by the Reader.
func told(run *Event, k int, id int64) Event {
	e := Event{I: run.I + int64(k), T: run.T, Kind: Told, Partition: run.Partition, Err: run.Err,
		Offset: -1, Reason: run.Reason, RecordID: id, Result: run.Result}
	if run.Offset >= 0 {
		e.Offset = run.Offset + int64(k)
	}
	return e
}

// flushAt is the buffer size at which the writer writes its complete lines.
const flushAt = 64 << 10

// Writer writes a trace as JSONL: the header line, then one line per event.
// It buffers whole lines and writes only whole lines, so a process killed
// mid-run leaves a trace that is valid up to its last full line. It is safe
// for concurrent use; it numbers and timestamps events in the order Emit is
// called.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	next  int64
	start time.Time
	err   error
	// header is the header line not yet written (NewDeferredWriter); nil
	// once written.
	header *Header
}

// At is the trace time of the wall-clock instant wall: nanoseconds since
// the trace started, negative before it.
func (w *Writer) At(wall time.Time) int64 {
	return wall.Sub(w.start.Round(0)).Nanoseconds()
}

// Amender is a Sink whose header can still be completed: the producer
// records there what it learns from the broker at start (the idle re-arm
// bound). Writers made by NewDeferredWriter are Amenders.
type Amender interface {
	Amend(func(*Header)) error
}

// NewWriter writes h as the first line of w (at once, so a trace never exists
// without its header) and returns a Writer for the events.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h.Version = Version
	line, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("tracer: encoding header: %w", err)
	}
	if _, err := w.Write(append(line, '\n')); err != nil {
		return nil, fmt.Errorf("tracer: writing header: %w", err)
	}
	return &Writer{w: w, next: 1, start: time.Now(), buf: make([]byte, 0, flushAt+4096)}, nil
}

// NewDeferredWriter is NewWriter, except that it writes h with the first
// flush (Flush, or a full buffer) rather than at once, so that Amend can
// complete it until then. A run that ends before it flushes leaves an empty
// file, never a header that misstates the run.
func NewDeferredWriter(w io.Writer, h Header) (*Writer, error) {
	h.Version = Version
	if _, err := json.Marshal(h); err != nil {
		return nil, fmt.Errorf("tracer: encoding header: %w", err)
	}
	return &Writer{w: w, next: 1, start: time.Now(), buf: make([]byte, 0, flushAt+4096), header: &h}, nil
}

// ErrHeaderWritten is Amend's error once the header is written (always, for
// a Writer made by NewWriter).
var ErrHeaderWritten = errors.New("tracer: the header is already written")

// Amend changes the header that NewDeferredWriter holds; it fails with
// ErrHeaderWritten once the header is written, and for a Writer made by
// NewWriter.
func (w *Writer) Amend(f func(*Header)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.header == nil {
		return ErrHeaderWritten
	}
	f(w.header)
	w.header.Version = Version
	return nil
}

// Emit numbers e, stamps it with the time since the trace started, and
// buffers its line. Write errors are kept and returned by Flush and Close.
// A ToldRun or ToldBatch takes a number for each of its Records (none:
// nothing is written).
func (w *Writer) Emit(e *Event) {
	n := int64(1)
	if e.Kind == ToldRun || e.Kind == ToldBatch {
		if n = int64(len(e.Records)); n == 0 {
			return
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e.I = w.next
	w.next += n
	e.T = int64(time.Since(w.start))
	w.buf = AppendEvent(w.buf, e)
	w.buf = append(w.buf, '\n')
	if len(w.buf) >= flushAt {
		w.flushLocked()
	}
}

// EmitRun implements RunSink with one line for all of ids: a ToldBatch
// naming e.Batch when it is nonzero (the ids are not written again), else
// a ToldRun listing them.
func (w *Writer) EmitRun(e *Event, ids []int64) {
	run := *e
	run.Kind, run.Records, run.RecordID = ToldRun, ids, 0
	if e.Batch != 0 {
		run.Kind = ToldBatch
	}
	w.Emit(&run)
	e.I, e.T = run.I, run.T
}

// Events returns how many events have been emitted.
func (w *Writer) Events() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next - 1
}

// Flush writes the buffered lines.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
	return w.err
}

func (w *Writer) flushLocked() {
	if w.header != nil && w.err == nil {
		line, err := json.Marshal(w.header)
		if err == nil {
			_, err = w.w.Write(append(line, '\n'))
		}
		w.header = nil
		if err != nil {
			w.err = fmt.Errorf("tracer: writing header: %w", err)
		}
	}
	if w.err == nil && len(w.buf) > 0 {
		if _, err := w.w.Write(w.buf); err != nil {
			w.err = fmt.Errorf("tracer: writing events: %w", err)
		}
	}
	w.buf = w.buf[:0]
}

// AppendEvent appends e as one JSON object, without a newline, to dst. It
// writes the fields e's kind carries (kindFields) and no others.
func AppendEvent(dst []byte, e *Event) []byte {
	dst = append(dst, `{"i":`...)
	dst = strconv.AppendInt(dst, e.I, 10)
	dst = append(dst, `,"t":`...)
	dst = strconv.AppendInt(dst, e.T, 10)
	dst = append(dst, `,"ev":`...)
	dst = appendQuote(dst, string(e.Kind))
	for _, k := range kindKeys[e.Kind] {
		dst = append(dst, k.key...)
		dst = appendField(dst, e, k.f)
	}
	if opt := kindOptional[e.Kind]; opt != 0 {
		for _, fn := range fieldNames {
			if opt&fn.f != 0 && optionalSet(e, fn.f) {
				dst = append(dst, `,"`+fn.name+`":`...)
				dst = appendField(dst, e, fn.f)
			}
		}
	}
	return append(dst, '}')
}

// kindKeys lists, for each kind, its fields in fieldNames' order, each with
// the text before its value (`,"p":`): kindFields made ready for writing.
var kindKeys = func() map[Kind][]fieldKey {
	m := make(map[Kind][]fieldKey, len(kindFields))
	for kind, fs := range kindFields {
		for _, fn := range fieldNames {
			if fs&fn.f != 0 {
				m[kind] = append(m[kind], fieldKey{fn.f, `,"` + fn.name + `":`})
			}
		}
	}
	return m
}()

type fieldKey struct {
	f   field
	key string
}

// appendQuote appends s quoted: as it is between quotes when it is printable
// ASCII without a quote or backslash (every kind, result and error name, and
// most reasons), else as strconv.AppendQuote writes it. It is AppendEvent's
// most frequent step, and strconv's rune-by-rune checks were a third of it.
func appendQuote(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return strconv.AppendQuote(dst, s)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

func appendField(dst []byte, e *Event, f field) []byte {
	switch f {
	case fPartition:
		return strconv.AppendInt(dst, int64(e.Partition), 10)
	case fBatch:
		return strconv.AppendInt(dst, e.Batch, 10)
	case fPID:
		return strconv.AppendInt(dst, e.PID, 10)
	case fEpoch:
		return strconv.AppendInt(dst, int64(e.Epoch), 10)
	case fSeq:
		return strconv.AppendInt(dst, int64(e.Seq), 10)
	case fN:
		return strconv.AppendInt(dst, int64(e.N), 10)
	case fReq:
		return strconv.AppendInt(dst, int64(e.Req), 10)
	case fNode:
		return strconv.AppendInt(dst, int64(e.Node), 10)
	case fErr:
		return appendQuote(dst, e.Err)
	case fOffset:
		return strconv.AppendInt(dst, e.Offset, 10)
	case fLogStart:
		return strconv.AppendInt(dst, e.LogStart, 10)
	case fHWM:
		return strconv.AppendInt(dst, e.HWM, 10)
	case fWaited:
		return strconv.AppendInt(dst, e.WaitedMs, 10)
	case fRecords:
		dst = append(dst, '[')
		return append(appendIDs(dst, e.Records), ']')
	case fRecordID:
		return strconv.AppendInt(dst, e.RecordID, 10)
	case fResult:
		return appendQuote(dst, e.Result)
	case fBumped:
		return strconv.AppendBool(dst, e.Bumped)
	case fCommit:
		return strconv.AppendBool(dst, e.Commit)
	case fTx:
		return strconv.AppendInt(dst, e.Tx, 10)
	case fNewEpoch:
		return strconv.AppendInt(dst, int64(e.NewEpoch), 10)
	case fPoller:
		return strconv.AppendInt(dst, int64(e.Poller), 10)
	case fBatchTime:
		return strconv.AppendInt(dst, e.BatchTime, 10)
	case fTxnID:
		return appendQuote(dst, e.TxnID)
	case fCtl:
		dst = append(dst, '[')
		for i, m := range e.Ctl {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			dst = strconv.AppendInt(dst, m.Offset, 10)
			dst = append(dst, ',')
			dst = strconv.AppendInt(dst, m.PID, 10)
			dst = append(dst, ',')
			dst = strconv.AppendInt(dst, int64(m.Epoch), 10)
			if m.Commit {
				dst = append(dst, ",1]"...)
			} else {
				dst = append(dst, ",0]"...)
			}
		}
		return append(dst, ']')
	case fFault:
		return appendQuote(dst, e.Fault)
	case fReason:
		return appendQuote(dst, e.Reason)
	case fLog:
		dst = append(dst, '[')
		for i, r := range e.Log {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			dst = strconv.AppendInt(dst, r.Offset, 10)
			dst = append(dst, ',')
			dst = strconv.AppendInt(dst, r.PID, 10)
			dst = append(dst, ',')
			dst = strconv.AppendInt(dst, int64(r.Epoch), 10)
			dst = append(dst, ',')
			dst = strconv.AppendInt(dst, int64(r.Seq), 10)
			dst = append(dst, ',')
			dst = strconv.AppendInt(dst, r.ID, 10)
			dst = append(dst, ']')
		}
		return append(dst, ']')
	}
	return dst
}

// appendIDs appends ids, comma-separated, as strconv.AppendInt writes each.
// It is the traced producer's most frequent step (a batch's ids are listed
// in its SendNew), and a batch's ids rise by small
// steps: Produce numbers records in turn, and a partitioner spreads them
// over the partitions. So an id up to maxStep above the one before is made
// from the one before's digits by adding the difference, a few digits'
// work instead of a whole formatting; any other id is formatted anew.
func appendIDs(dst []byte, ids []int64) []byte {
	dst = slices.Grow(dst, len(ids)*21)
	var d decimal
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		if d.n > 0 && id > ids[i-1] && id-ids[i-1] <= maxStep { // d holds ids[i-1]
			d.add(uint64(id - ids[i-1]))
		} else if id >= 0 {
			d.set(uint64(id))
		} else {
			d.n = 0
			dst = strconv.AppendInt(dst, id, 10)
			continue
		}
		n := len(dst)
		dst = dst[:n+d.n]
		copy(dst[n:], d.b[len(d.b)-d.n:])
	}
	return dst
}

// maxStep is the largest step between ids that appendIDs adds to the
// digits rather than formatting anew: it keeps add's carry loop to a few
// digits (a partitioner's steps are far smaller).
const maxStep = 1 << 16

// decimal holds a non-negative number's decimal digits, right-aligned in b:
// the last n bytes (0 when it holds none).
type decimal struct {
	b [20]byte
	n int
}

func (d *decimal) set(v uint64) {
	i := len(d.b)
	for {
		i--
		d.b[i] = byte('0' + v%10)
		if v /= 10; v == 0 {
			break
		}
	}
	d.n = len(d.b) - i
}

// add adds step to the number, digit by digit from the right, with carry;
// the number stays below 1<<63, so it never needs more than 19 digits.
func (d *decimal) add(step uint64) {
	for i := len(d.b) - 1; step > 0; i-- {
		if i < len(d.b)-d.n {
			d.b[i] = '0'
			d.n++
		}
		v := uint64(d.b[i]-'0') + step%10
		step /= 10
		if v >= 10 {
			v -= 10
			step++
		}
		d.b[i] = byte('0' + v)
	}
}
