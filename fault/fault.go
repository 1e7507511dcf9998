// Package fault describes the faults kcheck injects as values: which produce
// requests they hit, what happens to them, and how often. The same value is
// written into the trace header, installed on the embedded kfake broker by
// kcheck run (kfake.go), and named in reports.
package fault

import (
	"fmt"
	"slices"
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
	// Hold forwards the attempts it selects to the broker, which handles
	// them as usual, and holds their answers for Delay (or until its
	// condition) before they go to the client: a schedule's step. It forces
	// no spec action; its Fault events are named Delay.
	Hold Kind = "hold"
	// Cut closes the connection of the attempts it selects (Disconnect):
	// with CutAfter unset when the attempt arrives, nothing of its request
	// forwarded (the request unhandled: Fault DropConnection); with it set
	// when the broker's answer to it arrives, instead of delivering it (the
	// response lost, the batch possibly written: Fault DropResponse). A
	// schedule's step.
	Cut Kind = "cut"

	// The faults on transactions (kcheck proxy only; the spec's
	// TransactionalProducer.tla). A late request is kept from the broker,
	// the client's connection closed as if its request timed out (it sends
	// its requests again on a new one), and the request sent to the broker
	// later on a connection of the proxy's own, once its until=
	// condition holds (or after delay=D; with neither, never), its answer
	// discarded.

	// LateProduce is a late Produce: the request carrying the attempt it
	// selects (as reject selects) arrives after the client gave up on it
	// (DelayProduce, then HandleLateProduce).
	LateProduce Kind = "late-produce"
	// LateTxn is a late request to the transaction coordinator (api=end-txn:
	// DelayEndTxn, then HandleLateCoord).
	LateTxn Kind = "late-txn"
	// TxnCut closes the connection of a request to the transaction
	// coordinator when its answer arrives, instead of delivering it: the
	// coordinator acted, the client does not know (LoseCoordAnswer).
	TxnCut Kind = "txn-cut"

	// The faults on a real cluster's nodes (Scope OnCluster, cluster.go):
	// kcheck proxy does them with --cluster, each once, at its trigger.

	// MoveLeaders moves every partition's leader to its next replica (with
	// every=D, again every D for the fault's duration).
	MoveLeaders Kind = "move-leaders"
	// Pause stops a node's process (SIGSTOP) for the fault's duration, then
	// continues it (SIGCONT): a broker that freezes and thaws.
	Pause Kind = "pause"
	// Kill kills a node's process (SIGKILL) and starts it again on its data
	// after the fault's duration.
	Kill Kind = "kill"
	// KillController is Kill of the active KRaft controller.
	KillController Kind = "kill-controller"
	// RollingRestart stops every node in turn (SIGTERM) and starts it
	// again, each back and in sync before the next.
	RollingRestart Kind = "rolling-restart"
	// Isolate cuts a node off from the client only: the proxy forwards
	// nothing of the client's connections to it for the fault's duration,
	// then cuts them; the brokers still reach each other.
	Isolate Kind = "isolate"
	// SlowNode has the proxy hold every answer of a node for Delay, for the
	// fault's duration.
	SlowNode Kind = "slow-node"
)

// Scope is what a fault acts on.
type Scope uint8

const (
	OnAttempt Scope = iota // one partition's attempt in a produce request
	OnRequest              // a whole produce request, and its connection
	OnBroker               // the broker's own state
	OnCluster              // a node of a real cluster, or the cluster itself
	OnTxn                  // a request to the transaction coordinator (api=, commit=, txn=)
)

// CutWhen is when a fault closes the connection of the attempt it hits.
type CutWhen uint8

const (
	NoCut     CutWhen = iota
	CutBefore         // when the attempt arrives: nothing of its request forwarded
	CutAfter          // when the broker's answer to it arrives, instead of delivering it
)

// Effect is what a kind of fault does to what it hits: the one table the
// interpreters (InstallKfake here, tracer/proxy) read, so that a kind means
// the same on kfake and through the proxy.
type Effect struct {
	Action string // the spec action it forces, as its Fault events name it
	// Err is what the client is answered with instead of the broker's
	// answer (with ErrAnswer: the Fault's err=NAME, for Reject and
	// AppendThenError, which have none of their own).
	Err       *kerr.Error
	ErrAnswer bool
	// Written: the attempt goes on to the broker, which handles it as
	// usual (and appends it if it would); false: the broker never sees it.
	Written bool
	Scope   Scope
	// First: only a partition's first produce, its answer held for the
	// fault's Delay (the seed's race). Rated: fires with probability Rate.
	First, Rated bool
	// Holds: the answer the client gets is held for the fault's Delay, or
	// until its Until condition and NextGrace more if that comes sooner.
	Holds bool
	// Cut: the connection is closed (Disconnect) instead of answering.
	Cut CutWhen
	// Late: the request is kept from the broker, the client's connection
	// closed, and the request sent later on a connection of the proxy's own.
	Late bool
	// A fault on the cluster (Scope OnCluster): End is the Fault event its
	// end emits ("" for one with no end); Target, it acts on one node
	// (node=N or leader=P); Lasts, it lasts for=D; Proxy, the proxy does it
	// itself (no process is touched).
	End                  string
	Target, Lasts, Proxy bool
}

// effectKey is what decides a fault's Effect: its kind, and for Cut its when.
type effectKey struct {
	kind  Kind
	after bool // CutAfter
}

var effects = map[effectKey]Effect{
	{kind: SeedRace}:            {Action: "RejectBeforeAppend", Err: kerr.NotLeaderForPartition, ErrAnswer: true, Scope: OnAttempt, First: true, Holds: true},
	{kind: NotEnoughReplicas}:   {Action: "RejectBeforeAppend", Err: kerr.NotEnoughReplicas, ErrAnswer: true, Scope: OnAttempt, Rated: true, Holds: true},
	{kind: NotLeader}:           {Action: "RejectBeforeAppend", Err: kerr.NotLeaderForPartition, ErrAnswer: true, Scope: OnAttempt, Rated: true, Holds: true},
	{kind: TimeoutAfterAppend}:  {Action: "AppendThenFail", Err: kerr.RequestTimedOut, ErrAnswer: true, Written: true, Scope: OnAttempt, Rated: true, Holds: true},
	{kind: Reject}:              {Action: "RejectBeforeAppend", ErrAnswer: true, Scope: OnAttempt, Rated: true, Holds: true},
	{kind: AppendThenError}:     {Action: "AppendThenFail", ErrAnswer: true, Written: true, Scope: OnAttempt, Rated: true, Holds: true},
	{kind: Hold}:                {Action: "Delay", Written: true, Scope: OnAttempt, Rated: true, Holds: true},
	{kind: Cut}:                 {Action: "DropConnection", Scope: OnAttempt, Rated: true, Cut: CutBefore},
	{kind: Cut, after: true}:    {Action: "DropResponse", Written: true, Scope: OnAttempt, Rated: true, Cut: CutAfter},
	{kind: DropConnection}:      {Action: "DropConnection", Scope: OnRequest, Rated: true},
	{kind: TimeoutBeforeAppend}: {Action: "TimeoutBeforeAppend", Scope: OnRequest, Rated: true},
	{kind: Slow}:                {Action: "Delay", Written: true, Scope: OnRequest, Rated: true},
	{kind: StateExpiry}:         {Action: "ExpireProducerState", Scope: OnBroker},
	{kind: LateProduce}:         {Action: "DelayProduce", Scope: OnAttempt, Rated: true, Late: true},
	{kind: LateTxn}:             {Action: "DelayEndTxn", Scope: OnTxn, Rated: true, Late: true},
	{kind: TxnCut}:              {Action: "LoseCoordAnswer", Written: true, Scope: OnTxn, Rated: true, Cut: CutAfter},
	{kind: MoveLeaders}:         {Action: tracer.MoveLeaders, Scope: OnCluster, Lasts: true},
	{kind: Pause}:               {Action: tracer.PauseBroker, End: tracer.ResumeBroker, Scope: OnCluster, Target: true, Lasts: true},
	{kind: Kill}:                {Action: tracer.KillBroker, End: tracer.StartBroker, Scope: OnCluster, Target: true, Lasts: true},
	{kind: KillController}:      {Action: tracer.KillBroker, End: tracer.StartBroker, Scope: OnCluster, Lasts: true},
	{kind: RollingRestart}:      {Action: tracer.StopBroker, End: tracer.StartBroker, Scope: OnCluster},
	{kind: Isolate}:             {Action: tracer.IsolateBroker, End: tracer.RejoinBroker, Scope: OnCluster, Target: true, Lasts: true, Proxy: true},
	{kind: SlowNode}:            {Action: tracer.SlowBroker, End: tracer.SlowBrokerEnd, Scope: OnCluster, Target: true, Lasts: true, Proxy: true},
}

// Effect returns what the kind does (for Cut: with when=before).
func (k Kind) Effect() Effect { return effects[effectKey{kind: k}] }

// Effect returns what the fault does: its kind's effect, for Cut the one of
// its when.
func (f *Fault) Effect() Effect { return effects[effectKey{f.Kind, f.Kind == Cut && f.CutAfter}] }

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
		StateExpiry:         "the broker forgets the producer's state once it has been idle for delay=D (producer.id.expiration.ms=D): neither kfake nor the proxy can cause it; run a real broker with that setting (kcheck proxy notes it in the trace header)",
		Reject: "the selected attempts are answered err=NAME before the append. Selectors (any together): partitions=0+3; attempt=N, a partition's N-th attempt (from 1); " +
			"epoch=E, one carrying the partition's E-th distinct producer epoch (0: the first its produces carried); seq=K, base sequence K; " +
			"try=N, the batch's N-th attempt (1: its first send, 2: its first retry); idle=D, the partition's first attempt after none for D (never its very first); " +
			"after=answer, one sent after an answer to an earlier attempt of the partition reached the client; count=N times (-1: no limit). " +
			"delay=D holds the answer D; with until=next until the partition's next new batch has gone to the broker, with until=seq:K until its attempt with base sequence K (same epoch) has, then 100ms more, at most D (until: kcheck proxy only)",
		AppendThenError: "the selected attempts are appended and answered err=NAME (selectors, delay and until as for reject; on kfake only REQUEST_TIMED_OUT or NOT_ENOUGH_REPLICAS_AFTER_APPEND, and no delay)",
		Hold:            "the selected attempts go to the broker as usual and their answers are held for delay=D (required) before they go to the client, never reordering a connection's answers (selectors and until as for reject; kcheck proxy only)",
		Cut:             "the connection of the selected attempt is closed (selectors as for reject): when=before (the default) as it arrives, nothing of its request forwarded; when=after (kcheck proxy only) when the broker's answer arrives, instead of delivering it",
		LateProduce: "the produce request carrying the selected attempt (selectors as for reject) is kept from the broker and the client's connection closed, as if its request timed out; the request goes to the broker later, on a connection of the proxy's own, " +
			"once until=answer:API (the coordinator's next answer to API after it reached the client) or until=send:API (the client's next request of API went upstream; API: produce, add-partitions, end-txn, init-pid) holds, or after delay=D; with neither, never (kcheck proxy only)",
		LateTxn:        "the client's request to the transaction coordinator selected by api=end-txn|add-partitions|init-pid, commit=true|false (EndTxn's) and txn=N (the wire's N-th transaction, from 1) is kept from the coordinator and its connection closed; it goes to the coordinator later, as for late-produce (until, delay; kcheck proxy only)",
		TxnCut:         "the connection of the client's request to the transaction coordinator (api, commit and txn as for late-txn) is closed when the coordinator's answer arrives, instead of delivering it (kcheck proxy only)",
		MoveLeaders:    "every partition's leader moves to its next replica (a reassignment, then a preferred election); every=D repeats it every D for for=D.",
		Pause:          "a node's process is stopped (SIGSTOP) for for=D (default 3s), then continued: node=N, node=coordinator (the client's transaction coordinator, as its FindCoordinator was answered, also for kill, isolate and slow-node), or leader=P the leader of partition P when it fires (default leader=0).",
		Kill:           "a node's process is killed (SIGKILL) and started again on its data after for=D (default 2s); node=N or leader=P as for pause.",
		KillController: "the active KRaft controller is killed (SIGKILL) and started again after for=D (default 2s).",
		RollingRestart: "every node in turn is stopped (SIGTERM) and started again, each back and its replicas in sync before the next.",
		Isolate:        "the proxy forwards nothing of the client's connections to one node for for=D (default 3s), then cuts them; the brokers still reach each other; node=N or leader=P as for pause.",
		SlowNode:       "the proxy holds every answer of one node for delay=D (default 500ms), for for=D (default 5s); node=N or leader=P as for pause.",
	}
}

// Fault is one fault to inject.
type Fault struct {
	Kind  Kind
	Rate  float64       // probability per produce of a partition, where the kind uses it
	Count int           // at most this many times; -1 for no limit
	Delay time.Duration // how long a held produce waits
	// Partitions limits the fault to these partitions; nil means all.
	// Used by the per-partition kinds (Scope OnAttempt: seed-race,
	// not-enough-replicas, not-leader, timeout-after-append, reject,
	// append-then-error, hold, cut).
	Partitions []int32
	// Which attempts of a partition an OnAttempt fault selects (Selects):
	// its Attempt-th (1 for the first; 0: any); with ByEpoch only one
	// carrying the partition's Epoch-th distinct producer epoch (0: the
	// first its produces carried; relative, since real epochs come from
	// InitProducerId; a new producer id's epoch is a new one); with BySeq only one with base sequence Seq; its batch's
	// Try-th attempt (1: its first send; 0: any); with Idle the
	// partition's first attempt after none for at least Idle; with
	// AfterAnswer only one sent after an answer to an earlier attempt of
	// the partition reached the client. The zero value selects every
	// attempt.
	Attempt     int
	ByEpoch     bool
	Epoch       int
	BySeq       bool
	Seq         int32
	Try         int
	Idle        time.Duration
	AfterAnswer bool
	// CutAfter (Cut's when=after): the connection is closed when the
	// broker's answer to the attempt arrives, not when the attempt does.
	CutAfter bool
	// Error overrides the kind's error (err=NAME); Reject and
	// AppendThenError need one.
	Error *kerr.Error
	// UntilNext (until=next, a kind that Holds, through the proxy only):
	// the attempt's answer is held until the partition's next new batch
	// has been forwarded to the broker (and NextGrace more, for the broker
	// to handle it), at most Delay: the seed's race made exact. UntilSeq
	// (until=seq:K): until the partition's attempt with base sequence
	// UntilK, of the held attempt's producer and epoch, has been forwarded
	// (and NextGrace more), at most Delay.
	UntilNext bool
	UntilSeq  bool
	UntilK    int32
	// A fault on transactions: API (api=NAME: "end-txn", "add-partitions",
	// "init-pid") selects an OnTxn fault's request, with ByCommit its
	// EndTxn's commit flag (commit=true|false), and Txn the wire's
	// transaction it is in (txn=N, from 1; 0: any). LateUntil is a late
	// fault's condition: "answer:API" or "send:API" (API also "produce").
	API       string
	ByCommit  bool
	Commit    bool
	Txn       int64
	LateUntil string
	// A fault on the cluster (Scope OnCluster, cluster.go).
	Cluster
}

// TxnAPIs are the values of api= and of until=answer:/send:.
var TxnAPIs = []string{"produce", "add-partitions", "end-txn", "init-pid"}

// SelectsTxn reports whether an OnTxn fault selects a request of api (one
// of TxnAPIs) in the wire's transaction tx, with commit its EndTxn's flag.
func (f *Fault) SelectsTxn(api string, commit bool, tx int64) bool {
	return f.API == api && (!f.ByCommit || f.Commit == commit) && (f.Txn == 0 || f.Txn == tx)
}

// NextGrace is how long an answer held until the next attempt waits once
// that attempt has gone to the broker, for the broker to handle it.
const NextGrace = 100 * time.Millisecond

// Until reports whether the fault holds its answer until a condition.
func (f *Fault) Until() bool { return f.UntilNext || f.UntilSeq }

// Selects reports whether the fault selects attempt a (of a partition it
// Hits): every selector it has holds, and for the seed's race a is the
// partition's first.
func (f *Fault) Selects(a Attempt) bool {
	return (f.Attempt == 0 || a.N == f.Attempt) && (!f.Kind.Effect().First || a.N == 1) &&
		(!f.ByEpoch || a.Epoch == f.Epoch) && (!f.BySeq || a.Seq == f.Seq) &&
		(f.Try == 0 || a.Try == f.Try) && (f.Idle == 0 || a.Idle >= f.Idle) &&
		(!f.AfterAnswer || a.AfterAnswer)
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
	case Reject, AppendThenError, Hold, Cut, LateProduce, LateTxn, TxnCut:
		return Fault{Kind: k, Rate: 1, Count: 1}
	case StateExpiry:
		return Fault{Kind: k, Rate: 1, Count: -1}
	case MoveLeaders, Pause, Kill, KillController, RollingRestart, Isolate:
		return Fault{Kind: k, Rate: 1, Count: 1, Cluster: clusterDefaults(k)}
	case SlowNode:
		return Fault{Kind: k, Rate: 1, Count: 1, Delay: 500 * time.Millisecond, Cluster: clusterDefaults(k)}
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
		case "epoch":
			f.Epoch, err = strconv.Atoi(val)
			if err == nil && f.Epoch < 0 {
				err = fmt.Errorf("must not be negative (a partition's first epoch is 0)")
			}
			f.ByEpoch = true
		case "try":
			f.Try, err = strconv.Atoi(val)
			if err == nil && f.Try < 1 {
				err = fmt.Errorf("must be 1 or more (a batch's first send is 1, its first retry 2)")
			}
		case "idle":
			f.Idle, err = time.ParseDuration(val)
			if err == nil && f.Idle <= 0 {
				err = fmt.Errorf("must be positive")
			}
		case "after":
			if val != "answer" {
				err = fmt.Errorf("%q: the one condition is answer (an attempt sent after an answer to an earlier attempt of the partition reached the client)", val)
			}
			f.AfterAnswer = true
		case "when":
			switch {
			case k != Cut:
				err = fmt.Errorf("only cut has a when (before or after), not %s", k)
			case val == "before":
				f.CutAfter = false
			case val == "after":
				f.CutAfter = true
			default:
				err = fmt.Errorf("%q: want before (the connection closed as the attempt arrives) or after (when the broker's answer to it arrives)", val)
			}
		case "until":
			if api, ok := cutAny(val, "answer:", "send:"); ok {
				if !slices.Contains(TxnAPIs, api) {
					err = fmt.Errorf("%q: the API is one of %s", val, strings.Join(TxnAPIs, ", "))
				}
				f.LateUntil = val
				break
			}
			switch ks, ok := strings.CutPrefix(val, "seq:"); {
			case val == "next":
				f.UntilNext, f.UntilSeq = true, false
			case ok:
				var n int64
				n, err = strconv.ParseInt(ks, 10, 32)
				if err == nil && n < 0 {
					err = fmt.Errorf("must not be negative")
				}
				f.UntilNext, f.UntilSeq, f.UntilK = false, true, int32(n)
			default:
				err = fmt.Errorf("%q: the conditions are next (hold the answer until the partition's next new batch has gone to the broker) and seq:K (until its attempt with base sequence K has)", val)
			}
		case "api":
			f.API = val
			if !slices.Contains(TxnAPIs[1:], val) {
				err = fmt.Errorf("%q: want end-txn, add-partitions or init-pid", val)
			}
		case "commit":
			f.ByCommit = true
			f.Commit, err = strconv.ParseBool(val)
		case "txn":
			f.Txn, err = strconv.ParseInt(val, 10, 64)
			if err == nil && f.Txn < 1 {
				err = fmt.Errorf("must be 1 or more (the wire's first transaction is 1)")
			}
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
			var ok bool
			if ok, err = f.parseCluster(key, val); !ok {
				err = fmt.Errorf("unknown parameter (rate, count, delay, partitions, attempt, epoch, seq, try, idle, after, when, err, until; on transactions: api, commit, txn; on a cluster: node, leader, for, every, at, records, random)")
			}
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
	eff := f.Effect()
	d := defaultFor(f.Kind)
	selects := f.Attempt != 0 || f.ByEpoch || f.BySeq || f.Try != 0 || f.Idle != 0 || f.AfterAnswer
	switch {
	case f.Error == nil && eff.Err == nil && eff.ErrAnswer:
		return fmt.Errorf("fault %q: err=NAME is required: the Kafka error to answer with", s)
	case f.Error != nil && !eff.ErrAnswer:
		return fmt.Errorf("fault %q: err: %s answers no error of its own", s, f.Kind)
	case f.LateUntil != "" && !eff.Late:
		return fmt.Errorf("fault %q: until=%s is a late fault's condition, not %s's", s, f.LateUntil, f.Kind)
	case eff.Late && f.Until():
		return fmt.Errorf("fault %q: a late fault waits for until=answer:API or until=send:API", s)
	case eff.Scope == OnTxn && f.API == "":
		return fmt.Errorf("fault %q: api=NAME is required: the coordinator request it acts on", s)
	case eff.Scope == OnTxn && f.Partitions != nil:
		return fmt.Errorf("fault %q: partitions: %s acts on a request to the transaction coordinator, which names none", s, f.Kind)
	case eff.Scope == OnTxn && !eff.Late && f.Delay != d.Delay:
		return fmt.Errorf("fault %q: delay: %s holds no request", s, f.Kind)
	case eff.Scope != OnTxn && (f.API != "" || f.ByCommit || f.Txn != 0):
		return fmt.Errorf("fault %q: api, commit and txn select a request to the transaction coordinator, which %s does not act on", s, f.Kind)
	case f.Until() && !eff.Holds:
		return fmt.Errorf("fault %q: until holds an attempt's answer, which %s does not", s, f.Kind)
	case f.Until() && f.Delay <= 0:
		return fmt.Errorf("fault %q: until holds the answer at most delay=D: set it", s)
	case f.Delay != d.Delay && eff.Scope == OnAttempt && !eff.Holds && !eff.Late:
		return fmt.Errorf("fault %q: delay: %s holds no answer", s, f.Kind)
	case f.Kind == Hold && f.Delay <= 0:
		return fmt.Errorf("fault %q: delay=D is required: how long the answer is held", s)
	case selects && eff.Scope != OnAttempt:
		return fmt.Errorf("fault %q: attempt, epoch, seq, try, idle and after select a partition's attempts, which %s does not act on", s, f.Kind)
	case eff.First && (f.Attempt != 0 || f.ByEpoch || f.Try != 0 || f.Idle != 0 || f.AfterAnswer):
		return fmt.Errorf("fault %q: %s selects each partition's first attempt: use reject:err=NOT_LEADER_OR_FOLLOWER with attempt, epoch, try, idle or after", s, f.Kind)
	case f.Idle != 0 && f.Attempt == 1:
		return fmt.Errorf("fault %q: idle selects no partition's first attempt, and attempt=1 only that", s)
	case eff.Scope == OnBroker && (f.Rate != d.Rate || f.Count != d.Count || f.Partitions != nil):
		return fmt.Errorf("fault %q: %s takes only delay=D (producer.id.expiration.ms), for every partition", s, f.Kind)
	}
	return f.checkCluster(s)
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
	if f.ByEpoch {
		ps = append(ps, "epoch="+strconv.Itoa(f.Epoch))
	}
	if f.BySeq {
		ps = append(ps, "seq="+strconv.Itoa(int(f.Seq)))
	}
	if f.Try != 0 {
		ps = append(ps, "try="+strconv.Itoa(f.Try))
	}
	if f.Idle != 0 {
		ps = append(ps, "idle="+f.Idle.String())
	}
	if f.AfterAnswer {
		ps = append(ps, "after=answer")
	}
	if f.CutAfter {
		ps = append(ps, "when=after")
	}
	if f.Error != nil {
		ps = append(ps, "err="+tracer.ErrorName(f.Error.Code))
	}
	if f.UntilNext {
		ps = append(ps, "until=next")
	}
	if f.UntilSeq {
		ps = append(ps, "until=seq:"+strconv.Itoa(int(f.UntilK)))
	}
	if f.API != "" {
		ps = append(ps, "api="+f.API)
	}
	if f.ByCommit {
		ps = append(ps, "commit="+strconv.FormatBool(f.Commit))
	}
	if f.Txn != 0 {
		ps = append(ps, "txn="+strconv.FormatInt(f.Txn, 10))
	}
	if f.LateUntil != "" {
		ps = append(ps, "until="+f.LateUntil)
	}
	ps = f.clusterString(ps)
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

// cutAny returns s after the first of prefixes it starts with.
func cutAny(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return rest, true
		}
	}
	return "", false
}

func names() []string {
	var ns []string
	for k := range Kinds() {
		ns = append(ns, string(k))
	}
	sort.Strings(ns)
	return ns
}
