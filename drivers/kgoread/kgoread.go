// Package kgoread reads a topic back for the Go drivers with franz-go's
// consumer: every partition from its start to its end offset, the
// transaction markers kept so that the read knows it has passed the ones
// that end it, the records counted as the Java driver counts them
// (loadgen.Tally). The read-back is the driver's, not the client under test.
package kgoread

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/tracer/poll"
)

// Topic reads topic's partitions 0..partitions-1 back from seeds as
// clientID, within timeout, and sets res's read-back counts (records sent
// res.Sent, acked which were acknowledged, keyOf each record's key).
func Topic(ctx context.Context, seeds []string, clientID, topic string, partitions int, keyOf []int32, acked []bool,
	res *loadgen.SeedResult, timeout time.Duration) error {
	start := map[int32]kgo.Offset{}
	for p := range int32(partitions) {
		start[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.ClientID(clientID),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}),
		kgo.DisableClientMetrics(),
		// A transactional run's markers take offsets up to the end
		// offset: kept, so the read knows it has passed them.
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return fmt.Errorf("starting the read-back consumer: %v", err)
	}
	defer poll.CloseWithin(cl, 5*time.Second)
	// A cluster just healed (a node restarted under kcheck proxy --cluster)
	// can cut the first connections or answer a moved leader's errors:
	// asked again with a backoff, for at most 30 s.
	var end map[int32]int64
	give := time.Now().Add(30 * time.Second)
	for backoff := 20 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		if end, err = poll.EndOffsets(ctx, cl, topic, partitions); err == nil || time.Now().After(give) || ctx.Err() != nil {
			break
		}
		time.Sleep(backoff) // the cluster's recovery, which nothing signals
	}
	if err != nil {
		return fmt.Errorf("read-back: end offsets of %q: %v", topic, err)
	}
	next := map[int32]int64{} // the next offset to read, by partition
	remaining := func() bool {
		for p, e := range end {
			if next[p] < e {
				return true
			}
		}
		return false
	}
	tally := loadgen.NewTally(keyOf)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for remaining() {
		fs := cl.PollFetches(rctx)
		if rctx.Err() != nil {
			return fmt.Errorf("read-back did not reach the end offsets in %d s", int(timeout/time.Second))
		}
		for _, fe := range fs.Errors() {
			if fe.Err != nil && !errors.Is(fe.Err, context.DeadlineExceeded) && !kerr.IsRetriable(fe.Err) {
				return fmt.Errorf("read-back: %s[%d]: %v", fe.Topic, fe.Partition, fe.Err)
			}
		}
		fs.EachRecord(func(r *kgo.Record) {
			next[r.Partition] = max(next[r.Partition], r.Offset+1)
			if !r.Attrs.IsControl() {
				tally.Add(r.Partition, r.Value)
			}
		})
	}
	tally.Finish(res.Sent, acked)
	res.ReadBack, res.Duplicated, res.OutOfOrder, res.Foreign = tally.ReadBack, tally.Duplicated, tally.OutOfOrder, tally.Foreign
	res.Lost, res.LostAcked = tally.Lost, tally.LostAcked
	return nil
}
