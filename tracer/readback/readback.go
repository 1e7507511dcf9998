// Package readback reads a topic's partitions back after a run, from offset 0
// to the high watermark, and turns each into a tracer.ReadBack event: the
// offset, producer id, epoch, sequence and kcheck id of every record. It is
// the end of every trace, whoever wrote the records.
package readback

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/wire"
)

// Partition is one partition's log as read back.
type Partition struct {
	ID  int32
	Log []tracer.LogRecord
}

// Topic reads every partition of topic through the cluster that bootstrap
// belongs to.
func Topic(ctx context.Context, bootstrap []string, topic string) ([]Partition, error) {
	var boot *wire.Conn
	var errs []error
	for _, addr := range bootstrap {
		c, err := wire.Dial(ctx, addr, "kcheck-readback")
		if err == nil {
			boot = c
			break
		}
		errs = append(errs, err)
	}
	if boot == nil {
		return nil, fmt.Errorf("readback: no broker reachable: %w", errors.Join(errs...))
	}
	defer boot.Close()

	mreq := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	mreq.Topics = append(mreq.Topics, mt)
	kresp, err := boot.Request(ctx, mreq)
	if err != nil {
		return nil, fmt.Errorf("readback: metadata: %w", err)
	}
	meta := kresp.(*kmsg.MetadataResponse)
	addrs := map[int32]string{}
	for _, b := range meta.Brokers {
		addrs[b.NodeID] = fmt.Sprintf("%s:%d", b.Host, b.Port)
	}
	if len(meta.Topics) != 1 {
		return nil, fmt.Errorf("readback: metadata for %q has %d topics", topic, len(meta.Topics))
	}
	mtopic := meta.Topics[0]
	if err := kerr.ErrorForCode(mtopic.ErrorCode); err != nil {
		return nil, fmt.Errorf("readback: topic %q: %w", topic, err)
	}
	conns := map[int32]*wire.Conn{}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var out []Partition
	for _, mp := range mtopic.Partitions {
		addr, ok := addrs[mp.Leader]
		if !ok {
			return nil, fmt.Errorf("readback: %s[%d] has no leader", topic, mp.Partition)
		}
		c := conns[mp.Leader]
		if c == nil {
			if c, err = wire.Dial(ctx, addr, "kcheck-readback"); err != nil {
				return nil, fmt.Errorf("readback: %s[%d]: %w", topic, mp.Partition, err)
			}
			conns[mp.Leader] = c
		}
		log, err := partition(ctx, c, topic, mp.Partition)
		if err != nil {
			return nil, err
		}
		out = append(out, Partition{ID: mp.Partition, Log: log})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// partition fetches one partition from offset 0 to its high watermark.
func partition(ctx context.Context, c *wire.Conn, topic string, p int32) ([]tracer.LogRecord, error) {
	var log []tracer.LogRecord
	offset, hwm := int64(0), int64(-1)
	deadline, backoff := time.Now().Add(retryFor), 20*time.Millisecond
	for hwm < 0 || offset < hwm {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 0
		req.MaxBytes = 16 << 20
		req.IsolationLevel = 0
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.LogStartOffset = p, offset, -1
		rp.PartitionMaxBytes = 8 << 20
		rp.CurrentLeaderEpoch = -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kresp, err := c.Request(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("readback: fetching %s[%d] at %d: %w", topic, p, offset, err)
		}
		resp := kresp.(*kmsg.FetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return nil, fmt.Errorf("readback: fetching %s[%d]: %w", topic, p, err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return nil, fmt.Errorf("readback: fetching %s[%d]: unexpected response shape", topic, p)
		}
		fp := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(fp.ErrorCode); err != nil {
			// A broker still taking up the leadership of a new partition
			// (on a loaded machine, seconds after the topic was created)
			// answers with a retriable error: wait for it.
			if kerr.IsRetriable(err) && time.Now().Before(deadline) {
				if werr := sleep(ctx, backoff); werr != nil {
					return nil, fmt.Errorf("readback: fetching %s[%d] at %d: %w (%w)", topic, p, offset, err, werr)
				}
				backoff = min(2*backoff, time.Second)
				continue
			}
			return nil, fmt.Errorf("readback: fetching %s[%d] at %d: %w", topic, p, offset, err)
		}
		hwm = fp.HighWatermark
		batches, err := recordbatch.Decode(fp.RecordBatches)
		if err != nil {
			return nil, fmt.Errorf("readback: %s[%d] at %d: %w", topic, p, offset, err)
		}
		before := offset
		for _, b := range batches {
			for _, r := range b.Records {
				if r.Offset < offset {
					continue // a batch can start before the offset asked for
				}
				log = append(log, tracer.LogRecord{Offset: r.Offset, PID: r.ProducerID, Epoch: r.ProducerEpoch, Seq: r.Sequence, ID: recordbatch.RecordID(r.Headers)})
				offset = r.Offset + 1
			}
			if b.Control() {
				offset = max(offset, b.BaseOffset+int64(b.LastOffsetDelta)+1)
			}
		}
		if offset == before && offset < hwm {
			return nil, fmt.Errorf("readback: %s[%d]: no progress at offset %d below the high watermark %d", topic, p, offset, hwm)
		}
	}
	return log, nil
}

// retryFor bounds how long a partition's read-back waits out retriable
// errors.
const retryFor = 30 * time.Second

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
