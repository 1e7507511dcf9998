package tracer

import (
	"errors"
	"io"
	"os"
)

// File is a trace being read from a file.
type File struct {
	*Reader
	f *os.File
}

// Open opens the trace at path and reads and checks its header.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{Reader: r, f: f}, nil
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Each calls fn with every remaining event and its line number, in order. It
// stops at the first error, from the trace (a *SyntaxError) or from fn, and
// returns nil at the end of the trace.
func (r *Reader) Each(fn func(line int, e *Event) error) error {
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(r.line, e); err != nil {
			return err
		}
	}
}
