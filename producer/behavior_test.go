package producer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/tracer"
)

// keyFor returns a key that the Java partitioner sends to partition p of n.
func keyFor(p, n int32) []byte {
	for i := 0; ; i++ {
		k := []byte(fmt.Sprintf("key-%d", i))
		if KeyPartition(k, n) == p {
			return k
		}
	}
}

// sendTo produces n records to partition p and waits for their outcomes.
func sendTo(t *testing.T, prod *Producer, p, parts int32, n int) []error {
	t.Helper()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	key := keyFor(p, parts)
	for i := 0; i < n; i++ {
		wg.Add(1)
		prod.Produce(context.Background(), &Message{Topic: "t", Key: key, Value: []byte("v")}, func(_ *Message, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	return errs
}

// maxOutstanding replays the trace and returns the most produce requests
// that were sent and not yet answered at once.
func maxOutstanding(evs []tracer.Event) int {
	open := map[int32]bool{}
	most := 0
	for _, e := range evs {
		switch e.Kind {
		case tracer.SendNew, tracer.Resend:
			open[e.Req] = true
		case tracer.Receive:
			delete(open, e.Req)
		}
		most = max(most, len(open))
	}
	return most
}

// TestFiveInFlight: with a slow broker, five produce requests are outstanding
// at once on the one connection, and never more.
func TestFiveInFlight(t *testing.T) {
	c := newCluster(t, 8, kfake.NumBrokers(1))
	if _, err := fault.InstallKfake(fault.Target{Cluster: c, Topic: "t", Partitions: 8, Seed: 1},
		[]fault.Fault{{Kind: fault.Slow, Rate: 1, Count: -1, Delay: 5 * time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	p := newProducer(t, c, Linger(0), BatchBytes(128), Trace(sink))
	if errs := sendTo(t, p, 3, 8, 300); len(errs) > 0 {
		t.Fatal(errs[0])
	}
	if got := maxOutstanding(sink.evs); got != 5 {
		t.Fatalf("at most %d requests were outstanding at once, want 5", got)
	}
}

// TestFirstAckHoldsOnlyItsPartition: while partition 0 waits for the first
// ack of its epoch (its first produce is held by the broker), partition 0
// gets no second sequence but partition 1, on the same connection, keeps
// sending new batches.
func TestFirstAckHoldsOnlyItsPartition(t *testing.T) {
	c := newCluster(t, 2, kfake.NumBrokers(1))
	sink := &memSink{}
	p := newProducer(t, c, Linger(0), BatchBytes(64), Trace(sink))
	if errs := sendTo(t, p, 1, 2, 5); len(errs) > 0 { // partition 1 has its first ack
		t.Fatal(errs[0])
	}
	if _, err := fault.InstallKfake(fault.Target{Cluster: c, Topic: "t", Partitions: 2, Seed: 1, Trace: sink},
		[]fault.Fault{{Kind: fault.SeedRace, Count: -1, Delay: 100 * time.Millisecond, Partitions: []int32{0}}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, part := range []int32{0, 1} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs := sendTo(t, p, part, 2, 100); len(errs) > 0 {
				t.Error(errs[0])
			}
		}()
	}
	wg.Wait()
	// Between partition 0's first SendNew and its first Receive:
	var first0, recv0 int64
	for _, e := range sink.evs {
		if e.Partition == 0 && e.Kind == tracer.SendNew && first0 == 0 {
			first0 = e.I
		}
		if e.Partition == 0 && e.Kind == tracer.Receive && recv0 == 0 {
			recv0 = e.I
		}
	}
	new0, new1 := 0, 0
	for _, e := range sink.evs[first0 : recv0-1] {
		if e.Kind == tracer.SendNew {
			if e.Partition == 0 {
				new0++
			} else {
				new1++
			}
		}
	}
	if new0 != 0 {
		t.Errorf("partition 0 got %d new sequences while awaiting its first ack", new0)
	}
	if new1 < 2 {
		t.Errorf("partition 1 sent %d new batches while partition 0 waited, want it not held back", new1)
	}
}

// TestBumpAfterUnresolvedSequence: a batch that keeps failing before the
// append expires at the delivery timeout; its sequence is unresolved, so once
// nothing is in flight the producer bumps its epoch and the next batch starts
// at sequence 0 of the new epoch (TransactionManager.maybeResolveSequences).
func TestBumpAfterUnresolvedSequence(t *testing.T) {
	c := newCluster(t, 1, kfake.NumBrokers(1))
	sink := &memSink{}
	p := newProducer(t, c, Linger(0), RequestTimeout(200*time.Millisecond), DeliveryTimeout(300*time.Millisecond),
		RetryBackoff(10*time.Millisecond), Trace(sink))
	if errs := sendTo(t, p, 0, 1, 3); len(errs) > 0 {
		t.Fatal(errs[0])
	}
	// Fail the next batch until it has expired.
	expired := sink.notify(tracer.ExpireBatch)
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.NotEnoughReplicas, Count: -1})
	errs := sendTo(t, p, 0, 1, 1)
	<-expired
	h.Remove()
	if len(errs) != 1 {
		t.Fatalf("the faulted record: %v, want the delivery timeout", errs)
	}
	if errs := sendTo(t, p, 0, 1, 1); len(errs) > 0 {
		t.Fatalf("after the bump: %v", errs[0])
	}
	var bumped, resolved bool
	var after *tracer.Event
	for i, e := range sink.evs {
		switch {
		case e.Kind == tracer.ResolveSequences && e.Bumped:
			resolved = true
		case e.Kind == tracer.Bump:
			bumped = true
		case e.Kind == tracer.SendNew && bumped:
			after = &sink.evs[i]
		}
	}
	if !resolved || !bumped || after == nil {
		t.Fatalf("want ResolveSequences(bump), Bump, then a SendNew: resolved %v bumped %v", resolved, bumped)
	}
	if after.Epoch != 1 || after.Seq != 0 {
		t.Fatalf("first batch after the bump: epoch %d seq %d, want epoch 1 seq 0", after.Epoch, after.Seq)
	}
}

// TestNoGoroutineLeak: Close leaves nothing running, even with records
// buffered and a slow broker.
func TestNoGoroutineLeak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := New(ctx, Brokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		p.Produce(ctx, &Message{Topic: "t", Value: []byte("v")}, nil)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// TestUnreachableBroker: New fails with a clear error.
func TestUnreachableBroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := New(ctx, Brokers("127.0.0.1:1"))
	if err == nil {
		t.Fatal("New succeeded against a closed port")
	}
	if want := "no broker reachable"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

// TestBufferBound: with the broker holding every produce, Produce blocks once
// MaxBufferedRecords records are buffered, until its context ends: memory is
// bounded by the buffer, not by the records sent.
func TestBufferBound(t *testing.T) {
	c := newCluster(t, 1, kfake.NumBrokers(1))
	release := make(chan struct{})
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		c.SleepControl(func() { <-release })
		return nil, nil, false
	})
	p := newProducer(t, c, MaxBufferedRecords(50), Linger(0))
	var wg sync.WaitGroup
	wg.Add(50)
	for i := 0; i < 50; i++ {
		p.Produce(context.Background(), &Message{Topic: "t", Value: []byte("v")}, func(_ *Message, err error) {
			if err != nil {
				t.Error(err)
			}
			wg.Done()
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the 51st must not wait for room that never comes
	var got error
	p.Produce(ctx, &Message{Topic: "t", Value: []byte("v")}, func(_ *Message, err error) { got = err })
	if !errors.Is(got, context.Canceled) {
		t.Fatalf("the 51st record: %v, want it refused for lack of room", got)
	}
	close(release)
	wg.Wait()
}

// TestInitProducerIDRetries: a broker that answers InitProducerId with a
// retriable error at first (as a fresh Kafka broker does, with
// COORDINATOR_LOAD_IN_PROGRESS) is asked again.
func TestInitProducerIDRetries(t *testing.T) {
	c := newCluster(t, 1, kfake.NumBrokers(1))
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.InitProducerID}, TopLevel: true, Err: kerr.CoordinatorLoadInProgress, Count: 2})
	p := newProducer(t, c)
	if pid, _ := p.ProducerID(); pid < 0 || h.Hits() != 2 {
		t.Fatalf("producer id %d after %d faulted attempts, want a producer id after 2", pid, h.Hits())
	}
}

// TestFirstAckNoBusyLoop: while the only partition waits for its first ack
// (the broker holds it), the sender does not spin: over a window in which
// nothing can be sent it wakes a bounded number of times, where a busy loop
// would wake thousands.
func TestFirstAckNoBusyLoop(t *testing.T) {
	c := newCluster(t, 1, kfake.NumBrokers(1))
	release := make(chan struct{})
	held := make(chan struct{}, 1)
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		select {
		case held <- struct{}{}:
			c.SleepControl(func() { <-release }) // hold the first produce until the test has looked
		default:
		}
		c.KeepControl()
		return nil, nil, false
	})
	p := newProducer(t, c, Linger(0), BatchBytes(64))
	var wg sync.WaitGroup
	const n = 100
	wg.Add(n)
	for i := 0; i < n; i++ {
		p.Produce(context.Background(), &Message{Topic: "t", Value: []byte("0123456789")}, func(_ *Message, err error) {
			if err != nil {
				t.Error(err)
			}
			wg.Done()
		})
	}
	<-held
	// The observation window: a flush that cannot finish while the first
	// batch is held, bounded by its deadline.
	before := p.Stats().Steps
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	if err := p.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("flush while held: %v, want the deadline", err)
	}
	cancel()
	during := p.Stats().Steps - before
	close(release)
	wg.Wait()
	if during > 20 {
		t.Fatalf("the sender woke %d times in 200ms while nothing could be sent: a busy loop", during)
	}
	t.Logf("%d wake-ups in 200ms while the first batch was held", during)
}

// TestUnknownTopic: a record for a topic the cluster does not have fails
// with ErrUnknownTopic, naming the topic.
func TestUnknownTopic(t *testing.T) {
	c := newCluster(t, 1, kfake.NumBrokers(1))
	p := newProducer(t, c)
	var got error
	done := make(chan struct{})
	p.Produce(context.Background(), &Message{Topic: "no-such-topic", Value: []byte("v")}, func(_ *Message, err error) {
		got = err
		close(done)
	})
	<-done
	if !errors.Is(got, ErrUnknownTopic) || !strings.Contains(got.Error(), "no-such-topic") {
		t.Fatalf("got %v, want ErrUnknownTopic naming the topic", got)
	}
}

// TestOnlyItsTopics checks that the producer learns only the topics it
// produces to: a metadata request with no topics must not ask for the whole
// cluster, whose every partition the sender would then keep and scan (a
// cluster of 500 topics made each step walk 19,000 partitions).
func TestOnlyItsTopics(t *testing.T) {
	c := newCluster(t, 1, kfake.SeedTopics(50, "other-1", "other-2"))
	p := newProducer(t, c)
	produceAll(t, p, 10, 1)
	var names []string
	parts := 0
	for name, ti := range p.meta.Load().topics {
		names = append(names, name)
		parts += len(ti.parts)
	}
	if len(names) != 1 || names[0] != "t" || parts != 1 {
		t.Fatalf("the producer knows topics %v (%d partitions), want only t (1 partition)", names, parts)
	}
}
