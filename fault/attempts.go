package fault

import "time"

// Attempt is what the selectors (Fault.Selects) know of one attempt of a
// partition: one batch of one produce request.
type Attempt struct {
	N     int   // the partition's N-th attempt, from 1
	Epoch int   // the index of its producer epoch among the partition's distinct ones, from 0
	Seq   int32 // its base sequence
	Try   int   // its batch's Try-th attempt, from 1 (0 when the Attempts do not count tries)
	// Idle is how long the partition had no attempt before this one; -1
	// for its first.
	Idle time.Duration
	// AfterAnswer: an answer to an earlier attempt of the partition had
	// reached the client when this one arrived.
	AfterAnswer bool
}

// BatchID names a batch across its attempts as kcheck proxy does: by its
// first record's kcheck id (recordbatch.IDHeader), which stays the same
// across retries and epoch bumps, or, for a batch without one, by its
// producer, epoch and base sequence, which an epoch bump changes.
type BatchID struct {
	rec int64 // -1: none
	pid int64
	ep  int16
	seq int32
}

// BatchOf returns the BatchID of a batch whose first record has kcheck id
// rec (-1: none), from producer pid at epoch ep with base sequence seq.
func BatchOf(rec, pid int64, ep int16, seq int32) BatchID {
	if rec >= 0 {
		return BatchID{rec: rec}
	}
	return BatchID{rec: -1, pid: pid, ep: ep, seq: seq}
}

// Attempts numbers the attempts of each partition the way the selectors
// count them: the one bookkeeping the interpreters (InstallKfake, kcheck
// proxy) share, so that a schedule selects the same attempts on both. It is
// not safe for concurrent use.
type Attempts struct {
	parts map[int32]*partAttempts
	tries map[triesKey]int // nil: tries are not counted
}

type partAttempts struct {
	n        int
	epochs   []producerEpoch // the distinct ones, in the order first seen
	last     time.Time
	answered bool
}

type producerEpoch struct {
	pid int64
	ep  int16
}

type triesKey struct {
	p int32
	b BatchID
}

// NewAttempts returns the bookkeeping for faults fs: it counts batches'
// tries only when one of them selects by try (CountsTries).
func NewAttempts(fs []Fault) *Attempts {
	a := &Attempts{parts: map[int32]*partAttempts{}}
	for _, f := range fs {
		if f.Try != 0 {
			a.tries = map[triesKey]int{}
			break
		}
	}
	return a
}

// CountsTries reports whether the Attempts count each batch's tries, for
// which an interpreter must name the batch (BatchOf).
func (a *Attempts) CountsTries() bool { return a.tries != nil }

// Next records partition p's next attempt, arriving at now: of batch b, from
// producer pid at epoch ep, with base sequence seq.
func (a *Attempts) Next(p int32, b BatchID, pid int64, ep int16, seq int32, now time.Time) Attempt {
	pa := a.parts[p]
	if pa == nil {
		pa = &partAttempts{}
		a.parts[p] = pa
	}
	pa.n++
	at := Attempt{N: pa.n, Seq: seq, Idle: -1, AfterAnswer: pa.answered, Epoch: -1}
	if pa.n > 1 {
		at.Idle = max(now.Sub(pa.last), 0)
	}
	pa.last = now
	pe := producerEpoch{pid, ep}
	for i, e := range pa.epochs {
		if e == pe {
			at.Epoch = i
		}
	}
	if at.Epoch < 0 {
		at.Epoch = len(pa.epochs)
		pa.epochs = append(pa.epochs, pe)
	}
	if a.tries != nil {
		k := triesKey{p, b}
		a.tries[k]++
		at.Try = a.tries[k]
	}
	return at
}

// Answered notes that an answer to an attempt of partition p has reached
// the client: every later attempt of p is AfterAnswer.
func (a *Attempts) Answered(p int32) {
	pa := a.parts[p]
	if pa == nil {
		pa = &partAttempts{}
		a.parts[p] = pa
	}
	pa.answered = true
}
