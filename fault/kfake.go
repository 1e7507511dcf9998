package fault

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/recordbatch"
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

// CheckKfake reports the first of fs that kfake cannot inject: what kfake's
// control API cannot do needs kcheck proxy (or a real broker).
func CheckKfake(fs []Fault) error {
	for _, f := range fs {
		eff := f.Effect()
		switch {
		case eff.Scope == OnCluster:
			return fmt.Errorf("fault %s: acts on a real cluster's nodes: %w (a cluster kcheck started, kcheck kafka --nodes 3 --control ADDR, behind kcheck proxy --cluster ADDR)", f, ErrNeedsRealBroker)
		case eff.Scope == OnBroker:
			return fmt.Errorf("fault %s: kfake keeps idempotent producer state forever: %w (one run with producer.id.expiration.ms=D, such as kcheck kafka --producer-id-expiration, behind kcheck proxy)", f, ErrNeedsRealBroker)
		case eff.Late || eff.Scope == OnTxn:
			return fmt.Errorf("fault %s: a late request or a lost coordinator answer needs kcheck proxy, which sends the request later on a connection of its own", f)
		case f.Until():
			what := "until=next"
			if f.UntilSeq {
				what = "until=seq"
			}
			return fmt.Errorf("fault %s: %s needs kcheck proxy: kfake handles a connection's requests one at a time, so a later attempt cannot come while an answer is held", f, what)
		case eff.Cut == CutAfter:
			return fmt.Errorf("fault %s: cut:when=after needs kcheck proxy: kfake cannot close a connection after it has handled a request", f)
		case eff.Holds && eff.Written && f.Delay > 0:
			return fmt.Errorf("fault %s: holding the answer to an attempt the broker handles needs kcheck proxy: kfake can hold a request only before it handles it", f)
		case eff.ErrAnswer && eff.Written && f.Err() != kerr.RequestTimedOut && f.Err() != kerr.NotEnoughReplicasAfterAppend:
			return fmt.Errorf("fault %s: kfake appends a faulted produce only when it answers REQUEST_TIMED_OUT or NOT_ENOUGH_REPLICAS_AFTER_APPEND: use kcheck proxy", f)
		}
	}
	return nil
}

// InstallKfake installs fs on t's cluster. Every time a fault acts it emits a
// tracer.Fault event naming the spec action it forced. Calling stop ends
// every fault (the cluster then answers as itself), as a run does before
// it reads the topic back.
//
// The faults on a partition's attempt are chosen as each produce request
// comes in, before the cluster handles it, the way kcheck proxy chooses
// them (Attempts, Fault.Selects; the first of fs that selects an attempt
// takes it): after=answer counts an answer as given once the cluster has
// handled its request (kfake writes it at once).
func InstallKfake(t Target, fs []Fault) (stop func(), err error) {
	if err := CheckKfake(fs); err != nil {
		return nil, err
	}
	in := &installer{t: t, fs: fs, rng: rand.New(rand.NewPCG(t.Seed, 0x6b636865636b)), att: NewAttempts(fs),
		left: make([]int, len(fs)), chosen: map[*kmsg.ProduceRequest]map[int32]int{}}
	onAttempt, afterAnswer := false, false
	for i, f := range fs {
		in.left[i] = f.Count
		onAttempt = onAttempt || f.Effect().Scope == OnAttempt
		afterAnswer = afterAnswer || f.AfterAnswer
	}
	if afterAnswer {
		in.observeAnswers() // before every fault that answers for the cluster
	}
	if onAttempt {
		in.choose() // first, so every fault on an attempt is chosen at once, in order
	}
	for i, f := range fs {
		eff := f.Effect()
		switch {
		case eff.Scope == OnAttempt && eff.Cut == CutBefore:
			// choose closes the connection itself.
		case eff.Scope == OnAttempt && eff.ErrAnswer:
			in.answer(i, f.Err(), eff.Action)
		case eff.Scope == OnAttempt:
			return nil, fmt.Errorf("fault %s: kfake cannot inject it (use kcheck proxy)", f)
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

// maxChosen bounds the requests whose chosen faults are kept for the
// cluster's handling: a request is handled right after it is chosen for,
// or after its hold, and forgotten then, unless the cluster answered it
// without looking at its partitions.
const maxChosen = 1024

type installer struct {
	t  Target
	fs []Fault
	mu sync.Mutex // guards what follows; controls may run concurrently after SleepControl
	// rng draws the rated faults
	rng  *rand.Rand
	att  *Attempts
	left []int // per fault, how many more times it may fire; -1: no limit
	// chosen is, per produce request, the fault (index in fs) chosen for
	// each partition's attempt; order is their arrival, to bound it
	chosen  map[*kmsg.ProduceRequest]map[int32]int
	order   []*kmsg.ProduceRequest
	stopped atomic.Bool // no fault fires once set
}

// choose picks, as each produce request comes in, the fault for each of the
// traced topic's partitions' attempts (the first of fs that Hits the
// partition, Selects the attempt, and fires: its rate, then its count). A
// cut closes the connection at once, the request unhandled; a hold sleeps
// the request for the longest delay chosen (kfake answers a connection's
// requests in order, so the request's other partitions wait too, as their
// answer does through the proxy); the faults that answer for the cluster
// (answer) act on what was chosen when the cluster handles the request.
func (in *installer) choose() {
	c := in.t.Cluster
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if in.stopped.Load() {
			return nil, nil, false
		}
		req := kreq.(*kmsg.ProduceRequest)
		now := time.Now()
		var (
			picked map[int32]int
			hold   time.Duration
			cut    = int32(-1)
		)
		in.mu.Lock()
		for _, rt := range req.Topics {
			if rt.Topic != in.t.Topic {
				continue
			}
			for _, rp := range rt.Partitions {
				var b kmsg.RecordBatch
				if b.ReadFrom(rp.Records) != nil {
					continue // kfake refuses it
				}
				id := BatchOf(-1, b.ProducerID, b.ProducerEpoch, b.FirstSequence)
				if in.att.CountsTries() {
					id = BatchOf(firstRecordID(rp.Records), b.ProducerID, b.ProducerEpoch, b.FirstSequence)
				}
				a := in.att.Next(rp.Partition, id, b.ProducerID, b.ProducerEpoch, b.FirstSequence, now)
				if cut >= 0 {
					continue // nothing of the request is handled
				}
				for i := range in.fs {
					f := &in.fs[i]
					eff := f.Effect()
					if eff.Scope != OnAttempt || !f.Hits(rp.Partition) || !f.Selects(a) || !in.fireLocked(i) {
						continue
					}
					if eff.Cut == CutBefore {
						cut = rp.Partition
						break
					}
					if picked == nil {
						picked = map[int32]int{}
					}
					picked[rp.Partition] = i
					if eff.Holds {
						hold = max(hold, f.Delay)
					}
					break
				}
			}
		}
		if picked != nil && cut < 0 {
			in.keepLocked(req, picked)
		}
		in.mu.Unlock()
		if cut >= 0 {
			in.emit("DropConnection", req, cut, nil)
			return nil, errors.New("kcheck fault: cut"), true
		}
		if hold > 0 {
			c.SleepControl(func() { time.Sleep(hold) }) // the injected delay itself
		}
		return nil, nil, false // the cluster handles it, with the faults chosen
	})
}

// keepLocked keeps the faults chosen for req's partitions until the cluster
// handles them, forgetting the oldest kept if there are too many.
func (in *installer) keepLocked(req *kmsg.ProduceRequest, picked map[int32]int) {
	in.chosen[req] = picked
	in.order = append(in.order, req)
	if len(in.order) > 2*maxChosen {
		in.order = slices.DeleteFunc(in.order, func(r *kmsg.ProduceRequest) bool { return in.chosen[r] == nil })
	}
	for len(in.chosen) > maxChosen {
		delete(in.chosen, in.order[0])
		in.order = in.order[1:]
	}
}

// takeChosen reports whether fault i was chosen for partition p of req,
// and forgets it: the cluster is handling it.
func (in *installer) takeChosen(req *kmsg.ProduceRequest, p int32, i int) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	m := in.chosen[req]
	if j, ok := m[p]; !ok || j != i {
		return false
	}
	delete(m, p)
	if len(m) == 0 {
		delete(in.chosen, req)
	}
	return true
}

// firstRecordID returns the kcheck id of the first record of a produce
// request's records for one partition, -1 if it has none.
func firstRecordID(records []byte) int64 {
	bs, err := recordbatch.Decode(records)
	if err != nil || len(bs) == 0 || len(bs[0].Records) == 0 {
		return -1
	}
	return recordbatch.RecordID(bs[0].Records[0].Headers)
}

// fireLocked reports whether fault i fires now: its rate, then its count.
func (in *installer) fireLocked(i int) bool {
	f := &in.fs[i]
	if in.left[i] == 0 {
		return false
	}
	if f.Effect().Rated && f.Rate < 1 && in.rng.Float64() >= f.Rate {
		return false
	}
	if in.left[i] > 0 {
		in.left[i]--
	}
	return true
}

// observeAnswers notes, as the cluster handles each produce request, that
// its partitions are answered (Attempts.Answered): an observing kfake
// fault, installed before any that answers, so that it sees every request
// the cluster handles.
func (in *installer) observeAnswers() {
	in.t.Cluster.Fault(kfake.Fault{
		Keys: []kmsg.Key{kmsg.Produce}, Topic: in.t.Topic, Count: -1, Observe: true,
		When: func(kreq kmsg.Request) bool {
			in.mu.Lock()
			defer in.mu.Unlock()
			for _, rt := range kreq.(*kmsg.ProduceRequest).Topics {
				if rt.Topic != in.t.Topic {
					continue
				}
				for _, rp := range rt.Partitions {
					in.att.Answered(rp.Partition)
				}
			}
			return false // observed, not counted
		},
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

// take reports whether a request-scoped fault fires now, drawing from the
// seeded rng.
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

// answer answers a partition's attempt with err when choose chose fault i
// for it, tracing action.
func (in *installer) answer(i int, err *kerr.Error, action string) {
	f := in.fs[i]
	for p := int32(0); p < in.t.Partitions; p++ {
		if !f.Hits(p) {
			continue
		}
		in.t.Cluster.Fault(kfake.Fault{
			Keys: []kmsg.Key{kmsg.Produce}, Topic: in.t.Topic, Partitions: []int32{p},
			Err: err, Count: -1,
			When: func(req kmsg.Request) bool {
				if !in.takeChosen(req.(*kmsg.ProduceRequest), p, i) {
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
