// The throughput mode of the kgo driver (--bench): no topic creation, no
// read-back; a warm-up, then records as fast as kgo takes them (or paced at
// --rate), records/s and produce-to-ack latency percentiles in one line of
// JSON. The flags, loop and JSON are bench/loadgen's, shared with kcheck's
// own producer (bench/cmd/produce); bench/run.sh runs both.

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/tracer/poll"
)

// kgoSender is kgo as a loadgen.Sender. The record's Timestamp carries the
// time Send was called (kgo keeps a timestamp that is set), so one promise
// serves every record.
type kgoSender struct {
	cl      *kgo.Client
	promise func(*kgo.Record, error)
}

func (s *kgoSender) Send(ctx context.Context, topic string, key, value []byte, start time.Time) {
	s.cl.Produce(ctx, &kgo.Record{Topic: topic, Key: key, Value: value, Timestamp: start}, s.promise)
}

func (s *kgoSender) Close() { poll.CloseWithin(s.cl, closeTimeout) }

// kgoStats counts, through kgo's hooks, what bench/cmd/produce's
// client_stats count for our producer: produce requests written and
// batches acknowledged (kgo calls its batch hook once a batch is written
// successfully), so that the two clients' requests can be compared.
type kgoStats struct {
	requests, batches, records atomic.Int64
}

func (k *kgoStats) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 0 && err == nil { // Produce
		k.requests.Add(1)
	}
}

func (k *kgoStats) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	k.batches.Add(1)
	k.records.Add(int64(m.NumRecords))
}

// json is client_stats: the same names as producer.Stats where they mean
// the same thing.
func (k *kgoStats) json() map[string]int64 {
	return map[string]int64{"Requests": k.requests.Load(), "Batches": k.batches.Load(), "Records": k.records.Load()}
}

// benchMain runs the throughput mode and exits: 0 every record acknowledged,
// 1 some failed, 2 bad usage or setup errors.
func benchMain(argv []string) {
	t0 := time.Now()
	cfg, err := loadgen.Parse(argv, nil, setupErrPrefix)
	if err != nil {
		die(err.Error())
	}
	res, err := runBench(cfg, t0)
	if err != nil {
		die(setupErrPrefix + err.Error())
	}
	if err := res.Write(os.Stdout); err != nil {
		die(setupErrPrefix + err.Error())
	}
	os.Exit(res.ExitCode())
}

func runBench(cfg *loadgen.Config, t0 time.Time) (*loadgen.Result, error) {
	// kgo fixes five produce requests in flight per broker with idempotence
	// (MaxProduceRequestsInflightPerBroker is refused with it).
	if cfg.MaxInFlight != 5 {
		return nil, fmt.Errorf("--max-in-flight %d: kgo allows only 5 with idempotence", cfg.MaxInFlight)
	}
	codec := codecs[cfg.Compression]
	// Java's batch.size is kgo's ProducerBatchMaxBytes; kgo's request timeout
	// is split as in run (see there).
	rt := time.Duration(cfg.RequestTMs) * time.Millisecond
	rec := loadgen.NewRecorder(errorName)
	stats := new(kgoStats)
	cl, err := kgo.NewClient(
		kgo.WithHooks(stats),
		kgo.SeedBrokers(strings.Split(cfg.Bootstrap, ",")...),
		kgo.ClientID("kcheck-kgo-bench"),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(time.Duration(cfg.LingerMs)*time.Millisecond),
		kgo.ProducerBatchMaxBytes(int32(cfg.BatchBytes)),
		kgo.ProducerBatchCompression(codec),
		kgo.RecordDeliveryTimeout(time.Duration(cfg.DeliveryTimeoutMs)*time.Millisecond),
		kgo.ProduceRequestTimeout(rt),
		kgo.RequestTimeoutOverhead(rt),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.MaxBufferedRecords(cfg.MaxBuffered),
		kgo.DisableClientMetrics(),
	)
	if err != nil {
		return nil, fmt.Errorf("starting the producer: %v", err)
	}
	s := &kgoSender{cl: cl, promise: func(r *kgo.Record, err error) { rec.Callback(r.Timestamp, err) }}
	defer s.Close()
	res, err := loadgen.Run(context.Background(), cfg, s, rec, t0)
	if err != nil {
		var ue *loadgen.UsageError
		if errors.As(err, &ue) {
			return nil, errors.New(ue.Msg)
		}
		return nil, err
	}
	res.Client = "kgo"
	res.Version = kgoVersion()
	res.ClientStats = stats.json()
	return res, nil
}
