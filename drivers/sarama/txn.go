package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/bench/loadgen"
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

// readBackTxn is readBack for a transactional run, with kgo's consumer:
// sarama's hides control records (consumer.go, parseResponse) and tells no
// position past them, so a read up to the end offsets, which the markers
// end, could not tell when it has passed the last marker. kgo's keeps them
// (KeepControlRecords). It counts the records as readBack does; the
// read-back is not the client under test.
func readBackTxn(seeds []string, cfg *config, keyOf []int32, acked []bool, res *result) error {
	start := map[int32]kgo.Offset{}
	for p := range int32(cfg.Partitions) {
		start[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.ClientID("kcheck-sarama-readback"),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: start}),
		kgo.KeepControlRecords(),
		kgo.DisableClientMetrics(),
	)
	if err != nil {
		return setupf("starting the read-back consumer: %v", err)
	}
	defer within(closeTimeout, cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	end, err := endOffsets(ctx, cl, cfg.Topic, cfg.Partitions)
	if err != nil {
		return setupf("read-back: end offsets of %q: %v", cfg.Topic, err)
	}
	next := map[int32]int64{}
	remaining := func() bool {
		for p, e := range end {
			if next[p] < e {
				return true
			}
		}
		return false
	}
	values := make([][][]byte, cfg.Partitions)
	for remaining() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return setupf("read-back did not reach the end offsets in %d s", int(readTimeout/time.Second))
		}
		for _, fe := range fs.Errors() {
			if fe.Err != nil && !errors.Is(fe.Err, context.DeadlineExceeded) && !kerr.IsRetriable(fe.Err) {
				return setupf("read-back: %s[%d]: %v", fe.Topic, fe.Partition, fe.Err)
			}
		}
		fs.EachRecord(func(r *kgo.Record) {
			next[r.Partition] = max(next[r.Partition], r.Offset+1)
			if !r.Attrs.IsControl() {
				values[r.Partition] = append(values[r.Partition], r.Value)
			}
		})
	}
	tally := loadgen.NewTally(keyOf)
	for p, vs := range values {
		for _, v := range vs {
			tally.Add(int32(p), v)
		}
	}
	tally.Finish(res.Sent, acked)
	res.ReadBack, res.Duplicated, res.OutOfOrder, res.Foreign = tally.ReadBack, tally.Duplicated, tally.OutOfOrder, tally.Foreign
	res.Lost, res.LostAcked = tally.Lost, tally.LostAcked
	return nil
}

// endOffsets returns every partition's end offset (its high watermark).
func endOffsets(ctx context.Context, cl *kgo.Client, topic string, partitions int) (map[int32]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range int32(partitions) {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = p
		rp.Timestamp = -1 // latest
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	end := map[int32]int64{}
	for _, sh := range cl.RequestSharded(ctx, req) {
		if sh.Err != nil {
			return nil, sh.Err
		}
		for _, t := range sh.Resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return nil, fmt.Errorf("partition %d: %w", p.Partition, err)
				}
				end[p.Partition] = p.Offset
			}
		}
	}
	if len(end) != partitions {
		return nil, fmt.Errorf("end offsets of %d partitions, want %d", len(end), partitions)
	}
	return end, nil
}
