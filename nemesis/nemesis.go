// Package nemesis disturbs a real Kafka cluster while a client produces to
// it, as Jepsen's nemesis does: it moves partition leaders (a reassignment
// that rotates each partition's replica list, then a preferred leader
// election), and pauses, kills and restarts brokers. Serve lets another
// process do that to a cluster this one started (kcheck kafka --control);
// Remote is that other process's side, what kcheck proxy --cluster acts
// through (tracer/proxy.Cluster). The lost responses and cut-off brokers
// come from kcheck's proxy itself.
package nemesis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/wire"
)

// MoveLeaders moves the leader of every partition of topic to the next
// replica in its replica list: it rotates the list by one with an
// AlterPartitionReassignments (same replicas, new order: nothing is copied)
// and elects the new first replica with ElectLeaders (preferred). It returns
// how many partitions changed leader. The topic needs a replication factor
// above one.
func MoveLeaders(ctx context.Context, bootstrap string, topic string) (int, error) {
	c, err := wire.Dial(ctx, bootstrap, "kcheck-nemesis")
	if err != nil {
		return 0, fmt.Errorf("nemesis: %w", err)
	}
	defer c.Close()
	return moveLeaders(ctx, c, topic)
}

func moveLeaders(ctx context.Context, c *wire.Conn, topic string) (int, error) {
	mreq := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	mreq.Topics = append(mreq.Topics, mt)
	kresp, err := c.Request(ctx, mreq)
	if err != nil {
		return 0, fmt.Errorf("nemesis: metadata: %w", err)
	}
	meta := kresp.(*kmsg.MetadataResponse)
	if len(meta.Topics) != 1 {
		return 0, fmt.Errorf("nemesis: metadata for %q has %d topics", topic, len(meta.Topics))
	}
	if err := kerr.ErrorForCode(meta.Topics[0].ErrorCode); err != nil {
		return 0, fmt.Errorf("nemesis: topic %q: %w", topic, err)
	}

	areq := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	areq.TimeoutMillis = 30000
	at := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	at.Topic = topic
	ereq := kmsg.NewPtrElectLeadersRequest()
	ereq.ElectionType = 0 // preferred
	ereq.TimeoutMillis = 30000
	et := kmsg.NewElectLeadersRequestTopic()
	et.Topic = topic
	for _, p := range meta.Topics[0].Partitions {
		if len(p.Replicas) < 2 {
			continue
		}
		rotated := append(append([]int32(nil), p.Replicas[1:]...), p.Replicas[0])
		ap := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		ap.Partition, ap.Replicas = p.Partition, rotated
		at.Partitions = append(at.Partitions, ap)
		et.Partitions = append(et.Partitions, p.Partition)
	}
	if len(at.Partitions) == 0 {
		return 0, fmt.Errorf("nemesis: topic %q has no partition with two replicas: leaders cannot move", topic)
	}
	areq.Topics = append(areq.Topics, at)
	ereq.Topics = append(ereq.Topics, et)

	kresp, err = c.Request(ctx, areq)
	if err != nil {
		return 0, fmt.Errorf("nemesis: reassigning %q: %w", topic, err)
	}
	aresp := kresp.(*kmsg.AlterPartitionAssignmentsResponse)
	if err := kerr.ErrorForCode(aresp.ErrorCode); err != nil {
		return 0, fmt.Errorf("nemesis: reassigning %q: %w", topic, err)
	}
	for _, t := range aresp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return 0, fmt.Errorf("nemesis: reassigning %s[%d]: %w", t.Topic, p.Partition, err)
			}
		}
	}

	// The new order takes effect as the controller applies it; the election
	// answers PREFERRED_LEADER_NOT_AVAILABLE or ELECTION_NOT_NEEDED until
	// then, so retry briefly; a partition whose leader still does not move
	// (its new first replica out of sync) is left where it is.
	moved := 0
	pending := map[int32]bool{}
	for _, p := range et.Partitions {
		pending[p] = true
	}
	for try, backoff := 0, 20*time.Millisecond; len(pending) > 0 && try < 20; try, backoff = try+1, min(2*backoff, 500*time.Millisecond) {
		et.Partitions = et.Partitions[:0]
		for p := range pending {
			et.Partitions = append(et.Partitions, p)
		}
		ereq.Topics[0] = et
		kresp, err = c.Request(ctx, ereq)
		if err != nil {
			return moved, fmt.Errorf("nemesis: electing leaders of %q: %w", topic, err)
		}
		eresp := kresp.(*kmsg.ElectLeadersResponse)
		if err := kerr.ErrorForCode(eresp.ErrorCode); err != nil {
			return moved, fmt.Errorf("nemesis: electing leaders of %q: %w", topic, err)
		}
		for _, t := range eresp.Topics {
			for _, p := range t.Partitions {
				err := kerr.ErrorForCode(p.ErrorCode)
				switch {
				case err == nil:
					moved++
					delete(pending, p.Partition)
				case errors.Is(err, kerr.ElectionNotNeeded), errors.Is(err, kerr.PreferredLeaderNotAvailable):
				default:
					return moved, fmt.Errorf("nemesis: electing the leader of %s[%d]: %w", t.Topic, p.Partition, err)
				}
			}
		}
		if len(pending) == 0 {
			break
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return moved, fmt.Errorf("nemesis: %d leaders of %q did not move: %w", len(pending), topic, ctx.Err())
		case <-t.C:
		}
	}
	return moved, nil
}

// Every calls fn every interval until ctx ends or fn fails, and returns how
// many times it ran and its error, if any.
func Every(ctx context.Context, interval time.Duration, fn func(context.Context) error) (int, error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	n := 0
	for {
		select {
		case <-ctx.Done():
			return n, nil
		case <-t.C:
		}
		if err := fn(ctx); err != nil {
			if ctx.Err() != nil {
				return n, nil // cut short by the end of the run
			}
			return n, err
		}
		n++
	}
}

// ActiveController returns the node id of the active KRaft controller: the
// leader of the metadata log's quorum, which any broker tells through
// DescribeQuorum.
func ActiveController(ctx context.Context, bootstrap string) (int32, error) {
	c, err := wire.Dial(ctx, bootstrap, "kcheck-nemesis")
	if err != nil {
		return -1, fmt.Errorf("nemesis: %w", err)
	}
	defer c.Close()
	return activeController(ctx, c)
}

func activeController(ctx context.Context, c *wire.Conn) (int32, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rp := kmsg.NewDescribeQuorumRequestTopicPartition()
	rp.Partition = 0
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := c.Request(ctx, req)
	if err != nil {
		return -1, fmt.Errorf("nemesis: describing the controller quorum: %w", err)
	}
	resp := kresp.(*kmsg.DescribeQuorumResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return -1, fmt.Errorf("nemesis: describing the controller quorum: %w", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return -1, errors.New("nemesis: describing the controller quorum: unexpected response shape")
	}
	qp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(qp.ErrorCode); err != nil {
		return -1, fmt.Errorf("nemesis: describing the controller quorum: %w", err)
	}
	if qp.LeaderID < 0 {
		return -1, errors.New("nemesis: the controller quorum has no leader")
	}
	return qp.LeaderID, nil
}
