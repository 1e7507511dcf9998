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
// record (*producer.Message, *kgo.Record) is allocated before the clock
// starts (until session 4 it was allocated inside the timed call, so the
// caller's allocation, its GC assists and span refills, counted as the
// client's). A warm-up (one record per
// partition, flushed) gives each client its producer id, connections and the
// topic's metadata first: our Produce waits for an unknown topic's metadata,
// kgo's buffers the record meanwhile. Exit 0, or 2 on bad usage or a failure.
//
// --trace FILE writes a runtime/trace of the timed part, with a log event
// (category "slow") at the end of every call of --slow-ns or more: bench/
// tailtrace.py attributes each such call to what the trace shows during it
// (a GC mark assist, a span refill, a sweep, a stop-the-world, the goroutine
// descheduled, a goroutine woken, or none of these):
//
//	bin/kcheck-bench-enqueue --client ours --goroutines 1 --records 400000 --trace /tmp/t.trace
//	go tool trace -d=parsed /tmp/t.trace > /tmp/t.txt && bench/tailtrace.py /tmp/t.txt
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/trace"
	"strconv"
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

// client is one producer: record allocates a record (not timed), produce
// returns once it is enqueued (timed); flush waits for every outcome.
type client struct {
	record  func(topic string, value []byte) any
	produce func(ctx context.Context, rec any)
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
		record: func(topic string, value []byte) any { return &producer.Message{Topic: topic, Value: value} },
		produce: func(ctx context.Context, rec any) {
			p.Produce(ctx, rec.(*producer.Message), done)
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
		record: func(topic string, value []byte) any { return &kgo.Record{Topic: topic, Value: value} },
		produce: func(ctx context.Context, rec any) {
			cl.Produce(ctx, rec.(*kgo.Record), done)
		},
		flush:  cl.Flush,
		close:  cl.Close,
		failed: failed,
	}, nil
}

// result is the JSON line; times in nanoseconds.
type result struct {
	Client     string  `json:"client"`
	Broker     string  `json:"broker"`
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
	// What else happened in the timed part, to tell runs apart: the GC
	// cycles that began, and the times the OS took a core from one of the
	// process's threads (-1: not known here).
	GCCycles            uint32 `json:"gc_cycles"`
	InvoluntarySwitches int64  `json:"involuntary_switches"`
}

func main() {
	fs := flag.NewFlagSet("enqueue", flag.ContinueOnError)
	name := fs.String("client", "ours", "ours or kgo")
	goroutines := fs.Int("goroutines", 1, "goroutines calling Produce at once")
	records := fs.Int("records", 200000, "records in all, split between the goroutines")
	fs.StringVar(&traceFile, "trace", "", "write a runtime/trace of the timed part to this file, with a log event (category \"slow\", the call's ns) at the end of every call slower than --slow-ns: for finding where the tail comes from")
	fs.Int64Var(&slowNs, "slow-ns", 10000, "with --trace: the calls logged")
	broker := fs.String("broker", "inproc", "where the kfake cluster runs: inproc (in this process, sharing its heap, GC and 2 Ps) or process (a child process of its own; the OS then shares the cores between the two)")
	serve := fs.Bool("serve-kfake", false, "run only the kfake cluster, print its addresses, and stop when stdin closes (what --broker process starts)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *serve {
		if err := serveKfake(); err != nil {
			die("enqueue --serve-kfake: " + err.Error())
		}
		return
	}
	if *goroutines < 1 || *records < *goroutines || fs.NArg() > 0 {
		die("enqueue: want --goroutines >= 1 and --records >= goroutines, and no arguments")
	}
	if *broker != "process" && *broker != "inproc" {
		die(fmt.Sprintf("enqueue: --broker %q: want process or inproc", *broker))
	}
	res, err := run(*name, *broker, *goroutines, *records)
	if err != nil {
		die("enqueue: " + err.Error())
	}
	json.NewEncoder(os.Stdout).Encode(res)
}

// traceFile and slowNs are --trace and --slow-ns.
var (
	traceFile string
	slowNs    int64
)

func die(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(2)
}

// newCluster starts the kfake cluster the client produces to, in this
// process or in a child of its own, and returns its addresses and how to
// stop it.
func newCluster(broker string) ([]string, func(), error) {
	if broker == "inproc" {
		c, err := startKfake()
		if err != nil {
			return nil, nil, err
		}
		return c.ListenAddrs(), c.Close, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(self, "--serve-kfake")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting the kfake process: %w", err)
	}
	stop := func() {
		stdin.Close()
		cmd.Wait()
	}
	var addrs []string
	if err := json.NewDecoder(stdout).Decode(&addrs); err != nil || len(addrs) == 0 {
		stop()
		return nil, nil, fmt.Errorf("the kfake process gave no addresses: %v", err)
	}
	return addrs, stop, nil
}

// startKfake starts the cluster every measurement produces to: 3 brokers
// and topic "t" of 64 partitions.
func startKfake() (*kfake.Cluster, error) {
	return kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(partitions, "t"))
}

// serveKfake is the child of --broker process: the cluster, its addresses
// as a JSON array on stdout, and then nothing until stdin closes.
func serveKfake() error {
	c, err := startKfake()
	if err != nil {
		return err
	}
	defer c.Close()
	if err := json.NewEncoder(os.Stdout).Encode(c.ListenAddrs()); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

func run(name, broker string, goroutines, records int) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	addrs, stop, err := newCluster(broker)
	if err != nil {
		return nil, err
	}
	defer stop()
	buffered := records + partitions
	var cl *client
	switch name {
	case "ours":
		cl, err = newOurs(ctx, addrs, buffered)
	case "kgo":
		cl, err = newKgo(addrs, buffered)
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
		cl.produce(ctx, cl.record("t", value))
	}
	if err := cl.flush(ctx); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	runtime.GC()

	traced := traceFile != ""
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
				rec := cl.record("t", value)
				t := time.Now()
				cl.produce(ctx, rec)
				d := time.Since(t).Nanoseconds()
				h.RecordValue(min(max(d, 1), maxValue))
				if traced && d >= slowNs {
					trace.Log(ctx, "slow", strconv.FormatInt(d, 10))
				}
			}
		}()
	}
	if traceFile != "" {
		f, err := os.Create(traceFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			return nil, err
		}
		defer trace.Stop()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gc0, sw0 := ms.NumGC, involuntarySwitches()
	t0 := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	runtime.ReadMemStats(&ms)
	switches := int64(-1)
	if sw1 := involuntarySwitches(); sw0 >= 0 && sw1 >= 0 {
		switches = sw1 - sw0
	}
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
		Client: name, Broker: broker, Goroutines: goroutines, Records: records, GOMAXPROCS: runtime.GOMAXPROCS(0),
		P50: all.ValueAtQuantile(50), P90: all.ValueAtQuantile(90), P99: all.ValueAtQuantile(99),
		P999: all.ValueAtQuantile(99.9), Max: all.Max(), Mean: all.Mean(),
		CallsPerS: float64(records) / elapsed.Seconds(),
		GCCycles:  ms.NumGC - gc0, InvoluntarySwitches: switches,
	}, nil
}
