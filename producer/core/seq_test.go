package core

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// inflight returns batches of n records each, assigned in order from the
// state's next sequence, as SendNew would.
func inflight(s *seqState, ns ...int32) []*Batch {
	var bs []*Batch
	for _, n := range ns {
		b := &Batch{N: n}
		s.assign(b)
		bs = append(bs, b)
	}
	return bs
}

// TestOnError pins TransactionManager.canRetry's verdicts, the spec's
// Receive error cases.
func TestOnError(t *testing.T) {
	oosn, upid := kerr.OutOfOrderSequenceNumber.Code, kerr.UnknownProducerID.Code
	cases := []struct {
		name       string
		lastAcked  int32 // the partition's lastAcked; batches of one record each are at 0, 1, 2
		unresolved bool
		which      int  // the batch answered: 0, 1 or 2 (seq = which)
		reset      bool // the batch was renumbered by a bump
		code       int16
		logStart   int64
		retriable  bool
		want       Verdict
	}{
		{"UNKNOWN_PRODUCER_ID, log start unknown", -1, false, 0, false, upid, -1, true, Retry},
		{"UNKNOWN_PRODUCER_ID, log start known", -1, false, 0, false, upid, 7, true, RetryBump},
		{"UNKNOWN_PRODUCER_ID, already renumbered", -1, false, 0, true, upid, 7, true, Retry},
		// KAFKA-14397: the batch is not the next one, so an earlier batch is
		// assumed to fill the gap: retried without a bump, forever if the
		// earlier batch was in fact lost (the KAFKA-14359 loop).
		{"OUT_OF_ORDER, not the next", -1, false, 1, false, oosn, -1, false, Retry},
		{"OUT_OF_ORDER, the next", 0, false, 1, false, oosn, -1, false, RetryBump},
		{"OUT_OF_ORDER, the first of the epoch", -1, false, 0, false, oosn, -1, false, RetryBump},
		{"OUT_OF_ORDER, renumbered", -1, false, 0, true, oosn, -1, false, Retry},
		{"OUT_OF_ORDER, unresolved, the next", 0, true, 1, false, oosn, -1, false, RetryBump},
		{"OUT_OF_ORDER, unresolved, not the next", 0, true, 2, false, oosn, -1, false, Retry},
		{"OUT_OF_ORDER, unresolved, renumbered and next", 0, true, 1, true, oosn, -1, false, RetryBump},
		{"INVALID_PRODUCER_EPOCH", 0, false, 1, false, kerr.InvalidProducerEpoch.Code, -1, false, Fail},
		{"a retriable error", -1, false, 0, false, kerr.NotLeaderForPartition.Code, -1, true, Retry},
		{"a fatal error", -1, false, 0, false, kerr.MessageTooLarge.Code, -1, false, Fail},
	}
	for _, c := range cases {
		s := newSeqState()
		bs := inflight(&s, 1, 1, 1)
		s.lastAcked, s.unresolved = c.lastAcked, c.unresolved
		b := bs[c.which]
		b.reset = c.reset
		if got := s.onError(b, c.code, c.logStart, c.retriable); got != c.want {
			t.Errorf("%s: onError = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestDrainable pins the guards of SendNew: a pending bump, an unresolved
// sequence, the old epoch's batches in flight (KAFKA-12152), the first-ack
// rule (KAFKA-14359) and HoldWhileRetrying (KAFKA-18905).
func TestDrainable(t *testing.T) {
	id := idEpoch{pid: 7, epoch: 0}
	on := Rules{FirstAck: true, HoldWhileRetrying: true}
	cases := []struct {
		name  string
		r     Rules
		setup func(s *seqState)
		id    idEpoch
		want  bool
	}{
		{"idle", on, func(s *seqState) {}, id, true},
		{"first batch in flight, rule on", on, func(s *seqState) { inflight(s, 1) }, id, false},
		{"first batch in flight, rule off", Rules{}, func(s *seqState) { inflight(s, 1) }, id, true},
		{"acknowledged, one in flight", on, func(s *seqState) { inflight(s, 1); s.lastAcked = 0 }, id, true},
		{"bump pending", Rules{}, func(s *seqState) { s.bumpReq = true }, id, false},
		{"unresolved", Rules{}, func(s *seqState) { s.unresolved = true }, id, false},
		{"a retried batch, hold on", on, func(s *seqState) { inflight(s, 1)[0].attempts = 1; s.lastAcked = 5 }, id, false},
		{"a retried batch, hold off", Rules{FirstAck: true}, func(s *seqState) { inflight(s, 1)[0].attempts = 1; s.lastAcked = 5 }, id, true},
		{"new epoch, old batches in flight", Rules{}, func(s *seqState) { inflight(s, 1) }, idEpoch{7, 1}, false},
		{"new epoch, idle", on, func(s *seqState) { s.next, s.lastAcked = 9, 8 }, idEpoch{7, 1}, true},
		{"new producer id, idle", on, func(s *seqState) {}, idEpoch{8, 0}, true},
	}
	for _, c := range cases {
		s := newSeqState()
		s.pid = 7
		c.setup(&s)
		if got := s.drainable(c.id, c.r, 0); got != c.want {
			t.Errorf("%s: drainable = %v, want %v", c.name, got, c.want)
		}
	}
	// canDrainNew resets an idle partition to sequence 0 in the new epoch.
	s := newSeqState()
	s.pid, s.next, s.lastAcked = 7, 9, 8
	if !s.canDrainNew(idEpoch{7, 1}, on, 0) || s.next != 0 || s.lastAcked != -1 || s.epoch != 1 {
		t.Errorf("canDrainNew in a new epoch: next %d lastAcked %d epoch %d, want 0, -1, 1", s.next, s.lastAcked, s.epoch)
	}
}

// TestBump pins the renumbering of a bump: the partition's in-flight
// batches from 0 in the new epoch, in sequence order, marked reset, with
// the next sequence after them and nothing acknowledged.
func TestBump(t *testing.T) {
	s := newSeqState()
	bs := inflight(&s, 3, 2, 4) // at 0, 3, 5
	s.acked(bs[0])
	s.bumpReq, s.unresolved = true, true
	s.bump(idEpoch{pid: 1, epoch: 4})
	if s.next != 6 || s.lastAcked != -1 || s.epoch != 4 || s.bumpReq || s.unresolved {
		t.Fatalf("after the bump: next %d lastAcked %d epoch %d bumpReq %v unresolved %v; want 6, -1, 4, false, false",
			s.next, s.lastAcked, s.epoch, s.bumpReq, s.unresolved)
	}
	for i, want := range []int32{0, 2} {
		b := bs[i+1]
		if b.seq != want || b.epoch != 4 || !b.reset {
			t.Errorf("batch %d: seq %d epoch %d reset %v, want %d, 4, true", i+1, b.seq, b.epoch, b.reset, want)
		}
	}
}

// TestResolve pins ResolveSequences: resolved when every sequence up to
// nextSeq was acknowledged, else an epoch bump.
func TestResolve(t *testing.T) {
	s := newSeqState()
	bs := inflight(&s, 1, 1)
	s.acked(bs[0])
	s.acked(bs[1])
	s.unresolved = true
	if s.resolve() || s.bumpReq || s.unresolved {
		t.Errorf("everything acknowledged: resolve bumped (%v) or left it unresolved (%v)", s.bumpReq, s.unresolved)
	}
	bs = inflight(&s, 1) // seq 2, failed
	s.remove(bs[0])
	s.unresolved = true
	if !s.resolve() || !s.bumpReq {
		t.Errorf("a gap at seq 2: resolve did not request a bump")
	}
}

// TestNextRetry pins that a retry goes out only as the lowest sequence of
// its epoch in flight.
func TestNextRetry(t *testing.T) {
	s := newSeqState()
	bs := inflight(&s, 1, 1)
	bs[1].st = stRetry
	if r, has := s.nextRetry(); r != nil || !has {
		t.Errorf("seq 1 waiting behind seq 0: nextRetry = %v, %v; want nil, true", r, has)
	}
	bs[0].st = stRetry
	if r, _ := s.nextRetry(); r != bs[0] {
		t.Errorf("both waiting: nextRetry gave seq %d, want 0", r.seq)
	}
}

// TestAwaitingFirstAck pins the idle re-arm rule's clock: a partition with
// batches in flight waits for an acknowledgement when none came in the
// epoch, or when the last one (or an in-flight batch's stamp) is older
// than the bound.
func TestAwaitingFirstAck(t *testing.T) {
	const now = int64(100_000)
	at := func(ms int64) *Batch { return &Batch{MaxTs: ms, Created: time.UnixMilli(ms)} }
	cases := []struct {
		name     string
		r        Rules
		acked    int32
		ackStamp int64
		inflight []*Batch
		want     bool
	}{
		{"nothing in flight", Rules{FirstAck: true, RearmMs: 1000}, 4, 0, nil, false},
		{"first of the epoch", Rules{FirstAck: true}, -1, 0, []*Batch{at(now)}, true},
		{"first-ack off", Rules{RearmMs: 1000}, -1, 0, []*Batch{at(now)}, false},
		{"recent ack", Rules{FirstAck: true, RearmMs: 1000}, 4, now - 999, []*Batch{at(now)}, false},
		{"ack at the bound", Rules{FirstAck: true, RearmMs: 1000}, 4, now - 1000, []*Batch{at(now)}, true},
		{"old ack, re-arm off", Rules{FirstAck: true}, 4, now - 5000, []*Batch{at(now)}, false},
		{"old stamp in flight", Rules{FirstAck: true, RearmMs: 1000}, 4, now - 10, []*Batch{at(now), at(now - 2000)}, true},
		{"stamp set in the future", Rules{FirstAck: true, RearmMs: 1000}, 4, now - 10,
			[]*Batch{{MaxTs: now + 1e6, Created: time.UnixMilli(now)}}, false},
		{"created before its timestamp", Rules{FirstAck: true, RearmMs: 1000}, 4, now - 10,
			[]*Batch{{MaxTs: now + 1e6, Created: time.UnixMilli(now - 1500)}}, true},
	}
	for _, c := range cases {
		s := seqState{lastAcked: c.acked, ackStamp: c.ackStamp, inflight: c.inflight}
		if got := s.awaitingFirstAck(c.r, now); got != c.want {
			t.Errorf("%s: awaitingFirstAck = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestAckedSetsStamp checks that the acknowledgement that raises lastAcked
// restarts the partition's idle clock from the batch's stamp.
func TestAckedSetsStamp(t *testing.T) {
	s := newSeqState()
	b := &Batch{N: 2, MaxTs: 5000, Created: time.UnixMilli(4000)}
	s.assign(b)
	s.acked(b)
	if s.lastAcked != 1 || s.ackStamp != 4000 {
		t.Fatalf("after the ack: lastAcked %d ackStamp %d, want 1 and 4000", s.lastAcked, s.ackStamp)
	}
}
