package producer

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

// pendingRecord is a record waiting for its outcome.
type pendingRecord struct {
	msg  *Message
	done func(*Message, error)
}

// batch is one record batch of one partition. Its records are encoded when
// it is written (encode.go).
type batch struct {
	id      int64
	part    *partition
	recs    []pendingRecord
	ids     []int64   // kcheck ids of the records, when tracing
	traced  bool      // its SendNew is in the trace, so what the application is told of it goes there too (Told)
	created time.Time // when its first record was produced
	baseTs  int64     // the first record's timestamp (ms)
	maxTs   int64     // the latest record timestamp (ms)
	size    int       // encoded size without compression, header included

	// Owned by the sender once the batch leaves the partition's buffer.
	payload  []byte // the compressed records, for a compressed codec
	st       state
	seq      int32 // base sequence, -1 before drain
	epoch    int16
	reset    bool // renumbered by an epoch bump (Java's sequenceHasBeenReset)
	retryAt  time.Time
	attempts int
}

func (b *batch) n() int32 { return int32(len(b.recs)) }

// lastSeq is the sequence of the batch's last record.
func (b *batch) lastSeq() int32 { return recordbatch.NextSequence(b.seq, b.n()-1) }

// seqState is one partition's sequence state, the client side of the spec:
// pEpoch, nextSeq, lastAcked, bumpReq and unresolved, plus the batches Java
// keeps in inflightBatchesBySequence (sent or waiting for a retry), in
// sequence order. It is owned by the sender goroutine.
type seqState struct {
	pid        int64 // the producer id and epoch this partition's sequences belong to
	epoch      int16
	next       int32
	lastAcked  int32 // -1: nothing acknowledged in epoch
	bumpReq    bool
	unresolved bool
	inflight   []*batch
	// ackStamp is the idle re-arm rule's clock (ms): the stamp of the batch
	// that raised lastAcked (see stamp).
	ackStamp int64
}

// stamp is the earliest time (ms) the broker may date b by: the smaller of
// its latest record timestamp (what the broker keeps with CreateTime) and
// the time its first record was produced (at or before the append time,
// what it keeps with LogAppendTime). An application that sets old
// timestamps makes the partition idle sooner, never later.
func (b *batch) stamp() int64 { return min(b.maxTs, b.created.UnixMilli()) }

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
// (RecordAccumulator sends a retry only as the lowest sequence in flight).
// hasRetry reports whether any batch is waiting for a retry; while one is,
// no new batch is drained for the partition.
func (s *seqState) nextRetry() (b *batch, hasRetry bool) {
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
// (maybeUpdateProducerIdAndEpoch, KAFKA-12152).
func (s *seqState) canDrainNew(id idEpoch, r rules, nowMs int64) bool {
	if !s.drainable(id, r, nowMs) {
		return false
	}
	if !s.current(id) {
		s.pid, s.epoch, s.next, s.lastAcked = id.pid, id.epoch, 0, -1
	}
	return true
}

// rules are the producer's optional drain rules.
type rules struct {
	firstAck bool  // KAFKA-14359
	hold     bool  // HoldWhileRetrying
	rearmMs  int64 // IdleRearm's bound in ms (0: off); only with firstAck
}

// awaitingFirstAck reports whether the partition waits for an
// acknowledgement before it pipelines: none yet in the epoch (the first-ack
// rule, KAFKA-14359), or, with the idle re-arm rule, none for rearmMs, so
// that the broker may have expired the producer's state
// (producer.id.expiration.ms) and would take any sequence as the first
// (spec: RearmAfterIdle).
func (s *seqState) awaitingFirstAck(r rules, nowMs int64) bool {
	if !r.firstAck || len(s.inflight) == 0 {
		return false
	}
	if s.lastAcked == -1 {
		return true
	}
	if r.rearmMs <= 0 {
		return false
	}
	oldest := s.ackStamp
	for _, b := range s.inflight {
		oldest = min(oldest, b.stamp())
	}
	return nowMs-oldest >= r.rearmMs
}

// drainable reports, without changing anything, whether a new batch may get
// a sequence now (nowMs: the time, for the idle re-arm rule).
func (s *seqState) drainable(id idEpoch, r rules, nowMs int64) bool {
	if s.bumpReq || s.unresolved {
		return false
	}
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
	if r.hold {
		for _, b := range s.inflight {
			if b.attempts > 0 {
				return false
			}
		}
	}
	return true
}

// assign gives b the partition's next sequence and puts it in flight; the
// caller encodes b with it.
func (s *seqState) assign(b *batch) {
	b.seq, b.epoch = s.next, s.epoch
	s.next = recordbatch.NextSequence(s.next, b.n())
	b.st = stSent
	s.inflight = append(s.inflight, b)
}

func (s *seqState) remove(b *batch) {
	for i, c := range s.inflight {
		if c == b {
			s.inflight = append(s.inflight[:i], s.inflight[i+1:]...)
			return
		}
	}
}

// acked records b's success (TransactionManager.handleCompletedBatch).
func (s *seqState) acked(b *batch) {
	b.st = stAcked
	s.remove(b)
	if b.epoch == s.epoch && (s.lastAcked == -1 || b.lastSeq() > s.lastAcked) {
		s.lastAcked, s.ackStamp = b.lastSeq(), b.stamp()
	}
}

// verdict is what the producer does with a failed attempt.
type verdict uint8

const (
	vRetry verdict = iota
	vRetryBump
	vFail
)

// onError decides what to do with b after an error response, as
// TransactionManager.canRetry does for the idempotent producer.
func (s *seqState) onError(b *batch, code int16, logStart int64, retriable bool) verdict {
	switch code {
	case kerr.UnknownProducerID.Code:
		// Retry while the log start offset is unknown or the batch was
		// already renumbered; otherwise bump the epoch and retry.
		if logStart == -1 || b.reset {
			return vRetry
		}
		return vRetryBump
	case kerr.OutOfOrderSequenceNumber.Code:
		isNext := b.seq == recordbatch.NextSequence(s.lastAcked, 1) // lastAcked -1: the next is 0
		if !s.unresolved && (b.reset || !isNext) {
			// Not the next batch: assume an earlier one fills the gap and
			// retry without a bump. This is the KAFKA-14359 loop.
			return vRetry
		}
		if !s.unresolved || isNext {
			return vRetryBump
		}
		return vRetry
	case kerr.InvalidProducerEpoch.Code:
		return vFail
	}
	if retriable {
		return vRetry
	}
	return vFail
}

// bump renumbers the partition's in-flight batches from 0 in the new epoch,
// or under a new producer id (TransactionManager.bumpIdempotentProducerEpoch,
// startSequencesAtBeginning); their next send encodes the new numbers. The
// caller has checked that none of them is in an outstanding request.
func (s *seqState) bump(id idEpoch) {
	s.pid, s.epoch, s.next, s.lastAcked = id.pid, id.epoch, 0, -1
	s.bumpReq, s.unresolved = false, false
	for _, b := range s.inflight {
		b.seq, b.epoch, b.reset = s.next, id.epoch, true
		s.next = recordbatch.NextSequence(s.next, b.n())
	}
}

// resolve settles an unresolved sequence once nothing is in flight
// (TransactionManager.maybeResolveSequences): resolved if later batches got
// through, else an epoch bump. It reports whether it requested a bump.
func (s *seqState) resolve() bool {
	s.unresolved = false
	if s.next == recordbatch.NextSequence(s.lastAcked, 1) {
		return false
	}
	s.bumpReq = true
	return true
}
