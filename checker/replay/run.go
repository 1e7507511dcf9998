package replay

import (
	"errors"
	"io"

	"github.com/kcheck/kcheck/tracer"
)

// Trace replays every event of r; it returns the first conformance failure
// (an *Error), a read error (a *tracer.SyntaxError), or nil.
func Trace(r *tracer.Reader) error {
	m, err := New(r.Header())
	if err != nil {
		return err
	}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := m.Step(r.Line(), e); err != nil {
			return err
		}
	}
}
