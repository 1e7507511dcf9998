// --outcomes FILE, the Go drivers' writer (drivers/OUTCOMES.md): one JSON
// line a record saying what the client told the application about it.

package loadgen

import (
	"bufio"
	"io"
	"os"
	"strconv"
)

// OutcomesEnv names the file --outcomes defaults to (kcheck proxy sets it).
const OutcomesEnv = "KCHECK_OUTCOMES"

// OutcomesPath is the outcomes file: flag (--outcomes) if given, else
// $KCHECK_OUTCOMES; "" for none.
func OutcomesPath(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(OutcomesEnv)
}

// Outcomes writes the lines of drivers/OUTCOMES.md. Not safe for
// concurrent use; a nil *Outcomes writes nothing.
type Outcomes struct {
	w *bufio.Writer
	c io.Closer // nil for NewOutcomes
}

// NewOutcomes writes the lines to w (Close flushes, it does not close w).
func NewOutcomes(w io.Writer) *Outcomes { return &Outcomes{w: bufio.NewWriter(w)} }

// CreateOutcomes creates the file at path; nil for "".
func CreateOutcomes(path string) (*Outcomes, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &Outcomes{w: bufio.NewWriter(f), c: f}, nil
}

// Delivered: record n delivered at partition p, offset off (-1 when the
// client reported none).
func (o *Outcomes) Delivered(n int, p int32, off int64) {
	if o == nil {
		return
	}
	b := o.start(n)
	b = append(b, `,"p":`...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, `,"off":`...)
	b = strconv.AppendInt(b, off, 10)
	o.w.Write(append(b, "}\n"...))
}

// Failed: record n failed at partition p (-1 if unknown) with the error's
// text and Kafka error code, written only when positive (0: none; -1,
// UNKNOWN_SERVER_ERROR, is not written: kgo reports a code it does not
// know as -1).
func (o *Outcomes) Failed(n int, p int32, text string, code int16) {
	if o == nil {
		return
	}
	b := o.start(n)
	b = append(b, `,"p":`...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, `,"err":`...)
	t, _ := EncodeLine(text) // a string always encodes
	b = append(b, t[:len(t)-1]...)
	if code > 0 {
		b = append(b, `,"code":`...)
		b = strconv.AppendInt(b, int64(code), 10)
	}
	o.w.Write(append(b, "}\n"...))
}

// None: no report of record n by the end of the wait.
func (o *Outcomes) None(n int) {
	if o == nil {
		return
	}
	o.w.Write(append(o.start(n), `,"none":true}`+"\n"...))
}

func (o *Outcomes) start(n int) []byte {
	return strconv.AppendInt([]byte(`{"id":`), int64(n), 10)
}

// Close flushes the lines and closes the file.
func (o *Outcomes) Close() error {
	if o == nil {
		return nil
	}
	err := o.w.Flush()
	if o.c != nil {
		if cerr := o.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
