package replay

import "github.com/kcheck/kcheck/tracer"

// Trace replays every event of r; it returns the first conformance failure
// (an *Error), a read error (a *tracer.SyntaxError), or nil.
func Trace(r *tracer.Reader) error {
	m, err := New(r.Header())
	if err != nil {
		return err
	}
	return r.Each(m.Step)
}
