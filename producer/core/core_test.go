package core

import (
	"testing"
	"time"
)

// countBuf is a fakeBuf that counts how often the core looks at a
// partition's buffer.
type countBuf struct {
	fakeBuf
	heads int
}

func (c *countBuf) Head(p Part) (time.Time, bool, bool) {
	c.heads++
	return c.fakeBuf.Head(p)
}

// TestStepLooksAtCandidatesOnly checks that a step costs what happened, not
// the number of partitions: after the first (full) step, a batch on one of
// 512 partitions, and then its answer, make the core look at that partition's
// buffer only.
func TestStepLooksAtCandidatesOnly(t *testing.T) {
	const parts = 512
	c := New(Config{MaxInFlight: 5, DeliveryTimeout: time.Minute, RetryBackoff: 100 * time.Millisecond, MaxEpoch: 32767,
		Rules: Rules{FirstAck: true, HoldWhileRetrying: true}}, 1, 0)
	for i := 0; i < parts; i++ {
		c.AddPartition(int32(i), 1)
	}
	c.Connected(1)
	buf := &countBuf{fakeBuf: fakeBuf{q: map[Part][]*fakeBatch{}}}
	now := time.UnixMilli(0)
	c.Tick(now, false, buf)
	c.Ready()
	if buf.heads < parts {
		t.Fatalf("the first step looked at %d buffers, want every one of %d", buf.heads, parts)
	}

	buf.heads = 0
	buf.q[7] = []*fakeBatch{{b: &Batch{ID: 1, N: 1, Created: now, MaxTs: 0}, sealed: true}}
	c.Touch(7)
	c.Tick(now, false, buf)
	rd := c.Ready()
	if len(rd.Requests) != 1 || rd.Requests[0].Batches[0].ID != 1 {
		t.Fatalf("requests %v, want one with batch 1", rd.Requests)
	}
	if buf.heads > 4 {
		t.Errorf("a step with one partition touched looked at %d buffers", buf.heads)
	}

	buf.heads = 0
	c.Respond(rd.Requests[0], 1, []Result{{Offset: 0, LogStart: -1}}, now)
	c.Tick(now, false, buf)
	if rd := c.Ready(); len(rd.Outcomes) != 1 || rd.Outcomes[0].Cause != Acked {
		t.Fatalf("outcomes %v, want batch 1 acknowledged", rd.Outcomes)
	}
	if buf.heads > 4 {
		t.Errorf("a step after one answer looked at %d buffers", buf.heads)
	}
}
