package readback

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/kcheck/kcheck/tracer"
)

// ErrHasReadBack is returned by Append for a trace that already has a
// read-back.
var ErrHasReadBack = errors.New("the trace already has a read-back")

// Append reads back the topic of trace (the whole text of a trace file
// called name) through the cluster that bootstrap belongs to, and returns
// the trace with a ReadBack event per partition at its end, numbered after
// its last event, and how many partitions it read. The trace is checked in
// full first, so a malformed one gets its *tracer.SyntaxError before the
// cluster is asked anything.
func Append(ctx context.Context, trace []byte, name string, bootstrap []string) ([]byte, int, error) {
	r, err := tracer.NewReader(bytes.NewReader(trace), name)
	if err != nil {
		return nil, 0, err
	}
	var last tracer.Event
	acked := NewAcked()
	err = r.Each(func(line int, e *tracer.Event) error {
		if e.Kind == tracer.ReadBack || e.Kind == tracer.ReadBackShort {
			return fmt.Errorf("%s:%d: %w", name, line, ErrHasReadBack)
		}
		acked.Observe(e)
		last = *e
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	topic := r.Header().Topic
	if topic == "" {
		return nil, 0, fmt.Errorf("%s:1: the header names no topic to read back", name)
	}
	parts, err := Topic(ctx, Config{Bootstrap: bootstrap, Topic: topic, Acked: acked.Offsets()})
	if err != nil {
		return nil, 0, err
	}
	out := bytes.Clone(trace)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	next := last.I + 1
	for _, p := range parts {
		for _, e := range p.Events() {
			// At the last event's time: when the topic was read is not on
			// the trace's clock.
			e.I, e.T = next, last.T
			next++
			out = append(tracer.AppendEvent(out, &e), '\n')
		}
	}
	return out, len(parts), nil
}
