package tracer

import (
	"bytes"
	"strings"
	"testing"
)

// TestDeferredWriterAmend checks that a deferred header can be amended
// until the first flush writes it, and not after.
func TestDeferredWriterAmend(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewDeferredWriter(&buf, Header{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatalf("wrote %q before the first flush", buf.String())
	}
	w.Emit(&Event{Kind: InitProducerID})
	if err := w.Amend(func(h *Header) { h.IdleRearmMs = 7 }); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	if !strings.Contains(first, `"idle_rearm_ms":7`) || !strings.Contains(first, `"kcheck_trace"`) {
		t.Errorf("header line %q lacks the amendment or the version", first)
	}
	if err := w.Amend(func(h *Header) {}); err == nil {
		t.Error("Amend after the header was written: no error")
	}
}

// TestAppendRunAsAppendEvent checks that a run's lines are, byte for byte,
// the lines AppendEvent writes for the same events one at a time.
func TestAppendRunAsAppendEvent(t *testing.T) {
	ids := []int64{4, 8, 9, 1_000_000_007}
	var segs []byte
	for _, e := range []Event{
		{T: 5, Kind: Told, Partition: 3, Offset: 0, Result: Delivered},
		{T: 987654321, Kind: Told, Partition: 63, Offset: 4_567_890, Result: Delivered},
		{T: 1, Kind: Told, Partition: -1, Offset: -1, Result: Failed, Err: "NOT_ENOUGH_REPLICAS", Reason: `broker said "no"` + "\n"},
		{T: 2, Kind: Told, Partition: 0, Offset: -1, Result: Failed, Reason: "delivery timeout"},
		{T: 3, Kind: Told, Partition: 1, Offset: 9998, Result: Delivered},
		{T: 4, Kind: Told, Partition: 1, Offset: 8, Result: Delivered},
	} {
		for _, c := range []struct{ n, i0 int }{{0, 41}, {1, 41}, {len(ids), 41}, {len(ids), 98}, {len(ids), 999}} {
			n, i0 := c.n, int64(c.i0)
			var want []byte
			for k, id := range ids[:n] {
				one := e
				one.I, one.RecordID = i0+int64(k), id
				if e.Offset >= 0 {
					one.Offset = e.Offset + int64(k)
				}
				want = append(AppendEvent(want, &one), '\n')
			}
			if got := appendRun(nil, &e, ids[:n], i0, &segs); !bytes.Equal(got, want) {
				t.Errorf("appendRun(%+v, %d ids from %d):\n got %s\nwant %s", e, n, i0, got, want)
			}
		}
	}
}

// TestWriterEmitRunNumbers checks that a run takes one number per event and
// that the events after it go on from there.
func TestWriterEmitRunNumbers(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	w.Emit(&Event{Kind: InitProducerID})
	w.EmitRun(&Event{Kind: Told, Offset: 10, Result: Delivered}, []int64{7, 8, 9})
	w.Emit(&Event{Kind: Disconnect})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := w.Events(); got != 5 {
		t.Errorf("Events() = %d after 5 events, want 5", got)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")[1:]
	for k, l := range lines {
		if want := `{"i":` + string(rune('1'+k)) + `,`; !strings.HasPrefix(l, want) {
			t.Errorf("line %d is %s, want it to start %s", k+1, l, want)
		}
	}
	if len(lines) != 5 || !strings.Contains(lines[3], `"off":12,`) || !strings.Contains(lines[3], `"id":9,`) {
		t.Errorf("lines: %q", lines)
	}
}
