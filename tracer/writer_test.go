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
