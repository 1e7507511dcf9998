// Command enqueue measures the send path under contention (the KAFKA-2102
// seed): how long one Produce call takes (the enqueue, not the ack) when G
// goroutines produce at once, for kcheck's producer or franz-go's kgo, each
// on its own in-process kfake cluster set up as producer/bench_test.go does
// (3 brokers, 64 partitions, 1 KiB values without keys, round-robin, linger
// 5 ms, 16 KiB batches, idempotent, acks=all). Every call is recorded in an
// HdrHistogram (1 ns to 60 s, 3 significant digits); one line of JSON.
//
//	go build -o bin/kcheck-bench-enqueue ./bench/cmd/enqueue
//	bin/kcheck-bench-enqueue --client ours|kgo --goroutines 8 --records 200000
//
// The buffer holds every record of the run (MaxBufferedRecords = records),
// so a call never waits for the broker: what is measured is the enqueue
// itself and its contention with the other goroutines and the sender. The
// record is allocated before the clock starts. A warm-up (one record per
// partition, flushed) gives each client its producer id, connections and the
// topic's metadata first: our Produce waits for an unknown topic's metadata,
// kgo's buffers the record meanwhile. Exit 0, or 2 on bad usage or a failure.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/producer"
)

const (
	partitions = 64
	linger     = 5 * time.Millisecond
	batchBytes = 16 << 10
	maxValue   = int64(60 * time.Second)
)

// client is one producer: produce returns once the record is enqueued;
// flush waits for every outcome.
type client struct {
	produce func(ctx context.Context, topic string, value []byte)
	flush   func(ctx context.Context) error
	close   func()
	failed  *atomic.Int64
}

func newOurs(ctx context.Context, addrs []string, buffered int) (*client, error) {
	p, err := producer.New(ctx, producer.Brokers(addrs...), producer.Linger(linger),
		producer.BatchBytes(batchBytes), producer.MaxBufferedRecords(buffered))
	if err != nil {
		return nil, err
	}
	failed := new(atomic.Int64)
	done := func(_ *producer.Message, err error) {
		if err != nil {
			failed.Add(1)
		}
	}
	return &client{
		produce: func(ctx context.Context, topic string, value []byte) {
			m := &producer.Message{Topic: topic, Value: value}
			p.Produce(ctx, m, done)
		},
		flush:  p.Flush,
		close:  func() { p.Close(context.Background()) },
		failed: failed,
	}, nil
}

func newKgo(addrs []string, buffered int) (*client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ProducerLinger(linger),
		kgo.ProducerBatchMaxBytes(batchBytes), kgo.MaxBufferedRecords(buffered),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return nil, err
	}
	failed := new(atomic.Int64)
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.Add(1)
		}
	}
	return &client{
		produce: func(ctx context.Context, topic string, value []byte) {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, done)
		},
		flush:  cl.Flush,
		close:  cl.Close,
		failed: failed,
	}, nil
}

// result is the JSON line; times in nanoseconds.
type result struct {
	Client     string  `json:"client"`
	Goroutines int     `json:"goroutines"`
	Records    int     `json:"records"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	P50        int64   `json:"p50_ns"`
	P90        int64   `json:"p90_ns"`
	P99        int64   `json:"p99_ns"`
	P999       int64   `json:"p999_ns"`
	Max        int64   `json:"max_ns"`
	Mean       float64 `json:"mean_ns"`
	CallsPerS  float64 `json:"calls_per_s"`
}

func main() {
	fs := flag.NewFlagSet("enqueue", flag.ContinueOnError)
	name := fs.String("client", "ours", "ours or kgo")
	goroutines := fs.Int("goroutines", 1, "goroutines calling Produce at once")
	records := fs.Int("records", 200000, "records in all, split between the goroutines")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *goroutines < 1 || *records < *goroutines || fs.NArg() > 0 {
		die("enqueue: want --goroutines >= 1 and --records >= goroutines, and no arguments")
	}
	res, err := run(*name, *goroutines, *records)
	if err != nil {
		die("enqueue: " + err.Error())
	}
	json.NewEncoder(os.Stdout).Encode(res)
}

func die(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(2)
}

func run(name string, goroutines, records int) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(partitions, "t"))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	buffered := records + partitions
	var cl *client
	switch name {
	case "ours":
		cl, err = newOurs(ctx, c.ListenAddrs(), buffered)
	case "kgo":
		cl, err = newKgo(c.ListenAddrs(), buffered)
	default:
		return nil, fmt.Errorf("--client %q: want ours or kgo", name)
	}
	if err != nil {
		return nil, err
	}
	defer cl.close()

	value := make([]byte, 1024)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	for range partitions {
		cl.produce(ctx, "t", value)
	}
	if err := cl.flush(ctx); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	runtime.GC()

	hists := make([]*hdrhistogram.Histogram, goroutines)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range goroutines {
		h := hdrhistogram.New(1, maxValue, 3)
		hists[g] = h
		n := records / goroutines
		if g < records%goroutines {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range n {
				t := time.Now()
				cl.produce(ctx, "t", value)
				d := time.Since(t).Nanoseconds()
				h.RecordValue(min(max(d, 1), maxValue))
			}
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	if err := cl.flush(ctx); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	if n := cl.failed.Load(); n > 0 {
		return nil, fmt.Errorf("%d records failed", n)
	}
	all := hdrhistogram.New(1, maxValue, 3)
	for _, h := range hists {
		all.Merge(h)
	}
	return &result{
		Client: name, Goroutines: goroutines, Records: records, GOMAXPROCS: runtime.GOMAXPROCS(0),
		P50: all.ValueAtQuantile(50), P90: all.ValueAtQuantile(90), P99: all.ValueAtQuantile(99),
		P999: all.ValueAtQuantile(99.9), Max: all.Max(), Mean: all.Mean(),
		CallsPerS: float64(records) / elapsed.Seconds(),
	}, nil
}
