package producer

import (
	"context"
	"sync"
	"sync/atomic"
)

// gate bounds the records buffered (MaxBufferedRecords) and tells Flush when
// none is. Produce takes one slot per record; the sender gives back a whole
// batch's slots at once and then wakes blocked producers once, as franz-go
// does: a wake-up per record would hand the producer one free slot at a time.
type gate struct {
	max     int64
	n       atomic.Int64 // slots taken: records buffered
	waiters atomic.Int32 // producers registered on free

	mu   sync.Mutex
	free chan struct{} // closed and replaced when slots come back while someone waits
	idle chan struct{} // closed and replaced when n drops to 0
}

func newGate(max int) *gate {
	return &gate{max: int64(max), free: make(chan struct{}), idle: make(chan struct{})}
}

// acquire takes a slot, waiting while all are taken, until ctx ends.
func (g *gate) acquire(ctx context.Context) error {
	for {
		n := g.n.Load()
		if n < g.max {
			if g.n.CompareAndSwap(n, n+1) {
				return nil
			}
			continue
		}
		g.mu.Lock()
		ch := g.free
		g.waiters.Add(1)
		g.mu.Unlock()
		// release lowers n before it looks at waiters, so either it sees us
		// and closes ch, or we see the slot it gave back.
		if g.n.Load() < g.max {
			g.unregister(ch)
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			g.unregister(ch)
			return ctx.Err()
		}
	}
}

// unregister undoes acquire's registration on ch, unless ch was closed (and
// the registrations reset) meanwhile.
func (g *gate) unregister(ch chan struct{}) {
	g.mu.Lock()
	if g.free == ch {
		g.waiters.Add(-1)
	}
	g.mu.Unlock()
}

// release gives back k slots.
func (g *gate) release(k int) {
	if g.n.Add(-int64(k)) == 0 {
		g.mu.Lock()
		close(g.idle)
		g.idle = make(chan struct{})
		g.mu.Unlock()
	}
	if g.waiters.Load() > 0 {
		g.mu.Lock()
		if g.waiters.Load() > 0 {
			close(g.free)
			g.free = make(chan struct{})
			g.waiters.Store(0)
		}
		g.mu.Unlock()
	}
}

// buffered returns the number of records buffered.
func (g *gate) buffered() int64 { return g.n.Load() }

// idleChan returns nil when nothing is buffered, else a channel closed when
// that becomes so.
func (g *gate) idleChan() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n.Load() == 0 {
		return nil
	}
	return g.idle
}
