package matrix

import (
	"fmt"
	"strings"
	"time"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/tracer"
)

// Step is one line of a schedule as the reached check reads it: which Fault
// events are its own, and what its hold waits for.
type Step struct {
	Line   string // the schedule line, for messages
	Action string // the Fault events it emits (fault.Effect.Action)
	// Fault selects the attempts the step acts on (fault.Fault.Selects,
	// with the attempts numbered from the trace as the proxy numbers
	// them), so that two steps that differ only by try= or epoch= each
	// claim their own Fault event.
	Fault      fault.Fault
	Partitions []int32 // nil: any
	// Wait is what the step's held answer waits for: "" nothing, "next"
	// (a later batch of the partition sent), "seq" (the attempt with base
	// sequence WaitSeq of the same epoch sent), "late" (a late request's
	// condition, the fault's LateUntil: its tracer.LateSent event).
	Wait    string
	WaitSeq int32
	// Idle > 0: the step needs the partition idle that long on the wire
	// (the broker's producer-state expiry), seen as a gap between its
	// attempts; such a step emits no Fault event.
	Idle time.Duration
}

func (s *Step) hits(p int32) bool {
	if s.Partitions == nil {
		return true
	}
	for _, q := range s.Partitions {
		if q == p {
			return true
		}
	}
	return false
}

// Reach says whether a run reached its scenario's dangerous state.
type Reach struct {
	Status string `json:"status"`        // Reached, HeldBack or NotReached
	Why    string `json:"why,omitempty"` // for HeldBack and NotReached: which step, and what did not happen
}

// The statuses of a Reach.
const (
	Reached    = "reached"
	HeldBack   = "held back"   // a hold ran out: the client did not send what the step waited for
	NotReached = "not reached" // a step never acted: the attempt it selects never came
	NoFaults   = "no faults"   // the baseline: a schedule with no steps
)

// pendingHold is a step's held answer whose condition is not met yet.
type pendingHold struct {
	step    int
	p       int32
	ep      int16
	seq     int32
	node    int32
	settled bool
}

// Reacher follows a trace's events and tells, at the end, whether every
// step of a schedule acted and every hold's condition was met at least once.
type Reacher struct {
	steps   []Step
	fired   []int
	met     []int
	pending []*pendingHold
	last    map[int32]int64 // a partition's last attempt, trace time
	gap     map[int32]int64 // its longest gap between attempts
	// att numbers the trace's attempts as kcheck proxy did when it chose
	// which to fault; latest is each attempt's numbers, by partition,
	// epoch and sequence (the Fault event names no more; its keys are every
	// attempt sent, for until=seq:K), and first each
	// batch's first record id (a Resend does not list its records).
	att    *fault.Attempts
	latest map[sentKey]fault.Attempt
	first  map[batchKey]int64
}

type batchKey struct {
	p int32
	b int64
}

// NewReacher returns a Reacher for the steps of a schedule.
func NewReacher(steps []Step) *Reacher {
	fs := make([]fault.Fault, len(steps))
	for i := range steps {
		fs[i] = steps[i].Fault
	}
	return &Reacher{steps: steps, fired: make([]int, len(steps)), met: make([]int, len(steps)),
		last: map[int32]int64{}, gap: map[int32]int64{},
		att: fault.NewAttempts(fs), latest: map[sentKey]fault.Attempt{}, first: map[batchKey]int64{}}
}

// wasSent reports whether an attempt with k's partition, epoch and base
// sequence was sent.
func (r *Reacher) wasSent(k sentKey) bool {
	_, ok := r.latest[k]
	return ok
}

type sentKey struct {
	p   int32
	ep  int16
	seq int32
}

// Add takes the trace's next event.
func (r *Reacher) Add(e *tracer.Event) {
	switch e.Kind {
	case tracer.Fault:
		if r.late(e) {
			return
		}
		if tracer.IsClusterFault(e.Fault) {
			// A fault on the cluster's nodes is reached when it acts: its
			// first step not yet fired that emits this event.
			for i := range r.steps {
				if s := &r.steps[i]; s.Fault.Effect().Scope == fault.OnCluster && s.Action == e.Fault && r.fired[i] == 0 {
					r.fired[i]++
					break
				}
			}
			return
		}
		at, ok := r.latest[sentKey{e.Partition, e.Epoch, e.Seq}]
		for i := range r.steps {
			s := &r.steps[i]
			if !ok || s.Idle > 0 || e.Fault != s.Action || !s.hits(e.Partition) || !s.Fault.Selects(at) {
				continue
			}
			r.fired[i]++
			switch {
			case s.Wait == "late": // met by its LateSent
			case s.Wait == "seq" && r.wasSent(sentKey{e.Partition, e.Epoch, s.WaitSeq}):
				r.met[i]++ // sent before the held attempt: the proxy counts it too
			case s.Wait != "":
				r.pending = append(r.pending, &pendingHold{step: i, p: e.Partition, ep: e.Epoch, seq: e.Seq, node: e.Node})
			}
			break // one Fault event is one step's
		}
	case tracer.SendNew, tracer.Resend:
		if t, ok := r.last[e.Partition]; ok {
			r.gap[e.Partition] = max(r.gap[e.Partition], e.T-t)
		}
		r.last[e.Partition] = e.T
		k := sentKey{e.Partition, e.Epoch, e.Seq}
		bk := batchKey{e.Partition, e.Batch}
		if _, ok := r.first[bk]; !ok {
			r.first[bk] = -1
			if len(e.Records) > 0 {
				r.first[bk] = e.Records[0]
			}
		}
		r.latest[k] = r.att.Next(e.Partition, fault.BatchOf(r.first[bk], e.PID, e.Epoch, e.Seq), e.PID, e.Epoch, e.Seq, time.Unix(0, e.T))
		for _, h := range r.pending {
			if h.settled || h.p != e.Partition {
				continue
			}
			s := &r.steps[h.step]
			if s.Wait == "next" && e.Kind == tracer.SendNew || s.Wait == "seq" && e.Epoch == h.ep && e.Seq == s.WaitSeq {
				h.settled = true
				r.met[h.step]++
			}
		}
	case tracer.Receive:
		r.att.Answered(e.Partition)
		for _, h := range r.pending {
			if !h.settled && h.p == e.Partition && h.ep == e.Epoch && h.seq == e.Seq {
				h.settled = true // answered before its condition: the hold ran out
			}
		}
	case tracer.Disconnect:
		for _, h := range r.pending {
			if !h.settled && h.node == e.Node {
				h.settled = true
			}
		}
	}
}

// late takes a late request's Fault events: a request to the transaction
// coordinator kept (a Delay of no partition) fires the first late step of
// that scope not fired yet, and a LateSent meets the first late step fired
// and not met. A late Produce's keeping is an attempt's Delay, which Add
// takes as any step's.
func (r *Reacher) late(e *tracer.Event) bool {
	switch {
	case e.Fault == tracer.LateSent:
		for i, s := range r.steps {
			if s.Wait == "late" && r.met[i] < r.fired[i] {
				r.met[i]++
				break
			}
		}
		return true
	case e.Fault == "Delay" && e.Partition < 0:
		for i, s := range r.steps {
			if s.Wait == "late" && s.Fault.Effect().Scope == fault.OnTxn && r.fired[i] == 0 {
				r.fired[i]++
				break
			}
		}
		return true
	}
	return false
}

// Result says whether the run reached the schedule's state.
func (r *Reacher) Result() Reach {
	if len(r.steps) == 0 {
		return Reach{Status: NoFaults}
	}
	for i, s := range r.steps {
		if s.Idle > 0 {
			var longest int64
			for p, g := range r.gap {
				if s.hits(p) {
					longest = max(longest, g)
				}
			}
			if longest < s.Idle.Nanoseconds() {
				return Reach{NotReached, fmt.Sprintf("%s: no partition it names was idle %v between two attempts (longest %v)", s.Line, s.Idle, time.Duration(longest).Round(time.Millisecond))}
			}
			continue
		}
		if r.fired[i] == 0 {
			if s.Fault.Effect().Scope == fault.OnCluster {
				return Reach{NotReached, fmt.Sprintf("%s: never acted (the client ended before its trigger)", s.Line)}
			}
			return Reach{NotReached, fmt.Sprintf("%s: never acted (the attempt it selects never came)", s.Line)}
		}
	}
	for i, s := range r.steps {
		if s.Wait != "" && r.met[i] == 0 {
			switch s.Wait {
			case "late":
				return Reach{HeldBack, fmt.Sprintf("%s: kept the request %d times, and the client never did %s while it was kept", s.Line, r.fired[i], lateWords(s.Fault.LateUntil))}
			case "seq":
				return Reach{HeldBack, fmt.Sprintf("%s: acted %d times, and each time the attempt with base sequence %d was not sent while the answer was held", s.Line, r.fired[i], s.WaitSeq)}
			}
			return Reach{HeldBack, fmt.Sprintf("%s: acted %d times, and each time a later batch of the partition was not sent while the answer was held", s.Line, r.fired[i])}
		}
	}
	return Reach{Status: Reached}
}

// StepsOf returns the reached check's steps for a schedule.
func StepsOf(fs []fault.Fault) []Step {
	var steps []Step
	for _, f := range fs {
		eff := f.Effect()
		s := Step{Line: f.String(), Action: eff.Action, Fault: f, Partitions: f.Partitions}
		switch {
		case eff.Late:
			// Traced as the attempt's (or, to the coordinator, no
			// partition's) Delay, then LateSent once its condition held.
			s.Action, s.Wait = "Delay", "late"
		case f.Kind == fault.StateExpiry:
			s.Idle = f.Delay
		case f.UntilNext:
			s.Wait = "next"
		case f.UntilSeq:
			s.Wait, s.WaitSeq = "seq", f.UntilK
		}
		steps = append(steps, s)
	}
	return steps
}

// lateWords says a late fault's condition (fault.Fault.LateUntil) as what
// the client had to do: "send:end-txn" is "send an EndTxn", "answer:API"
// "get the coordinator's answer to API".
func lateWords(until string) string {
	kind, api, _ := strings.Cut(until, ":")
	name := map[string]string{"produce": "a Produce", "add-partitions": "an AddPartitionsToTxn", "end-txn": "an EndTxn", "init-pid": "an InitProducerId"}[api]
	if name == "" {
		name = api
	}
	switch kind {
	case "send":
		return "send " + name
	case "answer":
		return "get the answer to " + name
	}
	return until
}
