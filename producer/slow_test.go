package producer

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/checker/replay"
	"github.com/kcheck/kcheck/tracer"
)

// A slow broker, as Kafka 4.1.0 was on this project's 2-core machine under
// load (producer/README.md, "A slow broker"): it handles a connection's
// requests one at a time, in order, and each takes a time of its own. The
// holds below are the fault itself (kfake's SleepControl), not the tests'
// synchronisation: every test waits for its records' outcomes.

// holdProduce makes c hold every produce request for hold(request) before
// handling it.
func holdProduce(c *kfake.Cluster, hold func(*kmsg.ProduceRequest) time.Duration) {
	c.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if d := hold(kr.(*kmsg.ProduceRequest)); d > 0 {
			c.SleepControl(func() { time.Sleep(d) })
		}
		return nil, nil, false
	})
}

func partitionsIn(r *kmsg.ProduceRequest) int {
	n := 0
	for _, t := range r.Topics {
		n += len(t.Partitions)
	}
	return n
}

// produceEach produces perPart one-record batches to each of parts
// partitions at once, waits for every outcome and returns the failures.
func produceEach(t *testing.T, p *Producer, parts int32, perPart int) []error {
	t.Helper()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for i := 0; i < perPart; i++ {
		for part := int32(0); part < parts; part++ {
			wg.Add(1)
			p.Produce(context.Background(), &Message{Topic: "t", Key: keyFor(part, parts), Value: []byte("0123456789")}, func(_ *Message, err error) {
				defer wg.Done()
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return errs
}

// TestSlowPerPartition: a broker whose time to answer grows with the
// partitions in a request (40 ms each: a partition's first index entry on a
// loaded disk, or an fsync per partition) answers a request of all 16
// partitions in 640 ms, beyond the 400 ms request timeout. The producer
// must deliver every record: after the timeout it sends smaller requests
// (core.RequestTimedOut), where sending the same request again would time
// out forever and every record would fail at the delivery timeout.
func TestSlowPerPartition(t *testing.T) {
	const parts, per = 16, 4
	c := newCluster(t, parts, kfake.NumBrokers(1))
	holdProduce(c, func(r *kmsg.ProduceRequest) time.Duration {
		return time.Duration(partitionsIn(r)) * 40 * time.Millisecond
	})
	sink := &memSink{}
	p := newProducer(t, c, Linger(0), BatchBytes(1), RequestTimeout(400*time.Millisecond),
		DeliveryTimeout(30*time.Second), RetryBackoff(10*time.Millisecond), Trace(sink))
	if errs := produceEach(t, p, parts, per); len(errs) > 0 {
		t.Fatalf("%d of %d records failed, the first: %v", len(errs), parts*per, errs[0])
	}
	st := p.Stats()
	if st.Disconnects == 0 {
		t.Fatal("no request timed out: the test did not reach the slow broker's case")
	}
	checkTrace(t, sink, parts, 30*time.Second)
	t.Logf("%d requests, %d disconnects", st.Requests, st.Disconnects)
}

// TestPipelinedBehindSlow: a broker that takes 150 ms over each request,
// with the 400 ms request timeout. Five requests are in flight on the
// connection; the fifth is answered about 750 ms after it was written,
// but the broker started on it only 150 ms before. The producer counts a
// request's time from its write or the answer before it, whichever is
// later, so no request times out; counted from the write alone, every
// fifth request would, and every record in flight would be sent again.
func TestPipelinedBehindSlow(t *testing.T) {
	const parts, per = 4, 10
	c := newCluster(t, parts, kfake.NumBrokers(1))
	holdProduce(c, func(*kmsg.ProduceRequest) time.Duration { return 150 * time.Millisecond })
	sink := &memSink{}
	p := newProducer(t, c, Linger(0), BatchBytes(1), RequestTimeout(400*time.Millisecond),
		DeliveryTimeout(60*time.Second), Trace(sink))
	if errs := produceEach(t, p, parts, per); len(errs) > 0 {
		t.Fatalf("%d of %d records failed, the first: %v", len(errs), parts*per, errs[0])
	}
	st := p.Stats()
	if most := maxOutstanding(sink.evs); most < 5 {
		t.Fatalf("at most %d requests in flight: the test did not pipeline", most)
	}
	if st.Disconnects != 0 {
		t.Fatalf("%d disconnects: a request pipelined behind the slow ones timed out", st.Disconnects)
	}
	checkTrace(t, sink, parts, 60*time.Second)
}

// TestRecordTooLarge: a record that alone makes a batch above
// MaxRequestBytes fails with ErrRecordTooLarge and is not sent; the records
// around it are delivered.
func TestRecordTooLarge(t *testing.T) {
	c := newCluster(t, 1, kfake.NumBrokers(1))
	p := newProducer(t, c, MaxRequestBytes(1024), BatchBytes(512))
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i, size := range []int{10, 2000, 10} {
		wg.Add(1)
		p.Produce(context.Background(), &Message{Topic: "t", Value: make([]byte, size)}, func(_ *Message, err error) {
			errs[i] = err
			wg.Done()
		})
	}
	wg.Wait()
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("the small records: %v, %v; want both delivered", errs[0], errs[2])
	}
	if !errors.Is(errs[1], ErrRecordTooLarge) {
		t.Fatalf("the 2000-byte record: %v, want ErrRecordTooLarge", errs[1])
	}
}

// TestRequestCapBelowBatch: a batch size above the request cap is refused
// at New, naming both settings.
func TestRequestCapBelowBatch(t *testing.T) {
	_, err := New(context.Background(), Brokers("127.0.0.1:1"), BatchBytes(64<<10), MaxRequestBytes(32<<10))
	if err == nil {
		t.Fatal("New accepted BatchBytes above MaxRequestBytes")
	}
	for _, want := range []string{"BatchBytes (65536)", "MaxRequestBytes (32768)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// checkTrace holds a run's trace on a real-broker header (kfake's holds are
// not traced as faults) to the spec's rules, as checker/replay does.
func checkTrace(t *testing.T, sink *memSink, parts int32, delivery time.Duration) {
	t.Helper()
	m, err := replay.New(tracer.Header{Writer: "kcheck-producer", Topic: "t", Partitions: parts, FirstAck: true, HoldWhileRetrying: true,
		MaxInFlight: 5, DeliveryTimeoutMs: delivery.Milliseconds(), Broker: tracer.Broker{Kind: "kafka", NoStateRule: "v25to44"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range sink.evs {
		if err := m.Step(i+1, &sink.evs[i]); err != nil {
			t.Fatalf("replay: %v", err)
		}
	}
}

// TestRequestCapAboveMessageMax: a request cap or a batch size above the
// brokers' message.max.bytes is refused at New, naming both; by default
// there is no cap.
func TestRequestCapAboveMessageMax(t *testing.T) {
	c := newCluster(t, 1, kfake.NumBrokers(1), kfake.BrokerConfigs(map[string]string{"message.max.bytes": "65536"}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := New(ctx, Brokers(c.ListenAddrs()...), MaxRequestBytes(1<<20))
	if err == nil {
		t.Fatal("New accepted MaxRequestBytes above the brokers' message.max.bytes")
	}
	for _, want := range []string{"MaxRequestBytes (1048576)", "message.max.bytes (65536"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if p := newProducer(t, c); p.cfg.maxRequestBytes != 0 {
		t.Fatalf("default request cap %d, want none", p.cfg.maxRequestBytes)
	}
	if _, err := New(ctx, Brokers(c.ListenAddrs()...), BatchBytes(100000)); err == nil || !strings.Contains(err.Error(), "BatchBytes (100000)") {
		t.Fatalf("BatchBytes above message.max.bytes: %v, want an error naming it", err)
	}
}
