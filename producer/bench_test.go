package producer

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/tracer"
)

// The budget: 1 KiB values, 64 partitions, idempotent, acks=all,
// linger 5ms, 16 KiB batches, no compression, at most 10000 records buffered,
// round-robin partitioning, each client on its own fresh kfake cluster of 3
// brokers.
const (
	benchPartitions = 64
	benchLinger     = 5 * time.Millisecond
	benchBatchBytes = 16 << 10
	benchBuffered   = 10000
)

// benchClient is one client under test. start sets it up on the brokers at
// addrs (not timed); the client it returns produces n records of value to
// topic and waits for every outcome.
type benchClient struct {
	name  string
	start func(b *testing.B, addrs []string) (produce func(topic string, n int, value []byte), stop func())
}

func benchOurs(name string, opts ...func() Opt) benchClient {
	return benchClient{name: name, start: func(b *testing.B, addrs []string) (func(string, int, []byte), func()) {
		ctx := context.Background()
		all := []Opt{Brokers(addrs...), Linger(benchLinger), BatchBytes(benchBatchBytes), MaxBufferedRecords(benchBuffered)}
		for _, o := range opts {
			all = append(all, o())
		}
		p, err := New(ctx, all...)
		if err != nil {
			b.Fatal(err)
		}
		var failed sync.Once
		done := func(_ *Message, err error) {
			if err != nil {
				failed.Do(func() { b.Error(err) })
			}
		}
		produce := func(topic string, n int, value []byte) {
			for i := 0; i < n; i++ {
				p.Produce(ctx, &Message{Topic: topic, Value: value}, done)
			}
			if err := p.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
		return produce, func() { p.Close(ctx) }
	}}
}

func benchKgo() benchClient {
	return benchClient{name: "kgo", start: func(b *testing.B, addrs []string) (func(string, int, []byte), func()) {
		ctx := context.Background()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...),
			kgo.ProducerLinger(benchLinger), kgo.ProducerBatchMaxBytes(benchBatchBytes), kgo.MaxBufferedRecords(benchBuffered),
			kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err != nil {
			b.Fatal(err)
		}
		var failed sync.Once
		done := func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Do(func() { b.Error(err) })
			}
		}
		produce := func(topic string, n int, value []byte) {
			for i := 0; i < n; i++ {
				cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, done)
			}
			if err := cl.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
		return produce, cl.Close
	}}
}

// benchClients are the clients BenchmarkProduce compares; kgo is last.
func benchClients() []benchClient {
	trace := func() Opt {
		w, err := tracer.NewDeferredWriter(io.Discard, tracer.Header{Writer: "bench"})
		if err != nil {
			panic(fmt.Sprintf("tracer.NewDeferredWriter: %v", err)) // io.Discard does not fail
		}
		return Trace(w)
	}
	return []benchClient{
		benchOurs("on"),
		benchOurs("off", func() Opt { return FirstAckRule(false) }),
		benchOurs("trace", trace),
		benchKgo(),
	}
}

// benchLeg measures one client producing n records to topic t on a fresh
// cluster. The setup is not timed: the cluster, the client, and a warm-up
// that produces a record to every partition of another topic and one to t,
// so that the client has its producer id, a connection to every broker and
// t's metadata, as a running client has (kgo does all three on its first
// produce, ours some in New, some on its first produce). Each client thus
// pays the same things inside the measurement: the first batch of nearly
// every partition of t, which with the first-ack rule must be acknowledged
// before the partition's next batch is sent (the rule's cost).
//
// shared, when not nil, is the run's site on a real broker (benchPlace.site),
// where the legs take turns on the same topics and the warm-up also brings t
// to a steady rate (benchPlace.warmup).
func benchLeg(b *testing.B, cl benchClient, n int, value []byte, shared *benchSite) legResult {
	b.StopTimer()
	at := benchAt(b)
	site := shared
	if site == nil {
		s := at.open(b)
		defer s.close()
		site = &s
	}
	t := site.topic
	produce, stop := cl.start(b, site.addrs)
	defer stop()
	produce(site.warm, int(at.partitions), value)
	produce(t, at.warmup(n), value)
	runtime.GC() // do not charge this leg for the previous leg's garbage
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	cpu, _ := processCPU()
	b.StartTimer()
	start := time.Now()
	produce(t, n, value)
	elapsed := time.Since(start)
	b.StopTimer()
	cpuEnd, cpuOK := processCPU()
	runtime.ReadMemStats(&ms)
	return legResult{elapsed: elapsed, cpu: cpuEnd - cpu, cpuOK: cpuOK, mallocs: ms.Mallocs - mallocs}
}

// legResult is what benchLeg measured: wall time, the process's CPU time
// (kfake's included; cpuOK false where the platform does not tell) and
// allocations.
type legResult struct {
	elapsed, cpu time.Duration
	cpuOK        bool
	mallocs      uint64
}

func (r *legResult) add(o legResult) {
	r.elapsed += o.elapsed
	r.cpu += o.cpu
	r.cpuOK = o.cpuOK
	r.mallocs += o.mallocs
}

// BenchmarkProduce compares our producer (first-ack rule on, off, and on with
// tracing to io.Discard) with franz-go's kgo under the budget.
//
// Machines running other work drift, so every run measures every client
// twice, b.N records each time, each leg on a fresh cluster, in an order
// drawn at random and then reversed (say on kgo off trace trace off kgo on):
// each client sees the same drift, the ratios between clients (paired within
// a run) are far steadier than the records/s themselves, and no client is
// always first or last (the first and last legs of a run are often slower).
//
// Metrics: <client>-rec/s; <client>-allocs/rec and <client>-cpu-ns/rec, for
// the whole process with kfake (kfake's share is about the same for every
// client, and CPU time varies much less than wall time when other work runs
// on the machine); and the ratios of records/s on/kgo, off/kgo, trace/kgo,
// on/off (the rule's cost) and trace/on (tracing's cost). ns/op counts all
// eight legs.
//
//	go test ./producer -run '^$' -bench BenchmarkProduce -benchtime 100000x -count 8
func BenchmarkProduce(b *testing.B) {
	value := make([]byte, 1024)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	clients := benchClients()
	res := make([]legResult, len(clients))
	site := benchAt(b).site(b)
	if site != nil {
		defer site.close()
	}
	order := rand.Perm(len(clients))
	for pass := 0; pass < 2; pass++ {
		for k := range clients {
			i := order[k]
			if pass == 1 {
				i = order[len(clients)-1-k]
			}
			res[i].add(benchLeg(b, clients[i], b.N, value, site))
		}
	}
	rate := make(map[string]float64, len(clients))
	recs := float64(2 * b.N)
	for i, cl := range clients {
		rate[cl.name] = recs / res[i].elapsed.Seconds()
		b.ReportMetric(rate[cl.name], cl.name+"-rec/s")
		b.ReportMetric(float64(res[i].mallocs)/recs, cl.name+"-allocs/rec")
		if res[i].cpuOK {
			b.ReportMetric(float64(res[i].cpu.Nanoseconds())/recs, cl.name+"-cpu-ns/rec")
		}
	}
	for _, r := range [][2]string{{"on", "kgo"}, {"off", "kgo"}, {"trace", "kgo"}, {"on", "off"}, {"trace", "on"}} {
		b.ReportMetric(rate[r[0]]/rate[r[1]], r[0]+"/"+r[1])
	}
}

// dropSink is a tracer.Sink that drops every event: the producer builds
// them, nothing writes them.
type dropSink struct{}

func (dropSink) Emit(*tracer.Event) {}

// BenchmarkSolo runs one client at a time, for profiling it; besides
// BenchmarkProduce's clients, "ids" (the kcheck-id header without tracing)
// and "drop" (tracing to dropSink) split tracing's cost:
//
//	go test ./producer -run '^$' -bench 'BenchmarkSolo/on$' -benchtime 100000x -cpuprofile /tmp/on.prof
func BenchmarkSolo(b *testing.B) {
	value := make([]byte, 1024)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	clients := append(benchClients(),
		benchOurs("ids", func() Opt { return RecordIDs(true) }),
		benchOurs("drop", func() Opt { return Trace(dropSink{}) }))
	for _, cl := range clients {
		b.Run(cl.name, func(b *testing.B) {
			r := benchLeg(b, cl, b.N, value, nil)
			b.ReportMetric(float64(b.N)/r.elapsed.Seconds(), "rec/s")
			if r.cpuOK {
				b.ReportMetric(float64(r.cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
			}
		})
	}
}
