package producer

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestGate: producers never hold more than max slots, slots given back in
// bulk wake every blocked producer that can go on, and the idle channel
// closes once nothing is held.
func TestGate(t *testing.T) {
	const max, producers, each = 8, 6, 2000
	g := newGate(max)
	held := make(chan struct{}, producers*each)
	var inUse, peak atomic.Int64
	var wg sync.WaitGroup
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if err := g.acquire(context.Background()); err != nil {
					t.Error(err)
					return
				}
				n := inUse.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				held <- struct{}{}
			}
		}()
	}
	// The "sender" gives slots back in batches of up to 3.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for released := 0; released < producers*each; {
			<-held
			k := 1
			for k < 3 && len(held) > 0 {
				<-held
				k++
			}
			inUse.Add(-int64(k))
			g.release(k)
			released += k
		}
	}()
	wg.Wait()
	<-done
	if p := peak.Load(); p > max {
		t.Fatalf("%d slots held at once, max %d", p, max)
	}
	if ch := g.idleChan(); ch != nil {
		t.Fatalf("idle channel not closed with %d buffered", g.buffered())
	}
	// Full: acquire waits until its context ends.
	for range max {
		if err := g.acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	idle := g.idleChan()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire on a full gate: %v, want the context's error", err)
	}
	g.release(max)
	select {
	case <-idle:
	default:
		t.Fatal("idle channel still open after every slot came back")
	}
}
