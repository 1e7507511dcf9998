package tv

import "github.com/kcheck/kcheck/tracer"

// isReadCommitted reports whether e is a ReadCommitted line (format 6).
func isReadCommitted(e *tracer.Event) bool { return e.Kind == tracer.ReadCommitted }

// readCommitted returns a ReadCommitted line's partition and the offsets of
// the records of producer pid it returned.
func readCommitted(e *tracer.Event, pid int64) (int32, map[int64]bool) {
	offs := map[int64]bool{}
	for _, r := range e.Log {
		if r.PID == pid {
			offs[r.Offset] = true
		}
	}
	return e.Partition, offs
}
