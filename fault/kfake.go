package fault

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/tracer"
)

// Target is where faults are installed on an embedded kfake cluster.
type Target struct {
	Cluster        *kfake.Cluster
	Topic          string
	Partitions     int32
	Seed           uint64
	Trace          tracer.Sink   // nil: faults are not traced
	RequestTimeout time.Duration // the client's request.timeout.ms, for TimeoutBeforeAppend
}

// ErrNeedsRealBroker is returned for a fault kfake cannot inject.
var ErrNeedsRealBroker = errors.New("needs a real Kafka broker")

// CheckKfake reports the first of fs that kfake cannot inject.
func CheckKfake(fs []Fault) error {
	for _, f := range fs {
		if f.Kind == StateExpiry {
			return fmt.Errorf("fault %s: kfake keeps idempotent producer state forever: %w (kcheck run --brokers HOST:PORT with producer.id.expiration.ms set low)", f.Kind, ErrNeedsRealBroker)
		}
		if f.UntilNext {
			return fmt.Errorf("fault %s: until=next needs kcheck proxy: kfake handles a connection's requests one at a time, so the next cannot come while an answer is held", f)
		}
	}
	return nil
}

// InstallKfake installs fs on t's cluster. Every time a fault acts it emits a
// tracer.Fault event naming the spec action it forced. Calling stop ends
// every fault (the cluster then answers as itself), as a run does before
// it reads the topic back.
func InstallKfake(t Target, fs []Fault) (stop func(), err error) {
	if err := CheckKfake(fs); err != nil {
		return nil, err
	}
	in := &installer{t: t, rng: rand.New(rand.NewPCG(t.Seed, 0x6b636865636b)), attempts: map[int32]int{}}
	for _, f := range fs {
		if f.Attempt != 0 {
			in.countAttempts() // first, so every fault sees the attempt's number
			break
		}
	}
	for _, f := range fs {
		eff := f.Kind.Effect()
		switch {
		case eff.Scope == OnAttempt && eff.First:
			in.seedRace(f)
		case eff.Scope == OnAttempt:
			in.perPartition(f, f.Err(), eff.Action)
		case eff.Action == "DropConnection":
			in.cut(f, 0)
		case eff.Action == "TimeoutBeforeAppend":
			in.cut(f, t.RequestTimeout+t.RequestTimeout/2)
		case eff.Action == "Delay":
			in.slow(f)
		default:
			return nil, fmt.Errorf("fault %q: unknown kind", f.Kind)
		}
	}
	return func() { in.stopped.Store(true) }, nil
}

type installer struct {
	t        Target
	mu       sync.Mutex // guards rng, the counts and attempts; controls may run concurrently after SleepControl
	rng      *rand.Rand
	attempts map[int32]int // per partition, the attempts the broker has been sent so far, the current one's included
	stopped  atomic.Bool   // no fault fires once set
}

// countAttempts numbers each partition's attempts as produce requests come
// in, before any fault looks at them (Fault.Selects).
func (in *installer) countAttempts() {
	c := in.t.Cluster
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		in.mu.Lock()
		defer in.mu.Unlock()
		for _, rt := range kreq.(*kmsg.ProduceRequest).Topics {
			if rt.Topic != in.t.Topic {
				continue
			}
			for _, rp := range rt.Partitions {
				in.attempts[rp.Partition]++
			}
		}
		return nil, nil, false
	})
}

// emit traces a fault that hit partition p's batch in req (nil: none).
func (in *installer) emit(fault string, req kmsg.Request, p int32, err *kerr.Error) {
	if in.t.Trace == nil {
		return
	}
	name := ""
	if err != nil {
		name = tracer.ErrorName(err.Code)
	}
	ep, seq := attempt(req, in.t.Topic, p)
	in.t.Trace.Emit(&tracer.Event{Kind: tracer.Fault, Fault: fault, Partition: p, Epoch: ep, Seq: seq,
		Node: in.t.Cluster.CurrentNode(), Err: name})
}

// attempt returns the producer epoch and base sequence of partition p's batch
// in a produce request, or -1s: the attempt a fault hit.
func attempt(req kmsg.Request, topic string, p int32) (int16, int32) {
	preq, ok := req.(*kmsg.ProduceRequest)
	if !ok {
		return -1, -1
	}
	for _, rt := range preq.Topics {
		if rt.Topic != topic {
			continue
		}
		for _, rp := range rt.Partitions {
			var b kmsg.RecordBatch
			if rp.Partition == p && b.ReadFrom(rp.Records) == nil {
				return b.ProducerEpoch, b.FirstSequence
			}
		}
	}
	return -1, -1
}

// take reports whether the fault fires now, drawing from the seeded rng.
func (in *installer) take(f *Fault, used *int) bool {
	if in.stopped.Load() {
		return false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if f.Count >= 0 && *used >= f.Count {
		return false
	}
	if in.rng.Float64() >= f.Rate {
		return false
	}
	*used++
	return true
}

// seedRace holds each partition's first produce for f.Delay and then fails it
// with NOT_LEADER_OR_FOLLOWER before the append.
func (in *installer) seedRace(f Fault) {
	c := in.t.Cluster
	seen := make(map[int32]bool)
	used := 0
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if in.stopped.Load() {
			return nil, nil, false
		}
		req := kreq.(*kmsg.ProduceRequest)
		var first []int32
		in.mu.Lock()
		for _, rt := range req.Topics {
			if rt.Topic != in.t.Topic {
				continue
			}
			for _, rp := range rt.Partitions {
				if f.Hits(rp.Partition) && !seen[rp.Partition] && (f.Count < 0 || used < f.Count) {
					seen[rp.Partition] = true
					used++
					first = append(first, rp.Partition)
				}
			}
		}
		in.mu.Unlock()
		if len(first) == 0 {
			return nil, nil, false
		}
		if f.Delay > 0 {
			c.SleepControl(func() { time.Sleep(f.Delay) }) // the injected delay itself
		}
		for _, p := range first {
			c.Fault(kfake.Fault{
				Keys: []kmsg.Key{kmsg.Produce}, Topic: in.t.Topic, Partitions: []int32{p},
				Err: kerr.NotLeaderForPartition, Count: 1,
				When: func(req kmsg.Request) bool {
					in.emit("RejectBeforeAppend", req, p, kerr.NotLeaderForPartition)
					return true
				},
			})
		}
		return nil, nil, false // the cluster handles it, with the faults above
	})
}

// perPartition answers a partition's produce with err, with probability f.Rate.
func (in *installer) perPartition(f Fault, err *kerr.Error, action string) {
	used := 0
	for p := int32(0); p < in.t.Partitions; p++ {
		if !f.Hits(p) {
			continue
		}
		in.t.Cluster.Fault(kfake.Fault{
			Keys: []kmsg.Key{kmsg.Produce}, Topic: in.t.Topic, Partitions: []int32{p},
			Err: err, Count: -1,
			When: func(req kmsg.Request) bool {
				_, seq := attempt(req, in.t.Topic, p)
				in.mu.Lock()
				n := in.attempts[p]
				in.mu.Unlock()
				if !f.Selects(n, seq) || !in.take(&f, &used) {
					return false
				}
				in.emit(action, req, p, err)
				return true
			},
		})
	}
}

// cut closes the connection instead of handling a produce, unapplied, after
// holding it for hold (past the client's request timeout, for a timeout).
func (in *installer) cut(f Fault, hold time.Duration) {
	c := in.t.Cluster
	used := 0
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !in.take(&f, &used) {
			return nil, nil, false
		}
		name := "DropConnection"
		if hold > 0 {
			name = "TimeoutBeforeAppend"
			c.SleepControl(func() { time.Sleep(hold) }) // the injected delay itself
		}
		in.emit(name, nil, -1, nil)
		return nil, errors.New("kcheck fault: " + name), true
	})
}

// slow holds each produce (with probability f.Rate) for f.Delay, then lets the
// cluster handle it. Requests on one connection are handled in order, so the
// holds add up the way a slow broker's do.
func (in *installer) slow(f Fault) {
	c := in.t.Cluster
	used := 0
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if in.take(&f, &used) {
			c.SleepControl(func() { time.Sleep(f.Delay) }) // the injected delay itself
		}
		return nil, nil, false
	})
}
