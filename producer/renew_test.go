package producer

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/checker/replay"
	"github.com/kcheck/kcheck/tracer"
)

// maxEpoch lowers the epoch at which the producer takes a new producer id
// instead of bumping (math.MaxInt16), so that a test can reach it.
func maxEpoch(e int16) Opt { return optFunc(func(c *cfg) { c.maxEpoch = e }) }

// TestNewProducerIDAtMaxEpoch: a partition that needs an epoch bump when the
// epoch can go no higher gets a new producer id (Java's
// resetIdempotentProducerId), its batches are renumbered from 0 under it,
// the other partition moves to it with its next batch, nothing is lost, and
// the trace conforms to the spec's rules as replay holds them.
func TestNewProducerIDAtMaxEpoch(t *testing.T) {
	c := newCluster(t, 2, kfake.NumBrokers(1))
	sink := &memSink{}
	const deliveryTimeout = 300 * time.Millisecond
	p := newProducer(t, c, Linger(0), RequestTimeout(200*time.Millisecond), DeliveryTimeout(deliveryTimeout),
		RetryBackoff(10*time.Millisecond), Trace(sink), maxEpoch(1))
	startPID, _ := p.ProducerID()
	for part := int32(0); part < 2; part++ {
		if errs := sendTo(t, p, part, 2, 3); len(errs) > 0 {
			t.Fatal(errs[0])
		}
	}
	// Two unresolved sequences on partition 0: the first bump goes to epoch
	// 1, the second would go past maxEpoch and takes a new producer id.
	for round := 1; round <= 2; round++ {
		expired := sink.notify(tracer.ExpireBatch)
		h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Partitions: []int32{0}, Err: kerr.NotEnoughReplicas, Count: -1})
		errs := sendTo(t, p, 0, 2, 1)
		<-expired
		h.Remove()
		if len(errs) != 1 {
			t.Fatalf("round %d: the faulted record: %v, want the delivery timeout", round, errs)
		}
		if errs := sendTo(t, p, 0, 2, 2); len(errs) > 0 {
			t.Fatalf("round %d: after the bump: %v", round, errs[0])
		}
	}
	if errs := sendTo(t, p, 1, 2, 2); len(errs) > 0 {
		t.Fatalf("partition 1 after the new producer id: %v", errs[0])
	}
	if st := p.Stats(); st.NewProducerIDs != 1 || st.Bumps != 2 {
		t.Fatalf("stats: %d new producer ids, %d bumps; want 1 and 2", st.NewProducerIDs, st.Bumps)
	}

	sink.mu.Lock()
	evs := append([]tracer.Event(nil), sink.evs...)
	sink.mu.Unlock()
	var inits []tracer.Event
	lastSend := map[int32]tracer.Event{}
	for _, e := range evs {
		switch e.Kind {
		case tracer.InitProducerID:
			inits = append(inits, e)
		case tracer.SendNew:
			lastSend[e.Partition] = e
		}
	}
	if len(inits) != 2 || inits[0].PID != startPID || inits[1].PID == startPID {
		t.Fatalf("InitProducerId events %+v: want the first with %d and a second with a new id", inits, startPID)
	}
	newPID := inits[1].PID
	for part, e := range lastSend {
		if e.PID != newPID || e.Epoch != inits[1].Epoch {
			t.Errorf("partition %d: last batch sent as producer %d epoch %d, want %d epoch %d", part, e.PID, e.Epoch, newPID, inits[1].Epoch)
		}
	}

	// The faults above are kfake's own, not traced as Fault events: the
	// header says a real broker, whose rules take NOT_ENOUGH_REPLICAS as
	// the broker's own answer.
	m, err := replay.New(tracer.Header{Writer: "kcheck-producer", Topic: "t", Partitions: 2, FirstAck: true, HoldWhileRetrying: true,
		MaxInFlight: 5, DeliveryTimeoutMs: deliveryTimeout.Milliseconds(),
		Broker: tracer.Broker{Kind: "kafka", NoStateRule: "v25to44"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := m.Step(i+1, &evs[i]); err != nil {
			t.Fatalf("replay: %v", err)
		}
	}
}
