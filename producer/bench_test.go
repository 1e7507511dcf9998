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

// benchLeg is one client started on a site and warmed up, ready for timed
// parts (timed). The setup is not timed: the cluster (on kfake, a fresh one
// per leg), the client, and a warm-up that produces a record to every
// partition of another topic and one to t, so that the client has its
// producer id, a connection to every broker and t's metadata, as a running
// client has (kgo does all three on its first produce, ours some in New,
// some on its first produce). Each client thus pays the same things inside
// the measurement: on kfake, the first batch of nearly every partition of
// t, which with the first-ack rule must be acknowledged before the
// partition's next batch is sent (the rule's cost).
//
// shared, when not nil, is the run's site on a real broker (benchPlace.site),
// where the legs take turns on the same topics and the warm-up also brings t
// to a steady rate (benchPlace.warmup).
type benchLeg struct {
	produce func(topic string, n int, value []byte)
	topic   string
	close   func()
}

// startLeg starts cl at at (on shared when not nil, else on a site of its
// own that the leg's close undoes) and warms it up for legs of n records.
func startLeg(b *testing.B, at benchPlace, cl benchClient, n int, value []byte, shared *benchSite) *benchLeg {
	b.StopTimer()
	site := shared
	var closeSite func()
	if site == nil {
		s := at.open(b)
		site, closeSite = &s, s.close
	}
	produce, stop := cl.start(b, site.addrs)
	leg := &benchLeg{produce: produce, topic: site.topic, close: func() {
		stop()
		if closeSite != nil {
			closeSite()
		}
	}}
	produce(site.warm, int(at.partitions), value)
	produce(site.topic, at.warmup(n), value)
	return leg
}

// timed measures the leg's client producing n records and waiting for
// every outcome.
func (l *benchLeg) timed(b *testing.B, n int, value []byte) legResult {
	b.StopTimer()
	runtime.GC() // do not charge this part for the previous one's garbage
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	cpu, _ := processCPU()
	b.StartTimer()
	start := time.Now()
	l.produce(l.topic, n, value)
	elapsed := time.Since(start)
	b.StopTimer()
	cpuEnd, cpuOK := processCPU()
	runtime.ReadMemStats(&ms)
	return legResult{recs: n, elapsed: elapsed, cpu: cpuEnd - cpu, cpuOK: cpuOK, mallocs: ms.Mallocs - mallocs}
}

// legResult is what timed parts measured: records, wall time, the
// process's CPU time (kfake's included; cpuOK false where the platform does
// not tell) and allocations.
type legResult struct {
	recs         int
	elapsed, cpu time.Duration
	cpuOK        bool
	mallocs      uint64
}

func (r *legResult) add(o legResult) {
	r.recs += o.recs
	r.elapsed += o.elapsed
	r.cpu += o.cpu
	r.cpuOK = o.cpuOK
	r.mallocs += o.mallocs
}

// BenchmarkProduce compares our producer (first-ack rule on, off, and on with
// tracing to io.Discard) with franz-go's kgo under the budget.
//
// Machines running other work drift, so every run measures every client in
// turns, in an order drawn at random and then reversed each turn (say on
// kgo off trace trace off kgo on): each client sees the same drift, the
// ratios between clients (paired within a run) are far steadier than the
// records/s themselves, and no client is always first or last (the first
// and last parts of a run are often slower).
//
// On kfake a run has two turns of b.N records, each leg on a fresh cluster
// (so each pays a fresh topic's first batches, the rule's cost). On a real
// broker (benchPlace) each client is started once a run and the run's 2*b.N
// records a client are split into benchPlace.rounds turns: the broker's
// latency there swings within a second, and short turns spread those swings
// over every client alike.
//
// Metrics: <client>-rec/s; <client>-allocs/rec and <client>-cpu-ns/rec, for
// the whole process with kfake (kfake's share is about the same for every
// client, and CPU time varies much less than wall time when other work runs
// on the machine); and the ratios of records/s on/kgo, off/kgo, trace/kgo,
// on/off (the rule's cost) and trace/on (tracing's cost). ns/op counts every
// timed part.
//
//	go test ./producer -run '^$' -bench BenchmarkProduce -benchtime 100000x -count 8
func BenchmarkProduce(b *testing.B) {
	value := make([]byte, 1024)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	clients := benchClients()
	res := make([]legResult, len(clients))
	at := benchAt(b)
	site := at.site(b)
	if site != nil {
		defer site.close()
	}
	order := rand.Perm(len(clients))
	turn := func(round int, do func(i int)) {
		for k := range clients {
			if round%2 == 0 {
				do(order[k])
			} else {
				do(order[len(clients)-1-k])
			}
		}
	}
	if site == nil {
		for round := 0; round < 2; round++ {
			turn(round, func(i int) {
				leg := startLeg(b, at, clients[i], b.N, value, nil)
				res[i].add(leg.timed(b, b.N, value))
				leg.close()
			})
		}
	} else {
		legs := make([]*benchLeg, len(clients))
		turn(0, func(i int) { legs[i] = startLeg(b, at, clients[i], b.N, value, site) })
		rounds := at.rounds(2 * b.N)
		for round := 0; round < rounds; round++ {
			n := 2*b.N*(round+1)/rounds - 2*b.N*round/rounds
			turn(round, func(i int) { res[i].add(legs[i].timed(b, n, value)) })
		}
		for _, leg := range legs {
			leg.close()
		}
	}
	rate := make(map[string]float64, len(clients))
	for i, cl := range clients {
		recs := float64(res[i].recs)
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

// dropSink is a tracer.RunSink that drops every event: the producer builds
// them as it does for tracer.Writer (a batch's Told events in one EmitRun),
// nothing writes them.
type dropSink struct{}

func (dropSink) Emit(*tracer.Event)             {}
func (dropSink) EmitRun(*tracer.Event, []int64) {}

// BenchmarkSolo runs one client at a time, for profiling it (on kfake, or on
// the real broker KCHECK_BENCH_BROKERS names, on fresh topics); besides
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
			at := benchAt(b)
			site := at.site(b)
			if site != nil {
				defer site.close()
			}
			leg := startLeg(b, at, cl, b.N, value, site)
			r := leg.timed(b, b.N, value)
			leg.close()
			b.ReportMetric(float64(b.N)/r.elapsed.Seconds(), "rec/s")
			if r.cpuOK {
				b.ReportMetric(float64(r.cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
			}
		})
	}
}
