// Package topics creates and deletes topics with Kafka's admin requests,
// for the harnesses that give each run a fresh topic.
package topics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Requester sends one request and returns its answer: a kgo.Client or a
// wire.Conn.
type Requester interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// timeoutMs is the broker-side timeout of a create or delete.
const timeoutMs = 30000

// BrokerDefault is the replication factor that asks for the brokers'
// default.replication.factor (CreateTopics version 4 and later, KIP-464).
const BrokerDefault int16 = -1

// Create creates the topics, n partitions each with replication factor rf
// (BrokerDefault: the brokers' default.replication.factor), and waits until
// the metadata shows every partition led.
func Create(ctx context.Context, r Requester, n int32, rf int16, names ...string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = timeoutMs
	for _, name := range names {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, n, rf
		req.Topics = append(req.Topics, rt)
	}
	resp, err := r.Request(ctx, req)
	if err != nil {
		return fmt.Errorf("creating %v: %w", names, err)
	}
	var errs []error
	for _, t := range resp.(*kmsg.CreateTopicsResponse).Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			errs = append(errs, fmt.Errorf("creating %s: %w", t.Topic, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return awaitLeaders(ctx, r, n, names)
}

// awaitLeaders polls the metadata until every partition of the topics has
// a leader, or ctx ends.
func awaitLeaders(ctx context.Context, r Requester, n int32, names []string) error {
	req := kmsg.NewPtrMetadataRequest()
	for _, name := range names {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, mt)
	}
	want := len(names) * int(n)
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		resp, err := r.Request(ctx, req)
		if err != nil {
			return fmt.Errorf("metadata for %v: %w", names, err)
		}
		led := 0
		for _, t := range resp.(*kmsg.MetadataResponse).Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode == 0 && p.Leader >= 0 {
					led++
				}
			}
		}
		if led == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics %v: %d of %d partitions led: %w", names, led, want, ctx.Err())
		case <-time.After(backoff):
		}
	}
}

// Delete deletes the topics; one that does not exist is no error. It names
// them in both fields Kafka has used: TopicNames (versions 0-5) and Topics
// (6 and later), since a broker reads only its version's.
func Delete(ctx context.Context, r Requester, names ...string) error {
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = timeoutMs
	for _, name := range names {
		req.TopicNames = append(req.TopicNames, name)
		dt := kmsg.NewDeleteTopicsRequestTopic()
		dt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, dt)
	}
	resp, err := r.Request(ctx, req)
	if err != nil {
		return fmt.Errorf("deleting %v: %w", names, err)
	}
	var errs []error
	for _, t := range resp.(*kmsg.DeleteTopicsResponse).Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			name := ""
			if t.Topic != nil {
				name = *t.Topic
			}
			errs = append(errs, fmt.Errorf("deleting %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
