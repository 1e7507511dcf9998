package producer

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/tracer"
)

// memSink keeps trace events in memory and can tell a test when an event of
// some kind arrives.
type memSink struct {
	mu      sync.Mutex
	evs     []tracer.Event
	waiters map[tracer.Kind][]chan struct{}
}

func (s *memSink) Emit(e *tracer.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.I = int64(len(s.evs) + 1)
	c := *e
	c.Records = slices.Clone(e.Records) // the producer reuses a batch's ids once it is done
	s.evs = append(s.evs, c)
	for _, ch := range s.waiters[e.Kind] {
		close(ch)
	}
	delete(s.waiters, e.Kind)
}

// notify returns a channel closed at the next event of kind.
func (s *memSink) notify(kind tracer.Kind) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiters == nil {
		s.waiters = map[tracer.Kind][]chan struct{}{}
	}
	ch := make(chan struct{})
	s.waiters[kind] = append(s.waiters[kind], ch)
	return ch
}

func (s *memSink) count(kind tracer.Kind, err string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.evs {
		if e.Kind == kind && (err == "" || e.Err == err) {
			n++
		}
	}
	return n
}

// raceRun produces n records over partitions with the seed's fault: every
// partition's first produce is held, then fails NOT_LEADER_OR_FOLLOWER before
// the append. Small batches and no linger make the producer pipeline.
func raceRun(t *testing.T, firstAck bool, partitions int32, n int) (*outcome, *memSink, []*kgo.Record) {
	t.Helper()
	c := newCluster(t, partitions)
	sink := &memSink{}
	if _, err := fault.InstallKfake(fault.Target{Cluster: c, Topic: "t", Partitions: partitions, Seed: 1, Trace: sink},
		[]fault.Fault{{Kind: fault.SeedRace, Count: -1, Delay: 50 * time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	p := newProducer(t, c, FirstAckRule(firstAck), Linger(0), BatchBytes(256),
		RequestTimeout(500*time.Millisecond), DeliveryTimeout(time.Second), RetryBackoff(20*time.Millisecond), Trace(sink))
	o := produceAll(t, p, n, 16)
	acked := n - len(o.errs)
	return o, sink, readBack(t, c, acked)
}

// checkOrder checks that each partition holds the records acknowledged for it
// once each, in the order they were produced, and returns how many of the
// produced records are missing.
func checkOrder(t *testing.T, o *outcome, recs []*kgo.Record) {
	t.Helper()
	byPart := map[int32][]*kgo.Record{}
	for _, r := range recs {
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	seen := map[string]bool{}
	for p, rs := range byPart {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Offset < rs[j].Offset })
		last := -1
		for _, r := range rs {
			var i int
			fmt.Sscanf(string(r.Value), "v%d", &i)
			if seen[string(r.Value)] {
				t.Errorf("partition %d: %s duplicated", p, r.Value)
			}
			seen[string(r.Value)] = true
			if i < last {
				t.Errorf("partition %d: %s after v%d: reordered", p, r.Value, last)
			}
			last = i
		}
	}
	for v := range o.acks {
		if !seen[v] {
			t.Errorf("%s acknowledged but not in the log", v)
		}
	}
}

func TestSeedRaceRuleOffLoses(t *testing.T) {
	o, sink, recs := raceRun(t, false, 4, 400)
	if len(o.errs) == 0 {
		t.Fatal("rule off: expected records to fail after the seed's race, none did")
	}
	for _, err := range o.errs {
		if !errors.Is(err, ErrDeliveryTimeout) {
			t.Fatalf("rule off: failed with %v, want the delivery timeout", err)
		}
	}
	if n := sink.count(tracer.Receive, "OUT_OF_ORDER_SEQUENCE_NUMBER"); n == 0 {
		t.Fatal("rule off: no OUT_OF_ORDER_SEQUENCE_NUMBER retries in the trace")
	}
	// What was acknowledged is still there, once and in order; the loss is
	// the first batches that failed.
	checkOrder(t, o, recs)
	t.Logf("rule off: %d of 400 records failed, %d OUT_OF_ORDER_SEQUENCE_NUMBER answers", len(o.errs), sink.count(tracer.Receive, "OUT_OF_ORDER_SEQUENCE_NUMBER"))
}

func TestSeedRaceRuleOnDelivers(t *testing.T) {
	o, sink, recs := raceRun(t, true, 4, 400)
	if len(o.errs) > 0 {
		t.Fatalf("rule on: %d records failed, first: %v", len(o.errs), o.errs[0])
	}
	if len(recs) != 400 {
		t.Fatalf("rule on: read back %d records, want 400", len(recs))
	}
	if n := sink.count(tracer.Fault, ""); n != 4 {
		t.Fatalf("rule on: the fault fired %d times, want once per partition (4)", n)
	}
	if n := sink.count(tracer.Receive, "OUT_OF_ORDER_SEQUENCE_NUMBER"); n != 0 {
		t.Fatalf("rule on: %d OUT_OF_ORDER_SEQUENCE_NUMBER answers", n)
	}
	checkOrder(t, o, recs)
}
