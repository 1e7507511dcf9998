// Command kcheck-kgo-driver runs the seed's experiment (KAFKA-14359) with
// franz-go's kgo client, which kcheck did not write: create a new topic,
// produce to it at once with idempotence on, read every partition back and
// count what was lost, duplicated or reordered. It takes the same flags and
// prints the same one line of JSON as drivers/java, so a script can run
// either: exit 0 clean, 1 anomalies or failed sends, 2 setup errors (with a
// message on stderr). --outcomes FILE (or $KCHECK_OUTCOMES) also writes what
// kgo reported for each record (drivers/OUTCOMES.md). With --transactional
// it produces in transactions with kgo's transactional API (txn.go). With
// --bench it runs the throughput mode instead (bench.go; bench/run.sh).
//
//	go build -o bin/kcheck-kgo-driver ./drivers/kgo
//	bin/kcheck-kgo-driver --bootstrap HOST:PORT --topic T [--partitions N] [--replication-factor N] ... [--outcomes FILE]
//	bin/kcheck-kgo-driver ... --transactional [--txn-records N] [--txn-abort-every K] [--transactional-id ID]
//	bin/kcheck-kgo-driver --bench --bootstrap HOST:PORT --topic T [--records N] ...
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/drivers/kgoread"
	"github.com/kcheck/kcheck/drivers/txnmode"
	"github.com/kcheck/kcheck/tracer/outcomes"
	"github.com/kcheck/kcheck/tracer/poll"
)

const (
	grace = 30 * time.Second

	// Bounds on the setup steps, like the Java driver's.
	reachTimeout  = 20 * time.Second // a broker must answer within this
	createTimeout = 30 * time.Second
	leaderTimeout = 30 * time.Second
	readTimeout   = 120 * time.Second
	closeTimeout  = 5 * time.Second

	kgoModulePath  = "github.com/twmb/franz-go"
	setupErrPrefix = "kgo driver: "
	usage          = loadgen.SeedUsage + " [--outcomes FILE] " + txnmode.Usage
)

// setupError is an error of the setup: exit 2 with its message.
type setupError struct{ msg string }

func (e *setupError) Error() string { return e.msg }

func setupf(format string, a ...any) error {
	return &setupError{setupErrPrefix + fmt.Sprintf(format, a...)}
}

// config is the command line.
type config struct {
	bootstrap, topic, compression         string
	partitions, records, valueBytes, keys int
	replicationFactor                     int16 // -1: the brokers' default.replication.factor
	deliveryTimeout, requestTimeout       time.Duration
	codec                                 kgo.CompressionCodec
	outcomes                              string // --outcomes FILE; "": $KCHECK_OUTCOMES, or none
	shape                                 *loadgen.SeedConfig
	txn                                   *txnmode.Config // --transactional; nil: idempotent
}

// result is the JSON line; its keys and their order are the Java driver's,
// then the transactional mode's (none without it).
type result struct {
	*loadgen.SeedResult
	*txnmode.Result
}

// Clean reports whether nothing failed, was lost, duplicated, reordered or
// foreign, and every transaction ended as asked: exit 0.
func (r *result) Clean() bool { return r.SeedResult.Clean() && r.Result.Clean() }

func main() {
	if bench, argv := loadgen.HasFlag(os.Args[1:]); bench {
		benchMain(argv) // the throughput mode: bench.go
	}
	t0 := time.Now()
	cfg, err := parseArgs(os.Args[1:])
	if err != nil {
		die(err.Error())
	}
	out, err := outcomes.Create(outcomes.Path(cfg.outcomes))
	if err != nil {
		die(setupErrPrefix + "--outcomes: " + err.Error())
	}
	res, err := run(context.Background(), cfg, out)
	if err != nil {
		out.Close()
		die(err.Error())
	}
	if err := out.Close(); err != nil {
		die(setupErrPrefix + "--outcomes: " + err.Error())
	}
	res.Ms = time.Since(t0).Milliseconds()
	line, err := loadgen.EncodeLine(res)
	if err != nil {
		die(setupErrPrefix + err.Error())
	}
	os.Stdout.Write(line)
	if !res.Clean() {
		os.Exit(1)
	}
}

func die(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(2)
}

// codecs are the compression.type values the Java client takes.
var codecs = map[string]kgo.CompressionCodec{
	"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
	"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

// parseArgs reads the flags with loadgen.ParseSeed (the Java driver's
// rules), --outcomes and the transactional mode's (txnmode); a usage error
// is a setup error.
func parseArgs(argv []string) (*config, error) {
	txn, argv, err := txnmode.Split(argv, setupErrPrefix)
	if err != nil {
		return nil, &setupError{err.Error()}
	}
	c, err := loadgen.ParseSeed(argv, map[string]string{"outcomes": ""}, setupErrPrefix, usage)
	if err != nil {
		return nil, &setupError{err.Error()}
	}
	if txn != nil {
		if err := txn.Check(c, setupErrPrefix); err != nil {
			return nil, &setupError{err.Error()}
		}
	}
	return &config{txn: txn,
		bootstrap: c.Bootstrap, topic: c.Topic, compression: c.Compression,
		partitions: c.Partitions, replicationFactor: c.ReplicationFactor, records: c.Records, valueBytes: c.ValueBytes, keys: c.Keys,
		deliveryTimeout: c.DeliveryTimeout, requestTimeout: c.RequestTimeout,
		codec: codecs[c.Compression], outcomes: c.Extra["outcomes"], shape: c,
	}, nil
}

// batchOpts are kgo's settings for --batch-records (drivers/WORKLOADS.md).
//
// default: ProducerLinger(0) and kgo's default ProducerBatchMaxBytes
// (1,000,012 bytes): a batch is cut when the partition may send, so
// records that arrive while its requests are in flight share a batch.
//
// one: kgo has no cap on records per batch, only on bytes
// (ProducerBatchMaxBytes, the uncompressed size; StreamingCompression, which
// would bound compressed bytes, is off). The cap is set for the topic to
// oneRecordBatchBytes, which holds the largest of the run's records alone
// and no two: ProducerBatchMaxBytes itself refuses less than 512 bytes, which
// holds several small records, so the per-topic ProducerBatchMaxBytesFn is
// used. kgo validates only its answer for the empty topic; its documentation
// says an answer outside [512, 1<<30] makes produces to the topic fail, but
// v1.22.3 only compares each batch with it (sink.go, tryBuffer), and
// TestShapes sees one record per batch and no failure: recheck on an
// upgrade.
//
// many: ProducerLinger(loadgen.ManyLinger) and
// ProducerBatchMaxBytes(loadgen.ManyBatchBytes).
func batchOpts(cfg *config) []kgo.Opt {
	switch cfg.shape.BatchRecords {
	case loadgen.BatchOne:
		limit := oneRecordBatchBytes(cfg)
		return []kgo.Opt{kgo.ProducerLinger(0), kgo.ProducerBatchMaxBytesFn(func(topic string) int32 {
			if topic == cfg.topic {
				return limit
			}
			return 1000012 // kgo's default
		})}
	case loadgen.BatchMany:
		return []kgo.Opt{kgo.ProducerLinger(loadgen.ManyLinger), kgo.ProducerBatchMaxBytes(loadgen.ManyBatchBytes)}
	}
	return []kgo.Opt{kgo.ProducerLinger(0)}
}

// oneRecordBatchBytes is a batch size that holds any one of the run's
// records and no two: an empty batch's wire size as kgo counts it
// (recordBatchOverhead, sink.go: 61 bytes) and the largest record's (the
// longest key, --value-bytes, the kcheck-id header of the highest record
// number), with 8 bytes to spare. Any two records are larger by far (each
// is more than 20 bytes).
func oneRecordBatchBytes(cfg *config) int32 {
	const batchOverhead = 61
	keyLen := -1 // no key: a length of -1
	if cfg.keys > 0 {
		keyLen = len("key-" + strconv.Itoa(cfg.keys-1))
	}
	idLen := len(strconv.Itoa(max(cfg.records-1, 0)))
	body := 1 + 1 + 1 + // attributes, timestamp delta 0, offset delta 0
		varintLen(keyLen) + max(keyLen, 0) +
		varintLen(cfg.valueBytes) + cfg.valueBytes +
		1 + // one header
		varintLen(len(loadgen.SeedIDHeader)) + len(loadgen.SeedIDHeader) + varintLen(idLen) + idLen
	return int32(batchOverhead + varintLen(body) + body + 8)
}

// varintLen is the length of n as a zig-zag varint, as records encode
// lengths.
func varintLen(n int) int {
	u := uint64(n<<1) ^ uint64(n>>63)
	l := 1
	for ; u >= 0x80; u >>= 7 {
		l++
	}
	return l
}

// kgoVersion is the version of the kgo module this binary was built with.
func kgoVersion() string { return loadgen.ModuleVersion(kgoModulePath) }

// errorName names a failed record's error for failed_errors: Kafka's error
// code name, or kgo's error.
func errorName(err error) string {
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke):
		return ke.Message
	case errors.Is(err, kgo.ErrRecordTimeout):
		return "kgo.ErrRecordTimeout"
	case errors.Is(err, kgo.ErrRecordRetries):
		return "kgo.ErrRecordRetries"
	case errors.Is(err, kgo.ErrClientClosed):
		return "kgo.ErrClientClosed"
	case errors.Is(err, kgo.ErrMaxBuffered):
		return "kgo.ErrMaxBuffered"
	case errors.Is(err, context.DeadlineExceeded):
		return "context.DeadlineExceeded"
	case errors.Is(err, context.Canceled):
		return "context.Canceled"
	}
	return err.Error()
}

// errorCode is the Kafka error code a failed record's error carries (a
// *kerr.Error, also inside kgo's ErrRecordTimeout with the last error of
// its retries), or 0 for an error of kgo's own.
func errorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return 0
}

// run is the experiment; out (nil: none) gets each record's outcome.
func run(ctx context.Context, cfg *config, out *outcomes.Writer) (*result, error) {
	seeds := strings.Split(cfg.bootstrap, ",")
	if err := createTopic(ctx, seeds, cfg); err != nil {
		return nil, err
	}

	// Produce. kgo is idempotent by default, which requires acks=all and
	// allows five produce requests in flight per broker, as the Java
	// client's max.in.flight.requests.per.connection=5:
	// MaxProduceRequestsInflightPerBroker applies only with idempotence off
	// (kgo refuses it with idempotence on), so it is not passed here.
	//
	// Java's request.timeout.ms (cfg.requestTimeout) is both the timeout
	// field of each ProduceRequest (how long the broker may wait for the
	// replicas) and how long the client waits for any response before it
	// gives up on the connection. kgo splits it in two:
	// ProduceRequestTimeout sets the ProduceRequest's timeout field, and
	// RequestTimeoutOverhead is how long the client waits for a response on
	// top of a request's timeout field (for requests without one, such as
	// Metadata and InitProducerID, the whole wait). Both are set to the
	// request timeout: the broker gets the same timeout as from Java, other
	// requests the same client-side wait, and a produce response is waited
	// for at most twice as long as Java would.
	//
	// RecordDeliveryTimeout is delivery.timeout.ms; kgo enforces it only
	// where failing a record keeps the idempotent sequence numbers valid (not
	// while a request with it is in flight), hence the bounded wait below.
	// StickyKeyPartitioner(nil) hashes keys with murmur2 like Java's default
	// partitioner (the records all have keys unless --keys 0).
	//
	// MetadataMinAge is the one kgo default changed: after a
	// NOT_LEADER_OR_FOLLOWER without a usable leader hint (a new topic's
	// partitions not ready yet), kgo parks the partition until its next
	// metadata refresh, at least MetadataMinAge (5 s by default) after the
	// last (sink.go handleRetryBatches, metadata.go updateMetadataLoop), so
	// the workload's 5 s delivery timeout failed whole partitions in the
	// matrix's Baseline. 250 ms, where kgo's own retry backoff starts, keeps
	// the refresh inside the timeout (drivers/WORKLOADS.md).
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID("kcheck-kgo"),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(cfg.codec),
		kgo.RecordDeliveryTimeout(cfg.deliveryTimeout),
		kgo.ProduceRequestTimeout(max(cfg.requestTimeout, 100*time.Millisecond)),
		kgo.RequestTimeoutOverhead(max(cfg.requestTimeout, 100*time.Millisecond)),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.MetadataMinAge(250 * time.Millisecond),
		kgo.MaxBufferedRecords(max(cfg.records, 10000)),
		kgo.DisableClientMetrics(),
	}
	opts = append(opts, batchOpts(cfg)...) // the linger and batch size of --batch-records
	if cfg.txn != nil {
		// kgo's own transactional API, at its defaults (the transaction
		// timeout 40 s): txn.go.
		opts = append(opts, kgo.TransactionalID(cfg.txn.ID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, setupf("starting the producer: %v", err)
	}

	w := loadgen.NewWorkload(cfg.valueBytes, cfg.keys) // letters: compressible, like text
	keyOf := make([]int32, cfg.records)
	acked := make([]bool, cfg.records)
	answered := make([]bool, cfg.records)
	res := &result{SeedResult: &loadgen.SeedResult{Client: "kgo", Version: kgoVersion(), FailedErrors: map[string]int{}}}
	if cfg.shape.BatchRecords != loadgen.BatchDefault {
		res.BatchRecords = cfg.shape.BatchRecords
	}
	if cfg.txn != nil {
		err := produceTxn(ctx, cl, cfg, out, w, keyOf, acked, res)
		poll.CloseWithin(cl, closeTimeout)
		if err != nil {
			return nil, err
		}
		if err := readBack(ctx, seeds, cfg, keyOf, res.SeedResult, acked); err != nil {
			return nil, err
		}
		return res, nil
	}
	idle := loadgen.NewIdlePhase(cfg.shape)

	var (
		mu     sync.Mutex
		open   = cfg.records
		closed bool // past the wait: later callbacks are neither counted nor written
		done   = make(chan struct{})
	)
	if open == 0 {
		close(done)
	}
	for n := 0; n < cfg.records; n++ {
		idle.Before(n, cfg.deliveryTimeout+grace)
		var key []byte
		if keyOf[n] = w.NextKeyIndex(); keyOf[n] >= 0 {
			key = w.Keys[keyOf[n]]
		}
		// Partition stays -1 for a record failed before kgo partitioned it
		// (the partitioner sets it); kgo reports Offset -1 for one
		// acknowledged without an offset.
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
				if res.FirstError == "" {
					res.FirstError = err.Error()
				}
				res.FailedErrors[errorName(err)]++
				out.Failed(n, r.Partition, err.Error(), errorCode(err))
			}
			answered[n] = true
			idle.Answered(n)
			if open--; open == 0 {
				close(done)
			}
		})
		res.Sent++
	}
	idle.Before(cfg.records, cfg.deliveryTimeout+grace) // an idle phase after the last record
	res.IdleResult = idle.Result()
	// ProducerLinger(0) sends at once; a bounded wait instead of Flush.
	loadgen.WaitAtMost(done, cfg.deliveryTimeout+grace)
	mu.Lock()
	closed = true
	res.Unanswered(open, grace)
	for n, a := range answered {
		if !a {
			out.None(n)
		}
	}
	mu.Unlock()
	poll.CloseWithin(cl, closeTimeout)

	// Read every partition back from the beginning up to its end offset.
	if err := readBack(ctx, seeds, cfg, keyOf, res.SeedResult, acked); err != nil {
		return nil, err
	}
	return res, nil
}

// createTopic checks that a broker answers (a bounded wait), creates the
// topic with a CreateTopics request and waits until every partition has a
// leader, as kcheck run does; then the produce starts at once.
func createTopic(ctx context.Context, seeds []string, cfg *config) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.ClientID("kcheck-kgo-admin"),
		kgo.DialTimeout(5*time.Second),
		kgo.RetryTimeout(10*time.Second),
		kgo.DisableClientMetrics(),
	)
	if err != nil {
		return setupf("bad --bootstrap %q: %v", cfg.bootstrap, err)
	}
	defer poll.CloseWithin(cl, closeTimeout)

	// Ping tries every seed once; retry with a backoff up to reachTimeout.
	deadline := time.Now().Add(reachTimeout)
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = cl.Ping(pctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().Add(backoff).After(deadline) {
			return setupf("no broker answers at %s after %d s: %v", cfg.bootstrap, int(reachTimeout/time.Second), err)
		}
		time.Sleep(backoff)
	}

	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = int32(createTimeout / time.Millisecond)
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic = cfg.topic
	t.NumPartitions = int32(cfg.partitions)
	t.ReplicationFactor = cfg.replicationFactor // -1 (the brokers' default) needs CreateTopics v4, which kgo negotiates with Kafka 2.4 and later
	req.Topics = append(req.Topics, t)
	cctx, cancel := context.WithTimeout(ctx, createTimeout)
	resp, err := req.RequestWith(cctx, cl)
	cancel()
	if err != nil {
		return setupf("creating topic %q at %s: %v", cfg.topic, cfg.bootstrap, err)
	}
	if len(resp.Topics) != 1 {
		return setupf("creating topic %q at %s: %d topics in the response", cfg.topic, cfg.bootstrap, len(resp.Topics))
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		if errors.Is(err, kerr.TopicAlreadyExists) {
			return setupf("topic %q already exists: pick a new --topic", cfg.topic)
		}
		msg := err.Error()
		if m := resp.Topics[0].ErrorMessage; m != nil && *m != "" {
			msg += ": " + *m
		}
		return setupf("creating topic %q at %s: %s", cfg.topic, cfg.bootstrap, msg)
	}

	deadline = time.Now().Add(leaderTimeout)
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		if led, err := leaders(ctx, cl, cfg.topic); err == nil && led == cfg.partitions {
			return nil
		}
		if time.Now().After(deadline) {
			return setupf("topic %q: partitions have no leaders after %d s", cfg.topic, int(leaderTimeout/time.Second))
		}
		time.Sleep(backoff)
	}
}

// leaders returns how many of topic's partitions have a leader.
func leaders(ctx context.Context, cl *kgo.Client, topic string) (int, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(mctx, cl)
	if err != nil {
		return 0, err
	}
	led := 0
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return 0, err
		}
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 && p.Leader >= 0 {
				led++
			}
		}
	}
	return led, nil
}

// readBack reads every partition from its start to its end offset and
// counts the records as the Java driver does (kgoread).
func readBack(ctx context.Context, seeds []string, cfg *config, keyOf []int32, res *loadgen.SeedResult, acked []bool) error {
	if err := kgoread.Topic(ctx, seeds, "kcheck-kgo-readback", cfg.topic, cfg.partitions, keyOf, acked, res, readTimeout); err != nil {
		return setupf("%v", err)
	}
	return nil
}
