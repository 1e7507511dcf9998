package producer

import (
	"context"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/tracer"
)

// The budget, measured side by side on the same kfake cluster in one
// run: 1 KiB values, 64 partitions, idempotent, acks=all, linger 5ms, 16 KiB
// batches. Compare records/s (the custom metric) between sub-benchmarks:
//
//	go test ./producer -run '^$' -bench BenchmarkProduce -benchtime 50000x -count 5
func BenchmarkProduce(b *testing.B) {
	const partitions = 64
	value := make([]byte, 1024)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	newCluster := func(b *testing.B) *kfake.Cluster {
		c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(partitions, "t"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		runtime.GC() // do not charge one run for the previous run's garbage
		return c
	}
	ours := func(b *testing.B, opts ...Opt) {
		c := newCluster(b)
		ctx := context.Background()
		base := []Opt{Brokers(c.ListenAddrs()...), Linger(5 * time.Millisecond), BatchBytes(16 << 10), MaxBufferedRecords(10000)}
		p, err := New(ctx, append(base, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close(ctx)
		var failed sync.Once
		done := func(_ *Message, err error) {
			if err != nil {
				failed.Do(func() { b.Error(err) })
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			p.Produce(ctx, &Message{Topic: "t", Value: value}, done)
		}
		if err := p.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
	}
	b.Run("kcheck/rule-on", func(b *testing.B) { ours(b) })
	b.Run("kcheck/rule-off", func(b *testing.B) { ours(b, FirstAckRule(false)) })
	b.Run("kcheck/rule-on+trace", func(b *testing.B) {
		w, err := tracer.NewWriter(io.Discard, tracer.Header{Writer: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		ours(b, Trace(w))
	})
	b.Run("kgo", func(b *testing.B) {
		c := newCluster(b)
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"),
			kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(16<<10), kgo.MaxBufferedRecords(10000),
			kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		ctx := context.Background()
		var failed sync.Once
		done := func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Do(func() { b.Error(err) })
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			cl.Produce(ctx, &kgo.Record{Value: value}, done)
		}
		if err := cl.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
	})
}
