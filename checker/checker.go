// Package checker holds what kcheck verify reports: violations of the spec,
// of linearizability and of exactly-once ordering found in a trace. The checks
// live in subpackages, one job each: replay (the spec's actions mirrored in
// Go), linz (Porcupine), order (loss, duplicate, reorder, gap, stall), and
// tlc (TLC itself); kafkaerr classifies Kafka's answers for all of them,
// verify runs them in one pass over a trace, and report writes what it found.
package checker

import "fmt"

// Kind names a violation. Where the concept is the same, the name is the one
// Jepsen's Kafka checker uses (jepsen.tests.kafka).
type Kind string

const (
	// Lost: a record acknowledged but absent from the log, or absent while a
	// later sequence of the same producer epoch is present (Jepsen: lost-write).
	Lost Kind = "lost-write"
	// Duplicate: a record present at more than one offset (Jepsen: duplicate).
	Duplicate Kind = "duplicate"
	// Reorder: a producer's records in a partition are not in send order
	// (Jepsen: nonmonotonic-send).
	Reorder Kind = "nonmonotonic-send"
	// Gap: a sequence of an epoch is in the log but a lower one of the same
	// epoch is not (the spec's NoGap).
	Gap Kind = "gap"
	// InconsistentOffset: an acknowledged offset holds another record
	// (Jepsen: inconsistent-offsets).
	InconsistentOffset Kind = "inconsistent-offsets"
	// FailedPresent: a record the application was told definitely failed is in
	// the log (Jepsen: G1a). A delivery timeout is not definite.
	FailedPresent Kind = "failed-but-present"
	// Stall: a batch retried on OUT_OF_ORDER_SEQUENCE_NUMBER (the KAFKA-14359
	// loop), with the retries and time it spent.
	Stall Kind = "stall"
	// NonConformance: an event no enabled action of the spec explains.
	NonConformance Kind = "nonconformance"
	// NotLinearizable: Porcupine found no linearization of a partition's history.
	NotLinearizable Kind = "not-linearizable"
)

// Transactional kinds (checker/txn), each the trace's side of a property of
// spec/TransactionalProducer.tla.
const (
	// AbortedRead: a read_committed read returned a record the markers
	// abort or leave open (Jepsen: aborted-read; the spec's NoAbortedRead,
	// the reader's side).
	AbortedRead Kind = "aborted-read"
	// CommittedUnread: a read_committed read skipped a record the markers
	// commit, below the first record they leave open (the spec's Visible:
	// every committed record below the last stable offset is returned).
	CommittedUnread Kind = "committed-unread"
	// AbortCommitted: a record of a transaction the application aborted is
	// committed by its marker (the spec's NoAbortedRead, the markers' side).
	AbortCommitted Kind = "abort-committed"
	// TornTxn: a transaction's records in the log are committed in part and
	// aborted in part (the spec's CommittedAtomically).
	TornTxn Kind = "torn-transaction"
	// WriteInOtherTxn: a record of one transaction closed by the same
	// marker as records of a later one, or both still open: a delayed
	// batch landed in the later transaction (KAFKA-17754; the spec's
	// NoWriteInOtherTxn).
	WriteInOtherTxn Kind = "write-in-other-transaction"
	// LostCommit: the application was told its transaction committed, and a
	// record of it is absent from the log or aborted (the spec's
	// AckedCommitInLog).
	LostCommit Kind = "lost-commit"
	// HangingTxn: a record no marker closes although its transaction ended
	// (EndTxn answered) or a later one began: the last stable offset stays
	// behind it (KAFKA-14402; the spec's LSOAdvances).
	HangingTxn Kind = "hanging-transaction"
)

// The polls of a read_committed consumer while the run goes on and after
// it (format version 7, checker/txn's poll.go), held to the markers the
// read-back found and to when the trace asked to commit.
const (
	// PollAbortedRead: a poll returned a record the markers abort or leave
	// open, or one whose transaction no EndTxn had yet asked to commit
	// when the poll returned (Jepsen: aborted-read, seen by a poll).
	PollAbortedRead Kind = "poll-aborted-read"
	// NonMonotonicPoll: a poller's offsets on a partition went backwards:
	// a poll returned a record at or below one an earlier poll returned,
	// or below the offset it asked from (Jepsen: nonmonotonic-poll).
	NonMonotonicPoll Kind = "nonmonotonic-poll"
	// PollSkip: a poller went past a record the markers commit without
	// returning it: a later record it returned, or a later poll's start,
	// is above it (Jepsen: poll-skip).
	PollSkip Kind = "poll-skip"
	// Unseen: a record the markers commit, below the offset a poller
	// reached at the end of the run, that it never returned and never
	// went past (Jepsen: unseen).
	Unseen Kind = "unseen"
)

// Violation is one thing wrong with a trace.
type Violation struct {
	Kind       Kind
	Partition  int32 // -1 when not about one partition
	ProducerID int64
	Epoch      int16
	Seq        int32   // base sequence, -1 when not about one batch
	Batch      int64   // the producer's batch id, 0 when none
	Records    []int64 // record ids involved
	Lines      []int   // trace lines that show it, in order: the shortest slice that does
	Detail     string  // one or two sentences a Kafka engineer can read
}

func (v *Violation) Error() string {
	return fmt.Sprintf("%s: partition %d: %s", v.Kind, v.Partition, v.Detail)
}

// Transactional reports whether k is one of checker/txn's kinds.
func (k Kind) Transactional() bool {
	switch k {
	case AbortedRead, CommittedUnread, AbortCommitted, TornTxn, WriteInOtherTxn, LostCommit, HangingTxn,
		PollAbortedRead, NonMonotonicPoll, PollSkip, Unseen:
		return true
	}
	return false
}
