// Package replay mirrors the actions of spec/IdempotentProducer.tla in Go and
// feeds a trace through them one event at a time, like raft's Step: an event
// that no enabled action explains is a conformance failure, reported with its
// line, the action it was taken for, and the state it met.
//
// The client side of the spec is followed exactly: the trace says which action
// the producer took, and Step checks that the spec enables it (the first-ack
// rule when the header says it is on, HoldWhileRetrying, max in-flight, retry
// order, sequence continuity, epoch bumps, TransactionManager.canRetry's
// decisions). The broker is not observed directly: its answers are checked
// against the spec's broker (de-duplication window, epoch and sequence rules,
// the no-state rule the header names). Where the trace cannot tell what the
// broker did — requests outstanding when a connection was lost may or may not
// have been handled — Machine keeps every broker state still possible, as TLC
// would, and lets later answers decide.
//
// Names follow the spec: epoch, pEpoch, nextSeq, lastAcked, bumpReq,
// unresolved and batch on the client; pstate and the log's length on the
// broker. Memory is bounded by the batches in flight, not by the trace.
package replay

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kcheck/kcheck/checker/kafkaerr"
	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/tracer"
)

// Error is an event the spec does not explain.
type Error struct {
	Line   int
	Action string // the spec action the event was taken for
	Reason string // what did not hold
	State  string // the spec state it met, for the partition concerned
}

func (e *Error) Error() string {
	return fmt.Sprintf("line %d: %s not enabled: %s (state: %s)", e.Line, e.Action, e.Reason, e.State)
}

// state is a batch's state, as the spec's batch[p][b].st.
type state uint8

const (
	stSent state = iota + 1
	stRetry
	stAcked
	stFailed
)

func (s state) String() string {
	return [...]string{"?", "sent", "retry", "acked", "failed"}[s]
}

// batch is the spec's batch[p][b] for one in-flight batch.
type batch struct {
	id      int64
	st      state
	seq     int32
	n       int32
	ep      int16
	reset   bool // sequenceHasBeenReset
	retried bool
	node    int32
	req     int32 // the request of its outstanding attempt
	line    int   // where it was last sent
	sentAt  int64 // the trace time of its last attempt
	// stamp is what the broker's producer-state expiry counts from once
	// it is appended: the batch's max record timestamp where the trace
	// has it (tracer.Event.BatchTime), else its last attempt's send.
	stamp int64
}

func (b *batch) last() int32 { return nextSeq(b.seq, b.n-1) }

// window is one retained batch of the broker's producer entry.
type window struct {
	first, last int32
	off         int64
}

// broker is one possible state of the broker for a partition: our
// producer's entry (pstate) and how long the log is.
type broker struct {
	noState bool
	ep      int16
	wins    [DedupWindow]window // the retained batches, oldest first: wins[:n]
	n       int
	logLen  int64
}

// win returns the retained batches, oldest first.
func (b *broker) win() []window { return b.wins[:b.n] }

func (b broker) equal(o broker) bool {
	return b == o
}

// pending is a fault the broker applied to an attempt (epoch, base sequence)
// whose answer the client has not read yet, or a cut of the connection
// (node) the attempt arrived on, before anything of its request was
// forwarded.
type pending struct {
	fault string // RejectBeforeAppend, AppendThenFail; DropConnection
	ep    int16
	seq   int32
	err   string
	node  int32
	line  int
}

// partition is the spec's per-partition state.
type partition struct {
	pid        int64 // with pEpoch: the producer id and epoch its sequences belong to
	pEpoch     int16
	nextSeq    int32
	lastAcked  int32 // -1: none in pEpoch
	lastAckT   int64 // the trace time (ns) of the answer that raised lastAcked
	bumpReq    bool
	unresolved bool
	inflight   []*batch // sent or retry, the spec's InFlight(p)
	brokers    []broker // every broker state still possible
	spare      []broker // handle's buffer for the next brokers, swapped with brokers
	faults     []pending
	// cuts are attempts whose connection was closed as they arrived
	// (Fault DropConnection naming the partition): the Disconnect that
	// follows loses them unhandled.
	cuts []pending
	// lastAppend is the latest stamp of the partition's batches the broker
	// answered as appended (NONE, DUPLICATE_SEQUENCE_NUMBER): the broker
	// judges a producer idle by its last appended batch's max timestamp
	// (ProducerStateEntry.lastTimestamp, from ProducerAppendInfo's
	// appendDataBatch), which its client set when it made the batch, before
	// its first send and any retry. appended: whether there was one.
	lastAppend int64
	appended   bool
	// uncertain are batches whose last attempt was outstanding when its
	// connection was lost: the broker may have handled it or not.
	uncertain []*batch
	// inTxn: a transactional trace's partition in the open transaction,
	// so that its end writes a marker, which takes an offset of the log:
	// txnSure (added: AddPartitionsToTxn, or a batch acknowledged) or
	// txnMaybe (a batch sent, none acknowledged: TV2's Produce may not
	// have added it).
	inTxn uint8
}

const (
	txnMaybe uint8 = iota + 1
	txnSure
)

// Machine replays one trace.
type Machine struct {
	h           tracer.Header
	pid         int64
	epoch       int16
	started     bool
	parts       map[int32]*partition
	outstanding map[int32][]*request // node -> its requests not yet wholly answered, in the order sent (conn.go)
	lastReq     map[int32]corr       // node -> the highest correlation id sent on its connection since it was last lost (conn.go)
	free        []*request           // done requests, for reuse
	readBack    bool                 // a ReadBack was seen: the run is over
	// maxSentEpoch is the highest epoch of any attempt sent so far: kfake
	// keeps one epoch per producer id across partitions (kfake 00_produce.go,
	// pidinfo.epoch), so it answers INVALID_PRODUCER_EPOCH to a partition
	// still at an older epoch, where Kafka's per-partition producer state
	// (ProducerStateManager) accepts it.
	maxSentEpoch int16
	// wire: the trace shows the wire, not the client (see wire.go).
	wire bool
	// expiry is the header's state-expiry fault's delay: the broker (a
	// real one, with producer.id.expiration.ms that low) may have forgotten
	// the producer before an attempt sent that long after the partition's
	// last appended batch (the spec's ExpireProducerState, which the wire
	// does not show). 0: no expiry.
	expiry int64
	now    int64 // the trace time of the event being stepped
	// batchTime is its BatchTime (a SendNew's or Resend's; 0: not known).
	batchTime int64
	// lateTxn: a late request to the coordinator went since the last
	// transaction's end (tracer.LateSent of no partition).
	lateTxn bool
	// txn: a transactional trace of kcheck's producer (the header's
	// transactional_id): a failed batch dooms its transaction, which is
	// aborted, instead of leaving an unresolved sequence
	// (TransactionManager.canRetry and handleFailedBatch for a
	// transactional producer); doomed: the open transaction is.
	txn, doomed bool
	// sawTxn: the trace has transactional steps (a transactional id, an
	// EndTxn), on the wire too: partitions are tracked for the markers.
	sawTxn bool
}

// DedupWindow is Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN.
const DedupWindow = 5

// New returns a Machine for a trace with header h.
func New(h tracer.Header) (*Machine, error) {
	switch h.Broker.NoStateRule {
	case "pre25", "v25to44", "v45", "kafka19880":
	default:
		return nil, fmt.Errorf("replay: header names no_state_rule %q; want pre25, v25to44, v45 or kafka19880", h.Broker.NoStateRule)
	}
	if h.MaxInFlight < 1 {
		return nil, fmt.Errorf("replay: header max_in_flight %d must be positive", h.MaxInFlight)
	}
	m := &Machine{h: h, parts: map[int32]*partition{}, outstanding: map[int32][]*request{}, lastReq: map[int32]corr{},
		wire: h.Writer == tracer.ProxyWriter, expiry: ExpiryDelay(h)}
	m.txn = h.TransactionalID != "" && !m.wire
	m.sawTxn = h.TransactionalID != ""
	return m, nil
}

// ExpiryDelay is the delay (ns) of the header's state-expiry fault: the
// real broker's producer.id.expiration.ms, which no event shows. 0: none.
func ExpiryDelay(h tracer.Header) int64 {
	var d int64
	for _, s := range h.Faults {
		if f, err := fault.Parse(s); err == nil && f.Kind == fault.StateExpiry && f.Delay > 0 {
			d = f.Delay.Nanoseconds()
		}
	}
	return d
}

// Unverified reports whether err answers a transactional producer's (txn)
// batch that the leader refused before the append because it could not
// verify the partition to be in an ongoing transaction (KIP-890 part 1;
// ReplicaManager.appendRecords, its verification callback):
// TRANSACTION_ABORTABLE to a client that knows it (KIP-1050). An older
// client gets NOT_ENOUGH_REPLICAS, which any real broker may answer.
func Unverified(txn bool, err string) bool {
	return txn && err == "TRANSACTION_ABORTABLE"
}

// MayExpire reports whether the broker may have expired the producer's
// state for a partition (the spec's ExpireProducerState, unseen) before an
// attempt sent at sentAt: with a state-expiry delay, once the partition has
// had a batch appended, the last of them stamped (its max timestamp, or
// its send) lastAppend, at least the delay before. checker/tv's translation of the wire flags the same
// attempts, so that TLC may expire exactly where the mirror may.
func MayExpire(delay, lastAppend, sentAt int64, appended bool) bool {
	return delay > 0 && appended && sentAt-lastAppend >= delay
}

func (m *Machine) part(p int32) *partition {
	pt := m.parts[p]
	if pt == nil {
		pt = &partition{lastAcked: -1, brokers: []broker{{noState: true}}}
		m.parts[p] = pt
	}
	return pt
}

// nextSeq is Kafka's DefaultRecordBatch.incrementSequence.
func nextSeq(seq, n int32) int32 {
	if seq > math.MaxInt32-n {
		return n - (math.MaxInt32 - seq) - 1
	}
	return seq + n
}

func (m *Machine) fail(line int, action string, p int32, format string, args ...any) error {
	st := ""
	if pt := m.parts[p]; pt != nil {
		st = pt.describe(m.epoch)
	}
	return &Error{Line: line, Action: action, Reason: fmt.Sprintf(format, args...), State: st}
}

func (pt *partition) describe(epoch int16) string {
	var b strings.Builder
	fmt.Fprintf(&b, "epoch=%d pEpoch=%d nextSeq=%d lastAcked=%d bumpReq=%v unresolved=%v inflight=[", epoch,
		pt.pEpoch, pt.nextSeq, pt.lastAcked, pt.bumpReq, pt.unresolved)
	for i, bt := range pt.inflight {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "b%d:%s@%d/%d", bt.id, bt.st, bt.ep, bt.seq)
	}
	b.WriteString("] broker=")
	for i, br := range pt.brokers {
		if i > 0 {
			b.WriteString("|")
		}
		if br.noState {
			fmt.Fprintf(&b, "{no state, log %d}", br.logLen)
		} else {
			fmt.Fprintf(&b, "{ep %d, last %v, log %d}", br.ep, br.win(), br.logLen)
		}
	}
	return b.String()
}

func (pt *partition) find(id int64) *batch {
	for _, b := range pt.inflight {
		if b.id == id {
			return b
		}
	}
	return nil
}

func (pt *partition) remove(b *batch) {
	pt.inflight = slices.DeleteFunc(pt.inflight, func(c *batch) bool { return c == b })
	pt.uncertain = slices.DeleteFunc(pt.uncertain, func(c *batch) bool { return c == b })
}

// retrying is the spec's Retrying(p).
func (pt *partition) retrying() bool {
	for _, b := range pt.inflight {
		if b.retried {
			return true
		}
	}
	return false
}

func (pt *partition) hasRetry() bool {
	for _, b := range pt.inflight {
		if b.st == stRetry {
			return true
		}
	}
	return false
}

func (pt *partition) outstanding() bool {
	for _, b := range pt.inflight {
		if b.st == stSent {
			return true
		}
	}
	return false
}

// Step applies the event e at line to the machine.
func (m *Machine) Step(line int, e *tracer.Event) error {
	m.now, m.batchTime = e.T, e.BatchTime
	switch {
	case e.Kind == tracer.AddPartitionsToTxn, e.Kind == tracer.EndTxn, e.Kind == tracer.EndTxnReceive, e.Kind == tracer.InitProducerID && e.TxnID != "":
		m.sawTxn = true
	}
	if e.Kind != tracer.InitProducerID && e.Kind != tracer.Fault && e.Kind != tracer.ReadBack && e.Kind != tracer.ReadBackShort && e.Kind != tracer.ReadCommitted && e.Kind != tracer.Poll && e.Kind != tracer.PollEnd && e.Kind != tracer.Disconnect && e.Kind != tracer.ResolveSequences && e.Kind != tracer.Told && e.Kind != tracer.TxnTold {
		if !m.started {
			return &Error{Line: line, Action: string(e.Kind), Reason: "no InitProducerId before it"}
		}
		if e.PID != m.pid {
			return m.fail(line, string(e.Kind), e.Partition, "producer id %d, but InitProducerId gave %d", e.PID, m.pid)
		}
	}
	switch e.Kind {
	case tracer.InitProducerID:
		if m.started && m.wire {
			m.wireInit(e)
			return nil
		}
		if m.started {
			return m.renew(line, e)
		}
		m.started, m.pid, m.epoch = true, e.PID, e.Epoch
		return nil
	case tracer.SendNew, tracer.Resend:
		if err := m.corrOrder(line, e); err != nil {
			return err
		}
		if pt := m.part(e.Partition); m.sawTxn && pt.inTxn == 0 {
			pt.inTxn = txnMaybe
		}
		if m.wire {
			return m.wireSend(line, e)
		}
		if e.Kind == tracer.SendNew {
			return m.sendNew(line, e)
		}
		return m.resend(line, e)
	case tracer.Receive:
		return m.receive(line, e)
	case tracer.Bump:
		return m.bump(line, e)
	case tracer.ExpireBatch:
		return m.expireBatch(line, e)
	case tracer.ResolveSequences:
		return m.resolve(line, e)
	case tracer.Disconnect:
		return m.disconnect(line, e.Node)
	case tracer.Fault:
		return m.fault(line, e)
	case tracer.Fail:
		return m.failBatch(line, e)
	case tracer.Told:
		// What the application was told is no protocol step: checker/order
		// and checker/linz hold it to the read-back.
		return nil
	case tracer.AddPartitionsToTxn:
		if e.Err == "NONE" {
			m.part(e.Partition).inTxn = txnSure
		}
		return nil
	case tracer.TxnTold:
		// What the application was told of a transaction: no step of the
		// idempotent spec.
		return nil
	case tracer.EndTxn:
		return m.endTxn(line, e)
	case tracer.EndTxnReceive:
		// KIP-890 part 2 (TV2): EndTxn v5 answers the next epoch, under
		// which every partition starts again at sequence 0, as after a
		// Bump; the broker takes a higher epoch's sequence 0.
		if e.Err == "NONE" {
			m.doomed = false
			m.markers()
		}
		if e.Err == "NONE" && e.NewEpoch >= 0 {
			if e.NewEpoch <= m.epoch {
				return m.fail(line, string(e.Kind), -1, "EndTxn answered epoch %d, not above the producer's %d", e.NewEpoch, m.epoch)
			}
			m.epoch = e.NewEpoch
		}
		return nil
	case tracer.ReadBack, tracer.ReadBackShort:
		// The read-back itself is the ordering and linearizability
		// checks' job; the run is over.
		return m.settled(line)
	case tracer.ReadCommitted, tracer.Poll, tracer.PollEnd:
		// What a read_committed consumer returned, after the run or
		// while it went on: checker/txn's. A poller is no producer.
		return nil
	}
	return &Error{Line: line, Action: string(e.Kind), Reason: "unknown event"}
}

// sendNew is the spec's SendNew(p).
func (m *Machine) sendNew(line int, e *tracer.Event) error {
	const act = "SendNew"
	pt := m.part(e.Partition)
	switch {
	case !m.room(e.Node, e.Req):
		return m.fail(line, act, e.Partition, "%d requests already outstanding to node %d (max.in.flight %d)", m.pendingRequests(e.Node), e.Node, m.h.MaxInFlight)
	case pt.hasRetry():
		return m.fail(line, act, e.Partition, "a batch of the partition is waiting to be retried: it must go first")
	case pt.bumpReq:
		return m.fail(line, act, e.Partition, "an epoch bump is pending for the partition")
	case pt.unresolved:
		return m.fail(line, act, e.Partition, "the partition has an unresolved sequence")
	case !m.current(pt) && len(pt.inflight) > 0:
		return m.fail(line, act, e.Partition, "the partition still has batches in flight from producer id %d epoch %d", pt.pid, pt.pEpoch)
	}
	seq, acked := pt.nextSeq, pt.lastAcked
	if !m.current(pt) {
		seq, acked = 0, -1
	}
	if m.h.FirstAck && acked == -1 && len(pt.inflight) > 0 {
		return m.fail(line, act, e.Partition, "first-ack rule: the partition awaits the first ack of epoch %d", m.epoch)
	}
	if idle := e.T - pt.lastAckT; m.rearmIdle(idle) && acked != -1 && len(pt.inflight) > 0 {
		return m.fail(line, act, e.Partition, "idle re-arm rule: no acknowledgement for %d ms (bound %d ms), so the partition awaits one before it pipelines",
			idle/1e6, m.h.IdleRearmMs)
	}
	if m.h.HoldWhileRetrying && pt.retrying() {
		return m.fail(line, act, e.Partition, "HoldWhileRetrying: a retried batch of the partition is unacknowledged")
	}
	if e.Epoch != m.epoch || e.Seq != seq {
		return m.fail(line, act, e.Partition, "sent as epoch %d seq %d, but the next is epoch %d seq %d", e.Epoch, e.Seq, m.epoch, seq)
	}
	if e.N < 1 || int(e.N) != len(e.Records) {
		return m.fail(line, act, e.Partition, "batch of n=%d with %d record ids", e.N, len(e.Records))
	}
	pt.pid, pt.pEpoch, pt.lastAcked = m.pid, m.epoch, acked
	pt.nextSeq = nextSeq(seq, e.N)
	b := &batch{id: e.Batch, seq: seq, n: e.N, ep: m.epoch}
	pt.inflight = append(pt.inflight, b)
	m.send(b, e.Partition, e.Node, e.Req, line)
	return nil
}

// rearmSlack is what the idle re-arm check allows for the producer's clock.
// The producer dates a batch by its record timestamps (wall clock, ms),
// never later than the trace time of its answer, so its idle is at least
// the trace's but for the time between the step's clock reading and the
// SendNew event (a descheduled sender goroutine on a loaded machine), a
// wall-clock step, and rounding to a millisecond. The check still catches
// a producer that ignores the rule, which pipelines as soon as it sends
// after an idle far longer than the bound.
const rearmSlack = 100 * time.Millisecond

// rearmIdle reports whether a partition idle for the trace time idle (ns)
// since its last acknowledgement must, under the header's idle re-arm rule
// (spec: RearmAfterIdle), await one again before it pipelines.
func (m *Machine) rearmIdle(idle int64) bool {
	return m.h.FirstAck && m.h.IdleRearmMs > 0 && idle >= (time.Duration(m.h.IdleRearmMs)*time.Millisecond+rearmSlack).Nanoseconds()
}

// resend is the spec's Resend(p).
func (m *Machine) resend(line int, e *tracer.Event) error {
	const act = "Resend"
	pt := m.part(e.Partition)
	b := pt.find(e.Batch)
	switch {
	case b == nil || b.st != stRetry:
		return m.fail(line, act, e.Partition, "batch %d is not waiting to be retried", e.Batch)
	case !m.room(e.Node, e.Req):
		return m.fail(line, act, e.Partition, "%d requests already outstanding to node %d (max.in.flight %d)", m.pendingRequests(e.Node), e.Node, m.h.MaxInFlight)
	case pt.bumpReq:
		return m.fail(line, act, e.Partition, "an epoch bump is pending for the partition")
	case e.Epoch != b.ep || e.Seq != b.seq || e.N != b.n:
		return m.fail(line, act, e.Partition, "batch %d resent as epoch %d seq %d n %d, but it has epoch %d seq %d n %d", e.Batch, e.Epoch, e.Seq, e.N, b.ep, b.seq, b.n)
	}
	for _, c := range pt.inflight {
		if c.ep == b.ep && c.seq < b.seq {
			return m.fail(line, act, e.Partition, "batch %d (seq %d) is not the lowest sequence in flight: seq %d is", b.id, b.seq, c.seq)
		}
	}
	m.send(b, e.Partition, e.Node, e.Req, line)
	return nil
}

// receive is the spec's Receive, preceded by the broker's handling of the
// request (HandleProduce, RejectBeforeAppend or AppendThenFail), which the
// trace shows only through the answer.
func (m *Machine) receive(line int, e *tracer.Event) error {
	const act = "Receive"
	pt := m.part(e.Partition)
	b := pt.find(e.Batch)
	if b == nil || b.st != stSent || b.req != e.Req {
		return m.fail(line, act, e.Partition, "no outstanding attempt of batch %d in request %d", e.Batch, e.Req)
	}
	if e.Epoch != b.ep || e.Seq != b.seq {
		return m.fail(line, act, e.Partition, "answer names epoch %d seq %d, the attempt was epoch %d seq %d", e.Epoch, e.Seq, b.ep, b.seq)
	}
	if err := m.take(line, e.Node, e.Req, e.Partition, b.id); err != nil {
		return err
	}
	if err := m.handle(line, pt, b, e); err != nil {
		return err
	}
	if m.wire {
		// The client's own decision shows in what it sends next.
		if kafkaerr.IsAck(e.Err) {
			if m.sawTxn {
				pt.inTxn = txnSure
			}
			b.st = stAcked
			pt.remove(b)
		} else {
			b.st, b.retried = stRetry, true
		}
		return nil
	}
	// The client's side (Sender.completeBatch, TransactionManager.canRetry).
	cur := b.ep == pt.pEpoch
	isNext := b.seq == nextSeq(pt.lastAcked, 1)
	if m.txn {
		return m.txnReceive(pt, b, e, cur, isNext)
	}
	switch kafkaerr.Classify(e.Err) {
	case kafkaerr.Acked:
		b.st = stAcked
		pt.remove(b)
		if cur && (pt.lastAcked == -1 || b.last() > pt.lastAcked) {
			pt.lastAcked, pt.lastAckT = b.last(), e.T
		}
	case kafkaerr.UnknownProducer:
		b.st, b.retried = stRetry, true
		if e.LogStart != -1 && !b.reset {
			pt.bumpReq = true
		}
	case kafkaerr.OutOfOrder:
		b.st, b.retried = stRetry, true
		switch {
		case !pt.unresolved && (b.reset || !isNext):
			// retried without a bump: the KAFKA-14359 loop
		case !pt.unresolved || isNext:
			pt.bumpReq = true
		}
	case kafkaerr.Fenced:
		b.st = stFailed
	case kafkaerr.Unknown:
		return m.fail(line, act, e.Partition, "unknown error %q", e.Err)
	case kafkaerr.Refused:
		// kcheck's producer fails the batch and treats its sequence as
		// unresolved.
		b.st = stFailed
	default:
		b.st, b.retried = stRetry, true
	}
	return nil
}

// txnReceive is receive's client side for kcheck's transactional
// producer (producer/core txnVerdictFor): UNKNOWN_PRODUCER_ID is retried
// while the log start offset is unknown or the batch was renumbered,
// OUT_OF_ORDER_SEQUENCE_NUMBER while the batch is not the next, any other
// retriable error always; everything else fails the batch and dooms the
// transaction, after which no error is retried.
func (m *Machine) txnReceive(pt *partition, b *batch, e *tracer.Event, cur, isNext bool) error {
	c := kafkaerr.Classify(e.Err)
	if c == kafkaerr.Acked {
		pt.inTxn = txnSure
		b.st = stAcked
		pt.remove(b)
		if cur && (pt.lastAcked == -1 || b.last() > pt.lastAcked) {
			pt.lastAcked, pt.lastAckT = b.last(), e.T
		}
		return nil
	}
	retry := false
	if !m.doomed {
		switch c {
		case kafkaerr.UnknownProducer:
			retry = e.LogStart == -1 || b.reset
		case kafkaerr.OutOfOrder:
			retry = b.reset || !isNext
		case kafkaerr.Fenced, kafkaerr.Refused, kafkaerr.Unknown:
		default:
			retry = true
		}
	}
	if retry {
		b.st, b.retried = stRetry, true
		return nil
	}
	b.st, m.doomed = stFailed, true
	return nil
}

// handle checks the broker's answer for b against every broker state still
// possible, keeping those that explain it.
func (m *Machine) handle(line int, pt *partition, b *batch, e *tracer.Event) error {
	var fault *pending
	for i, f := range pt.faults {
		if f.ep == b.ep && f.seq == b.seq {
			fault = &f
			pt.faults = slices.Delete(pt.faults, i, i+1)
			break
		}
	}
	// A batch outstanding when its connection was lost, or an earlier
	// uncertain batch of the partition, may have been handled before this
	// attempt: each possibility is a broker state.
	next := pt.spare[:0]
	var reasons []string
	add := func(out broker) {
		// Candidates are few (one, or a handful after a lost connection).
		if !slices.ContainsFunc(next, out.equal) {
			next = append(next, out)
		}
	}
	candidates := m.expand(pt)
	if MayExpire(m.expiry, pt.lastAppend, b.sentAt, pt.appended) {
		// The broker may have expired the producer's state while the
		// partition was idle, or its check may not have run yet: both.
		for _, br := range candidates[:len(candidates):len(candidates)] {
			if gone := (broker{noState: true, logLen: br.logLen}); !slices.ContainsFunc(candidates, gone.equal) {
				candidates = append(candidates, gone)
			}
		}
	}
	for _, br := range candidates {
		out, ok, why := m.answer(br, b, fault, e)
		if !ok {
			reasons = append(reasons, why)
			continue
		}
		add(out)
		// A real broker's own retriable error (no injected fault) may come
		// before the append or after it (the spec's RejectBeforeAppend or
		// AppendThenFail): both are possible.
		if fault == nil && m.brokerError(e.Err) {
			if appended, ok := m.apply(br, b.ep, b.seq, b.n, -1); ok {
				add(appended)
			}
		}
	}
	if len(next) == 0 {
		action := "HandleProduce"
		if fault != nil {
			action = fault.fault
		}
		slices.Sort(reasons)
		reasons = slices.Compact(reasons)
		return m.fail(line, action, e.Partition, "the broker answered batch %d (epoch %d seq %d) with %s offset %d, but %s",
			b.id, b.ep, b.seq, e.Err, e.Offset, strings.Join(reasons, "; or "))
	}
	pt.brokers, pt.spare = next, pt.brokers[:0]
	if kafkaerr.IsAck(e.Err) {
		if !pt.appended || b.stamp > pt.lastAppend {
			pt.lastAppend = b.stamp
		}
		pt.appended = true
	}
	return nil
}

// expand returns the broker states possible just before the next attempt on
// the partition is handled: each uncertain batch sent before it may have
// been appended, or not. Requests on one connection are handled in order,
// so the uncertain batches are applied in the order they were sent; but any
// of them may have been refused (an error answer that was lost with the
// connection: NOT_LEADER_OR_FOLLOWER for the first while the next is
// appended is the seed's race itself), so the appended ones are any
// subsequence, not only a prefix.
func (m *Machine) expand(pt *partition) []broker {
	if len(pt.uncertain) == 0 {
		return pt.brokers
	}
	// Uncertain batches are resolved now: b's attempt comes after all of them.
	uncertain := pt.uncertain
	pt.uncertain = nil
	out := slices.Clone(pt.brokers)
	for _, u := range uncertain {
		for _, br := range out[:len(out):len(out)] {
			if nb, ok := m.apply(br, u.ep, u.seq, u.n, -1); ok && !slices.ContainsFunc(out, nb.equal) {
				out = append(out, nb)
			}
		}
	}
	return out
}

// verdict is the spec's Verdict for an attempt of batch b on broker state br:
// "APPEND", "DUPLICATE" (with the original offset) or an error name.
func (m *Machine) verdict(br broker, ep int16, seq, n int32) (string, int64) {
	last := nextSeq(seq, n-1)
	if !br.noState && br.ep == ep {
		for _, w := range br.win() {
			if w.first == seq && w.last == last {
				return "DUPLICATE", w.off
			}
		}
	}
	if br.noState {
		switch {
		case seq == 0, m.h.Broker.NoStateRule == "v25to44":
			return "APPEND", -1
		case m.h.Broker.NoStateRule == "v45" && br.logLen == 0:
			return "OUT_OF_ORDER_SEQUENCE_NUMBER", -1
		case m.h.Broker.NoStateRule == "v45":
			return "APPEND", -1
		default:
			return "UNKNOWN_PRODUCER_ID", -1
		}
	}
	switch {
	case ep < br.ep:
		return "INVALID_PRODUCER_EPOCH", -1
	case ep > br.ep:
		if seq == 0 {
			return "APPEND", -1
		}
		return "OUT_OF_ORDER_SEQUENCE_NUMBER", -1
	case seq == nextSeq(br.wins[br.n-1].last, 1):
		return "APPEND", -1
	}
	return "OUT_OF_ORDER_SEQUENCE_NUMBER", -1
}

// apply appends an attempt to br if the broker would, at offset off (-1: at
// the end of the log as the model knows it), and reports whether it did.
func (m *Machine) apply(br broker, ep int16, seq, n int32, off int64) (broker, bool) {
	v, _ := m.verdict(br, ep, seq, n)
	if v != "APPEND" {
		return br, false
	}
	if off < 0 {
		off = br.logLen
	}
	w := window{first: seq, last: nextSeq(seq, n-1), off: off}
	out := broker{ep: ep, logLen: off + int64(n)}
	if !br.noState && br.ep == ep {
		out.wins, out.n = br.wins, br.n
	}
	if out.n == len(out.wins) { // ProducerStateEntry.addBatch drops the oldest
		copy(out.wins[:], out.wins[1:])
		out.n--
	}
	out.wins[out.n] = w
	out.n++
	return out, true
}

// answer checks the answer e for b's attempt on broker state br, given the
// fault (if any) the broker applied to it, and returns the state after.
func (m *Machine) answer(br broker, b *batch, fault *pending, e *tracer.Event) (broker, bool, string) {
	v, dupOff := m.verdict(br, b.ep, b.seq, b.n)
	switch {
	case m.h.Broker.Kind == "kfake" && e.Err == "INVALID_PRODUCER_EPOCH" && b.ep < m.maxSentEpoch:
		return br, true, "" // kfake's per-producer epoch (see maxSentEpoch)
	case fault == nil && Unverified(m.sawTxn, e.Err):
		return br, true, ""
	case fault != nil && fault.fault == "RejectBeforeAppend":
		if e.Err != fault.err {
			return br, false, fmt.Sprintf("the injected fault answers %s", fault.err)
		}
		return br, true, ""
	case fault != nil && fault.fault == "AppendThenFail":
		if e.Err != fault.err {
			return br, false, fmt.Sprintf("the injected fault answers %s", fault.err)
		}
		if v == "APPEND" {
			nb, _ := m.apply(br, b.ep, b.seq, b.n, -1)
			return nb, true, ""
		}
		return br, true, "" // a duplicate or a rejected batch, answered with the fault's error
	}
	switch v {
	case "APPEND":
		if e.Err != "NONE" {
			return m.unmodelled(br, e, "the spec appends it")
		}
		if e.Offset < br.logLen {
			return br, false, fmt.Sprintf("the spec appends it at offset %d or later", br.logLen)
		}
		nb, _ := m.apply(br, b.ep, b.seq, b.n, e.Offset) // later offsets: another producer wrote in between
		return nb, true, ""
	case "DUPLICATE":
		if e.Err == "DUPLICATE_SEQUENCE_NUMBER" {
			return br, true, ""
		}
		if e.Err != "NONE" || e.Offset != dupOff {
			if e.Err != "NONE" {
				return m.unmodelled(br, e, fmt.Sprintf("the spec answers the duplicate with its original offset %d", dupOff))
			}
			return br, false, fmt.Sprintf("the spec answers the duplicate with its original offset %d", dupOff)
		}
		return br, true, ""
	default:
		if e.Err != v {
			return m.unmodelled(br, e, "the spec answers "+v)
		}
		return br, true, ""
	}
}

// unmodelled accepts an error the spec does not model on the broker side
// (a real broker's retriable errors with no injected fault: leader elections,
// replicas out of sync) as handled before the append; any other answer is a
// mismatch.
func (m *Machine) unmodelled(br broker, e *tracer.Event, want string) (broker, bool, string) {
	if m.brokerError(e.Err) {
		return br, true, ""
	}
	if m.h.Broker.Kind == "kfake" {
		want += fmt.Sprintf(" (and %s with no injected fault is not one of kfake's answers)", e.Err)
	}
	return br, false, want
}

// brokerError reports whether the trace's broker may answer err on its own,
// with no fault injected: a real broker's kafkaerr.OwnBrokerError; kfake answers none.
func (m *Machine) brokerError(err string) bool {
	return m.h.Broker.Kind != "kfake" && kafkaerr.OwnBrokerError(err)
}

// bump is the spec's Bump(p).
func (m *Machine) bump(line int, e *tracer.Event) error {
	const act = "Bump"
	pt := m.part(e.Partition)
	// The first bump under a new producer id (see renew) moves the partition
	// to the id's own epoch; any other goes one epoch up.
	want := m.epoch + 1
	if pt.pid != m.pid {
		want = m.epoch
	}
	switch {
	case !pt.bumpReq:
		return m.fail(line, act, e.Partition, "no epoch bump was requested for the partition")
	case pt.outstanding():
		return m.fail(line, act, e.Partition, "the partition still has a request outstanding")
	case e.Epoch != want:
		return m.fail(line, act, e.Partition, "bumped to epoch %d, want %d", e.Epoch, want)
	}
	m.epoch, pt.pid = e.Epoch, m.pid
	slices.SortFunc(pt.inflight, func(a, b *batch) int { return int(a.seq) - int(b.seq) })
	var seq int32
	for _, b := range pt.inflight {
		b.seq, b.ep, b.reset = seq, m.epoch, true
		seq = nextSeq(seq, b.n)
	}
	pt.pEpoch, pt.nextSeq, pt.lastAcked = m.epoch, seq, -1
	pt.bumpReq, pt.unresolved = false, false
	return nil
}

// current reports whether pt's sequences belong to the producer's current
// id and epoch.
func (m *Machine) current(pt *partition) bool { return pt.pid == m.pid && pt.pEpoch == m.epoch }

// renew is a second InitProducerId from kcheck's producer: a new producer id,
// taken when a partition needs an epoch bump and the epoch can go no higher
// (Java's resetIdempotentProducerId). The spec has one producer id; renew
// holds the new one to what keeps it safe: nothing outstanding, and every
// partition that still holds batches waiting for its bump, so that no batch
// of the old id is sent again under the new one unless renumbered by that
// bump (which then follows, as Bump events). The broker has no state for
// the new id.
func (m *Machine) renew(line int, e *tracer.Event) error {
	const act = "InitProducerId"
	for p, pt := range m.parts {
		switch {
		case pt.outstanding():
			return m.fail(line, act, p, "a new producer id while a request of the partition is outstanding")
		case pt.bumpReq:
		case len(pt.inflight) > 0:
			return m.fail(line, act, p, "a new producer id while the partition has batches in flight under the old one and no bump pending")
		case pt.unresolved:
			return m.fail(line, act, p, "a new producer id while the partition has an unresolved sequence")
		}
	}
	m.newProducerID(e)
	return nil
}

// markers is what a transaction's end does to the logs: the coordinator
// writes a marker to each partition of it, which takes an offset that no
// later batch gets (TransactionCoordinator, WriteTxnMarkers). A partition
// sure to be in it gets one; one that may be gets one or none, both kept
// possible. Uncertain attempts are settled first: they came before it.
func (m *Machine) markers() {
	for _, pt := range m.parts {
		if pt.inTxn == 0 {
			continue
		}
		brs := m.expand(pt)
		out := make([]broker, 0, 2*len(brs))
		if pt.inTxn == txnMaybe || m.lateTxn {
			out = append(out, brs...)
		}
		for _, br := range brs {
			br.logLen++
			if !slices.ContainsFunc(out, br.equal) {
				out = append(out, br)
			}
		}
		pt.brokers, pt.inTxn = out, 0
	}
	m.lateTxn = false
}

// endTxn checks that EndTxn was sent once every batch of the transaction
// was answered (TransactionManager.nextRequest sends no EndTxn while
// batches are incomplete): kcheck's producer's traces only; a proxy sees
// no client state.
func (m *Machine) endTxn(line int, e *tracer.Event) error {
	if m.wire {
		return nil
	}
	for p, pt := range m.parts {
		if len(pt.inflight) > 0 {
			return m.fail(line, string(e.Kind), p, "EndTxn for transaction %d while batch %d of the partition is in flight", e.Tx, pt.inflight[0].id)
		}
	}
	return nil
}

// newProducerID takes e's producer id and epoch as the producer's: the
// broker has no state for a new id on any partition. What uncertain attempts
// of the old id may have appended is kept in the logs' lengths.
func (m *Machine) newProducerID(e *tracer.Event) {
	m.pid, m.epoch, m.maxSentEpoch = e.PID, e.Epoch, e.Epoch
	for _, pt := range m.parts {
		var next []broker
		for _, br := range m.expand(pt) {
			nb := broker{noState: true, logLen: br.logLen}
			if !slices.ContainsFunc(next, nb.equal) {
				next = append(next, nb)
			}
		}
		pt.brokers = next
	}
}

// expireBatch is the spec's ExpireBatch(p).
func (m *Machine) expireBatch(line int, e *tracer.Event) error {
	const act = "ExpireBatch"
	pt := m.part(e.Partition)
	b := pt.find(e.Batch)
	switch {
	case m.h.DeliveryTimeoutMs <= 0:
		return m.fail(line, act, e.Partition, "the header has no delivery timeout")
	case b == nil || b.st != stRetry:
		return m.fail(line, act, e.Partition, "batch %d is not waiting to be retried", e.Batch)
	}
	b.st = stFailed
	pt.remove(b)
	if m.txn {
		m.doomed = true // the transaction is aborted instead
	} else {
		pt.unresolved = true
	}
	return nil
}

// resolve is the spec's ResolveSequences(p).
func (m *Machine) resolve(line int, e *tracer.Event) error {
	const act = "ResolveSequences"
	pt := m.part(e.Partition)
	switch {
	case !pt.unresolved:
		return m.fail(line, act, e.Partition, "no unresolved sequence")
	case len(pt.inflight) > 0:
		return m.fail(line, act, e.Partition, "batches are still in flight")
	}
	bump := pt.nextSeq != nextSeq(pt.lastAcked, 1)
	if e.Bumped != bump {
		return m.fail(line, act, e.Partition, "bump=%v, but nextSeq %d and lastAcked %d make it %v", e.Bumped, pt.nextSeq, pt.lastAcked, bump)
	}
	pt.unresolved = false
	pt.bumpReq = pt.bumpReq || bump
	return nil
}

// disconnect is the spec's Disconnect for the connection to node: every
// batch outstanding on it goes back to be retried, and whether the broker
// handled it first is unknown.
func (m *Machine) disconnect(line int, node int32) error {
	if err := m.lost(line, node); err != nil {
		return err
	}
	ids := make([]int32, 0, len(m.parts))
	for p := range m.parts {
		ids = append(ids, p)
	}
	slices.Sort(ids)
	for _, p := range ids {
		pt := m.parts[p]
		var lost []*batch
		for _, b := range pt.inflight {
			if b.st == stSent && b.node == node {
				lost = append(lost, b)
			}
		}
		// In the order they were sent, which is the order the broker would
		// have handled them in.
		slices.SortFunc(lost, func(a, b *batch) int { return a.line - b.line })
		for _, b := range lost {
			b.st, b.retried = stRetry, true
			// An attempt the connection was cut on as it arrived never
			// reached the broker; any other may have been handled.
			if !slices.ContainsFunc(pt.cuts, func(c pending) bool { return c.node == node && c.ep == b.ep && c.seq == b.seq }) {
				pt.uncertain = append(pt.uncertain, b)
			}
		}
		pt.cuts = slices.DeleteFunc(pt.cuts, func(c pending) bool { return c.node == node })
		// A fault for an attempt whose answer was lost leaves the attempt
		// uncertain either way: forget it.
		pt.faults = slices.DeleteFunc(pt.faults, func(f pending) bool {
			return slices.ContainsFunc(lost, func(b *batch) bool { return b.ep == f.ep && b.seq == f.seq })
		})
	}
	return nil
}

// fault queues a broker-side fault for the next request of its partition the
// broker handles, or applies a producer-state expiry at once.
func (m *Machine) fault(line int, e *tracer.Event) error {
	switch e.Fault {
	case tracer.LateSent:
		// A late request to the coordinator (a late EndTxn) may end the
		// transaction open when it lands, under the same epoch (TV1's
		// KAFKA-17754 class), and its markers are written after its
		// answer: until the client's own transaction ends, each
		// partition's marker may have come already (a gap the next append
		// shows) or may still come (markers).
		if e.Partition < 0 {
			m.lateTxn = true
		}
	case "RejectBeforeAppend", "AppendThenFail":
		pt := m.part(e.Partition)
		pt.faults = append(pt.faults, pending{fault: e.Fault, ep: e.Epoch, seq: e.Seq, err: e.Err, line: line})
	case "ExpireProducerState":
		pt := m.part(e.Partition)
		if len(pt.inflight) > 0 {
			return m.fail(line, "ExpireProducerState", e.Partition, "the partition has batches in flight (the spec expires state only after producer.id.expiration.ms of idleness)")
		}
		for i := range pt.brokers {
			pt.brokers[i] = broker{noState: true, logLen: pt.brokers[i].logLen}
		}
	case "DropConnection":
		// The Disconnect the client sees is what counts; one naming an
		// attempt (a cut as it arrived) says that attempt is lost unhandled.
		if e.Partition >= 0 {
			pt := m.part(e.Partition)
			pt.cuts = append(pt.cuts, pending{fault: e.Fault, ep: e.Epoch, seq: e.Seq, node: e.Node, line: line})
		}
	default:
		if tracer.ActsThroughClient(e.Fault) {
			// The Disconnect the client sees (or nothing) is what counts: a
			// response dropped as it came (DropResponse) leaves its attempt
			// uncertain, as any lost with its connection.
			return nil
		}
		if tracer.IsClusterFault(e.Fault) {
			// A node paused, killed, cut off or slowed: the client meets
			// it as the errors, delays and Disconnects that follow.
			return nil
		}
		return &Error{Line: line, Action: "Fault", Reason: fmt.Sprintf("unknown fault %q", e.Fault)}
	}
	return nil
}

// failBatch is a failure outside the spec's actions: a batch never sent (its
// delivery timeout before the drain, or the producer closed), a batch failed
// by a non-retriable answer, or a batch in flight when the producer closed.
func (m *Machine) failBatch(line int, e *tracer.Event) error {
	if e.Seq == -1 {
		return nil // never sent: never had a sequence
	}
	pt := m.part(e.Partition)
	b := pt.find(e.Batch)
	if b == nil {
		return m.fail(line, "Fail", e.Partition, "batch %d is not in flight", e.Batch)
	}
	if b.st == stSent {
		m.answered(b.node, b.req, e.Partition, b.id)
	}
	pt.remove(b)
	if b.st != stFailed && b.st != stRetry && b.st != stSent {
		return m.fail(line, "Fail", e.Partition, "batch %d is %s", e.Batch, b.st)
	}
	b.st = stFailed
	pt.unresolved = !m.txn // a transaction's failed batch is aborted with it
	return nil
}
