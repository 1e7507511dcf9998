package core

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kcheck/kcheck/tracer"
)

// Part names a partition of the core: the index AddPartition returned.
type Part int32

// Config is the core's configuration: the producer settings its decisions
// depend on.
type Config struct {
	MaxInFlight     int           // max.in.flight.requests.per.connection
	Linger          time.Duration // linger.ms: how long an open batch waits before it is ready
	DeliveryTimeout time.Duration // delivery.timeout.ms
	RetryBackoff    time.Duration // retry.backoff.ms
	MaxEpoch        int16         // the highest epoch before a new producer id is needed (32767)
	MaxRequestBytes int           // max.request.size: a request's batches add up to at most this (its first batch always goes); 0: no cap
	Rules           Rules
	Trace           bool // build trace events (Ready.Events)
	Txn             bool // transactional (txn.go): batches drain only inside a transaction
	TV2             bool // with Txn: transaction.version 2 (KIP-890 part 2): no AddPartitionsToTxn, EndTxn bumps the epoch
	// WaitMarkers, with TV2: a transaction's first batch waits until the
	// coordinator has finished the one before (txn.go, "settling").
	WaitMarkers bool
}

// Buffer is the loop's partition buffers, which the core reads when it
// drains (as raft's RawNode reads its Storage). A partition's unsent batches
// are its sealed ones, oldest first, then the open one Produce still
// appends to.
type Buffer interface {
	// Head describes p's next unsent batch: when its first record was
	// produced and whether it is sealed (full, so ready whatever the
	// linger); ok is false when p has none.
	Head(p Part) (created time.Time, sealed, ok bool)
	// Take removes p's next unsent batch and returns it prepared for
	// sending, or nil if there is none or the loop could not prepare it
	// (it then fails the batch itself).
	Take(p Part) *Batch
	// Drop removes p's next unsent batch and returns it, to be failed; nil
	// if there is none.
	Drop(p Part) *Batch
	// HeadBytes is the size of p's next unsent batch before compression:
	// what a request's byte cap is checked against before it is taken.
	HeadBytes(p Part) int
}

// Request is a produce request to send to Node: at most one batch per
// partition, each with its sequence and epoch; New[i] tells whether
// Batches[i] got its sequence now (a SendNew) or is a retry (a Resend).
type Request struct {
	Node    int32
	PID     int64
	Batches []*Batch
	New     []bool
}

// Event is the trace event of sending r's i-th batch in the request with
// correlation id corr (the loop emits it just before the request is
// written).
func (r *Request) Event(i int, corr int32) tracer.Event {
	b := r.Batches[i]
	e := tracer.Event{Kind: tracer.Resend, Partition: b.kp, Batch: b.ID, PID: r.PID, Epoch: b.epoch, Seq: b.seq,
		N: b.N, Req: corr, Node: r.Node}
	if r.New[i] {
		e.Kind, e.Records = tracer.SendNew, b.Records
	}
	return e
}

// Result is a partition's answer to its batch in a produce response.
type Result struct {
	Code     int16 // Kafka error code, 0 for success
	Offset   int64 // base offset, -1 when none
	LogStart int64 // log start offset, -1 when none
}

// Cause is why a batch ended.
type Cause uint8

const (
	Acked           Cause = iota // acknowledged at Outcome.Offset
	BrokerError                  // failed by the broker's answer Outcome.Code
	DeliveryTimeout              // delivery.timeout.ms, sent or not
	Closed                       // the producer closed (Abort)
	TxnAborted                   // its transaction was aborted before it was sent (Config.Txn)
)

// Outcome is a batch's end, to deliver to the application.
type Outcome struct {
	Batch  *Batch
	Cause  Cause
	Offset int64 // Acked: the base offset, -1 when the broker gave none (DUPLICATE_SEQUENCE_NUMBER)
	Code   int16 // BrokerError: the Kafka error code
}

// Ready is what the core wants done, in this order: emit Events, deliver
// Outcomes, send Requests (each request's events just before it is
// written), dial Dial, refresh metadata if Refresh, get a new producer id
// if NeedID, and wake the core at Wake (zero: no deadline).
type Ready struct {
	Events   []tracer.Event
	Outcomes []Outcome
	Requests []*Request
	Dial     []int32 // nodes with something to send and no connection
	Refresh  bool    // the metadata may be stale (a lost connection, a not-leader answer)
	NeedID   bool    // an epoch bump is due at MaxEpoch and nothing is outstanding: call NewProducerID
	Wake     time.Time

	// Transactions (Config.Txn; txn.go), after the requests:
	AddPartitions []Part         // TV1: send AddPartitionsToTxn for these partitions, then call PartitionsAdded
	EndTxn        *EndTxnRequest // send EndTxn, then call EndTxnAnswered
	DescribeTxn   bool           // TV2, Config.WaitMarkers: send DescribeTransactions, then call TxnDescribed
	TxnDone       *TxnResult     // the transaction ended: tell the application

	Bumps      int // epoch bumps taken
	OutOfOrder int // OUT_OF_ORDER_SEQUENCE_NUMBER answers
}

func (rd *Ready) reset() {
	clear(rd.Events)
	clear(rd.Outcomes)
	clear(rd.Requests)
	*rd = Ready{Events: rd.Events[:0], Outcomes: rd.Outcomes[:0], Requests: rd.Requests[:0], Dial: rd.Dial[:0]}

}

// partition is the core's side of one partition.
type partition struct {
	id     int32 // Kafka's partition number, for the trace
	leader int32 // -1: none known
	cand   bool
	seq    seqState
	added  bool // Config.Txn, TV1: added to the open transaction (AddPartitionsToTxn answered)
}

type node struct {
	connected   bool
	outstanding []*Request // oldest first; len is the requests in flight
	// limit caps the batches of a request to the node after a request
	// timeout (RequestTimedOut); 0: no cap.
	limit int
}

// Core is the producer's protocol state. It is not safe for concurrent use.
type Core struct {
	cfg   Config
	pid   int64
	epoch int16

	parts []*partition
	nodes map[int32]*node

	// A step looks at the candidates only (see Tick); every partition is
	// one at nextScan, on ScanAll and when a flush begins.
	cands     []Part
	nextScan  time.Time
	scanAll   bool
	flushSeen bool
	rot       int

	// renew: a partition needs an epoch bump but the epoch is at
	// MaxEpoch, so the producer needs a new id; nothing new is drained
	// meanwhile.
	renew bool

	txn txnState // Config.Txn (txn.go)

	rd, spare Ready
	nodeBuf   []int32
	partBuf   []Part
	dead      []*Batch
}

// New returns a core for the producer id and epoch InitProducerId gave.
func New(cfg Config, pid int64, epoch int16) *Core {
	return &Core{cfg: cfg, pid: pid, epoch: epoch, nodes: map[int32]*node{}}
}

// ID returns the producer id and epoch new sequences belong to.
func (c *Core) ID() (int64, int16) { return c.pid, c.epoch }

func (c *Core) current() idEpoch { return idEpoch{c.pid, c.epoch} }

// AddPartition registers Kafka partition id, led by leader (-1: unknown),
// and returns its name in the core.
func (c *Core) AddPartition(id, leader int32) Part {
	c.parts = append(c.parts, &partition{id: id, leader: leader, seq: newSeqState()})
	p := Part(len(c.parts) - 1)
	c.addCand(p)
	return p
}

// SetLeader records p's leader after a metadata change.
func (c *Core) SetLeader(p Part, leader int32) { c.parts[p].leader = leader }

// ScanAll makes every partition a candidate of the next step (a metadata
// change).
func (c *Core) ScanAll() { c.scanAll = true }

// Touch makes p a candidate of the next step: a batch was opened or sealed.
func (c *Core) Touch(p Part) { c.addCand(p) }

func (c *Core) addCand(p Part) {
	if pt := c.parts[p]; !pt.cand {
		pt.cand = true
		c.cands = append(c.cands, p)
	}
}

func (c *Core) node(id int32) *node {
	nd := c.nodes[id]
	if nd == nil {
		nd = &node{}
		c.nodes[id] = nd
	}
	return nd
}

// Connected records that the connection to node is up.
func (c *Core) Connected(node int32) { c.node(node).connected = true }

// Ready returns what the core wants done since the last call. Its slices
// stay valid until the next call but one.
func (c *Core) Ready() Ready {
	c.rd.Wake = c.nextScan
	if c.renew {
		c.rd.NeedID = c.quiet()
	}
	rd := c.rd
	c.rd, c.spare = c.spare, rd
	c.rd.reset()
	return rd
}

func (c *Core) emit(e tracer.Event) {
	if c.cfg.Trace {
		c.rd.Events = append(c.rd.Events, e)
	}
}

// batchEvent is a trace event about b; a batch never drained has sequence
// and epoch -1.
func (c *Core) batchEvent(kind tracer.Kind, b *Batch) tracer.Event {
	e := tracer.Event{Kind: kind, Partition: c.parts[b.part].id, Batch: b.ID, PID: c.pid, Epoch: b.epoch, Seq: b.seq}
	if b.st == stUnsent {
		e.Epoch, e.Seq = -1, -1
	}
	return e
}

// scanBy lowers nextScan to t.
func (c *Core) scanBy(t time.Time) {
	if c.nextScan.IsZero() || t.Before(c.nextScan) {
		c.nextScan = t
	}
}

// Tick does everything that can be done at now: expiries, resolutions,
// bumps, drains and deadlines; flushing tells whether a flush is in
// progress (open batches are ready whatever their linger).
//
// It looks only at the candidates: the partitions touched, answered, lost
// with a connection or blocked at a full node since the last step. Every
// deadline of a partition it looks at (a linger, a retry backoff, a
// delivery timeout) lowers nextScan; at nextScan, on ScanAll and when a
// flush begins, every partition is a candidate (a full scan). A partition
// that is not a candidate has nothing to send until one of those events:
// blocked by the first-ack rule, HoldWhileRetrying, a bump or an unresolved
// sequence until an answer comes; lingering or backing off until a deadline
// it registered. It never schedules a wake-up for a batch that is ready but
// blocked (a full connection, a dial, no leader): the event that unblocks
// it comes as an input.
func (c *Core) Tick(now time.Time, flushing bool, buf Buffer) {
	if c.cfg.Txn && c.txn.phase == txnEnding && c.txn.commit {
		flushing = true // a commit sends every batch of its transaction at once
	}
	full := c.settleExpired(now) || c.scanAll
	c.scanAll = false
	if flushing && !c.flushSeen {
		full = true // open batches are all ready now
	}
	c.flushSeen = flushing
	if !c.nextScan.IsZero() && !now.Before(c.nextScan) {
		full = true
	}
	if c.renew {
		full = true // quiet looks at every partition
	}
	if full {
		c.nextScan = time.Time{}
		for i := range c.parts {
			c.addCand(Part(i))
		}
	}
	cands := c.cands
	for _, p := range cands {
		pt := c.parts[p]
		if full {
			// A batch waiting for a retry registered its delivery timeout
			// (retry, deadlines), so none expires before nextScan.
			c.expireRetries(pt, now)
		}
		st := &pt.seq
		// ResolveSequences: an unresolved sequence is settled once nothing
		// of the partition is in flight.
		if st.unresolved && len(st.inflight) == 0 {
			bumped := st.resolve()
			c.emit(tracer.Event{Kind: tracer.ResolveSequences, Partition: pt.id, Bumped: bumped})
		}
		// Bump: producer-wide, one epoch up, once nothing of the partition
		// is outstanding (bumpIdempotentProducerEpoch).
		if st.bumpReq && !st.outstanding() {
			if c.epoch == c.cfg.MaxEpoch {
				c.renew = true // no higher epoch: a new producer id first (resetIdempotentProducerId)
				continue
			}
			c.epoch++
			c.rd.Bumps++
			st.bump(c.current())
			c.emit(tracer.Event{Kind: tracer.Bump, Partition: pt.id, PID: c.pid, Epoch: c.epoch})
		}
	}
	// Drain each leader's candidates.
	nodes := c.nodeBuf[:0]
	for _, p := range cands {
		if l := c.parts[p].leader; !slices.Contains(nodes, l) {
			nodes = append(nodes, l)
		}
	}
	blocked := 0 // nodes blocked from sending what they have: nodes[:blocked]
	for i, nd := range nodes {
		parts := c.partBuf[:0]
		for _, p := range cands {
			if c.parts[p].leader == nd {
				parts = append(parts, p)
			}
		}
		if c.drainNode(nd, parts, now, flushing, buf) {
			nodes[blocked], nodes[i] = nodes[i], nodes[blocked]
			blocked++
		}
		c.partBuf = parts[:0]
	}
	// Deadlines: retry backoffs, lingers, delivery timeouts.
	dead := c.dead[:0]
	for _, p := range cands {
		dead = c.deadlines(p, now, flushing, full, buf, dead)
	}
	for _, b := range dead {
		c.failBatch(b, Outcome{Batch: b, Cause: DeliveryTimeout}, "delivery timeout before the batch was sent")
		if c.cfg.Txn {
			c.setAbortable("delivery timeout", true) // handleFailedBatch
		}
	}
	if len(dead) > 0 {
		c.scanBy(now)
	}
	clear(dead)
	c.dead = dead[:0]
	// The candidates of blocked nodes stay candidates; the others have
	// nothing to send until an event makes them candidates again.
	kept := cands[:0]
	for _, p := range cands {
		if pt := c.parts[p]; slices.Contains(nodes[:blocked], pt.leader) {
			kept = append(kept, p)
		} else {
			pt.cand = false
		}
	}
	c.cands = kept
	c.nodeBuf = nodes[:0]
	if c.cfg.Txn {
		c.txnStep(now, buf)
	}
}

// deadlines registers p's deadlines with scanBy (when a batch waiting for a
// retry expires, when the next retry's backoff ends, when the open batch's
// linger ends if it could then be sent, when an unsent batch expires) and
// takes the unsent batches that reached the delivery timeout out of the
// buffer, appending them to dead. Outside a full scan the deadlines of the
// batches waiting for a retry are known already (retry registered them, and
// nextScan only goes back to zero for a full scan).
func (c *Core) deadlines(p Part, now time.Time, flushing, full bool, buf Buffer, dead []*Batch) []*Batch {
	st := &c.parts[p].seq
	r, hasRetry := st.nextRetry()
	if full {
		for _, b := range st.inflight {
			if b.st == stRetry {
				c.scanBy(b.Created.Add(c.cfg.DeliveryTimeout))
			}
		}
	}
	// The next retry's backoff, on every step that looks at the partition:
	// a retry that became the lowest after a full scan (the ones before it
	// were acknowledged) registered its backoff only when it was answered,
	// and that registration is gone once a full scan has passed.
	if r != nil && !st.bumpReq && r.retryAt.After(now) {
		c.scanBy(r.retryAt)
	}
	lingering := !hasRetry && !flushing && !c.renew && st.drainable(c.current(), c.cfg.Rules, now.UnixMilli())
	for {
		created, sealed, ok := buf.Head(p)
		if !ok {
			break
		}
		// delivery.timeout.ms also bounds a batch never sent
		// (RecordAccumulator.expiredBatches).
		if now.Sub(created) >= c.cfg.DeliveryTimeout {
			b := buf.Drop(p)
			if b == nil {
				break
			}
			c.took(b, p)
			dead = append(dead, b)
			continue
		}
		c.scanBy(created.Add(c.cfg.DeliveryTimeout))
		if d := created.Add(c.cfg.Linger); !sealed && lingering && d.After(now) {
			c.scanBy(d)
		}
		break
	}
	return dead
}

// took makes b, just taken from p's buffer, p's.
func (c *Core) took(b *Batch, p Part) {
	b.part, b.kp, b.st = p, c.parts[p].id, stUnsent
}

// expireRetries fails batches waiting for a retry that reached
// delivery.timeout.ms (spec: ExpireBatch): their sequences become
// unresolved.
func (c *Core) expireRetries(pt *partition, now time.Time) {
	st := &pt.seq
	for i := 0; i < len(st.inflight); i++ {
		b := st.inflight[i]
		if b.st != stRetry || now.Sub(b.Created) < c.cfg.DeliveryTimeout {
			continue
		}
		c.emit(c.batchEvent(tracer.ExpireBatch, b))
		b.st = stFailed
		st.remove(b)
		i--
		if c.cfg.Txn {
			c.setAbortable("delivery timeout", true) // handleFailedBatch
		} else {
			st.unresolved = true
		}
		c.rd.Outcomes = append(c.rd.Outcomes, Outcome{Batch: b, Cause: DeliveryTimeout})
	}
}

// quiet reports whether the producer may take a new id: no request is
// outstanding, and only the partitions waiting for an epoch bump hold
// batches (the others finished theirs under the old id).
func (c *Core) quiet() bool {
	for _, pt := range c.parts {
		st := &pt.seq
		if st.outstanding() || (!st.bumpReq && (st.unresolved || len(st.inflight) > 0)) {
			return false
		}
	}
	return true
}

// NewProducerID takes the producer id and epoch InitProducerId gave after
// Ready.NeedID (TransactionManager.bumpIdempotentProducerEpoch at
// Short.MAX_VALUE calls resetIdempotentProducerId). The partitions waiting
// for the bump are renumbered from 0 under the new id; the others move to
// it at their next batch, as after a bump.
func (c *Core) NewProducerID(pid int64, epoch int16) {
	c.renew = false
	c.pid, c.epoch = pid, epoch
	for _, pt := range c.parts {
		if st := &pt.seq; st.bumpReq {
			c.rd.Bumps++
			st.bump(c.current())
			c.emit(tracer.Event{Kind: tracer.Bump, Partition: pt.id, PID: c.pid, Epoch: c.epoch})
		}
	}
	c.scanAll = true
}

// failBatch fails b to the application for a reason the spec has no action
// for (a Fail event).
func (c *Core) failBatch(b *Batch, o Outcome, reason string) {
	e := c.batchEvent(tracer.Fail, b)
	e.Reason = reason
	c.emit(e)
	b.st = stFailed
	c.rd.Outcomes = append(c.rd.Outcomes, o)
}

// drainNode builds produce requests to node while it has room: each request
// takes at most one batch per partition of parts, as RecordAccumulator.drain
// does. It reports whether it stopped with something left to send that the
// node cannot take now (no leader, no connection, a full connection).
func (c *Core) drainNode(id int32, parts []Part, now time.Time, flushing bool, buf Buffer) bool {
	if id < 0 {
		return true // no leader known; a metadata refresh is pending
	}
	nd := c.node(id)
	for {
		// max.in.flight.requests.per.connection (spec: Pending(c) < MaxInFlight).
		if len(nd.outstanding) >= c.cfg.MaxInFlight {
			return true
		}
		if !nd.connected {
			if c.anyReady(parts, now, flushing, buf) {
				if !slices.Contains(c.rd.Dial, id) {
					c.rd.Dial = append(c.rd.Dial, id)
				}
				return true
			}
			return false
		}
		var req *Request
		n := len(parts)
		bytes, stop := 0, -1 // stop: where a capped request ended
		for i := 0; i < n; i++ {
			if req != nil && nd.limit > 0 && len(req.Batches) >= nd.limit {
				stop = i
				break
			}
			room := -1 // a request's first batch always goes, as in RecordAccumulator.drainBatchesForOneNode
			if req != nil && c.cfg.MaxRequestBytes > 0 {
				room = max(0, c.cfg.MaxRequestBytes-bytes)
			}
			p := parts[(c.rot+i)%n]
			b, isNew, full := c.nextBatch(p, now, flushing, buf, room)
			if full {
				stop = i
				break
			}
			if b == nil {
				continue
			}
			if req == nil {
				req = &Request{Node: id, PID: c.pid, Batches: make([]*Batch, 0, n-i), New: make([]bool, 0, n-i)}
			}
			req.Batches = append(req.Batches, b)
			req.New = append(req.New, isNew)
			bytes += b.Bytes
		}
		if stop >= 0 {
			c.rot += stop // the next request starts where this one stopped
		} else {
			c.rot++
		}
		if req == nil {
			return false
		}
		for _, b := range req.Batches {
			b.st = stSent
		}
		nd.outstanding = append(nd.outstanding, req)
		c.rd.Requests = append(c.rd.Requests, req)
	}
}

// ready reports whether the head of p's buffer may be drained: sealed, past
// its linger, or a flush is in progress (RecordAccumulator.ready).
func (c *Core) ready(p Part, now time.Time, flushing bool, buf Buffer) bool {
	created, sealed, ok := buf.Head(p)
	return ok && (sealed || flushing || now.Sub(created) >= c.cfg.Linger)
}

// anyReady reports whether some partition has something to send.
func (c *Core) anyReady(parts []Part, now time.Time, flushing bool, buf Buffer) bool {
	for _, p := range parts {
		if r, hasRetry := c.parts[p].seq.nextRetry(); hasRetry {
			if r != nil {
				return true
			}
			continue
		}
		if c.ready(p, now, flushing, buf) {
			return true
		}
	}
	return false
}

// nextBatch returns the partition's next batch to send, if any: a retry (the
// lowest sequence in flight, after its backoff; spec: Resend) or, when no
// retry waits and the rules allow, a new batch that gets its sequence now
// (spec: SendNew). A batch larger than room bytes (room < 0: no cap) is
// left where it is, and full reports it.
func (c *Core) nextBatch(p Part, now time.Time, flushing bool, buf Buffer, room int) (b *Batch, isNew, full bool) {
	st := &c.parts[p].seq
	if r, hasRetry := st.nextRetry(); hasRetry {
		if r == nil || st.bumpReq || now.Before(r.retryAt) {
			return nil, false, false
		}
		if room >= 0 && r.Bytes > room {
			return nil, false, true
		}
		return r, false, false
	}
	if c.renew || !c.newAllowed(p) || !st.drainable(c.current(), c.cfg.Rules, now.UnixMilli()) || !c.ready(p, now, flushing, buf) {
		return nil, false, false
	}
	if room >= 0 && buf.HeadBytes(p) > room {
		return nil, false, true
	}
	b = buf.Take(p)
	if b == nil {
		return nil, false, false
	}
	c.took(b, p)
	c.txn.started = c.txn.started || c.cfg.Txn                // TV2: Produce v12 adds the partition (TV1: it was added)
	st.canDrainNew(c.current(), c.cfg.Rules, now.UnixMilli()) // resets the sequence in a new epoch
	st.assign(b)
	return b, true, false
}

// RequestTimedOut records that node's oldest request went unanswered for
// request.timeout.ms (the loop then closes the connection: Disconnect).
// Until the node answers in time again, a request to it carries at most
// half the batches that one did (at least one), and one more with each
// answer: a broker whose time to answer grows with a request's size (a
// partition's first index entry, an fsync per partition) then answers
// within the timeout, where sending the same request again would time out
// again. The Java client has no such rule; it spreads retries by a random
// backoff instead.
func (c *Core) RequestTimedOut(id int32) {
	nd := c.nodes[id]
	if nd == nil || len(nd.outstanding) == 0 {
		return
	}
	nd.limit = max(1, len(nd.outstanding[0].Batches)/2)
}

// Disconnect records that the connection to node was lost (or closed on a
// request timeout): every batch in one of its outstanding requests goes
// back to be retried (spec: Disconnect). A node not connected is ignored.
func (c *Core) Disconnect(id int32, now time.Time) {
	nd := c.nodes[id]
	if nd == nil || !nd.connected {
		return
	}
	nd.connected = false
	c.emit(tracer.Event{Kind: tracer.Disconnect, Node: id})
	for _, r := range nd.outstanding {
		for _, b := range r.Batches {
			if b.st == stSent {
				c.retry(b, now)
				c.addCand(b.part)
			}
		}
	}
	clear(nd.outstanding)
	nd.outstanding = nd.outstanding[:0]
	c.rd.Refresh = true
}

// retry puts b back to be sent again after the retry backoff.
func (c *Core) retry(b *Batch, now time.Time) {
	b.st = stRetry
	b.attempts++
	b.retryAt = now.Add(c.cfg.RetryBackoff)
	c.scanBy(b.retryAt)
	c.scanBy(b.Created.Add(c.cfg.DeliveryTimeout))
}

// Respond applies the answer to r, which came with correlation id corr:
// results[i] is the answer for r.Batches[i] (Sender.completeBatch). An
// answer to a request that is not the oldest outstanding on its node (its
// connection was given up) is ignored.
func (c *Core) Respond(r *Request, corr int32, results []Result, now time.Time) {
	nd := c.nodes[r.Node]
	if nd == nil || len(nd.outstanding) == 0 || nd.outstanding[0] != r {
		return
	}
	copy(nd.outstanding, nd.outstanding[1:])
	nd.outstanding[len(nd.outstanding)-1] = nil
	nd.outstanding = nd.outstanding[:len(nd.outstanding)-1]
	if nd.limit > 0 {
		if nd.limit++; nd.limit > len(c.parts) {
			nd.limit = 0 // no request could reach it: the cap is gone
		}
	}
	for i, b := range r.Batches {
		c.addCand(b.part) // an answer may unblock the partition
		res := results[i]
		if c.cfg.Trace {
			e := c.batchEvent(tracer.Receive, b)
			e.Req, e.Node, e.Err, e.Offset, e.LogStart = corr, r.Node, tracer.ErrorName(res.Code), res.Offset, res.LogStart
			c.emit(e)
		}
		if b.st != stSent {
			continue
		}
		if c.answer(b, res, now) {
			c.rd.Refresh = true
		}
	}
}

// answer applies one partition's answer to its batch (Sender.completeBatch;
// spec: Receive) and reports whether metadata should be refreshed.
func (c *Core) answer(b *Batch, res Result, now time.Time) bool {
	st := &c.parts[b.part].seq
	code := res.Code
	if code == 0 || code == kerr.DuplicateSequenceNumber.Code {
		// DUPLICATE_SEQUENCE_NUMBER comes without an offset; it acknowledges
		// this batch only, never an earlier one.
		off := res.Offset
		if code != 0 {
			off = -1
		}
		st.acked(b)
		c.rd.Outcomes = append(c.rd.Outcomes, Outcome{Batch: b, Cause: Acked, Offset: off})
		return false
	}
	if code == kerr.OutOfOrderSequenceNumber.Code {
		c.rd.OutOfOrder++
	}
	var v Verdict
	if c.cfg.Txn {
		v = c.txnVerdictFor(st, b, code, res.LogStart, kerr.IsRetriable(kerr.ErrorForCode(code)))
	} else {
		v = st.onError(b, code, res.LogStart, kerr.IsRetriable(kerr.ErrorForCode(code)))
	}
	switch v {
	case RetryBump:
		st.bumpReq = true
		c.retry(b, now)
	case Retry:
		c.retry(b, now)
	case Fail:
		st.remove(b)
		st.unresolved = !c.cfg.Txn // a transaction's failed batch is aborted with it, then the epoch changes
		c.failBatch(b, Outcome{Batch: b, Cause: BrokerError, Code: code}, tracer.ErrorName(code))
	}
	switch code {
	case kerr.NotLeaderForPartition.Code, kerr.UnknownTopicOrPartition.Code, kerr.LeaderNotAvailable.Code,
		kerr.FencedLeaderEpoch.Code, kerr.UnknownLeaderEpoch.Code:
		return true
	}
	return false
}

// Abort fails everything in flight, then everything still in buf, with
// Closed (the producer closed): a Fail event each.
func (c *Core) Abort(buf Buffer) {
	for i, pt := range c.parts {
		st := &pt.seq
		for _, b := range st.inflight {
			c.failBatch(b, Outcome{Batch: b, Cause: Closed}, "producer closed")
		}
		clear(st.inflight)
		st.inflight = st.inflight[:0]
		for {
			b := buf.Drop(Part(i))
			if b == nil {
				break
			}
			c.took(b, Part(i))
			c.failBatch(b, Outcome{Batch: b, Cause: Closed}, "producer closed")
		}
	}
	for _, nd := range c.nodes {
		clear(nd.outstanding)
		nd.outstanding, nd.connected = nd.outstanding[:0], false
	}
}
