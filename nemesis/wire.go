package nemesis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/tracer/readback"
	"github.com/kcheck/kcheck/wire"
)

// Wire asks a cluster's brokers, over the Kafka protocol, what the faults
// on it need to know, and moves leaders: any broker of Bootstrap that
// answers will do, since a fault may have paused or killed one.
type Wire struct {
	Bootstrap []string
}

// askTimeout bounds one broker's answer before the next is tried.
const askTimeout = 3 * time.Second

// ask runs fn on a connection to the first broker that answers it.
func (w Wire) ask(ctx context.Context, fn func(context.Context, *wire.Conn) error) error {
	var errs []error
	for _, addr := range w.Bootstrap {
		actx, cancel := context.WithTimeout(ctx, askTimeout)
		c, err := wire.Dial(actx, addr, "kcheck-nemesis")
		if err == nil {
			err = fn(actx, c)
			c.Close()
		}
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	if len(errs) == 0 {
		return errors.New("no broker to ask")
	}
	return errors.Join(errs...)
}

// Leader returns the current leader of topic's partition.
func (w Wire) Leader(ctx context.Context, topic string, partition int32) (int32, error) {
	leader := int32(-1)
	err := w.ask(ctx, func(ctx context.Context, c *wire.Conn) error {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		kresp, err := c.Request(ctx, req)
		if err != nil {
			return err
		}
		resp := kresp.(*kmsg.MetadataResponse)
		if len(resp.Topics) != 1 {
			return fmt.Errorf("metadata for %q has %d topics", topic, len(resp.Topics))
		}
		t := resp.Topics[0]
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return fmt.Errorf("topic %q: %w", topic, err)
		}
		for _, p := range t.Partitions {
			if p.Partition != partition {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil && !errors.Is(err, kerr.ReplicaNotAvailable) {
				return fmt.Errorf("%s[%d]: %w", topic, partition, err)
			}
			if p.Leader < 0 {
				return fmt.Errorf("%s[%d] has no leader now", topic, partition)
			}
			leader = p.Leader
			return nil
		}
		return fmt.Errorf("topic %q has no partition %d (it has %d)", topic, partition, len(t.Partitions))
	})
	return leader, err
}

// Controller returns the active KRaft controller.
func (w Wire) Controller(ctx context.Context) (int32, error) {
	id := int32(-1)
	err := w.ask(ctx, func(ctx context.Context, c *wire.Conn) (err error) {
		id, err = activeController(ctx, c)
		return err
	})
	return id, err
}

// MoveLeaders moves every partition's leader of topic to its next replica
// (MoveLeaders) and returns how many moved.
func (w Wire) MoveLeaders(ctx context.Context, topic string) (int, error) {
	moved := 0
	err := w.ask(ctx, func(_ context.Context, c *wire.Conn) (err error) {
		// The moves wait on the controller; the caller's ctx bounds them.
		moved, err = moveLeaders(ctx, c, topic)
		return err
	})
	return moved, err
}

// Settle returns once every partition of topic has a stable leader and
// every replica in sync (readback.Settle), within ctx's deadline.
func (w Wire) Settle(ctx context.Context, topic string) error {
	cfg := readback.Config{Bootstrap: w.Bootstrap, Topic: topic}
	if d, ok := ctx.Deadline(); ok {
		cfg.Settle = time.Until(d)
	}
	return readback.Settle(ctx, cfg)
}
