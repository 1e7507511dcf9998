package producer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/tracer"
)

// kafkaExpirationDefault is Kafka's default producer.id.expiration.ms (one
// day; ProducerStateManagerConfig).
const kafkaExpirationDefault = 24 * time.Hour

// expirationKey is the broker setting the idle re-arm bound is derived from.
const expirationKey = "producer.id.expiration.ms"

func (r rearmCfg) validate(firstAck bool) []error {
	var errs []error
	if r.after < 0 {
		errs = append(errs, fmt.Errorf("IdleRearmAfter: %v is negative", r.after))
	}
	if r.expiration < 0 {
		errs = append(errs, fmt.Errorf("ProducerIDExpiration: %v is negative", r.expiration))
	}
	if r.after > 0 && r.expiration > 0 && r.after >= r.expiration {
		errs = append(errs, fmt.Errorf("IdleRearmAfter (%v) must be below ProducerIDExpiration (%v): the broker may expire the producer's state before the partition re-arms",
			r.after, r.expiration))
	}
	if r.onSet && r.on && !firstAck {
		errs = append(errs, errors.New("IdleRearm: on needs FirstAckRule on (the rule re-arms the first-ack rule)"))
	}
	if r.after > 0 && !r.on {
		errs = append(errs, fmt.Errorf("IdleRearmAfter (%v) is set but IdleRearm is off", r.after))
	}
	return errs
}

// resolveRearm sets c.rules.RearmMs from the configuration and, when it
// needs one, the brokers' producer.id.expiration.ms read with
// DescribeConfigs, and returns where the bound came from. A broker that
// refuses DescribeConfigs leaves the configured bound or the default, and
// the returned text says so; a configured bound at or above the broker's
// setting is an error naming both.
func (p *Producer) resolveRearm(bc brokerConfig) error {
	c := &p.cfg
	if !c.rearm.on || !c.rules.FirstAck {
		p.rearmFrom = "off"
		return nil
	}
	var from string
	exp := c.rearm.expiration
	if exp > 0 {
		from = fmt.Sprintf("ProducerIDExpiration %v", exp)
	} else {
		ms, err := bc.positive(expirationKey)
		if err != nil {
			from = "DescribeConfigs failed (" + err.Error() + ")"
		} else {
			exp = time.Duration(ms) * time.Millisecond
			from = fmt.Sprintf("%s=%d from broker %d (DescribeConfigs)", expirationKey, ms, bc.node)
		}
	}
	after := c.rearm.after
	switch {
	case after > 0 && exp > 0 && after >= exp:
		return fmt.Errorf("producer: IdleRearmAfter (%v) must be below the brokers' %s (%v, %s)", after, expirationKey, exp, from)
	case after > 0:
		from = "IdleRearmAfter; " + from
	case exp > 0:
		after = exp / 2
		from = "half of " + from
	default:
		after = kafkaExpirationDefault / 2
		from = fmt.Sprintf("half of Kafka's default %s (%v); %s", expirationKey, kafkaExpirationDefault, from)
	}
	c.rules.RearmMs = max(after.Milliseconds(), 1)
	// A trace whose header is written already (tracer.NewWriter) goes
	// without the bound: kcheck verify then does not hold it to the rule.
	if a, ok := p.trace.(tracer.Amender); ok {
		ms := c.rules.RearmMs
		err := a.Amend(func(h *tracer.Header) { h.IdleRearmMs, h.IdleRearmFrom = ms, from })
		if err != nil && !errors.Is(err, tracer.ErrHeaderWritten) {
			return fmt.Errorf("producer: recording the idle re-arm bound in the trace header: %w", err)
		}
	}
	p.rearmFrom = from
	return nil
}

// IdleRearm returns the idle re-arm bound in effect (0 when the rule is off)
// and where it came from: the options, or the brokers' producer.id.expiration.ms
// read with DescribeConfigs, or Kafka's default when that failed (and why).
func (p *Producer) IdleRearm() (time.Duration, string) {
	return time.Duration(p.cfg.rules.RearmMs) * time.Millisecond, p.rearmFrom
}

// brokerConfig is what readBrokerConfig got: the settings one broker
// reported, or why none could be read.
type brokerConfig struct {
	values map[string]string
	node   int32
	err    error
}

// positive returns setting key as a positive number, or why it is not one.
func (bc brokerConfig) positive(key string) (int64, error) {
	if bc.err != nil {
		return 0, bc.err
	}
	v, ok := bc.values[key]
	if !ok {
		return 0, fmt.Errorf("broker %d does not report %s", bc.node, key)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("broker %d: %s=%q is not a positive number", bc.node, key, v)
	}
	return n, nil
}

// readBrokerConfig asks a broker for the settings keys: the brokers from a
// Metadata request, then DescribeConfigs for each of them on the one
// connection (a broker describes only its own configuration, and answers
// the others with an error). It keeps the first broker that answers.
func (p *Producer) readBrokerConfig(ctx context.Context, keys ...string) brokerConfig {
	conn, err := p.dialAny(ctx)
	if err != nil {
		return brokerConfig{node: -1, err: err}
	}
	defer conn.Close()
	rctx, cancel := context.WithTimeout(ctx, p.cfg.requestTimeout)
	defer cancel()
	meta := kmsg.NewPtrMetadataRequest()
	meta.Topics = []kmsg.MetadataRequestTopic{}
	kresp, err := conn.Request(rctx, meta)
	if err != nil {
		return brokerConfig{node: -1, err: fmt.Errorf("metadata: %w", err)}
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, b := range kresp.(*kmsg.MetadataResponse).Brokers {
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(b.NodeID))
		res.ConfigNames = keys
		req.Resources = append(req.Resources, res)
	}
	if len(req.Resources) == 0 {
		return brokerConfig{node: -1, err: errors.New("metadata listed no brokers")}
	}
	kresp, err = conn.Request(rctx, req)
	if err != nil {
		return brokerConfig{node: -1, err: fmt.Errorf("DescribeConfigs: %w", err)}
	}
	// A broker answers for itself and refuses the others: keep its
	// answer, or the first refusal when none answered.
	var refused error
	for _, res := range kresp.(*kmsg.DescribeConfigsResponse).Resources {
		if res.ErrorCode != 0 {
			if refused == nil {
				refused = fmt.Errorf("broker %s: %s", res.ResourceName, tracer.ErrorName(res.ErrorCode))
			}
			continue
		}
		node, _ := strconv.Atoi(res.ResourceName)
		bc := brokerConfig{values: map[string]string{}, node: int32(node)}
		for _, cf := range res.Configs {
			if cf.Value != nil {
				bc.values[cf.Name] = *cf.Value
			}
		}
		return bc
	}
	return brokerConfig{node: -1, err: fmt.Errorf("DescribeConfigs: %w", refused)}
}
