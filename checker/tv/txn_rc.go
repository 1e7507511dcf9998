package tv

import "github.com/kcheck/kcheck/tracer"

// isReadCommitted reports whether e is a ReadCommitted line (format 6).
func isReadCommitted(e *tracer.Event) bool { return false }

// readCommitted returns a ReadCommitted line's partition and the offsets of
// the records it returned.
func readCommitted(e *tracer.Event) (int32, []int64) { return e.Partition, nil }
