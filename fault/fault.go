// Package fault describes the faults kcheck injects as values: which produce
// requests they hit, what happens to them, and how often. The same value is
// written into the trace header, installed on the embedded kfake broker by
// kcheck run (kfake.go), and named in reports.
package fault

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kcheck/kcheck/tracer"
)

// Kind is what a fault does to a produce.
type Kind string

// The faults kcheck run knows. Each says which spec action it forces.
const (
	// SeedRace is KAFKA-14359's race: each partition's first produce is held
	// for Delay, so a pipelining client can send its next batch, and then
	// fails with NOT_LEADER_OR_FOLLOWER before the append (RejectBeforeAppend).
	SeedRace Kind = "seed-race"
	// NotEnoughReplicas fails produces with NOT_ENOUGH_REPLICAS before the
	// append (RejectBeforeAppend), each with probability Rate.
	NotEnoughReplicas Kind = "not-enough-replicas"
	// NotLeader fails produces with NOT_LEADER_OR_FOLLOWER before the append
	// (RejectBeforeAppend), each with probability Rate.
	NotLeader Kind = "not-leader"
	// TimeoutBeforeAppend holds a produce past the client's request timeout
	// and drops it unapplied, closing the connection (Disconnect).
	TimeoutBeforeAppend Kind = "timeout-before-append"
	// TimeoutAfterAppend applies a produce and answers REQUEST_TIMED_OUT
	// (AppendThenFail), each with probability Rate.
	TimeoutAfterAppend Kind = "timeout-after-append"
	// DropConnection closes the connection instead of handling a produce,
	// unapplied (Disconnect), each with probability Rate.
	DropConnection Kind = "drop-connection"
	// Slow holds every produce for Delay before the broker handles it: a slow
	// or distant broker, for pipelining.
	Slow Kind = "slow"
	// StateExpiry expires the producer's state on the broker
	// (ExpireProducerState). kfake keeps idempotent producer state forever,
	// so this needs a real broker.
	StateExpiry Kind = "state-expiry"
	// Reject answers the attempts it selects with Err (any Kafka error)
	// before the append (RejectBeforeAppend): a schedule's step.
	Reject Kind = "reject"
	// AppendThenError appends the attempts it selects and answers them with
	// Err (AppendThenFail): a schedule's step.
	AppendThenError Kind = "append-then-error"
)

// Scope is what a fault acts on.
type Scope uint8

const (
	OnAttempt Scope = iota // one partition's attempt in a produce request
	OnRequest              // a whole produce request, and its connection
	OnBroker               // the broker's own state
)

// Effect is what a kind of fault does to what it hits: the one table the
// interpreters (InstallKfake here, tracer/proxy) read, so that a kind means
// the same on kfake and through the proxy.
type Effect struct {
	Action  string      // the spec action it forces, as its Fault events name it
	Err     *kerr.Error // what it answers with; nil: no answer (or the Fault's Err, for Reject and AppendThenError)
	Written bool        // whether the attempt it hits is appended
	Scope   Scope
	// First: only a partition's first produce, its answer held for the
	// fault's Delay (the seed's race). Rated: fires with probability Rate.
	First, Rated bool
}

var effects = map[Kind]Effect{
	SeedRace:            {Action: "RejectBeforeAppend", Err: kerr.NotLeaderForPartition, Scope: OnAttempt, First: true},
	NotEnoughReplicas:   {Action: "RejectBeforeAppend", Err: kerr.NotEnoughReplicas, Scope: OnAttempt, Rated: true},
	NotLeader:           {Action: "RejectBeforeAppend", Err: kerr.NotLeaderForPartition, Scope: OnAttempt, Rated: true},
	TimeoutAfterAppend:  {Action: "AppendThenFail", Err: kerr.RequestTimedOut, Written: true, Scope: OnAttempt, Rated: true},
	Reject:              {Action: "RejectBeforeAppend", Scope: OnAttempt, Rated: true},
	AppendThenError:     {Action: "AppendThenFail", Written: true, Scope: OnAttempt, Rated: true},
	DropConnection:      {Action: "DropConnection", Scope: OnRequest, Rated: true},
	TimeoutBeforeAppend: {Action: "TimeoutBeforeAppend", Scope: OnRequest, Rated: true},
	Slow:                {Action: "Delay", Written: true, Scope: OnRequest, Rated: true},
	StateExpiry:         {Action: "ExpireProducerState", Scope: OnBroker},
}

// Effect returns what the kind does.
func (k Kind) Effect() Effect { return effects[k] }

// Kinds lists every fault kind with a one-line description, for --help.
func Kinds() map[Kind]string {
	return map[Kind]string{
		SeedRace:            "each partition's first produce is held, then fails NOT_LEADER_OR_FOLLOWER before the append (KAFKA-14359)",
		NotEnoughReplicas:   "produces fail NOT_ENOUGH_REPLICAS before the append",
		NotLeader:           "produces fail NOT_LEADER_OR_FOLLOWER before the append",
		TimeoutBeforeAppend: "a produce is held past the request timeout and dropped unapplied",
		TimeoutAfterAppend:  "a produce is applied and answered REQUEST_TIMED_OUT",
		DropConnection:      "the connection is cut instead of handling a produce",
		Slow:                "every produce is held for the delay before it is handled (a slow broker)",
		StateExpiry:         "the broker expires the producer's state (real brokers only)",
		Reject:              "the selected attempts are answered err=NAME before the append (attempt=N: a partition's N-th attempt; seq=K: the attempt with base sequence K; until=next,delay=D: the answer held until the partition's next attempt has gone to the broker, at most D, proxy only)",
		AppendThenError:     "the selected attempts are appended and answered err=NAME (attempt=N, seq=K as for reject)",
	}
}

// Fault is one fault to inject.
type Fault struct {
	Kind  Kind
	Rate  float64       // probability per produce of a partition, where the kind uses it
	Count int           // at most this many times; -1 for no limit
	Delay time.Duration // how long a held produce waits
	// Partitions limits the fault to these partitions; nil means all.
	// Used by the per-partition kinds (seed-race, not-enough-replicas,
	// not-leader, timeout-after-append, reject, append-then-error).
	Partitions []int32
	// Which attempts of a partition an OnAttempt fault selects: its
	// Attempt-th (1 for the first; 0: any), and with BySeq only one with
	// base sequence Seq. The zero value selects every attempt.
	Attempt int
	BySeq   bool
	Seq     int32
	// Error overrides the kind's error (err=NAME); Reject and
	// AppendThenError need one.
	Error *kerr.Error
	// UntilNext (until=next, a Reject or the seed's race, through the proxy
	// only): the refused attempt's answer is held until the partition's
	// next attempt has been forwarded to the broker (and NextGrace more, for
	// the broker to handle it), at most Delay: the seed's race made exact.
	UntilNext bool
}

// NextGrace is how long an answer held until the next attempt waits once
// that attempt has gone to the broker, for the broker to handle it.
const NextGrace = 100 * time.Millisecond

// Selects reports whether the fault selects a partition's n-th attempt
// (from 1), whose base sequence is seq.
func (f *Fault) Selects(n int, seq int32) bool {
	return (f.Attempt == 0 || n == f.Attempt) && (!f.BySeq || seq == f.Seq)
}

// Err is the error the fault answers with: its own, or its kind's.
func (f *Fault) Err() *kerr.Error {
	if f.Error != nil {
		return f.Error
	}
	return f.Kind.Effect().Err
}

// Hits reports whether the fault applies to partition p.
func (f *Fault) Hits(p int32) bool {
	if f.Partitions == nil {
		return true
	}
	for _, q := range f.Partitions {
		if q == p {
			return true
		}
	}
	return false
}

// defaults per kind.
func defaultFor(k Kind) Fault {
	switch k {
	case SeedRace:
		return Fault{Kind: k, Count: -1, Delay: 50 * time.Millisecond}
	case TimeoutBeforeAppend:
		return Fault{Kind: k, Rate: 0.01, Count: 2, Delay: 0}
	case Slow:
		return Fault{Kind: k, Rate: 1, Count: -1, Delay: 20 * time.Millisecond}
	case Reject, AppendThenError:
		return Fault{Kind: k, Rate: 1, Count: 1}
	default:
		return Fault{Kind: k, Rate: 0.02, Count: 20}
	}
}

// Parse reads a fault from its command-line form: a kind, optionally with
// parameters, as in "not-enough-replicas:rate=0.1,count=5" or
// "seed-race:delay=100ms".
func Parse(s string) (Fault, error) {
	name, params, _ := strings.Cut(strings.TrimSpace(s), ":")
	k := Kind(name)
	if _, ok := Kinds()[k]; !ok {
		return Fault{}, fmt.Errorf("unknown fault %q; known faults: %s", name, strings.Join(names(), ", "))
	}
	f := defaultFor(k)
	if params == "" {
		return f, f.check(s)
	}
	for _, kv := range strings.Split(params, ",") {
		key, val, ok := strings.Cut(kv, "=")
		if !ok {
			return Fault{}, fmt.Errorf("fault %q: parameter %q is not key=value", s, kv)
		}
		var err error
		switch key {
		case "rate":
			f.Rate, err = strconv.ParseFloat(val, 64)
			if err == nil && (f.Rate < 0 || f.Rate > 1) {
				err = fmt.Errorf("must be within 0..1")
			}
		case "count":
			f.Count, err = strconv.Atoi(val)
			if err == nil && f.Count < -1 {
				err = fmt.Errorf("must be -1 (no limit) or more")
			}
		case "delay":
			f.Delay, err = time.ParseDuration(val)
			if err == nil && f.Delay < 0 {
				err = fmt.Errorf("must not be negative")
			}
		case "attempt":
			f.Attempt, err = strconv.Atoi(val)
			if err == nil && f.Attempt < 1 {
				err = fmt.Errorf("must be 1 or more (a partition's first attempt is 1)")
			}
		case "seq":
			var n int64
			n, err = strconv.ParseInt(val, 10, 32)
			if err == nil && n < 0 {
				err = fmt.Errorf("must not be negative")
			}
			f.Seq, f.BySeq = int32(n), true
		case "err":
			e, ok := tracer.ErrorByName(val)
			switch {
			case val == "NONE":
				err = fmt.Errorf("NONE is no error")
			case !ok:
				err = fmt.Errorf("%q is not a Kafka error name (such as NOT_LEADER_OR_FOLLOWER)", val)
			case e.Code == 0:
				err = fmt.Errorf("NONE is no error")
			default:
				f.Error = e
			}
		case "until":
			if val != "next" {
				err = fmt.Errorf("%q: the one condition is next (hold the answer until the partition's next attempt has gone to the broker)", val)
			}
			f.UntilNext = true
		case "partitions":
			for _, p := range strings.Split(val, "+") {
				var n int
				if n, err = strconv.Atoi(p); err != nil || n < 0 {
					err = fmt.Errorf("%q is not a partition number (use e.g. partitions=0+3)", p)
					break
				}
				f.Partitions = append(f.Partitions, int32(n))
			}
		default:
			err = fmt.Errorf("unknown parameter (rate, count, delay, partitions, attempt, seq, err, until)")
		}
		if err != nil {
			return Fault{}, fmt.Errorf("fault %q: %s: %w", s, key, err)
		}
	}
	if err := f.check(s); err != nil {
		return Fault{}, err
	}
	return f, nil
}

// check holds f, parsed from s, to what its kind's Effect allows.
func (f *Fault) check(s string) error {
	eff := f.Kind.Effect()
	switch {
	case f.Error == nil && eff.Err == nil && eff.Scope == OnAttempt:
		return fmt.Errorf("fault %q: err=NAME is required: the Kafka error to answer with", s)
	case f.Error != nil && eff.Scope != OnAttempt:
		return fmt.Errorf("fault %q: err: %s answers no error of its own", s, f.Kind)
	case f.UntilNext && (eff.Action != "RejectBeforeAppend" || f.Delay <= 0):
		return fmt.Errorf("fault %q: until=next holds a refused attempt's answer, at most delay=D (set it): %s refuses none", s, f.Kind)
	case (f.Attempt != 0 || f.BySeq) && eff.Scope != OnAttempt:
		return fmt.Errorf("fault %q: attempt and seq select a partition's attempts, which %s does not act on", s, f.Kind)
	}
	return nil
}

// String returns the fault in the form Parse reads.
func (f Fault) String() string {
	d := defaultFor(f.Kind)
	var ps []string
	if f.Rate != d.Rate {
		ps = append(ps, "rate="+strconv.FormatFloat(f.Rate, 'g', -1, 64))
	}
	if f.Count != d.Count {
		ps = append(ps, "count="+strconv.Itoa(f.Count))
	}
	if f.Delay != d.Delay {
		ps = append(ps, "delay="+f.Delay.String())
	}
	if f.Attempt != 0 {
		ps = append(ps, "attempt="+strconv.Itoa(f.Attempt))
	}
	if f.BySeq {
		ps = append(ps, "seq="+strconv.Itoa(int(f.Seq)))
	}
	if f.Error != nil {
		ps = append(ps, "err="+tracer.ErrorName(f.Error.Code))
	}
	if f.UntilNext {
		ps = append(ps, "until=next")
	}
	if f.Partitions != nil {
		var s []string
		for _, p := range f.Partitions {
			s = append(s, strconv.Itoa(int(p)))
		}
		ps = append(ps, "partitions="+strings.Join(s, "+"))
	}
	if len(ps) == 0 {
		return string(f.Kind)
	}
	return string(f.Kind) + ":" + strings.Join(ps, ",")
}

func names() []string {
	var ns []string
	for k := range Kinds() {
		ns = append(ns, string(k))
	}
	sort.Strings(ns)
	return ns
}
