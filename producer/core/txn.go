package core

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kcheck/kcheck/recordbatch"
)

// The transactional producer's decisions (Config.Txn), after the Java
// client's TransactionManager (clients/.../producer/internals/
// TransactionManager.java): a transaction is begun, its partitions' batches
// are drained (under TV1 only once the coordinator has added the partition:
// AddPartitionsToTxn, TransactionManager.isSendToPartitionAllowed; under TV2
// Produce v12 adds it, KIP-890 part 2), and it ends with EndTxn once every
// batch of it is answered (TransactionManager.nextRequest: "Do not send the
// EndTxn until all batches have been flushed"). Under TV2 EndTxn v5 answers
// a new epoch (KIP-890 part 2): every partition starts again at sequence 0
// under it with its next batch, so the first-ack rule re-arms per
// transaction, as after any epoch change (seqState.canDrainNew).
//
// The sender does the I/O: it sends what Ready.AddPartitions and
// Ready.EndTxn ask and feeds the answers back (PartitionsAdded,
// EndTxnAnswered), and tells the application Ready.TxnDone.

type txnPhase uint8

const (
	txnNone   txnPhase = iota // no transaction open: nothing is drained
	txnOpen                   // begun: batches are drained
	txnEnding                 // EndTxn asked: the batches are flushed (commit) or dropped (abort), then EndTxn
)

// txnState is the transaction's side of the core.
type txnState struct {
	phase  txnPhase
	n      int64 // the current (or last) transaction's number, from 1
	commit bool  // txnEnding: a commit (false: an abort)
	// abortable is the error that dooms the open transaction: it can only
	// be aborted (TransactionManager.transitionToAbortableError); "" none.
	abortable string
	// bump: an epoch bump is due once the transaction ends (TV1:
	// InitProducerId with the producer id and epoch, KIP-360): after an
	// abort that failed batches (TransactionManager.epochBumpRequired),
	// and after any end whose EndTxn was lost on its connection, so that
	// it cannot end a later transaction. TV2's EndTxn bumps anyway.
	bump bool
	// fatal is the error that ends the producer (fenced, unauthorized, an
	// invalid state: TransactionManager.transitionToFatalError); "" none.
	fatal string
	// started: the coordinator knows the transaction (a partition was
	// added, or under TV2 a batch sent); an end of a transaction not
	// started sends no EndTxn (TransactionManager.nextRequest: "Not
	// sending EndTxn for completed transaction since no partitions or
	// offsets were successfully added").
	started  bool
	adding   bool      // an AddPartitionsToTxn is outstanding
	addAfter time.Time // its retry backoff
	ending   bool      // an EndTxn is outstanding
	endAfter time.Time // its retry backoff
	// settling (TV2, Config.WaitMarkers): the last EndTxn was answered but
	// the coordinator may still be writing its markers; no new batch is
	// drained until DescribeTransactions says it is done (see TxnDescribed).
	settling      bool
	settleSince   time.Time     // when the EndTxn was answered
	describing    bool          // a DescribeTransactions is outstanding
	describeAfter time.Time     // the next one, not before
	describeEvery time.Duration // the wait before the next, doubling up to maxDescribeEvery
	noDescribe    bool          // the coordinator refused DescribeTransactions: settle no more
}

// EndTxnRequest is an EndTxn to send to the coordinator.
type EndTxnRequest struct {
	Tx     int64 // the transaction's number
	PID    int64
	Epoch  int16
	Commit bool
}

// TxnResult is a transaction's end, to tell the application.
type TxnResult struct {
	Tx        int64
	Commit    bool   // the application asked to commit (false: to abort)
	Err       string // "" when it ended as asked; else why not
	Code      int16  // the Kafka error that ended it, 0 if none
	Fatal     bool   // the producer can do nothing more
	Abortable bool   // a commit that failed: the transaction must be aborted
	Bump      bool   // TV1: get the next epoch (InitProducerId with the producer id and epoch) before the next transaction
}

// TxnError is a transactional call made in the wrong state.
type TxnError struct {
	Msg       string
	Abortable bool // a commit refused: the transaction must be aborted
}

func (e *TxnError) Error() string { return "producer: " + e.Msg }

// Tx returns the current (or last) transaction's number, 0 before the
// first.
func (c *Core) Tx() int64 { return c.txn.n }

// BeginTxn opens a transaction (TransactionManager.beginTransaction).
func (c *Core) BeginTxn() error {
	t := &c.txn
	switch {
	case !c.cfg.Txn:
		return &TxnError{Msg: "not transactional: no transactional id"}
	case t.fatal != "":
		return &TxnError{Msg: "the producer failed: " + t.fatal}
	case t.phase != txnNone:
		return &TxnError{Msg: fmt.Sprintf("transaction %d is still open", t.n)}
	}
	t.n++
	t.phase = txnOpen
	c.scanAll = true // batches produced before it may go now
	return nil
}

// EndTxn asks to commit or abort the open transaction
// (TransactionManager.beginCommit, beginAbort): a commit flushes every
// batch of it first, an abort fails the batches not yet sent (Java's
// RecordAccumulator.abortUndrainedBatches); EndTxn goes once every batch
// sent is answered. A commit of a transaction with an abortable error is
// refused: it must be aborted.
func (c *Core) EndTxn(commit bool) error {
	t := &c.txn
	switch {
	case !c.cfg.Txn:
		return &TxnError{Msg: "not transactional: no transactional id"}
	case t.fatal != "":
		return &TxnError{Msg: "the producer failed: " + t.fatal}
	case t.phase == txnNone:
		return &TxnError{Msg: "no transaction is open"}
	case t.phase == txnEnding:
		return &TxnError{Msg: fmt.Sprintf("transaction %d is already ending", t.n)}
	case commit && t.abortable != "":
		return &TxnError{fmt.Sprintf("transaction %d cannot commit, it must be aborted: %s", t.n, t.abortable), true}
	}
	t.phase, t.commit = txnEnding, commit
	c.scanAll = true
	return nil
}

// newAllowed reports whether the transaction lets partition p drain a new
// batch now.
func (c *Core) newAllowed(p Part) bool {
	if !c.cfg.Txn {
		return true
	}
	t := &c.txn
	if t.fatal != "" || t.abortable != "" {
		return false
	}
	if t.phase != txnOpen && !(t.phase == txnEnding && t.commit) {
		return false
	}
	if c.cfg.TV2 {
		return !t.settling
	}
	return c.parts[p].added
}

// wantsAdd reports whether partition p has a batch to send and must first
// be added to the transaction (TV1).
func (c *Core) wantsAdd(p Part, buf Buffer) bool {
	t := &c.txn
	if c.cfg.TV2 || c.parts[p].added || t.fatal != "" || t.abortable != "" {
		return false
	}
	if t.phase != txnOpen && !(t.phase == txnEnding && t.commit) {
		return false
	}
	_, _, ok := buf.Head(p)
	return ok
}

// txnStep is Tick's transactional part, after the drains: drop the
// batches of an abort, ask for AddPartitionsToTxn, and ask for EndTxn
// once the transaction's batches are all answered.
func (c *Core) txnStep(now time.Time, buf Buffer) {
	t := &c.txn
	// An abort, or a transaction that can only be aborted (or a failed
	// producer), fails the batches not yet sent: Java's Sender aborts the
	// undrained batches once the transaction has an error
	// (RecordAccumulator.abortUndrainedBatches).
	if t.phase == txnEnding && !t.commit || t.abortable != "" || t.fatal != "" {
		reason := "transaction aborted before the batch was sent"
		if t.abortable != "" && !(t.phase == txnEnding && !t.commit) {
			reason = "the transaction must be aborted (" + t.abortable + ") before the batch was sent"
		}
		if t.fatal != "" {
			reason = "the producer failed (" + t.fatal + ") before the batch was sent"
		}
		for i := range c.parts {
			for {
				b := buf.Drop(Part(i))
				if b == nil {
					break
				}
				c.took(b, Part(i))
				c.failBatch(b, Outcome{Batch: b, Cause: TxnAborted}, reason)
			}
		}
	}
	if !t.adding && !c.cfg.TV2 && !now.Before(t.addAfter) {
		var add []Part
		for i := range c.parts {
			if c.wantsAdd(Part(i), buf) {
				add = append(add, Part(i))
			}
		}
		if len(add) > 0 {
			t.adding = true
			c.rd.AddPartitions = add
		}
	} else if !c.cfg.TV2 && now.Before(t.addAfter) {
		c.scanBy(t.addAfter)
	}
	c.settleStep(now, buf)
	if t.phase != txnEnding || t.ending || t.adding {
		return
	}
	if now.Before(t.endAfter) {
		c.scanBy(t.endAfter)
		return
	}
	for i, pt := range c.parts {
		if len(pt.seq.inflight) > 0 {
			return
		}
		if _, _, ok := buf.Head(Part(i)); ok {
			return
		}
	}
	// Every batch is answered. A commit of a transaction that got an
	// error is not sent: it fails, and the transaction must be aborted
	// (TransactionManager.maybeTerminateRequestWithError); a failed
	// producer sends nothing.
	switch {
	case t.fatal != "":
		c.rd.TxnDone = &TxnResult{Tx: t.n, Commit: t.commit, Err: "the producer failed: " + t.fatal, Fatal: true}
		t.phase = txnOpen
		return
	case t.commit && t.abortable != "":
		c.rd.TxnDone = &TxnResult{Tx: t.n, Commit: true, Err: "the transaction must be aborted: " + t.abortable, Abortable: true}
		t.phase = txnOpen
		return
	case !t.started:
		c.rd.TxnDone = &TxnResult{Tx: t.n, Commit: t.commit}
		c.txnEnded()
		return
	}
	t.ending = true
	c.rd.EndTxn = &EndTxnRequest{Tx: t.n, PID: c.pid, Epoch: c.epoch, Commit: t.commit}
}

// txnEnded closes the transaction.
func (c *Core) txnEnded() {
	t := &c.txn
	t.phase, t.abortable, t.bump, t.started = txnNone, "", false, false
	for _, pt := range c.parts {
		pt.added = false
	}
}

// txnCode classifies a transactional request's error as the Java client's
// handlers do (TransactionManager's AddPartitionsToTxnHandler and
// EndTxnHandler.handleResponse).
type txnVerdict uint8

const (
	txnOK        txnVerdict = iota
	txnRetry                // COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR (look it up again), CONCURRENT_TRANSACTIONS, any retriable error
	txnFatal                // PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, INVALID_TXN_STATE, unknown errors of EndTxn
	txnAbortable            // UNKNOWN_PRODUCER_ID, INVALID_PRODUCER_ID_MAPPING (abortableErrorIfPossible), TRANSACTION_ABORTABLE, others of AddPartitionsToTxn
)

func classifyTxn(code int16, endTxn bool) txnVerdict {
	switch code {
	case 0:
		return txnOK
	case kerr.ProducerFenced.Code, kerr.InvalidProducerEpoch.Code, kerr.TransactionalIDAuthorizationFailed.Code, kerr.InvalidTxnState.Code:
		return txnFatal
	case kerr.UnknownProducerID.Code, kerr.InvalidProducerIDMapping.Code, kerr.TransactionAbortable.Code:
		return txnAbortable
	case kerr.CoordinatorNotAvailable.Code, kerr.NotCoordinator.Code, kerr.ConcurrentTransactions.Code:
		return txnRetry
	}
	if kerr.IsRetriable(kerr.ErrorForCode(code)) {
		return txnRetry
	}
	if endTxn {
		return txnFatal // EndTxnHandler: "Unhandled error in EndTxnResponse"
	}
	return txnAbortable // AddPartitionsToTxnHandler: partition errors make the transaction abortable
}

// PartitionsAdded takes the coordinator's answer to the AddPartitionsToTxn
// Ready.AddPartitions asked for (TV1): code is the first error among its
// partitions (0: all added). A retriable error asks again after the retry
// backoff.
func (c *Core) PartitionsAdded(parts []Part, code int16, now time.Time) {
	t := &c.txn
	t.adding = false
	c.scanAll = true
	switch classifyTxn(code, false) {
	case txnOK:
		for _, p := range parts {
			c.parts[p].added = true
		}
		t.started = true
	case txnRetry:
		t.addAfter = now.Add(c.txnBackoff())
		c.scanBy(t.addAfter)
	case txnFatal:
		t.fatal = "AddPartitionsToTxn: " + errName(code)
	case txnAbortable:
		c.setAbortable("AddPartitionsToTxn: "+errName(code), code == kerr.UnknownProducerID.Code || code == kerr.InvalidProducerIDMapping.Code)
	}
}

func errName(code int16) string {
	if e := kerr.ErrorForCode(code); e != nil {
		if ke, ok := e.(*kerr.Error); ok {
			return ke.Message
		}
		return e.Error()
	}
	return "NONE"
}

// setAbortable dooms the open transaction (the first error is kept); bump
// tells whether the epoch must be bumped after the abort.
func (c *Core) setAbortable(why string, bump bool) {
	t := &c.txn
	if t.abortable == "" {
		t.abortable = why
	}
	t.bump = t.bump || bump
	c.scanAll = true
}

// EndTxnAnswered takes the coordinator's answer to Ready.EndTxn: the error
// code and, from EndTxn v5 (TV2), the producer id and epoch it returned
// (epoch -1: none). The application is told in Ready.TxnDone, except after
// a retriable error, which sends EndTxn again after the retry backoff (a
// commit whose answer never comes is retried until it comes: its outcome
// is unknown until then, TransactionManager's cached commit result).
func (c *Core) EndTxnAnswered(code int16, pid int64, epoch int16, now time.Time) {
	t := &c.txn
	t.ending = false
	c.scanAll = true
	res := &TxnResult{Tx: t.n, Commit: t.commit, Code: code}
	switch classifyTxn(code, true) {
	case txnOK:
		if c.cfg.TV2 && epoch >= 0 {
			// KIP-890 part 2: the coordinator bumped the epoch; every
			// partition starts again from sequence 0 under it.
			c.pid, c.epoch = pid, epoch
			if c.cfg.WaitMarkers && !t.noDescribe {
				t.settling, t.settleSince = true, now
				t.describeAfter, t.describeEvery = time.Time{}, firstDescribeEvery
			}
		} else if t.bump {
			res.Bump = true
		}
		c.txnEnded()
	case txnRetry:
		if code == kerr.NetworkException.Code && !c.cfg.TV2 {
			// The request may have reached the coordinator, or may still:
			// a late EndTxn carries only the producer id and epoch, so
			// under TV1 it would end the next transaction at the same
			// epoch (KAFKA-17754's class; TransactionCoordinator
			// .handleEndTransaction). Once this one ends, the epoch is
			// bumped (KIP-360), which fences it. TV2's EndTxn bumps anyway.
			t.bump = true
		}
		t.endAfter = now.Add(c.txnBackoff())
		c.scanBy(t.endAfter)
		return
	case txnFatal:
		t.fatal = "EndTxn: " + errName(code)
		res.Err, res.Fatal = t.fatal, true
		t.phase = txnOpen // told once; nothing more can end it
	case txnAbortable:
		if !t.commit {
			t.fatal = "EndTxn (abort): " + errName(code)
			res.Err, res.Fatal = t.fatal, true
			t.phase = txnOpen
			break
		}
		c.setAbortable("EndTxn: "+errName(code), code != kerr.TransactionAbortable.Code)
		t.phase = txnOpen
		res.Err, res.Abortable = t.abortable, true
	}
	c.rd.TxnDone = res
}

// Settling (TV2). The coordinator answers EndTxn once it has logged its
// decision (PrepareCommit or PrepareAbort) and writes the markers after
// (TransactionCoordinator.endTransaction, then
// TransactionMarkerChannelManager). A Produce v12 that reaches a partition
// leader meanwhile has its partition added to the next transaction only
// when the coordinator is done: until then the coordinator answers the
// leader CONCURRENT_TRANSACTIONS and the leader retries every
// add.partitions.to.txn.retry.backoff.ms, 20 ms by default
// (ReplicaManager's AddPartitionsToTxnManager, KAFKA-18654), holding the
// Produce that long though the markers take a few milliseconds. So with
// Config.WaitMarkers a transaction's first batch waits until
// DescribeTransactions reports the coordinator's state past the Prepare
// ones, asking again every describeEvery (1 ms, doubling to 4 ms), and for
// at most maxSettle after the EndTxn answer: then the batch goes and the
// leader's own retries take over. Waiting changes no sequence, epoch or
// outcome: only when the first batch leaves.
const (
	firstDescribeEvery = time.Millisecond
	maxDescribeEvery   = 4 * time.Millisecond
	maxSettle          = 100 * time.Millisecond
)

// settleExpired ends the settling maxSettle after the EndTxn answer; Tick
// asks it before its drains.
func (c *Core) settleExpired(now time.Time) bool {
	t := &c.txn
	if t.settling && !now.Before(t.settleSince.Add(maxSettle)) {
		t.settling = false
		return true
	}
	return false
}

// settleStep asks DescribeTransactions while settling and a batch waits to
// be drained.
func (c *Core) settleStep(now time.Time, buf Buffer) {
	t := &c.txn
	if !t.settling || t.describing || t.phase == txnNone {
		return
	}
	c.scanBy(t.settleSince.Add(maxSettle)) // settleExpired, at the latest
	if now.Before(t.describeAfter) {
		c.scanBy(t.describeAfter)
		return
	}
	for i := range c.parts {
		if _, _, ok := buf.Head(Part(i)); ok {
			t.describing = true
			c.rd.DescribeTxn = true
			return
		}
	}
}

// TxnDescribed takes the coordinator's answer to Ready.DescribeTxn: the
// transaction's state as DescribeTransactions names it ("PrepareCommit",
// "CompleteCommit", ...) and the error code (0: none). A Prepare state asks
// again later; any other state ends the settling, and an error ends it for
// good (the coordinator cannot describe: batches go at once from now on).
func (c *Core) TxnDescribed(state string, code int16, now time.Time) {
	t := &c.txn
	t.describing = false
	c.scanAll = true
	switch {
	case code != 0:
		t.settling, t.noDescribe = false, true
	case state == "PrepareCommit" || state == "PrepareAbort" || state == "PrepareEpochFence":
		t.describeAfter = now.Add(t.describeEvery)
		t.describeEvery = min(2*t.describeEvery, maxDescribeEvery)
		c.scanBy(t.describeAfter)
	default:
		t.settling = false
	}
}

// minTxnBackoff bounds the retry backoff of AddPartitionsToTxn and EndTxn
// from below: with RetryBackoff 0, an unreachable coordinator would be
// asked again at once, forever.
const minTxnBackoff = 10 * time.Millisecond

func (c *Core) txnBackoff() time.Duration { return max(c.cfg.RetryBackoff, minTxnBackoff) }

// Bumped takes the epoch InitProducerId gave after TxnResult.Bump (TV1):
// every partition starts again from sequence 0 under it.
func (c *Core) Bumped(pid int64, epoch int16) {
	c.pid, c.epoch = pid, epoch
	c.scanAll = true
}

// Fatal fails the producer's transactions from outside (InitProducerId
// after an abort failed).
func (c *Core) Fatal(why string) {
	c.txn.fatal = why
	c.scanAll = true
}

// FatalErr is why the producer can do nothing more, "" while it can.
func (c *Core) FatalErr() string { return c.txn.fatal }

// txnVerdictFor decides, for the transactional producer, what to do with
// a batch answered with an error (TransactionManager.canRetry for a
// transactional producer): UNKNOWN_PRODUCER_ID is retried while the log
// start offset is unknown or the batch was renumbered, and
// OUT_OF_ORDER_SEQUENCE_NUMBER while the batch is not the next one;
// otherwise they fail the batch and doom the transaction with an epoch bump
// after its abort (handleFailedBatch; Java resets a partition's sequences
// instead when the log start offset passed the last acknowledged one, a
// case kcheck's producer fails the transaction for). Once the transaction
// is doomed, nothing is retried: it will be aborted (kcheck's rule).
func (c *Core) txnVerdictFor(st *seqState, b *Batch, code int16, logStart int64, retriable bool) Verdict {
	t := &c.txn
	switch code {
	case kerr.ProducerFenced.Code, kerr.InvalidProducerEpoch.Code, kerr.TransactionalIDAuthorizationFailed.Code:
		t.fatal = "Produce: " + errName(code)
		return Fail
	}
	if t.abortable != "" || t.fatal != "" {
		return Fail
	}
	v := Fail
	switch code {
	case kerr.UnknownProducerID.Code:
		if logStart == -1 || b.reset {
			v = Retry
		}
	case kerr.OutOfOrderSequenceNumber.Code:
		isNext := b.seq == recordbatch.NextSequence(st.lastAcked, 1) // lastAcked -1: the next is 0
		if b.reset || !isNext {
			v = Retry
		}
	case kerr.ConcurrentTransactions.Code:
		// Kafka 4.x answers it to a TV2 Produce while the previous
		// transaction completes; Java's ConcurrentTransactionsException
		// extends RetriableException (kerr calls it not retriable).
		v = Retry
	default:
		if retriable {
			v = Retry
		}
	}
	if v == Fail {
		c.setAbortable("Produce: "+errName(code), true)
	}
	return v
}
