package readback

import "github.com/kcheck/kcheck/tracer"

// Acked collects, from a trace's events as they are written or read, the
// highest offset acknowledged on each partition: what the read-back must
// find below the high watermark (Config.Acked).
type Acked struct {
	n    map[batchKey]int32 // records per batch, from its sends
	high map[int32]int64
}

type batchKey struct {
	p int32
	b int64
}

// NewAcked returns an empty Acked.
func NewAcked() *Acked {
	return &Acked{n: map[batchKey]int32{}, high: map[int32]int64{}}
}

// Observe takes one event: a send tells a batch's size, a successful
// answer with a base offset its last offset.
func (a *Acked) Observe(e *tracer.Event) {
	k := batchKey{e.Partition, e.Batch}
	switch e.Kind {
	case tracer.SendNew, tracer.Resend:
		a.n[k] = e.N
	case tracer.Receive:
		n, ok := a.n[k]
		if e.Err != "NONE" || e.Offset < 0 || !ok || n < 1 {
			return
		}
		last := e.Offset + int64(n) - 1
		if high, ok := a.high[e.Partition]; !ok || last > high {
			a.high[e.Partition] = last
		}
	}
}

// Offsets returns the highest acknowledged offset of every partition that
// has one.
func (a *Acked) Offsets() map[int32]int64 { return a.high }
