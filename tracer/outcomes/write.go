package outcomes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strconv"
)

// Env names the file --outcomes defaults to (kcheck proxy sets it).
const Env = "KCHECK_OUTCOMES"

// Path is the report's file: flag (--outcomes) if given, else
// $KCHECK_OUTCOMES; "" for none.
func Path(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(Env)
}

// Writer writes the lines of drivers/OUTCOMES.md: a line per record, and
// of a transactional driver a line per transaction's end. Not safe for
// concurrent use; a nil *Writer writes nothing.
type Writer struct {
	w *bufio.Writer
	c io.Closer // nil for New
}

// New writes the lines to w (Close flushes, it does not close w).
func New(w io.Writer) *Writer { return &Writer{w: bufio.NewWriter(w)} }

// Create creates the file at path; nil for "".
func Create(path string) (*Writer, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &Writer{w: bufio.NewWriter(f), c: f}, nil
}

// Delivered: record n delivered at partition p, offset off (-1 when the
// client reported none).
func (o *Writer) Delivered(n int, p int32, off int64) {
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
func (o *Writer) Failed(n int, p int32, text string, code int16) {
	if o == nil {
		return
	}
	b := o.start(n)
	b = append(b, `,"p":`...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, `,"err":`...)
	b = appendString(b, text)
	if code > 0 {
		b = append(b, `,"code":`...)
		b = strconv.AppendInt(b, int64(code), 10)
	}
	o.w.Write(append(b, "}\n"...))
}

// None: no report of record n by the end of the wait.
func (o *Writer) None(n int) {
	if o == nil {
		return
	}
	o.w.Write(append(o.start(n), `,"none":true}`+"\n"...))
}

// Committed: transaction tx (1 for the first the driver began) was told
// committed.
func (o *Writer) Committed(tx int) { o.txnEnd(tx, true, `"committed"}`+"\n") }

// Aborted: transaction tx was told aborted.
func (o *Writer) Aborted(tx int) { o.txnEnd(tx, false, `"aborted"}`+"\n") }

// TxnFailed: the commit (commit true) or abort of transaction tx failed
// with the error's text and Kafka error code, written only when positive,
// as Failed's.
func (o *Writer) TxnFailed(tx int, commit bool, text string, code int16) {
	if o == nil {
		return
	}
	b := o.txnStart(tx, commit)
	b = append(b, `"failed","err":`...)
	b = appendString(b, text)
	if code > 0 {
		b = append(b, `,"code":`...)
		b = strconv.AppendInt(b, int64(code), 10)
	}
	o.w.Write(append(b, "}\n"...))
}

func (o *Writer) txnEnd(tx int, commit bool, rest string) {
	if o == nil {
		return
	}
	o.w.Write(append(o.txnStart(tx, commit), rest...))
}

// txnStart is a transaction's line up to its "res" value.
func (o *Writer) txnStart(tx int, commit bool) []byte {
	b := strconv.AppendInt([]byte(`{"tx":`), int64(tx), 10)
	b = append(b, `,"commit":`...)
	b = strconv.AppendBool(b, commit)
	return append(b, `,"res":`...)
}

func (o *Writer) start(n int) []byte {
	return strconv.AppendInt([]byte(`{"id":`), int64(n), 10)
}

// Close flushes the lines and closes the file.
func (o *Writer) Close() error {
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

// appendString appends s as a JSON string, without escaping HTML.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
