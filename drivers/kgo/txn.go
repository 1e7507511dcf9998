package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/drivers/txnmode"
	"github.com/kcheck/kcheck/tracer/outcomes"
)

// produceTxn is the produce phase of --transactional (drivers/WORKLOADS.md,
// "Transactions"), with kgo's own transactional API as its documentation
// asks it to be used: BeginTransaction, the records of --txn-records,
// Flush, then EndTransaction(TryCommit), or TryAbort for every
// --txn-abort-every-th. A commit that fails with an error kgo says to
// retry with TryAbort (OperationNotAttempted, TransactionAbortable, an
// unconfirmed outcome) is aborted; any other failure ends the produce
// phase. Each record's report, and each end's, goes to out
// (drivers/OUTCOMES.md); a record without a report within the delivery
// timeout + grace gets its none line there, and its transaction is aborted
// (after AbortBufferedRecords, as kgo asks) and the phase ends. An error
// that says the broker cannot run kgo's transactions (txnmode.CannotRun,
// kgo's "broker is too old") is a setup error: could not run.
func produceTxn(ctx context.Context, cl *kgo.Client, cfg *config, out *outcomes.Writer, w *loadgen.Workload,
	keyOf []int32, acked []bool, res *result) error {
	res.Result = txnmode.NewResult(cfg.txn)
	var cannot error // the first error that says kgo cannot run transactions here
	note := func(err error) {
		if res.FirstError == "" {
			res.FirstError = err.Error()
		}
		if cannot == nil && cannotRun(err) {
			cannot = err
		}
	}
	for tx, n := 1, 0; n < cfg.records; tx++ {
		if err := cl.BeginTransaction(); err != nil {
			note(fmt.Errorf("transaction %d: begin: %w", tx, err))
			break
		}
		k := min(cfg.txn.Records, cfg.records-n)
		var (
			mu       sync.Mutex
			open     = k
			closed   bool
			done     = make(chan struct{})
			answered = make([]bool, k)
		)
		for j := range k {
			n := n + j
			var key []byte
			if keyOf[n] = w.NextKeyIndex(); keyOf[n] >= 0 {
				key = w.Keys[keyOf[n]]
			}
			rec := &kgo.Record{
				Topic:     cfg.topic,
				Key:       key,
				Value:     loadgen.SeedValue(w.Value, n),
				Headers:   []kgo.RecordHeader{{Key: loadgen.SeedIDHeader, Value: []byte(strconv.Itoa(n))}},
				Partition: -1,
			}
			cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if closed {
					return
				}
				if err == nil {
					acked[n] = true
					res.Acked++
					out.Delivered(n, r.Partition, r.Offset)
				} else {
					res.Failed++
					note(err)
					res.FailedErrors[errorName(err)]++
					out.Failed(n, r.Partition, err.Error(), errorCode(err))
				}
				answered[j] = true
				if open--; open == 0 {
					close(done)
				}
			})
			res.Sent++
		}
		first := n
		n += k
		loadgen.WaitAtMost(done, cfg.deliveryTimeout+grace)
		mu.Lock()
		closed = true
		stalled := open > 0
		res.Unanswered(open, grace)
		for j, a := range answered {
			if !a {
				out.None(first + j)
			}
		}
		mu.Unlock()
		if cannot != nil {
			return setupf("could not run transactions: %v", cannot)
		}

		commit := !cfg.txn.Abort(tx) && !stalled
		ectx, cancel := context.WithTimeout(ctx, cfg.deliveryTimeout+grace)
		var err error
		if stalled {
			err = cl.AbortBufferedRecords(ectx)
		} else {
			err = cl.Flush(ectx) // every record answered: at once
		}
		if err == nil {
			err = cl.EndTransaction(ectx, kgo.TransactionEndTry(commit))
		}
		cancel()
		ended := txnmode.End(out, res.Result, tx, commit, err, errorCode(err))
		if err != nil {
			note(fmt.Errorf("transaction %d: %s: %w", tx, decision(commit), err))
		}
		if !ended && commit && retryAbort(err) {
			ectx, cancel := context.WithTimeout(ctx, cfg.deliveryTimeout+grace)
			err = cl.EndTransaction(ectx, kgo.TryAbort)
			cancel()
			txnmode.End(out, nil, tx, false, err, errorCode(err))
			if err != nil {
				note(fmt.Errorf("transaction %d: abort after a failed commit: %w", tx, err))
			} else {
				ended = true
			}
		}
		if cannot != nil {
			return setupf("could not run transactions: %v", cannot)
		}
		if !ended || stalled {
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

// retryAbort reports whether kgo's documentation says to retry a failed
// EndTransaction(TryCommit) with TryAbort: OperationNotAttempted (the
// producer id has an error), TransactionAbortable, or an outcome kgo could
// not confirm (an error with no Kafka code, or UNKNOWN_SERVER_ERROR).
func retryAbort(err error) bool {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err != nil
	}
	return errors.Is(err, kerr.OperationNotAttempted) || errors.Is(err, kerr.TransactionAbortable) || errors.Is(err, kerr.UnknownServerError)
}

// cannotRun reports whether err says the broker cannot run kgo's
// transactions: a Kafka code txnmode.CannotRun names, or kgo's own error
// for a request the broker does not know (the text of its unexported
// errBrokerTooOld, kgo 1.22.3 errors.go).
func cannotRun(err error) bool {
	return txnmode.CannotRun(errorCode(err)) || strings.Contains(err.Error(), "broker is too old")
}
