package main

import (
	"context"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/drivers/kgoread"
	"github.com/kcheck/kcheck/drivers/txnmode"
	"github.com/kcheck/kcheck/tracer/outcomes"
)

// produceTxn is the produce phase of --transactional (drivers/WORKLOADS.md,
// "Transactions"), with sarama's own transactional API as its examples use
// it: BeginTxn, the records of --txn-records, a wait for their reports,
// then CommitTxn, or AbortTxn for every --txn-abort-every-th. A commit
// that fails while sarama's status says the error is abortable
// (ProducerTxnFlagAbortableError) is aborted; any other failure ends the
// produce phase. Each record's report and each end go to out
// (drivers/OUTCOMES.md); a record without a report within the delivery
// timeout + grace gets its none line, and the phase ends with an abort of
// its transaction (which waits for the records in flight, bounded: if it
// does not return, the transaction is left open with no line). A
// report or end whose Kafka error says the broker cannot run transactions
// (txnmode.CannotRun) is a setup error: could not run.
func produceTxn(producer sarama.AsyncProducer, cfg *config, out *outcomes.Writer, rep *reports, send func(n int), res *result) error {
	res.Result = txnmode.NewResult(cfg.txn)
	note := func(err error) {
		if res.FirstError == "" {
			res.FirstError = err.Error()
		}
	}
	// A commit or abort waits for the records in flight and sarama's
	// retries of EndTxn (Transaction.Retry); bounded all the same.
	endBound := cfg.DeliveryTimeout + grace
	for tx, n := 1, 0; n < cfg.Records; tx++ {
		if err := producer.BeginTxn(); err != nil {
			note(fmt.Errorf("transaction %d: begin: %w", tx, err))
			break
		}
		k := min(cfg.txn.Records, cfg.Records-n)
		done := rep.expect(k)
		for j := range k {
			send(n + j)
		}
		first := n
		n += k
		loadgen.WaitAtMost(done, cfg.DeliveryTimeout+grace)
		none := rep.cutOff(first, n)
		res.Unanswered(none, grace)
		if err := rep.cannotRun(); err != nil {
			return setupf("could not run transactions: %v", err)
		}
		if none > 0 {
			// Records still in sarama's hands: an abort, which waits
			// for them, says why if it returns.
			if err, ok := callWithin(endBound, producer.AbortTxn); ok {
				if txnmode.CannotRun(errorCode(err)) {
					return setupf("could not run transactions: transaction %d: abort: %v", tx, err)
				}
				txnmode.End(out, res.Result, tx, false, err, errorCode(err))
			}
			break
		}
		commit := !cfg.txn.Abort(tx)
		end := producer.AbortTxn
		if commit {
			end = producer.CommitTxn
		}
		err, ok := callWithin(endBound, end)
		if !ok {
			note(fmt.Errorf("transaction %d: %s did not return in %v", tx, decision(commit), endBound))
			break
		}
		if txnmode.CannotRun(errorCode(err)) {
			return setupf("could not run transactions: transaction %d: %s: %v", tx, decision(commit), err)
		}
		ended := txnmode.End(out, res.Result, tx, commit, err, errorCode(err))
		if err != nil {
			note(fmt.Errorf("transaction %d: %s: %w", tx, decision(commit), err))
		}
		if !ended && commit && producer.TxnStatus()&sarama.ProducerTxnFlagAbortableError != 0 {
			err, ok = callWithin(endBound, producer.AbortTxn)
			if !ok {
				note(fmt.Errorf("transaction %d: the abort after a failed commit did not return in %v", tx, endBound))
				break
			}
			if ended = txnmode.End(out, nil, tx, false, err, errorCode(err)); !ended {
				note(fmt.Errorf("transaction %d: abort after a failed commit: %w", tx, err))
			}
		}
		if !ended {
			break
		}
	}
	return nil
}

func decision(commit bool) string {
	if commit {
		return "commit"
	}
	return "abort"
}

// callWithin calls f and returns its error, waiting at most d; ok is false
// if f had not returned by then (it is left running).
func callWithin(d time.Duration, f func() error) (err error, ok bool) {
	res := make(chan error, 1)
	go func() { res <- f() }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-res:
		return err, true
	case <-t.C:
		return nil, false
	}
}

// cannotRun returns the first report whose error says the broker cannot
// run transactions.
func (r *reports) cannotRun() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cannot
}

// readBackTxn is readBack for a transactional run, with kgo's consumer
// (kgoread): sarama's hides control records (consumer.go, parseResponse)
// and tells no position past them, so a read up to the end offsets, which
// the markers end, could not tell when it has passed the last marker. kgo's
// keeps them. It counts the records as readBack does; the read-back is not
// the client under test.
func readBackTxn(seeds []string, cfg *config, keyOf []int32, acked []bool, res *result) error {
	if err := kgoread.Topic(context.Background(), seeds, "kcheck-sarama-readback", cfg.Topic, cfg.Partitions, keyOf, acked, &res.SeedResult, readTimeout); err != nil {
		return setupf("%v", err)
	}
	return nil
}
