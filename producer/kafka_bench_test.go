package producer_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/kafka"
	"github.com/kcheck/kcheck/producer"
	"github.com/kcheck/kcheck/workload"
)

// BenchmarkProduceKafka is BenchmarkProduce against a real Apache Kafka 4.1.0
// broker (a separate JVM, so the client's own cost shows more than in-process
// kfake): ours with the rule on and off, and kgo, side by side. It needs Java
// and Maven and runs only with KCHECK_KAFKA=1:
//
//	KCHECK_KAFKA=1 go test ./producer -run '^$' -bench BenchmarkProduceKafka -benchtime 100000x -count 3
func BenchmarkProduceKafka(b *testing.B) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		b.Skip("KCHECK_KAFKA=1 starts a real broker")
	}
	ctx := context.Background()
	// Each measurement gets a fresh broker: a broker that has already taken
	// hundreds of megabytes is slower, which would favour whoever runs first.
	var brokers []string
	fresh := func(b *testing.B) {
		cl, err := kafka.Start(ctx, kafka.Config{Version: "4.1.0", Nodes: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cl.Stop() })
		brokers = cl.Addrs()
	}
	value := make([]byte, 1024)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	topics := 0
	newTopic := func(b *testing.B) string {
		fresh(b)
		topics++
		t := fmt.Sprintf("bench-%d", topics)
		if err := workload.CreateTopic(ctx, brokers, t, 64, 30*time.Second); err != nil {
			b.Fatal(err)
		}
		// Settle the new topic first: a new topic is exactly where the
		// seed's race strikes a producer without the first-ack rule, and this
		// measures throughput, not that.
		w, err := producer.New(ctx, producer.Brokers(brokers...))
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 64*4; i++ {
			w.Produce(ctx, &producer.Message{Topic: t, Value: []byte("warm-up")}, func(_ *producer.Message, err error) {
				if err != nil {
					b.Error(err)
				}
			})
		}
		if err := w.Close(ctx); err != nil {
			b.Fatal(err)
		}
		return t
	}
	ours := func(b *testing.B, opts ...producer.Opt) {
		topic := newTopic(b)
		base := []producer.Opt{producer.Brokers(brokers...), producer.Linger(5 * time.Millisecond), producer.BatchBytes(16 << 10)}
		p, err := producer.New(ctx, append(base, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close(ctx)
		var failed sync.Once
		done := func(_ *producer.Message, err error) {
			if err != nil {
				failed.Do(func() { b.Error(err) })
			}
		}
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			p.Produce(ctx, &producer.Message{Topic: topic, Value: value}, done)
		}
		if err := p.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
	}
	b.Run("kcheck/rule-on", func(b *testing.B) { ours(b) })
	b.Run("kcheck/rule-off", func(b *testing.B) { ours(b, producer.FirstAckRule(false), producer.HoldWhileRetrying(false)) })
	b.Run("kgo", func(b *testing.B) {
		topic := newTopic(b)
		c, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
			kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(16<<10),
			kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		var failed sync.Once
		done := func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Do(func() { b.Error(err) })
			}
		}
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			c.Produce(ctx, &kgo.Record{Value: value}, done)
		}
		if err := c.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
	})
}
