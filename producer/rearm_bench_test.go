package producer_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kcheck/kcheck/kafka"
	"github.com/kcheck/kcheck/producer"
	"github.com/kcheck/kcheck/workload"
)

// BenchmarkIdleRearm measures what the idle re-arm rule costs: each
// iteration is a burst after an idle longer than the rule's bound (5
// one-record batches to each of 16 partitions, timed from the first Produce
// to the last acknowledgement), with the rule on and off, in alternation on
// the same broker. With the rule on, each partition's first batch after the
// idle goes alone and the rest follow its acknowledgement: one round trip
// more per burst. On kfake by default; on a real Kafka 4.4.0 broker with
// KCHECK_KAFKA=1:
//
//	go test ./producer -run '^$' -bench BenchmarkIdleRearm -benchtime 20x -count 5
//	KCHECK_KAFKA=1 go test ./producer -run '^$' -bench BenchmarkIdleRearm -benchtime 20x -count 5
func BenchmarkIdleRearm(b *testing.B) {
	const (
		partitions = 16
		perPart    = 5
		bound      = 20 * time.Millisecond
		idle       = 30 * time.Millisecond
	)
	ctx := context.Background()
	var brokers []string
	if os.Getenv("KCHECK_KAFKA") == "1" {
		cl, err := kafka.Start(ctx, kafka.Config{Version: "4.4.0", Nodes: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cl.Stop() })
		brokers = cl.Addrs()
	} else {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(kversion.V4_1_0()))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		brokers = c.ListenAddrs()
	}
	topics := 0
	run := func(b *testing.B, rearm bool) {
		topics++
		topic := fmt.Sprintf("rearm-%d", topics)
		if err := workload.CreateTopic(ctx, brokers, topic, partitions, 30*time.Second); err != nil {
			b.Fatal(err)
		}
		opts := []producer.Opt{producer.Brokers(brokers...), producer.Linger(0), producer.BatchBytes(1), producer.IdleRearm(rearm)}
		if rearm {
			opts = append(opts, producer.IdleRearmAfter(bound))
		}
		p, err := producer.New(ctx, opts...)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close(ctx)
		var wg sync.WaitGroup
		var failed sync.Once
		done := func(_ *producer.Message, err error) {
			if err != nil {
				failed.Do(func() { b.Error(err) })
			}
			wg.Done()
		}
		burst := func() time.Duration {
			start := time.Now()
			wg.Add(partitions * perPart)
			for i := 0; i < perPart; i++ {
				for range partitions {
					p.Produce(ctx, &producer.Message{Topic: topic, Value: []byte("v")}, done) // no key: round robin, perPart to each
				}
			}
			wg.Wait()
			return time.Since(start)
		}
		burst() // the partitions' first batches of the epoch, which the first-ack rule holds either way
		b.ResetTimer()
		var total time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			time.Sleep(idle) // the workload: an idle longer than the bound
			b.StartTimer()
			total += burst()
		}
		b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/burst")
		b.ReportMetric(0, "ns/op")
	}
	for i := 0; i < 2; i++ {
		b.Run("rearm-on", func(b *testing.B) { run(b, true) })
		b.Run("rearm-off", func(b *testing.B) { run(b, false) })
	}
}
