package producer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// newCluster starts an in-process kfake cluster capped to Kafka 4.1.0 (a
// released broker: it accepts any first sequence from an unknown producer).
func newCluster(t *testing.T, partitions int32, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	base := []kfake.Opt{kfake.NumBrokers(3), kfake.SeedTopics(partitions, "t"), kfake.MaxVersions(kversion.V4_1_0())}
	c, err := kfake.NewCluster(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func newProducer(t *testing.T, c *kfake.Cluster, opts ...Opt) *Producer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := New(ctx, append([]Opt{Brokers(c.ListenAddrs()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

type outcome struct {
	mu   sync.Mutex
	errs []error
	acks map[string]int64 // value -> offset
	wg   sync.WaitGroup
}

func produceAll(t *testing.T, p *Producer, n int, keys int) *outcome {
	t.Helper()
	o := &outcome{acks: map[string]int64{}}
	ctx := context.Background()
	for i := 0; i < n; i++ {
		o.wg.Add(1)
		m := &Message{Topic: "t", Key: []byte(fmt.Sprintf("k%d", i%keys)), Value: []byte(fmt.Sprintf("v%d", i))}
		p.Produce(ctx, m, func(m *Message, err error) {
			defer o.wg.Done()
			o.mu.Lock()
			defer o.mu.Unlock()
			if err != nil {
				o.errs = append(o.errs, err)
				return
			}
			o.acks[string(m.Value)] = m.Offset
		})
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	o.wg.Wait()
	return o
}

// readBack consumes every partition of t from the start with kgo.
func readBack(t *testing.T, c *kfake.Cluster, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read back %d records, want %d", len(recs), want)
		}
		recs = append(recs, fs.Records()...)
	}
	return recs
}

func TestProduceReadBack(t *testing.T) {
	for _, codec := range []recordbatch.Codec{recordbatch.CodecNone, recordbatch.CodecGzip, recordbatch.CodecSnappy, recordbatch.CodecLZ4, recordbatch.CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			c := newCluster(t, 8)
			p := newProducer(t, c, Compression(codec), Linger(time.Millisecond))
			const n = 2000
			o := produceAll(t, p, n, 64)
			if len(o.errs) > 0 {
				t.Fatalf("%d records failed, first: %v", len(o.errs), o.errs[0])
			}
			recs := readBack(t, c, n)
			seen := map[string]bool{}
			for _, r := range recs {
				v := string(r.Value)
				if seen[v] {
					t.Fatalf("duplicate %s", v)
				}
				seen[v] = true
				if off, ok := o.acks[v]; !ok || off != r.Offset {
					t.Fatalf("%s read at %d, acknowledged at %d (%v)", v, r.Offset, off, ok)
				}
			}
			if len(seen) != n {
				t.Fatalf("read %d distinct records, want %d", len(seen), n)
			}
		})
	}
}
