package core

import (
	"time"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/twmb/franz-go/pkg/kerr"
)

// state is a batch's state, as the spec's batch[p][b].st.
type state uint8

const (
	stUnsent state = iota // still in the partition's buffer, no sequence
	stSent                // in an outstanding request
	stRetry               // its attempt failed; waiting to be sent again
	stAcked
	stFailed
)

// Batch is one record batch of one partition. The loop fills ID, N,
// Created, MaxTs, Records and Data before the core takes it (Buffer.Take);
// the core owns the rest.
type Batch struct {
	ID      int64     // the producer's batch id, unique in the run
	N       int32     // records in the batch
	Created time.Time // when its first record was produced
	MaxTs   int64     // the latest record timestamp (ms)
	Records []int64   // the records' kcheck ids, for the trace's SendNew (nil when not traced)
	Bytes   int       // its size as written (compressed): what it adds to a request (MaxRequestBytes)
	Data    any       // the loop's own batch, handed back with every output

	part     Part
	kp       int32 // Kafka's partition number, for the trace
	st       state
	seq      int32 // base sequence, -1 before drain
	epoch    int16
	reset    bool // renumbered by an epoch bump (Java's sequenceHasBeenReset)
	retryAt  time.Time
	attempts int
}

// Seq is the batch's base sequence (-1 before it is drained); a bump may
// renumber it before a retry.
func (b *Batch) Seq() int32 {
	if b.st == stUnsent {
		return -1
	}
	return b.seq
}

// Epoch is the producer epoch the batch's sequence belongs to (-1 before it
// is drained).
func (b *Batch) Epoch() int16 {
	if b.st == stUnsent {
		return -1
	}
	return b.epoch
}

// Part is the partition the batch was taken from.
func (b *Batch) Part() Part { return b.part }

// lastSeq is the sequence of the batch's last record.
func (b *Batch) lastSeq() int32 { return recordbatch.NextSequence(b.seq, b.N-1) }

// stamp is the earliest time (ms) the broker may date b by: the smaller of
// its latest record timestamp (what the broker keeps with CreateTime) and
// the time its first record was produced (at or before the append time,
// what it keeps with LogAppendTime). An application that sets old
// timestamps makes the partition idle sooner, never later.
func (b *Batch) stamp() int64 { return min(b.MaxTs, b.Created.UnixMilli()) }

// seqState is one partition's sequence state, the client side of the spec:
// pEpoch, nextSeq, lastAcked, bumpReq and unresolved, plus the batches Java
// keeps in inflightBatchesBySequence (sent or waiting for a retry), in
// sequence order.
type seqState struct {
	pid        int64 // the producer id and epoch this partition's sequences belong to
	epoch      int16
	next       int32
	lastAcked  int32 // -1: nothing acknowledged in epoch
	bumpReq    bool
	unresolved bool
	inflight   []*Batch
	// ackStamp is the idle re-arm rule's clock (ms): the stamp of the batch
	// that raised lastAcked (see stamp).
	ackStamp int64
}

func newSeqState() seqState { return seqState{lastAcked: -1} }

// outstanding reports whether a batch of the partition is in a request.
func (s *seqState) outstanding() bool {
	for _, b := range s.inflight {
		if b.st == stSent {
			return true
		}
	}
	return false
}

// nextRetry returns the batch to resend, if the partition has one: a batch
// waiting for a retry that is the lowest sequence of its epoch in flight
// (RecordAccumulator sends a retry only as the lowest sequence in flight;
// spec: Resend). hasRetry reports whether any batch is waiting for a retry;
// while one is, no new batch is drained for the partition.
func (s *seqState) nextRetry() (b *Batch, hasRetry bool) {
	for _, r := range s.inflight {
		if r.st != stRetry {
			continue
		}
		hasRetry = true
		lowest := true
		for _, c := range s.inflight {
			if c.epoch == r.epoch && c.seq < r.seq {
				lowest = false
				break
			}
		}
		if lowest {
			return r, true
		}
	}
	return nil, hasRetry
}

// idEpoch is a producer id and epoch (Java's ProducerIdAndEpoch).
type idEpoch struct {
	pid   int64
	epoch int16
}

// current reports whether the partition's sequences belong to id.
func (s *seqState) current(id idEpoch) bool { return s.pid == id.pid && s.epoch == id.epoch }

// canDrainNew reports whether a new batch may get a sequence now, given the
// producer's current id and epoch; it resets the partition to sequence 0 in
// a new epoch or under a new producer id once the partition is idle
// (maybeUpdateProducerIdAndEpoch, KAFKA-12152; spec: SendNew's ~Current
// case).
func (s *seqState) canDrainNew(id idEpoch, r Rules, nowMs int64) bool {
	if !s.drainable(id, r, nowMs) {
		return false
	}
	if !s.current(id) {
		s.pid, s.epoch, s.next, s.lastAcked = id.pid, id.epoch, 0, -1
	}
	return true
}

// Rules are the producer's optional drain rules.
type Rules struct {
	FirstAck          bool  // the first-ack rule, KAFKA-14359 (spec: FirstAckRule)
	HoldWhileRetrying bool  // no new sequence while a retried batch is unacknowledged (spec: HoldWhileRetrying)
	RearmMs           int64 // the idle re-arm rule's bound in ms, 0: off; only with FirstAck (spec: RearmAfterIdle)
}

// awaitingFirstAck reports whether the partition waits for an
// acknowledgement before it pipelines: none yet in the epoch (the first-ack
// rule, KAFKA-14359; spec: AwaitingFirstAck), or, with the idle re-arm
// rule, none for RearmMs, so that the broker may have expired the
// producer's state (producer.id.expiration.ms) and would take any sequence
// as the first (KAFKA-19880's scenario; spec: RearmAfterIdle).
func (s *seqState) awaitingFirstAck(r Rules, nowMs int64) bool {
	if !r.FirstAck || len(s.inflight) == 0 {
		return false
	}
	if s.lastAcked == -1 {
		return true
	}
	if r.RearmMs <= 0 {
		return false
	}
	oldest := s.ackStamp
	for _, b := range s.inflight {
		oldest = min(oldest, b.stamp())
	}
	return nowMs-oldest >= r.RearmMs
}

// drainable reports, without changing anything, whether a new batch may get
// a sequence now (nowMs: the time, for the idle re-arm rule); spec: the
// guards of SendNew(p).
func (s *seqState) drainable(id idEpoch, r Rules, nowMs int64) bool {
	// A pending bump or an unresolved sequence blocks new sequences
	// (TransactionManager: hasUnresolvedSequence, epochBumpRequired).
	if s.bumpReq || s.unresolved {
		return false
	}
	// A new epoch or producer id: only once the partition is idle, its old
	// batches done (KAFKA-12152).
	if !s.current(id) {
		return len(s.inflight) == 0
	}
	// The first-ack rule (KAFKA-14359): the first batch of the epoch (or
	// the first after an idle longer than the re-arm bound) is in flight and
	// unacknowledged, so no new sequence for this partition.
	if s.awaitingFirstAck(r, nowMs) {
		return false
	}
	// HoldWhileRetrying: a batch whose attempt failed is unacknowledged; new
	// batches appended before its retry could push it out of the broker's
	// five-batch dedup window (KAFKA-18905).
	if r.HoldWhileRetrying {
		for _, b := range s.inflight {
			if b.attempts > 0 {
				return false
			}
		}
	}
	return true
}

// assign gives b the partition's next sequence and puts it in flight
// (spec: SendNew; RecordAccumulator.drain sets the sequence at drain time).
func (s *seqState) assign(b *Batch) {
	b.seq, b.epoch = s.next, s.epoch
	s.next = recordbatch.NextSequence(s.next, b.N)
	b.st = stSent
	s.inflight = append(s.inflight, b)
}

func (s *seqState) remove(b *Batch) {
	for i, c := range s.inflight {
		if c == b {
			s.inflight = append(s.inflight[:i], s.inflight[i+1:]...)
			return
		}
	}
}

// acked records b's success (TransactionManager.handleCompletedBatch; spec:
// Receive's success case): lastAcked rises only for the current epoch.
func (s *seqState) acked(b *Batch) {
	b.st = stAcked
	s.remove(b)
	if b.epoch == s.epoch && (s.lastAcked == -1 || b.lastSeq() > s.lastAcked) {
		s.lastAcked, s.ackStamp = b.lastSeq(), b.stamp()
	}
}

// Verdict is what the producer does with a failed attempt.
type Verdict uint8

const (
	Retry     Verdict = iota // send it again with its sequence
	RetryBump                // request an epoch bump, then send it again renumbered
	Fail                     // fail it to the application; its sequence becomes unresolved
)

func (v Verdict) String() string {
	return [...]string{"retry", "retry-bump", "fail"}[v]
}

// onError decides what to do with b after an error response, as
// TransactionManager.canRetry does for the idempotent producer (spec:
// Receive's error cases).
func (s *seqState) onError(b *Batch, code int16, logStart int64, retriable bool) Verdict {
	switch code {
	case kerr.UnknownProducerID.Code:
		// Retry while the log start offset is unknown or the batch was
		// already renumbered; otherwise bump the epoch and retry.
		if logStart == -1 || b.reset {
			return Retry
		}
		return RetryBump
	case kerr.OutOfOrderSequenceNumber.Code:
		isNext := b.seq == recordbatch.NextSequence(s.lastAcked, 1) // lastAcked -1: the next is 0
		if !s.unresolved && (b.reset || !isNext) {
			// Not the next batch: assume an earlier one fills the gap and
			// retry without a bump. This is the KAFKA-14359 loop
			// (KAFKA-14397).
			return Retry
		}
		if !s.unresolved || isNext {
			return RetryBump
		}
		return Retry
	case kerr.InvalidProducerEpoch.Code:
		// Fenced: fatal for the idempotent producer.
		return Fail
	}
	if retriable {
		return Retry
	}
	return Fail
}

// bump renumbers the partition's in-flight batches from 0 in the new epoch,
// or under a new producer id (TransactionManager.bumpIdempotentProducerEpoch,
// startSequencesAtBeginning; spec: Bump); their next send encodes the new
// numbers. The caller has checked that none of them is in an outstanding
// request.
func (s *seqState) bump(id idEpoch) {
	s.pid, s.epoch, s.next, s.lastAcked = id.pid, id.epoch, 0, -1
	s.bumpReq, s.unresolved = false, false
	for _, b := range s.inflight {
		b.seq, b.epoch, b.reset = s.next, id.epoch, true
		s.next = recordbatch.NextSequence(s.next, b.N)
	}
}

// resolve settles an unresolved sequence once nothing is in flight
// (TransactionManager.maybeResolveSequences; spec: ResolveSequences):
// resolved if later batches got through, else an epoch bump. It reports
// whether it requested a bump.
func (s *seqState) resolve() bool {
	s.unresolved = false
	if s.next == recordbatch.NextSequence(s.lastAcked, 1) {
		return false
	}
	s.bumpReq = true
	return true
}
