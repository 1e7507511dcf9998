package producer

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kcheck/kcheck/producer/core"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
)

// Opt configures a Producer.
type Opt interface{ apply(*cfg) }

type optFunc func(*cfg)

func (f optFunc) apply(c *cfg) { f(c) }

type cfg struct {
	brokers         []string
	clientID        string
	maxInFlight     int
	linger          time.Duration
	batchBytes      int
	maxRequestBytes int // 0: no cap
	codec           recordbatch.Codec
	rules           core.Rules
	deliveryTimeout time.Duration
	requestTimeout  time.Duration
	retryBackoff    time.Duration
	maxBuffered     int
	trace           tracer.Sink
	recordIDs       bool
	dialTimeout     time.Duration
	maxEpoch        int16 // the highest epoch before a new producer id; tests lower it
	rearm           rearmCfg
	txnID           string        // TransactionalID; "": idempotent only
	txnTimeout      time.Duration // TransactionTimeout
	txnVersion      int           // TransactionVersion: 0 auto, 1, 2
	waitMarkers     bool          // WaitForMarkers
}

// rearmCfg is the idle re-arm rule's configuration; New turns it into
// rules.RearmMs (rearm.go).
type rearmCfg struct {
	on         bool
	onSet      bool          // IdleRearm was given
	after      time.Duration // IdleRearmAfter; 0: derived
	expiration time.Duration // ProducerIDExpiration; 0: read from the broker
}

func defaults() cfg {
	return cfg{
		clientID:        "kcheck",
		maxInFlight:     5,
		linger:          5 * time.Millisecond,
		batchBytes:      16 << 10,
		codec:           recordbatch.CodecNone,
		rules:           core.Rules{FirstAck: true, HoldWhileRetrying: true},
		deliveryTimeout: 120 * time.Second,
		requestTimeout:  30 * time.Second,
		retryBackoff:    100 * time.Millisecond,
		maxBuffered:     10000,
		dialTimeout:     10 * time.Second,
		maxEpoch:        math.MaxInt16,
		rearm:           rearmCfg{on: true},
		txnTimeout:      60 * time.Second,
		waitMarkers:     true,
	}
}

// Brokers sets the bootstrap brokers (host:port). Required.
func Brokers(addrs ...string) Opt {
	return optFunc(func(c *cfg) { c.brokers = append([]string(nil), addrs...) })
}

// ClientID sets the client id sent with every request (client.id).
func ClientID(id string) Opt { return optFunc(func(c *cfg) { c.clientID = id }) }

// MaxInFlight sets how many produce requests may be outstanding on one
// connection (max.in.flight.requests.per.connection); 1 to 5, default 5.
// More pipelining hides latency; idempotence allows at most 5 because the
// broker retains only the last 5 batches per producer for de-duplication.
func MaxInFlight(n int) Opt { return optFunc(func(c *cfg) { c.maxInFlight = n }) }

// Linger sets how long a partition's batch waits for more records before it
// is sent (linger.ms), default 5ms. Longer lingers make bigger batches.
func Linger(d time.Duration) Opt { return optFunc(func(c *cfg) { c.linger = d }) }

// BatchBytes sets the size at which a batch is sent without waiting for the
// linger (batch.size), default 16 KiB. A single larger record still goes out.
func BatchBytes(n int) Opt { return optFunc(func(c *cfg) { c.batchBytes = n }) }

// MaxRequestBytes caps the record batches of one produce request (the Java
// client's max.request.size): a request's batches add up to at most this
// many bytes, as written (compressed), its first batch excepted, and a
// record that alone makes a larger batch fails with ErrRecordTooLarge. It
// must be at least BatchBytes, and at most the brokers' message.max.bytes
// when New can read it (DescribeConfigs). The default is no cap, as in
// franz-go: the Java client's 1 MiB would split a request of 64 full 16 KiB
// batches in two, and cost throughput (producer/README.md).
func MaxRequestBytes(n int) Opt { return optFunc(func(c *cfg) { c.maxRequestBytes = n }) }

// messageMaxKey is the broker setting that bounds a record batch.
const messageMaxKey = "message.max.bytes"

// fitRequestCap holds the batch size and the request cap to the brokers'
// message.max.bytes, when a broker told it (bc): a batch above it would be
// refused RECORD_TOO_LARGE. Either above it is an error naming both.
func (c *cfg) fitRequestCap(bc brokerConfig) error {
	limit, err := bc.positive(messageMaxKey)
	switch {
	case err != nil:
		return nil // unknown
	case int64(c.maxRequestBytes) > limit:
		return fmt.Errorf("producer: MaxRequestBytes (%d) is above the brokers' %s (%d, from broker %d): a batch that large would be refused RECORD_TOO_LARGE; lower MaxRequestBytes",
			c.maxRequestBytes, messageMaxKey, limit, bc.node)
	case int64(c.batchBytes) > limit:
		return fmt.Errorf("producer: BatchBytes (%d) is above the brokers' %s (%d, from broker %d): a full batch would be refused RECORD_TOO_LARGE; lower BatchBytes",
			c.batchBytes, messageMaxKey, limit, bc.node)
	}
	return nil
}

// Compression sets the codec for record batches (compression.type), default none.
func Compression(codec recordbatch.Codec) Opt { return optFunc(func(c *cfg) { c.codec = codec }) }

// FirstAckRule turns the KAFKA-14359 first-ack rule on (the default) or off.
// On, a partition whose first batch of the current producer epoch is in flight
// and unacknowledged gets no new sequence until it is acknowledged, so a broker
// with no state for the producer can never accept a later batch as the first.
// It costs one round trip per partition per epoch. Off, the producer pipelines
// from the first batch as the Java client 4.3.1 does.
func FirstAckRule(on bool) Opt { return optFunc(func(c *cfg) { c.rules.FirstAck = on }) }

// HoldWhileRetrying turns on (the default) or off kcheck's rule that a
// partition gets no new sequence while one of its batches whose attempt failed
// is unacknowledged. Without it a batch answered REQUEST_TIMED_OUT after the
// append, twice, can be pushed out of the broker's five-batch dedup window by
// new batches sent between its retries, and is then answered
// OUT_OF_ORDER_SEQUENCE_NUMBER though written (KAFKA-18905; spec config
// DedupWindowKafka). It costs nothing until a batch fails. Off, with
// FirstAckRule off, the producer behaves as the Java client 4.3.1 does.
func HoldWhileRetrying(on bool) Opt { return optFunc(func(c *cfg) { c.rules.HoldWhileRetrying = on }) }

// IdleRearm turns on (the default) or off the idle re-arm rule: with the
// first-ack rule on, a partition with no acknowledgement for the re-arm
// bound (IdleRearmAfter) awaits its first acknowledgement again, so that no
// sequence is pipelined behind its next batch until that batch is
// acknowledged. A broker that has expired the producer's state
// (producer.id.expiration.ms) accepts any sequence as the first; without the
// rule the seed's gap comes back after a long idle (spec: RearmAfterIdle,
// config ExpiryRuleOn). It costs one round trip per partition after each
// idle longer than the bound. It has no effect with FirstAckRule off.
func IdleRearm(on bool) Opt {
	return optFunc(func(c *cfg) { c.rearm.on, c.rearm.onSet = on, true })
}

// IdleRearmAfter sets the idle re-arm bound (kcheck's idle.rearm.ms; Kafka
// has no such setting). Zero, the default, derives it: half the broker's
// producer.id.expiration.ms, from ProducerIDExpiration or else read from
// the broker with DescribeConfigs, or 12h (half of Kafka's default of one
// day) when neither is known. It must be below producer.id.expiration.ms by
// more than the clock skew between the producer and the brokers.
func IdleRearmAfter(d time.Duration) Opt { return optFunc(func(c *cfg) { c.rearm.after = d }) }

// ProducerIDExpiration tells the producer the brokers'
// producer.id.expiration.ms, for a cluster that does not let it read the
// setting with DescribeConfigs. Zero, the default, reads it from the broker.
func ProducerIDExpiration(d time.Duration) Opt {
	return optFunc(func(c *cfg) { c.rearm.expiration = d })
}

// DeliveryTimeout bounds the time from Produce to the outcome
// (delivery.timeout.ms), default 2m. A batch that reaches it while waiting to
// be retried fails with ErrDeliveryTimeout.
func DeliveryTimeout(d time.Duration) Opt { return optFunc(func(c *cfg) { c.deliveryTimeout = d }) }

// RequestTimeout bounds the wait for one produce response (request.timeout.ms),
// default 30s; on expiry the connection is closed and its batches retried.
func RequestTimeout(d time.Duration) Opt { return optFunc(func(c *cfg) { c.requestTimeout = d }) }

// RetryBackoff sets the wait before a failed batch is sent again
// (retry.backoff.ms), default 100ms.
func RetryBackoff(d time.Duration) Opt { return optFunc(func(c *cfg) { c.retryBackoff = d }) }

// MaxBufferedRecords bounds the records produced and not yet done, default
// 10000; Produce blocks (until its context ends) while the buffer is full.
// Memory is bounded by this, not by the number of records sent. The
// producer keeps the batches it makes for its life, so that Produce
// allocates none once it has as many as a burst needs: at most about 70
// bytes per buffered record for 1 KiB records in 16 KiB batches (85 when
// traced).
func MaxBufferedRecords(n int) Opt { return optFunc(func(c *cfg) { c.maxBuffered = n }) }

// Trace sends an event for every protocol step the spec models to s. Every
// record then carries a kcheck-id header. Nil (the default) turns tracing off.
func Trace(s tracer.Sink) Opt { return optFunc(func(c *cfg) { c.trace = s }) }

// RecordIDs gives every record a kcheck id (Message.ID, from 1 in Produce
// order) and its kcheck-id header without tracing, as Trace does, so that a
// read-back can tell each record apart.
func RecordIDs(on bool) Opt { return optFunc(func(c *cfg) { c.recordIDs = on }) }

// DialTimeout bounds connecting to a broker, default 10s.
func DialTimeout(d time.Duration) Opt { return optFunc(func(c *cfg) { c.dialTimeout = d }) }

func (c *cfg) validate() error {
	var errs []error
	if len(c.brokers) == 0 {
		errs = append(errs, errors.New("Brokers: at least one bootstrap broker is required"))
	}
	if c.maxInFlight < 1 || c.maxInFlight > 5 {
		errs = append(errs, fmt.Errorf("MaxInFlight: %d is outside 1..5 (idempotence allows at most 5)", c.maxInFlight))
	}
	if c.linger < 0 {
		errs = append(errs, fmt.Errorf("Linger: %v is negative", c.linger))
	}
	if c.batchBytes < 1 {
		errs = append(errs, fmt.Errorf("BatchBytes: %d must be positive", c.batchBytes))
	}
	if c.maxRequestBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxRequestBytes: %d is negative (0: no cap)", c.maxRequestBytes))
	} else if c.maxRequestBytes > 0 && c.batchBytes > c.maxRequestBytes {
		errs = append(errs, fmt.Errorf("BatchBytes (%d) is above MaxRequestBytes (%d): a full batch could never be sent; lower the batch size or raise the request cap",
			c.batchBytes, c.maxRequestBytes))
	}
	if !c.codec.Valid() {
		errs = append(errs, fmt.Errorf("Compression: unknown codec %d", c.codec))
	}
	if c.requestTimeout <= 0 || c.retryBackoff < 0 || c.dialTimeout <= 0 {
		errs = append(errs, errors.New("RequestTimeout and DialTimeout must be positive, RetryBackoff not negative"))
	}
	if c.deliveryTimeout < c.linger+c.requestTimeout {
		errs = append(errs, fmt.Errorf("DeliveryTimeout: %v must be at least Linger + RequestTimeout (%v), as in the Java client",
			c.deliveryTimeout, c.linger+c.requestTimeout))
	}
	errs = append(errs, c.rearm.validate(c.rules.FirstAck)...)
	if c.txnVersion < 0 || c.txnVersion > 2 {
		errs = append(errs, fmt.Errorf("TransactionVersion: %d is not 0 (the cluster's), 1 or 2", c.txnVersion))
	} else if c.txnVersion != 0 && c.txnID == "" {
		errs = append(errs, fmt.Errorf("TransactionVersion %d needs TransactionalID", c.txnVersion))
	}
	if c.txnID != "" && (c.txnTimeout <= 0 || c.txnTimeout > time.Duration(math.MaxInt32)*time.Millisecond) {
		errs = append(errs, fmt.Errorf("TransactionTimeout: %v must be positive and fit transaction.timeout.ms", c.txnTimeout))
	}
	if c.maxBuffered < 1 {
		errs = append(errs, fmt.Errorf("MaxBufferedRecords: %d must be positive", c.maxBuffered))
	}
	if len(errs) > 0 {
		return fmt.Errorf("producer: invalid config: %w", errors.Join(errs...))
	}
	return nil
}
