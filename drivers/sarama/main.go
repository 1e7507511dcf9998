// Command kcheck-sarama-driver runs the seed's experiment (KAFKA-14359) with
// IBM/sarama's AsyncProducer, which kcheck did not write: create a new topic,
// produce to it at once with idempotence on, read every partition back and
// count what was lost, duplicated or reordered. It takes the same flags and
// prints the same one line of JSON as drivers/java and drivers/kgo (plus the
// keys that say where sarama differs: see producerConfig), so a script can
// run any of them: exit 0 clean, 1 anomalies or failed sends, 2 setup errors
// (with a message on stderr). --outcomes FILE (or $KCHECK_OUTCOMES) also
// writes what sarama reported for each record (drivers/OUTCOMES.md). With
// --transactional it produces in transactions with sarama's own
// transactional API (txn.go).
//
//	go build -o bin/kcheck-sarama-driver ./drivers/sarama
//	bin/kcheck-sarama-driver --bootstrap HOST:PORT --topic T [--partitions N] [--replication-factor N] ... [--outcomes FILE]
//	bin/kcheck-sarama-driver ... --transactional [--txn-records N] [--txn-abort-every K] [--transactional-id ID]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/drivers/txnmode"
	"github.com/kcheck/kcheck/tracer/outcomes"
)

const (
	grace = 30 * time.Second // past the delivery timeout

	// Bounds on the setup steps, like the Java and kgo drivers'.
	reachTimeout  = 20 * time.Second // a broker must answer within this
	createTimeout = 30 * time.Second
	leaderTimeout = 30 * time.Second
	readTimeout   = 120 * time.Second
	closeTimeout  = 5 * time.Second

	saramaModulePath = "github.com/IBM/sarama"
	setupErrPrefix   = "sarama driver: "
	usage            = loadgen.SeedUsage + " [--outcomes FILE] " + txnmode.Usage

	// retryBackoff is Producer.Retry.Backoff: sarama's default, and the
	// Java client's retry.backoff.ms.
	retryBackoff = 100 * time.Millisecond

	// differs says where this driver's producer is not the Java driver's.
	differs = "one produce request in flight per broker (Net.MaxOpenRequests=1, sarama's rule for idempotence; " +
		"Java and kgo: 5); no delivery timeout: Producer.Retry.Max retries at Producer.Retry.Backoff stand for it; " +
		"records without a key go to a random partition (Java: sticky)"
)

// kafkaVersion is Config.Version: a cap on the protocol versions, each API
// negotiated down to the broker's with ApiVersions (api_versions.go,
// restrictApiVersion). 4.1 is the oldest broker the experiments run.
var kafkaVersion = sarama.V4_1_0_0

// setupError is an error of the setup: exit 2 with its message.
type setupError struct{ msg string }

func (e *setupError) Error() string { return e.msg }

func setupf(format string, a ...any) error {
	return &setupError{setupErrPrefix + fmt.Sprintf(format, a...)}
}

// config is the command line.
type config struct {
	loadgen.SeedConfig
	codec    sarama.CompressionCodec
	outcomes string          // --outcomes FILE; "": $KCHECK_OUTCOMES, or none
	txn      *txnmode.Config // --transactional; nil: idempotent
}

// result is the JSON line: the Java driver's keys in its order, then where
// sarama's producer differs.
type result struct {
	loadgen.SeedResult

	MaxInFlight    int    `json:"max_in_flight"`    // Net.MaxOpenRequests
	RetryMax       int    `json:"retry_max"`        // Producer.Retry.Max, for the delivery timeout
	RetryBackoffMs int64  `json:"retry_backoff_ms"` // Producer.Retry.Backoff
	KafkaVersion   string `json:"kafka_version"`    // Config.Version
	Differs        string `json:"differs"`

	*txnmode.Result // --transactional's keys; none without it
}

// Clean reports whether nothing failed, was lost, duplicated, reordered or
// foreign, and every transaction ended as asked: exit 0.
func (r *result) Clean() bool { return r.SeedResult.Clean() && r.Result.Clean() }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: 0 clean, 1 anomalies or failed sends, 2 setup errors.
func run(argv []string, stdout, stderr io.Writer) int {
	t0 := time.Now()
	die := func(msg string) int {
		fmt.Fprintln(stderr, msg)
		return 2
	}
	cfg, err := parseArgs(argv)
	if err != nil {
		return die(err.Error())
	}
	out, err := outcomes.Create(outcomes.Path(cfg.outcomes))
	if err != nil {
		return die(setupErrPrefix + "--outcomes: " + err.Error())
	}
	res, err := experiment(context.Background(), cfg, out)
	if err != nil {
		out.Close()
		return die(err.Error())
	}
	if err := out.Close(); err != nil {
		return die(setupErrPrefix + "--outcomes: " + err.Error())
	}
	res.Ms = time.Since(t0).Milliseconds()
	line, err := loadgen.EncodeLine(res)
	if err != nil {
		return die(setupErrPrefix + err.Error())
	}
	stdout.Write(line)
	if !res.Clean() {
		return 1
	}
	return 0
}

// codecs are the compression.type values the Java client takes.
var codecs = map[string]sarama.CompressionCodec{
	"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP, "snappy": sarama.CompressionSnappy,
	"lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD,
}

// parseArgs reads the flags with loadgen.ParseSeed (the Java driver's
// rules), --outcomes and the transactional mode's (txnmode).
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
	return &config{SeedConfig: *c, codec: codecs[c.Compression], outcomes: c.Extra["outcomes"], txn: txn}, nil
}

// producerConfig maps the flags onto sarama's producer and returns it with
// Producer.Retry.Max.
//
// Idempotence: sarama's Config.Validate (config.go) refuses
// Producer.Idempotent unless Version >= V0_11_0_0, Producer.Retry.Max >= 1,
// Producer.RequiredAcks == WaitForAll and Net.MaxOpenRequests <= 1. So one
// request is in flight per broker connection, the most sarama allows with
// idempotence (the Java and kgo drivers: 5); besides, its AsyncProducer's
// partitionMuter (async_producer.go) keeps at most one batch in flight per
// partition whatever the setting.
//
// Timeouts: Java's request.timeout.ms (--request-timeout-ms) is both the
// ProduceRequest's timeout field and how long the client waits for a
// response; sarama's Producer.Timeout is the field and Net.ReadTimeout the
// wait (for every request of the producer's client), so both are set to it.
// Sarama has no delivery.timeout.ms: a record is failed after
// Producer.Retry.Max retries, each after Producer.Retry.Backoff. Retry.Max is
// the delivery timeout over the backoff, so a record whose attempts are
// answered at once with a retriable error (NOT_LEADER_OR_FOLLOWER on a new
// topic, the seed's trigger) gives up after about the delivery timeout; one
// whose attempts time out retries for up to Retry.Max request timeouts,
// longer than the bounded wait, and is counted as having no callback.
//
// Partitioning: NewMurmur2Partitioner hashes keys as the Java client does;
// records without a key (--keys 0) go to a random partition, where Java's
// and kgo's are sticky.
//
// Batching (--batch-records, drivers/WORKLOADS.md): sarama has no cap on a
// batch's records, and its Producer.Flush settings are per request (all the
// partitions a broker leads), not per batch.
//   - default: Producer.Flush is left at zero: each broker's request is sent
//     as soon as the one before it is answered (linger.ms=0), with every
//     record buffered meanwhile; Producer.MaxMessageBytes (1,000,000, a
//     partition's batch) is sarama's default.
//   - one: Flush.MaxMessages=1, at most one record per request, so one per
//     batch (and, with one request in flight per broker, one record in
//     flight per broker).
//   - many: Flush.Frequency=loadgen.ManyLinger (a request waits that long
//     for more records, linger.ms) and Flush.Bytes=loadgen.ManyBatchBytes
//     (or until that much is buffered, batch.size; for the whole request).
func producerConfig(cfg *config) (*sarama.Config, int) {
	retryMax := max(1, int(cfg.DeliveryTimeout/retryBackoff))
	c := sarama.NewConfig()
	c.ClientID = "kcheck-sarama"
	c.Version = kafkaVersion
	c.Producer.Idempotent = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Net.MaxOpenRequests = 1
	c.Producer.Retry.Max = retryMax
	c.Producer.Retry.Backoff = retryBackoff
	c.Producer.Timeout = cfg.RequestTimeout
	c.Net.ReadTimeout = cfg.RequestTimeout
	c.Producer.Compression = cfg.codec
	c.Producer.Partitioner = sarama.NewMurmur2Partitioner
	c.Producer.Return.Successes = true
	c.Producer.Return.Errors = true
	c.Metadata.AllowAutoTopicCreation = false
	if cfg.txn != nil {
		// sarama's own transactions, at its defaults (Transaction.Timeout
		// 1 min, Transaction.Retry 50 at 100 ms): txn.go.
		c.Producer.Transaction.ID = cfg.txn.ID
	}
	switch cfg.BatchRecords {
	case loadgen.BatchOne:
		c.Producer.Flush.MaxMessages = 1
	case loadgen.BatchMany:
		c.Producer.Flush.Frequency = loadgen.ManyLinger
		c.Producer.Flush.Bytes = loadgen.ManyBatchBytes
	}
	return c, retryMax
}

// errorName names a failed record's error for failed_errors: Kafka's error
// code name (kerr's, as the kgo driver's), or sarama's error.
func errorName(err error) string {
	var ke sarama.KError
	if errors.As(err, &ke) {
		var e *kerr.Error
		if errors.As(kerr.ErrorForCode(int16(ke)), &e) {
			return e.Message
		}
		return fmt.Sprintf("kafka error %d", int16(ke))
	}
	for _, s := range []struct {
		err  error
		name string
	}{
		{sarama.ErrShuttingDown, "sarama.ErrShuttingDown"},
		{sarama.ErrOutOfBrokers, "sarama.ErrOutOfBrokers"},
		{sarama.ErrIncompleteResponse, "sarama.ErrIncompleteResponse"},
		{sarama.ErrProducerRetryBufferOverflow, "sarama.ErrProducerRetryBufferOverflow"},
		{sarama.ErrNotConnected, "sarama.ErrNotConnected"},
		{sarama.ErrBrokerNotFound, "sarama.ErrBrokerNotFound"},
		{sarama.ErrClosedClient, "sarama.ErrClosedClient"},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	var ce sarama.ConfigurationError
	if errors.As(err, &ce) {
		return "sarama.ConfigurationError"
	}
	return err.Error()
}

// errorCode is the Kafka error code a failed record's error carries (a
// sarama.KError, the code of the broker's answer), or 0 for an error of
// sarama's own.
func errorCode(err error) int16 {
	var ke sarama.KError
	if errors.As(err, &ke) {
		return int16(ke)
	}
	return 0
}

func experiment(ctx context.Context, cfg *config, out *outcomes.Writer) (*result, error) {
	seeds := strings.Split(cfg.Bootstrap, ",")
	if err := createTopic(seeds, cfg); err != nil {
		return nil, err
	}

	pc, retryMax := producerConfig(cfg)
	producer, err := sarama.NewAsyncProducer(seeds, pc)
	if err != nil {
		if cfg.txn != nil {
			// NewAsyncProducer asks for the transactional producer id
			// (InitProducerId) itself: a broker that refuses it refuses
			// transactions.
			return nil, setupf("could not run transactions: starting the producer: %v", err)
		}
		return nil, setupf("starting the producer: %v", err)
	}
	res := &result{SeedResult: loadgen.SeedResult{Client: "sarama", Version: loadgen.ModuleVersion(saramaModulePath), FailedErrors: map[string]int{}},
		MaxInFlight: pc.Net.MaxOpenRequests, RetryMax: retryMax, RetryBackoffMs: retryBackoff.Milliseconds(),
		KafkaVersion: kafkaVersion.String(), Differs: differs}
	if cfg.BatchRecords != loadgen.BatchDefault {
		res.BatchRecords = cfg.BatchRecords
	}
	idle := loadgen.NewIdlePhase(&cfg.SeedConfig)

	w := loadgen.NewWorkload(cfg.ValueBytes, cfg.Keys) // letters: compressible, like text
	keyOf := make([]int32, cfg.Records)
	rep := newReports(cfg.Records, res, out, idle)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		for m := range producer.Successes() {
			rep.report(m.Metadata.(int), m.Partition, m.Offset, nil)
		}
	}()
	go func() {
		defer readers.Done()
		for pe := range producer.Errors() {
			rep.report(pe.Msg.Metadata.(int), pe.Msg.Partition, 0, pe.Err)
		}
	}()
	// send produces record n.
	send := func(n int) {
		// Partition and Offset stay -1 in a report if sarama never set them:
		// a record failed before it had a partition, or acknowledged by a
		// DUPLICATE_SEQUENCE_NUMBER answer, which carries no offset.
		m := &sarama.ProducerMessage{
			Topic:     cfg.Topic,
			Value:     sarama.ByteEncoder(loadgen.SeedValue(w.Value, n)),
			Headers:   []sarama.RecordHeader{{Key: []byte(loadgen.SeedIDHeader), Value: []byte(strconv.Itoa(n))}},
			Metadata:  n,
			Partition: -1,
			Offset:    -1,
		}
		if keyOf[n] = w.NextKeyIndex(); keyOf[n] >= 0 {
			m.Key = sarama.ByteEncoder(w.Keys[keyOf[n]]) // a nil Key, not a nil ByteEncoder, without keys
		}
		producer.Input() <- m
		res.Sent++
	}

	var txnErr error
	if cfg.txn != nil {
		txnErr = produceTxn(producer, cfg, out, rep, send, res)
	} else {
		done := rep.expect(cfg.Records)
		for n := 0; n < cfg.Records; n++ {
			idle.Before(n, cfg.DeliveryTimeout+grace)
			send(n)
		}
		idle.Before(cfg.Records, cfg.DeliveryTimeout+grace) // an idle phase after the last record
		res.IdleResult = idle.Result()
		// A bounded wait instead of Close.
		loadgen.WaitAtMost(done, cfg.DeliveryTimeout+grace)
		res.Unanswered(rep.cutOff(0, cfg.Records), grace)
	}
	// AsyncClose waits for every record in flight; the readers drain the
	// channels until sarama closes them. At most closeTimeout, as the Java
	// driver's producer.close(5 s).
	producer.AsyncClose()
	within(closeTimeout, readers.Wait)
	if txnErr != nil {
		return nil, txnErr
	}

	read := readBack
	if cfg.txn != nil {
		read = readBackTxn
	}
	if err := read(seeds, cfg, keyOf, rep.acked, res); err != nil {
		return nil, err
	}
	return res, nil
}

// reports counts and writes the records' delivery reports, which arrive on
// sarama's channels, and lets the driver wait for those of a range of
// records.
type reports struct {
	mu       sync.Mutex
	res      *result
	out      *outcomes.Writer
	idle     *loadgen.IdlePhase
	acked    []bool // by record
	answered []bool
	closed   []bool        // past its wait: a later report is neither counted nor written
	open     int           // records expected that have no report yet
	done     chan struct{} // closed when open reaches 0
	cannot   error         // the first report that says the broker cannot run transactions (txnmode.CannotRun)
}

func newReports(records int, res *result, out *outcomes.Writer, idle *loadgen.IdlePhase) *reports {
	return &reports{res: res, out: out, idle: idle, acked: make([]bool, records), answered: make([]bool, records), closed: make([]bool, records)}
}

// expect returns a channel closed once the next k records are each
// reported (at once for none).
func (r *reports) expect(k int) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.open, r.done = k, make(chan struct{})
	if k == 0 {
		close(r.done)
	}
	return r.done
}

// report counts one delivery report of record n.
func (r *reports) report(n int, p int32, off int64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed[n] {
		return
	}
	if r.cannot == nil && err != nil && txnmode.CannotRun(errorCode(err)) {
		r.cannot = err
	}
	res := r.res
	if err == nil {
		r.acked[n] = true
		res.Acked++
		r.out.Delivered(n, p, off)
	} else {
		res.Failed++
		if res.FirstError == "" {
			res.FirstError = err.Error()
		}
		res.FailedErrors[errorName(err)]++
		r.out.Failed(n, p, err.Error(), errorCode(err))
	}
	if !r.answered[n] {
		r.answered[n] = true
		r.idle.Answered(n)
		if r.open--; r.open == 0 {
			close(r.done)
		}
	}
}

// cutOff ends the wait for records from to to-1: it writes a none line for
// each without a report, and returns how many.
func (r *reports) cutOff(from, to int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	none := 0
	for n := from; n < to; n++ {
		r.closed[n] = true
		if !r.answered[n] {
			r.out.None(n)
			none++
		}
	}
	return none
}

// within runs f, waiting at most d for it.
func within(d time.Duration, f func()) {
	finished := make(chan struct{})
	go func() {
		f()
		close(finished)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C:
	}
}

// setupConfig is the configuration of the clients that create the topic and
// read it back: sarama's defaults, bounded dials.
func setupConfig(clientID string) *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = clientID
	c.Version = kafkaVersion
	c.Net.DialTimeout = 5 * time.Second
	c.Admin.Timeout = createTimeout
	c.Metadata.AllowAutoTopicCreation = false
	c.Consumer.Return.Errors = true
	return c
}

// createTopic waits until a broker answers (a bounded wait), creates the
// topic with sarama's ClusterAdmin and waits until every partition has a
// leader, as kcheck run does; then the produce starts at once.
func createTopic(seeds []string, cfg *config) error {
	var (
		client sarama.Client
		err    error
	)
	deadline := time.Now().Add(reachTimeout)
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		if client, err = sarama.NewClient(seeds, setupConfig("kcheck-sarama-admin")); err == nil {
			break
		}
		if time.Now().Add(backoff).After(deadline) {
			return setupf("no broker answers at %s after %d s: %v", cfg.Bootstrap, int(reachTimeout/time.Second), err)
		}
		time.Sleep(backoff)
	}
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		client.Close()
		return setupf("the cluster's controller at %s: %v", cfg.Bootstrap, err)
	}
	defer within(closeTimeout, func() { admin.Close() })

	// ReplicationFactor -1 (the brokers' default) needs CreateTopics v4:
	// sarama sends v7 with Version at least V2_8_0_0 (kafkaVersion).
	detail := &sarama.TopicDetail{NumPartitions: int32(cfg.Partitions), ReplicationFactor: cfg.ReplicationFactor}
	if err := admin.CreateTopic(cfg.Topic, detail, false); err != nil {
		if errors.Is(err, sarama.ErrTopicAlreadyExists) {
			return setupf("topic %q already exists: pick a new --topic", cfg.Topic)
		}
		return setupf("creating topic %q at %s: %v", cfg.Topic, cfg.Bootstrap, err)
	}

	deadline = time.Now().Add(leaderTimeout)
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		if led, err := leaders(admin, cfg.Topic); err == nil && led == cfg.Partitions {
			return nil
		}
		if time.Now().After(deadline) {
			return setupf("topic %q: partitions have no leaders after %d s", cfg.Topic, int(leaderTimeout/time.Second))
		}
		time.Sleep(backoff)
	}
}

// leaders returns how many of topic's partitions have a leader.
func leaders(admin sarama.ClusterAdmin, topic string) (int, error) {
	md, err := admin.DescribeTopics([]string{topic})
	if err != nil {
		return 0, err
	}
	led := 0
	for _, t := range md {
		if t.Err != sarama.ErrNoError {
			return 0, t.Err
		}
		for _, p := range t.Partitions {
			if p.Err == sarama.ErrNoError && p.Leader >= 0 {
				led++
			}
		}
	}
	return led, nil
}

// readBack reads every partition with sarama's consumer from its start to
// its end offset (the high watermark), all partitions at once, and counts
// the records as the Java driver does (loadgen.Tally), partition by
// partition in offset order.
//
// At once, not one partition after another: sarama's consumer gathers new
// partition consumers for 100 ms (partitionConsumersBatchTimeout,
// consumer.go) before it fetches for them, and a closed one is let go only
// when the next fetch answers, which at the end of the partition is after
// Consumer.MaxWaitTime (500 ms): one partition after another took about
// 0.6 s each, some 38 s of the run for 64 partitions, against 0.7 s
// this way. Only the read-back changes; the producer under test does not.
func readBack(seeds []string, cfg *config, keyOf []int32, acked []bool, res *result) error {
	client, err := sarama.NewClient(seeds, setupConfig("kcheck-sarama-readback"))
	if err != nil {
		return setupf("starting the read-back consumer: %v", err)
	}
	defer within(closeTimeout, func() { client.Close() })
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return setupf("starting the read-back consumer: %v", err)
	}
	defer within(closeTimeout, func() { consumer.Close() })

	deadline := make(chan struct{})
	timer := time.AfterFunc(readTimeout, func() { close(deadline) })
	defer timer.Stop()
	values := make([][][]byte, cfg.Partitions) // partition p's values, in offset order
	errs := make([]error, cfg.Partitions)
	var readers sync.WaitGroup
	for p := range int32(cfg.Partitions) {
		end, err := endOffset(client, cfg.Topic, p)
		if err != nil {
			return setupf("read-back: end offset of %s[%d]: %v", cfg.Topic, p, err)
		}
		if end <= 0 {
			continue
		}
		pc, err := consumer.ConsumePartition(cfg.Topic, p, sarama.OffsetOldest)
		if err != nil {
			readers.Wait()
			return setupf("read-back: %s[%d]: %v", cfg.Topic, p, err)
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			values[p], errs[p] = readPartition(pc, end, deadline)
			within(closeTimeout, func() { pc.Close() }) // Close drains the channels
		}()
	}
	readers.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
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

// endOffset is partition p's high watermark. A cluster just healed may not
// know it yet (a new leader whose high watermark has not caught up answers
// OFFSET_NOT_AVAILABLE; a leader still moving, NOT_LEADER_OR_FOLLOWER or
// LEADER_NOT_AVAILABLE): it asks again, with a backoff, for up to
// reachTimeout, as the kgo driver does. The read-back is not the client
// under test.
func endOffset(client sarama.Client, topic string, p int32) (int64, error) {
	deadline := time.Now().Add(reachTimeout)
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		switch {
		case err == nil:
			return end, nil
		case !errors.Is(err, sarama.ErrOffsetNotAvailable) && !errors.Is(err, sarama.ErrNotLeaderForPartition) && !errors.Is(err, sarama.ErrLeaderNotAvailable):
			return 0, err
		case time.Now().Add(backoff).After(deadline):
			return 0, fmt.Errorf("%w (still after %d s)", err, int(reachTimeout/time.Second))
		}
		time.Sleep(backoff)
		_ = client.RefreshMetadata(topic) // a failed refresh shows in the next GetOffset
	}
}

// readPartition returns a partition's values up to offset end, in offset
// order. A Kafka error that is not retriable ends it; sarama retries the
// others itself.
func readPartition(pc sarama.PartitionConsumer, end int64, deadline <-chan struct{}) ([][]byte, error) {
	var values [][]byte
	for next := int64(-1); next < end; {
		select {
		case m := <-pc.Messages():
			next = m.Offset + 1
			values = append(values, m.Value)
		case ce := <-pc.Errors():
			var ke sarama.KError
			if errors.As(ce.Err, &ke) && !kerr.IsRetriable(kerr.ErrorForCode(int16(ke))) {
				return nil, setupf("read-back: %s[%d]: %v", ce.Topic, ce.Partition, ce.Err)
			}
		case <-deadline:
			return nil, setupf("read-back did not reach the end offsets in %d s", int(readTimeout/time.Second))
		}
	}
	return values, nil
}
