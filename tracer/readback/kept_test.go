package readback

import (
	"fmt"
	"testing"

	"github.com/kcheck/kcheck/tracer"
)

// An aborted transaction that starts just after the previous one's abort
// marker is dropped too (the marker ends the first, the start begins the
// second: in offset order), and a committed one between them is kept.
func TestKept(t *testing.T) {
	r := func(off, pid int64) rec { return rec{tracer.LogRecord{Offset: off, PID: pid, ID: off}, true} }
	recs := []rec{r(0, 1), r(1, 1), r(3, 1), r(5, 2), r(6, 1), r(8, 1)}
	starts := []tracer.Marker{{Offset: 0, PID: 1}, {Offset: 3, PID: 1}, {Offset: 8, PID: 1}}
	aborts := []tracer.Marker{{Offset: 2, PID: 1}, {Offset: 4, PID: 1}, {Offset: 9, PID: 1}}
	// pid 1: 0-1 aborted (marker 2), 3 aborted (start 3, marker 4), 6
	// committed, 8 aborted; pid 2's 5 has no aborted transaction.
	var got []int64
	for _, k := range kept(recs, starts, aborts) {
		got = append(got, k.Offset)
	}
	if fmt.Sprint(got) != "[5 6]" {
		t.Fatalf("kept %v, want [5 6]", got)
	}
}
