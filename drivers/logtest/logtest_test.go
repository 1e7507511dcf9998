package logtest

import (
	"testing"
	"time"
)

// TestIdleGap: the gap is before the first batch after the first records,
// whatever longer gaps (retries) come before it.
func TestIdleGap(t *testing.T) {
	ms := time.Millisecond
	att := []Attempt{
		{T: 0, New: true, N: 2}, {T: 1 * ms, New: true, N: 1},
		{T: 500 * ms}, // a Resend after a long backoff
		{T: 900 * ms, New: true, N: 1}, {T: 950 * ms, New: true, N: 2},
	}
	for _, tc := range []struct {
		after int
		gap   time.Duration
		ok    bool
	}{
		{3, 400 * ms, true}, {4, 50 * ms, true}, {2, 1 * ms, true},
		{0, 0, false}, {6, 0, false}, {1, 0, false}, // no attempt before; none after; a batch across
	} {
		if gap, ok := IdleGap(att, tc.after); gap != tc.gap || ok != tc.ok {
			t.Errorf("IdleGap(%d) = %v, %v; want %v, %v", tc.after, gap, ok, tc.gap, tc.ok)
		}
	}
	if s := BatchSizes(att); len(s) != 2 || s[1] != 2 || s[2] != 2 {
		t.Errorf("BatchSizes %v", s)
	}
}
