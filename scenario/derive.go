package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kcheck/kcheck/checker/tlc"
)

// What the derived faults use for what the counterexample leaves to timing.
const (
	// HoldDelay bounds an answer held until the client's next sends: below
	// the 2 s request timeout every client has in kcheck's runs.
	HoldDelay = 1500 * time.Millisecond
	// ExpiryDelay is the broker's producer.id.expiration.ms for a
	// scenario with ExpireProducerState, and ExpiryCheck the check interval
	// (producer.id.expiration.check.interval.ms) it needs.
	ExpiryDelay = 2 * time.Second
	ExpiryCheck = 500 * time.Millisecond
	// IdleGap is how long the partition must have been idle before the
	// fault that follows a state expiry: the expiry and one check interval,
	// with room to spare.
	IdleGap = 3 * time.Second
)

// fieldOrder is the order a step's event fields are kept in; fields not
// listed follow in name order.
var fieldOrder = []string{"p", "b", "ep", "seq", "err", "off", "c", "bump"}

// An attempt is one send of a batch by the client: SendNew or Resend.
type attempt struct {
	index int    // in the derivation's steps
	p     string // the partition, as the model names it
	new   bool   // SendNew (not Resend)
	b     string
	ep    string
	seq   string
	// try is the batch's attempts so far, this one included (as the
	// selector try=N counts them: a batch keeps its identity across retries
	// and epoch bumps); seqTry the partition's attempts with the same epoch
	// and sequence so far.
	try, seqTry int
}

// A planned fault, before it is written as a schedule line.
type planned struct {
	index int    // the step it comes from
	kind  string // the fault kind: reject, append-then-error, cut, state-expiry
	param string // the kind's own parameter: err=NAME, when=before|after, delay=D
	att   *attempt
	idle  bool   // select the first attempt after an idle gap instead of by sequence
	until string // "", "next" or "seq:K"
}

// Derive maps a counterexample (TLC's error trace of spec/IdempotentProducer.tla,
// initial state first) to a scenario: its steps, the schedule of faults
// and the needs the steps imply. The caller fills in the rest (Name,
// Config, Expect, Invariant, the needs that come from the configuration,
// Predictions).
//
// Each step's event is read from its variable event; each rule of the
// mapping is a case of the switch in deriver.run, commented with the spec
// action it maps. A step with an action it has no rule for is an error.
func Derive(steps []tlc.Step) (*Scenario, error) {
	s := &Scenario{}
	for _, st := range steps {
		switch {
		case st.Action == tlc.InitialPredicate:
			s.Needs.Partitions = len(partitionsOf(st.Vars))
			continue
		case st.BackTo != 0:
			s.Loop = st.BackTo
			continue
		case st.Stuttering:
			s.Stutter = true
			continue
		}
		if s.Loop != 0 || s.Stutter {
			return nil, fmt.Errorf("state %d: a step after the lasso closed", st.State)
		}
		step, err := readEvent(st)
		if err != nil {
			return nil, err
		}
		if n := len(s.Steps); n > 0 && step.State != s.Steps[n-1].State+1 {
			return nil, fmt.Errorf("state %d follows state %d", step.State, s.Steps[n-1].State)
		}
		s.Steps = append(s.Steps, step)
	}
	if len(s.Steps) == 0 {
		return nil, fmt.Errorf("the counterexample has no step after its initial state")
	}
	d := &deriver{s: s, trace: steps}
	if err := d.run(); err != nil {
		return nil, err
	}
	return s, nil
}

type deriver struct {
	s        *Scenario
	trace    []tlc.Step // as given, for the states before Disconnect steps
	parts    []string   // the model's partitions, in order: p1 is partition 0
	attempts []*attempt
	epochs   map[string][]string // per partition, its distinct epochs in order
	faults   []*planned
	expired  map[string]int // partition -> index of its ExpireProducerState awaiting the next fault
}

func (d *deriver) run() error {
	s := d.s
	d.parts = d.partitions()
	if s.Needs.Partitions == 0 {
		s.Needs.Partitions = len(d.parts)
	}
	d.epochs = map[string][]string{}
	d.expired = map[string]int{}
	// The client's sends first: a held answer waits for sends that come
	// after its fault in the counterexample as well as before.
	seqTries := map[string]int{} // p/ep/seq -> attempts so far
	tries := map[string]int{}    // p/b -> attempts so far
	for i, st := range s.Steps {
		p := st.Get("p")
		if st.Action == "ResendByApp" {
			delete(tries, p+"/"+st.Get("b")) // the batch is produced again, as a new one
		}
		if st.Action != "SendNew" && st.Action != "Resend" {
			continue
		}
		key := p + "/" + st.Get("ep") + "/" + st.Get("seq")
		seqTries[key]++
		tries[p+"/"+st.Get("b")]++
		a := &attempt{index: i, p: p, new: st.Action == "SendNew", b: st.Get("b"), ep: st.Get("ep"), seq: st.Get("seq"),
			try: tries[p+"/"+st.Get("b")], seqTry: seqTries[key]}
		d.attempts = append(d.attempts, a)
		if !slices.Contains(d.epochs[p], a.ep) {
			d.epochs[p] = append(d.epochs[p], a.ep)
		}
	}
	for i, st := range s.Steps {
		p := st.Get("p")
		switch st.Action {
		// SendNew(p): the client drains a new batch and sends it; Resend(p):
		// it sends a batch again with its sequence. Not faults: they are the
		// attempts the faults select, and the sends a held answer waits for
		// (read above).
		case "SendNew", "Resend":

		// RejectBeforeAppend(c): the broker answers the attempt an error
		// without appending it: reject:err=NAME, its answer held until the
		// sends the client made before reading it.
		case "RejectBeforeAppend":
			if err := d.answerFault(i, "reject", "err="+st.Get("err")); err != nil {
				return err
			}

		// AppendThenFail(c): the broker handles the attempt as usual but
		// answers it an error: append-then-error:err=NAME, held the same way.
		case "AppendThenFail":
			if err := d.answerFault(i, "append-then-error", "err="+st.Get("err")); err != nil {
				return err
			}

		// Disconnect(c): the connection is lost. Its oldest unread
		// response lost: cut:when=after on that response's attempt; else
		// its oldest unhandled request: cut:when=before on that attempt.
		case "Disconnect":
			if err := d.disconnect(i); err != nil {
				return err
			}

		// ExpireProducerState(p): the broker drops the producer's state
		// after producer.id.expiration.ms idle: state-expiry:delay=2s on a
		// real broker so configured, and the partition's next fault selects
		// the first attempt after an idle gap longer than that.
		case "ExpireProducerState":
			if !slices.ContainsFunc(d.faults, func(f *planned) bool { return f.kind == "state-expiry" }) {
				d.faults = append(d.faults, &planned{index: i, kind: "state-expiry", param: "delay=" + ExpiryDelay.String()})
			}
			d.expired[p] = i
			s.Needs.ExpiryMs, s.Needs.ExpiryCheckMs = ExpiryDelay.Milliseconds(), ExpiryCheck.Milliseconds()
			s.Needs.Idle = true

		// BoundPasses(p): time passes, the client's re-arm bound since the
		// partition's last acknowledged batch (what ExpireProducerState
		// needs, and RearmAfterIdle reads). Nothing forces it but the idle
		// gap the expiry's fault already selects: a note, for a client with
		// a re-arm rule, whose bound must be below the expiry's.
		case "BoundPasses":
			s.Notes = append(s.Notes, fmt.Sprintf("state %d BoundPasses: time passes on partition %d (the client's re-arm bound since its last acknowledged batch): not a fault; a client with a re-arm rule needs its bound below the broker's producer.id.expiration.ms (%v)",
				st.State, d.partition(p), ExpiryDelay))

		// ExpireBatch(p): the client's delivery.timeout.ms fails a batch
		// waiting to be retried. Nothing outside the client forces it: a need.
		case "ExpireBatch":
			s.Needs.DeliveryTimeout = true
			s.Notes = append(s.Notes, fmt.Sprintf("state %d ExpireBatch: the client's delivery timeout fails partition %d's batch seq %s (epoch %d) waiting to be retried: not a fault; the run needs a delivery timeout that expires it",
				st.State, d.partition(p), st.Get("seq"), d.epochIndex(p, st.Get("ep"))))

		// ReceiveLate(c): the client reads an error answer as the batch's
		// delivery timeout passes, and fails it. Nothing outside the client
		// forces the timing: a need, as for ExpireBatch.
		case "ReceiveLate":
			s.Needs.DeliveryTimeout = true
			s.Notes = append(s.Notes, fmt.Sprintf("state %d ReceiveLate: partition %d's batch seq %s (epoch %d) is answered %s as its delivery timeout passes, and fails: not a fault; the run needs the answer to come just then",
				st.State, d.partition(p), st.Get("seq"), d.epochIndex(p, st.Get("ep")), st.Get("err")))

		// ResendByApp(p): the application produces a failed batch again, as
		// a new batch. The application's doing: a need.
		case "ResendByApp":
			s.Needs.AppResends = true
			s.Notes = append(s.Notes, fmt.Sprintf("state %d ResendByApp: the application produces partition %d's failed batch again, as a new batch: not a fault; the run needs a workload that does",
				st.State, d.partition(p)))

		// Receive(c): the client reads an answer; HandleProduce(c): the
		// broker handles a request as it would with no fault; Bump(p) and
		// ResolveSequences(p): the client's own reactions. None is forced:
		// a real client and broker take them by themselves.
		case "Receive", "HandleProduce", "Bump", "ResolveSequences":

		// Transactions (spec/TransactionalProducer.tla). DelayProduce(c):
		// the client's request on c times out and it sends its batches again;
		// the request reaches the leader later (HandleLateProduce), or never:
		// late-produce on the oldest request's attempt, sent upstream once
		// the client-visible step before its HandleLateProduce has happened
		// (until=answer:API or send:API).
		case "DelayProduce":
			if err := d.lateProduce(i); err != nil {
				return err
			}

		// DelayEndTxn: the EndTxn times out, the client sends it again, and
		// the first one reaches the coordinator later (HandleLateCoord):
		// late-txn:api=end-txn on the wire's transaction it ends.
		case "DelayEndTxn":
			d.lateTxn(i)

		// LoseCoordAnswer: the coordinator acted, its answer is lost:
		// txn-cut on that request.
		case "LoseCoordAnswer":
			api := coordAPI(st.Get("api"))
			d.faults = append(d.faults, &planned{index: i, kind: "txn-cut", param: "api=" + api + d.txnSelect(i, api)})

		// CoordTimeout: the coordinator aborts a transaction left open past
		// transaction.timeout.ms: the client must leave it open that long
		// (a need; late-txn with delay=D above the timeout forces it).
		case "CoordTimeout":
			s.Needs.TxnTimeout = true
			s.Notes = append(s.Notes, fmt.Sprintf("state %d CoordTimeout: the coordinator aborts the open transaction (transaction.timeout.ms) and fences the producer with epoch %s: not a fault; the run needs the transaction left open that long",
				st.State, st.Get("ep")))

		// NewInstanceInit: another producer with the same transactional.id
		// starts: a need.
		case "NewInstanceInit":
			s.Needs.NewInstance = true
			s.Notes = append(s.Notes, fmt.Sprintf("state %d NewInstanceInit: a new producer with the same transactional.id sends InitProducerId and fences this one: not a fault; the run needs a second instance",
				st.State))

		// The rest of a transaction: the application's and the client's
		// steps (BeginTxn, AddPartitions, EndTxn, InitProducerId,
		// ReceiveCoord), the coordinator's and the leaders' (HandleCoord,
		// WriteMarker), and the late requests arriving, which the late
		// faults' until conditions time. None is forced.
		case "BeginTxn", "AddPartitions", "EndTxn", "InitProducerId", "ReceiveCoord", "HandleCoord", "WriteMarker",
			"HandleLateProduce", "HandleLateCoord":

		default:
			return fmt.Errorf("state %d: action %s has no rule in scenario.Derive: add one", st.State, st.Action)
		}
	}
	for _, p := range d.parts {
		if i, ok := d.expired[p]; ok {
			s.Notes = append(s.Notes, fmt.Sprintf("state %d ExpireProducerState: no fault on partition %d follows the expiry; the workload must leave the partition idle for %v after it",
				s.Steps[i].State, d.partition(p), IdleGap))
		}
	}
	d.render()
	return nil
}

// coordAPI is the fault's api= name of the spec's coordinator request.
func coordAPI(api string) string {
	switch api {
	case "AddPartitions":
		return "add-partitions"
	case "InitPid":
		return "init-pid"
	}
	return "end-txn"
}

// txnSelect returns the selectors after api= of a fault on the coordinator
// request of step i: EndTxn's commit flag, and the wire's transaction it is
// in (txn=N: one more than the EndTxn answered NONE to the client before it,
// as kcheck proxy numbers them).
func (d *deriver) txnSelect(i int, api string) string {
	st := d.s.Steps[i]
	var sel string
	if api == "end-txn" && st.Get("commit") != "" {
		sel += ",commit=" + strings.ToLower(st.Get("commit"))
	}
	n := 1
	for _, prev := range d.s.Steps[:i] {
		if prev.Action == "ReceiveCoord" && prev.Get("api") == "EndTxn" && prev.Get("err") == "NONE" {
			n++
		}
	}
	return sel + ",txn=" + strconv.Itoa(n)
}

// lateUntil returns the until= condition for a late request handled at step
// h (0: never): the last step before it, after step i, that the proxy sees
// the client do: its answer from the coordinator read (answer:API), or its
// request sent (send:API); "" if there is none or the request is never
// handled.
func (d *deriver) lateUntil(i, h int) string {
	for j := h - 1; j > i && h > 0; j-- {
		st := d.s.Steps[j]
		switch st.Action {
		case "ReceiveCoord":
			return "answer:" + coordAPI(st.Get("api"))
		case "Receive":
			return "answer:produce"
		case "SendNew", "Resend":
			return "send:produce"
		case "AddPartitions":
			return "send:add-partitions"
		case "EndTxn":
			return "send:end-txn"
		case "InitProducerId":
			return "send:init-pid"
		}
	}
	return ""
}

// lateParam is a late fault's until=, or a note when it has none.
func (d *deriver) lateParam(i, h int, what string) string {
	st := d.s.Steps[i]
	if h == 0 {
		d.s.Notes = append(d.s.Notes, fmt.Sprintf("state %d %s: the delayed request never reaches the broker in the counterexample: the late fault never sends it", st.State, st.Action))
		return ""
	}
	u := d.lateUntil(i, h)
	if u == "" {
		d.s.Notes = append(d.s.Notes, fmt.Sprintf("state %d %s: the late %s is handled (state %d) before the client does anything the proxy sees: the late fault sends it after %v", st.State, st.Action, what, d.s.Steps[h].State, HoldDelay))
		return "delay=" + durationString(HoldDelay)
	}
	return "until=" + u
}

// lateProduce plans the late-produce of step i (DelayProduce): the oldest
// request on the connection, the one a real client's request timeout hits
// first.
func (d *deriver) lateProduce(i int) error {
	st := d.s.Steps[i]
	reqs, _, err := d.connection(i, st.Get("c"))
	if err != nil {
		return err
	}
	if len(reqs) == 0 {
		return fmt.Errorf("state %d: DelayProduce of connection %s with no request outstanding", st.State, st.Get("c"))
	}
	field := func(name string) string { v, _ := reqs[0].get(name); return v.text() }
	a, err := d.sendOf(i, field("p"), field("b"), field("ep"), field("seq"))
	if err != nil {
		return err
	}
	if len(reqs) > 1 {
		d.s.Notes = append(d.s.Notes, fmt.Sprintf("state %d DelayProduce: %d more request(s) on the connection are delayed with it; the late fault delays the oldest", st.State, len(reqs)-1))
	}
	h := 0
	for j := i + 1; j < len(d.s.Steps); j++ {
		s := d.s.Steps[j]
		if s.Action == "HandleLateProduce" && s.Get("p") == a.p && s.Get("b") == a.b && s.Get("ep") == a.ep && s.Get("seq") == a.seq {
			h = j
			break
		}
	}
	d.plan(&planned{index: i, kind: "late-produce", param: d.lateParam(i, h, "Produce"), att: a})
	return nil
}

// lateTxn plans the late-txn of step i (DelayEndTxn).
func (d *deriver) lateTxn(i int) {
	st := d.s.Steps[i]
	h := 0
	for j := i + 1; j < len(d.s.Steps); j++ {
		s := d.s.Steps[j]
		if s.Action == "HandleLateCoord" && s.Get("api") == "EndTxn" && s.Get("ep") == st.Get("ep") && s.Get("commit") == st.Get("commit") {
			h = j
			break
		}
	}
	param := "api=end-txn" + d.txnSelect(i, "end-txn")
	if u := d.lateParam(i, h, "EndTxn"); u != "" {
		param += "," + u
	}
	d.faults = append(d.faults, &planned{index: i, kind: "late-txn", param: param})
}

// answerFault plans a fault that answers the attempt of step i: its hold
// lasts until the client's sends of the partition that came between the
// attempt's send and the client reading the answer.
func (d *deriver) answerFault(i int, kind, param string) error {
	st := d.s.Steps[i]
	a, err := d.sendOf(i, st.Get("p"), st.Get("b"), st.Get("ep"), st.Get("seq"))
	if err != nil {
		return err
	}
	end := d.receiveOf(i, a)
	f := &planned{index: i, kind: kind, param: param, att: a, until: d.until(a, end)}
	d.plan(f)
	return nil
}

// disconnect plans the cut of step i from the connection's state before it.
func (d *deriver) disconnect(i int) error {
	st := d.s.Steps[i]
	reqs, resps, err := d.connection(i, st.Get("c"))
	if err != nil {
		return err
	}
	var r value
	when := "after"
	switch {
	case len(resps) > 0:
		r = resps[0]
	case len(reqs) > 0:
		r, when = reqs[0], "before"
	default:
		return fmt.Errorf("state %d: Disconnect of connection %s with nothing outstanding", st.State, st.Get("c"))
	}
	field := func(name string) string { v, _ := r.get(name); return v.text() }
	a, err := d.sendOf(i, field("p"), field("b"), field("ep"), field("seq"))
	if err != nil {
		return err
	}
	if until := d.until(a, i); when == "after" && until != "" {
		// A cut holds no answer (fault.Parse refuses until on it): the sends
		// before it are left to timing.
		d.s.Notes = append(d.s.Notes, fmt.Sprintf("state %d Disconnect: the client sends again on partition %d (until=%s) before the connection is lost; a cut holds no answer, so that is left to timing",
			st.State, d.partition(a.p), until))
	}
	if f := d.faultOn(a); f != nil {
		// The answer lost is a fault's own: one fault does both (an attempt
		// gets the first fault that selects it), the cut, after the append
		// if the fault appended.
		f.kind, f.param, f.until = "cut", "when=before", ""
		if d.s.Steps[f.index].Action == "AppendThenFail" {
			f.param = "when=after"
		}
		d.s.Notes = append(d.s.Notes, fmt.Sprintf("state %d Disconnect loses the answer of state %d's %s: one cut:%s for both",
			st.State, d.s.Steps[f.index].State, d.s.Steps[f.index].Action, f.param))
	} else {
		d.plan(&planned{index: i, kind: "cut", param: "when=" + when, att: a})
	}
	lost := len(reqs) + len(resps) - 1
	if lost > 0 {
		d.s.Notes = append(d.s.Notes, fmt.Sprintf("state %d Disconnect: %d more request(s) outstanding on the connection are lost with it (%d unhandled, %d answers unread)",
			st.State, lost, len(reqs), len(resps)))
	}
	return nil
}

// plan adds f, selecting the first attempt after an idle gap when a state
// expiry of its partition came before it and its attempt is the
// partition's first since.
func (d *deriver) plan(f *planned) {
	if x, ok := d.expired[f.att.p]; ok {
		delete(d.expired, f.att.p)
		first := d.firstAttemptAfter(f.att.p, x)
		if first == f.att {
			f.idle = true
		} else {
			d.s.Notes = append(d.s.Notes, fmt.Sprintf("state %d ExpireProducerState: the partition must then be idle for %v; the fault of state %d is on a later attempt than the first after the expiry, and selects by sequence",
				d.s.Steps[x].State, IdleGap, d.s.Steps[f.index].State))
		}
	}
	d.faults = append(d.faults, f)
}

// faultOn returns the planned fault on attempt a, or nil.
func (d *deriver) faultOn(a *attempt) *planned {
	for _, f := range d.faults {
		if f.att == a {
			return f
		}
	}
	return nil
}

// sendOf returns the attempt the answer or request of step i is for: the
// last send of that batch before it.
func (d *deriver) sendOf(i int, p, b, ep, seq string) (*attempt, error) {
	for j := len(d.attempts) - 1; j >= 0; j-- {
		a := d.attempts[j]
		if a.index < i && a.p == p && a.b == b && a.ep == ep && a.seq == seq {
			return a, nil
		}
	}
	return nil, fmt.Errorf("state %d: no send of partition %s batch %s (epoch %s, seq %s) before it", d.s.Steps[i].State, p, b, ep, seq)
}

// receiveOf returns the index of the step where the answer to a, the fault
// of step i, ends: the client reads it, or a lost connection loses it (the
// model-checking configurations put every partition on one connection); or
// len(steps) if neither happens.
func (d *deriver) receiveOf(i int, a *attempt) int {
	for j := i + 1; j < len(d.s.Steps); j++ {
		st := d.s.Steps[j]
		if st.Action == "Disconnect" ||
			(st.Action == "Receive" || st.Action == "ReceiveLate") && st.Get("p") == a.p && st.Get("b") == a.b && st.Get("ep") == a.ep && st.Get("seq") == a.seq {
			return j
		}
	}
	return len(d.s.Steps)
}

// until returns the hold condition for an answer to a that is read at step
// end: the partition's sends between a's and end. One new batch: "next";
// more, or a resend: "seq:K", K the last one's sequence; none: "".
func (d *deriver) until(a *attempt, end int) string {
	var between []*attempt
	for _, b := range d.attempts {
		if b.p == a.p && b.index > a.index && b.index < end {
			between = append(between, b)
		}
	}
	switch {
	case len(between) == 0:
		return ""
	case len(between) == 1 && between[0].new:
		return "next"
	default:
		return "seq:" + between[len(between)-1].seq
	}
}

func (d *deriver) firstAttemptAfter(p string, i int) *attempt {
	for _, a := range d.attempts {
		if a.p == p && a.index > i {
			return a
		}
	}
	return nil
}

// connection returns the requests and unread responses of connection c in
// the state before step i.
func (d *deriver) connection(i int, c string) (reqs, resps []value, err error) {
	state := d.s.Steps[i].State
	var before []tlc.Var
	for _, st := range d.trace {
		if st.State == state-1 && st.BackTo == 0 && !st.Stuttering {
			before = st.Vars
		}
	}
	get := func(name string) ([]value, error) {
		for _, v := range before {
			if v.Name != name {
				continue
			}
			fn, err := parseValue(v.Value)
			if err != nil {
				return nil, fmt.Errorf("state %d: %s: %w", state-1, name, err)
			}
			seq, ok := fn.get(c)
			if !ok || seq.kind != 's' {
				return nil, fmt.Errorf("state %d: %s has no sequence for connection %s", state-1, name, c)
			}
			return seq.elems, nil
		}
		return nil, fmt.Errorf("state %d Disconnect: the state before it has no variable %s", state, name)
	}
	if reqs, err = get("reqs"); err != nil {
		return nil, nil, err
	}
	if resps, err = get("resps"); err != nil {
		return nil, nil, err
	}
	return reqs, resps, nil
}

// render writes the planned faults as schedule lines. A fault carries
// try=N (the batch's N-th attempt) when its attempt is not the first of its
// sequence, or when another fault selects the same sequence.
func (d *deriver) render() {
	same := map[string]int{}
	key := func(a *attempt) string { return a.p + "/" + a.ep + "/" + a.seq }
	for _, f := range d.faults {
		if f.att != nil && !f.idle {
			same[key(f.att)]++
		}
	}
	for _, f := range d.faults {
		ps := []string{}
		if f.param != "" {
			ps = append(ps, f.param)
		}
		if a := f.att; a != nil {
			ps = append(ps, "epoch="+strconv.Itoa(d.epochIndex(a.p, a.ep)))
			if f.idle {
				ps = append(ps, "idle="+IdleGap.String())
			} else {
				ps = append(ps, "seq="+a.seq)
				if a.seqTry > 1 || same[key(a)] > 1 {
					ps = append(ps, "try="+strconv.Itoa(a.try))
				}
			}
		}
		if f.until != "" {
			ps = append(ps, "until="+f.until, "delay="+durationString(HoldDelay))
		}
		if f.att != nil {
			ps = append(ps, "partitions="+strconv.Itoa(d.partition(f.att.p)))
		}
		d.s.Schedule = append(d.s.Schedule, f.kind+":"+strings.Join(ps, ","))
	}
}

// durationString writes d as the schedule files do: 1500ms, not 1.5s.
func durationString(d time.Duration) string {
	if d%time.Second != 0 && d%time.Millisecond == 0 {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return d.String()
}

// partitions returns the model's partitions in order: from the initial
// state's nextSeq (the order TLC prints the Partitions model values in),
// else those the events name, in natural order.
func (d *deriver) partitions() []string {
	for _, st := range d.trace {
		if st.Action == tlc.InitialPredicate {
			if ps := partitionsOf(st.Vars); len(ps) > 0 {
				return ps
			}
		}
	}
	var ps []string
	for _, st := range d.s.Steps {
		if p := st.Get("p"); p != "" && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, naturalLess)
	return ps
}

func partitionsOf(vars []tlc.Var) []string {
	for _, v := range vars {
		if v.Name == "nextSeq" {
			if fn, err := parseValue(v.Value); err == nil && fn.kind == 'f' {
				return fn.keys
			}
		}
	}
	return nil
}

// naturalLess orders p2 before p10.
func naturalLess(a, b string) int {
	ta, na := splitNum(a)
	tb, nb := splitNum(b)
	if ta != tb {
		return strings.Compare(ta, tb)
	}
	return na - nb
}

func splitNum(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, _ := strconv.Atoi(s[i:])
	return s[:i], n
}

// partition returns the wire partition of model partition p.
func (d *deriver) partition(p string) int {
	if i := slices.Index(d.parts, p); i >= 0 {
		return i
	}
	return 0
}

// epochIndex returns the relative epoch of ep on partition p: 0 for the
// partition's first.
func (d *deriver) epochIndex(p, ep string) int {
	if i := slices.Index(d.epochs[p], ep); i >= 0 {
		return i
	}
	return 0
}

// readEvent reads step st's event: its act and fields.
func readEvent(st tlc.Step) (Step, error) {
	var ev *tlc.Var
	for i := range st.Vars {
		if st.Vars[i].Name == "event" {
			ev = &st.Vars[i]
		}
	}
	if ev == nil {
		return Step{}, fmt.Errorf("state %d (%s): no variable event", st.State, st.Action)
	}
	v, err := parseValue(ev.Value)
	if err != nil {
		return Step{}, fmt.Errorf("state %d: event: %w", st.State, err)
	}
	if v.kind != 'r' {
		return Step{}, fmt.Errorf("state %d: event %q is not a record", st.State, abbrev(ev.Value))
	}
	step := Step{State: st.State}
	for i, k := range v.keys {
		e := v.elems[i]
		if e.kind != 'a' {
			return Step{}, fmt.Errorf("state %d: event field %s is not a plain value", st.State, k)
		}
		if k == "act" {
			step.Action = e.text()
			continue
		}
		step.Fields = append(step.Fields, Field{k, e.text()})
	}
	if step.Action == "" {
		return Step{}, fmt.Errorf("state %d: event has no act", st.State)
	}
	sortFields(step.Fields)
	return step, nil
}

func sortFields(fs []Field) {
	rank := func(n string) int {
		if i := slices.Index(fieldOrder, n); i >= 0 {
			return i
		}
		return len(fieldOrder)
	}
	slices.SortStableFunc(fs, func(a, b Field) int {
		if ra, rb := rank(a.Name), rank(b.Name); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Name, b.Name)
	})
}
