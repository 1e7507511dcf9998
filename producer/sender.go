package producer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/wire"
)

// request is one produce request outstanding on a connection.
type request struct {
	corr    int32
	conn    *wire.Conn
	batches []*batch
	sent    time.Time
}

// brokerConn is the sender's connection to one broker.
type brokerConn struct {
	node        int32
	conn        *wire.Conn // nil while not connected
	dialing     bool
	dialAfter   time.Time
	outstanding []*request // oldest first; len is the requests in flight
}

// inboxItem is something that happened off the sender goroutine.
type inboxItem struct {
	bc     *brokerConn
	req    *request
	resp   *kmsg.ProduceResponse
	err    error
	dialed *wire.Conn // a dial finished (conn or err)
	isDial bool
}

// inbox queues events for the sender without ever blocking the caller.
type inbox struct {
	mu    sync.Mutex
	items []inboxItem
}

func (in *inbox) push(it inboxItem) {
	in.mu.Lock()
	in.items = append(in.items, it)
	in.mu.Unlock()
}

func (in *inbox) take(buf []inboxItem) []inboxItem {
	in.mu.Lock()
	defer in.mu.Unlock()
	buf = append(buf[:0], in.items...)
	clear(in.items)
	in.items = in.items[:0]
	return buf
}

// sender is the one goroutine that owns sequences: it drains batches into
// requests, handles responses, retries, delivery timeouts and epoch bumps.
type sender struct {
	p     *Producer
	conns map[int32]*brokerConn

	snap  *snapshot
	parts []*partition // every partition of snap, topic then id order
	rot   int
	items []inboxItem
	dials sync.WaitGroup // dials in progress
	enc   encoder
	freed int // buffer slots of done batches not yet given back (freeSlots)

	// A step looks at the candidates only: the partitions that may have
	// something to do (see step). A full scan of every partition happens
	// when nextScan is reached, the metadata changes or a flush begins.
	cands     []*partition
	nextScan  time.Time // the earliest deadline (linger, retry backoff, delivery timeout) known; zero if none
	flushSeen bool      // the previous step saw a flush in progress
	spare     []*partition
	nodes     []int32
	nodeParts []*partition

	// renew: a partition needs an epoch bump but the epoch is at its
	// maximum, so the producer needs a new id (renewID); no new batch is
	// drained meanwhile. renewAfter is when to try again after a failure.
	renew      bool
	renewAfter time.Time
}

func newSender(p *Producer) *sender {
	return &sender{p: p, conns: make(map[int32]*brokerConn),
		enc: encoder{pid: p.pid, codec: p.cfg.codec, traced: p.ids}}
}

func (s *sender) run(ctx context.Context) {
	defer close(s.p.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		s.processInbox(now)
		s.freeSlots() // before the step: producers refill while it sends
		next := s.step(now)
		if s.renew && s.quiet() {
			if !now.Before(s.renewAfter) {
				s.renewID(ctx, now)
				next = now // step again at once, under the new id
			} else if next.IsZero() || s.renewAfter.Before(next) {
				next = s.renewAfter
			}
		}
		s.freeSlots()
		wait := time.Hour
		if !next.IsZero() {
			wait = max(time.Until(next), 0)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			s.abort()
			return
		case <-s.p.wake:
		case <-timer.C:
		}
	}
}

func (s *sender) emit(e *tracer.Event) {
	if s.p.trace != nil {
		s.p.trace.Emit(e)
	}
}

// tell traces what the application is about to be told of b's records, a
// Told event each, when b's SendNew was traced: err nil, delivered at the
// offsets the records carry; else failed, with the Kafka error err wraps.
func (s *sender) tell(b *batch, err error) {
	if s.p.trace == nil || !b.traced || len(b.ids) != len(b.recs) {
		return
	}
	e := tracer.Event{Kind: tracer.Told, Partition: b.part.id, Offset: -1, Result: tracer.Delivered}
	if err != nil {
		e.Result, e.Reason = tracer.Failed, err.Error()
		var ke *kerr.Error
		if errors.As(err, &ke) {
			e.Err = tracer.ErrorName(ke.Code)
		}
	}
	for i, r := range b.recs {
		ev := e
		ev.RecordID = b.ids[i]
		if err == nil {
			ev.Offset = r.msg.Offset
		}
		s.p.trace.Emit(&ev)
	}
}

func (s *sender) batchEvent(kind tracer.Kind, b *batch) *tracer.Event {
	return &tracer.Event{Kind: kind, Partition: b.part.id, Batch: b.id, PID: s.p.pid, Epoch: b.epoch, Seq: b.seq}
}

// refreshPartitions rebuilds the partition list and the partitions' leaders
// when the snapshot changed, and reports whether it did.
func (s *sender) refreshPartitions() bool {
	snap := s.p.meta.Load()
	if snap == s.snap {
		return false
	}
	s.snap = snap
	s.parts = s.parts[:0]
	names := make([]string, 0, len(snap.topics))
	for name := range snap.topics {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, part := range snap.topics[name].parts {
			s.parts = append(s.parts, part)
			part.leader = snap.leader(part)
		}
	}
	return true
}

// addCand makes part a candidate for the next step.
func (s *sender) addCand(part *partition) {
	if !part.cand {
		part.cand = true
		s.cands = append(s.cands, part)
	}
}

// takeTouched makes the partitions Produce changed since the last step
// candidates.
func (s *sender) takeTouched() {
	p := s.p
	p.touchMu.Lock()
	list := p.touched
	p.touched = s.spare[:0]
	p.touchMu.Unlock()
	for i, part := range list {
		part.touched.Store(false) // from here on, Produce queues it again
		s.addCand(part)
		list[i] = nil
	}
	s.spare = list[:0]
}

// scanBy lowers nextScan to t.
func (s *sender) scanBy(t time.Time) {
	if s.nextScan.IsZero() || t.Before(s.nextScan) {
		s.nextScan = t
	}
}

// step does everything that can be done now and returns when to look again.
// It never schedules a wake-up for a batch that is ready but blocked (a full
// connection, a dial, no leader): the event that unblocks it wakes the sender.
//
// A step looks only at the candidates: the partitions Produce opened or
// sealed a batch of (Producer.touched), the partitions of the batches that
// were answered, retried or lost since the last step, and the partitions
// that still had something to send when their connection was full. Every
// deadline of a partition it looks at (a linger, a retry backoff, a
// delivery timeout) lowers nextScan; at nextScan, when a flush begins and
// when the metadata changes, every partition is a candidate (a full scan).
// A partition that is not a candidate has nothing to send until one of
// those events: blocked by the first-ack rule, HoldWhileRetrying, a bump or
// an unresolved sequence until an answer comes; lingering or backing off
// until a deadline it registered.
func (s *sender) step(now time.Time) time.Time {
	p := s.p
	p.stats.steps.Add(1)
	p.nextWake.Store(0) // busy: Produce wakes us for any new batch meanwhile
	full := s.refreshPartitions()
	flushing := p.flushing.Load() > 0
	if flushing && !s.flushSeen {
		full = true // open batches are all ready now
	}
	s.flushSeen = flushing
	if !s.nextScan.IsZero() && !now.Before(s.nextScan) {
		full = true
	}
	if s.renew {
		full = true // quiet looks at every partition
	}
	s.takeTouched()
	if full {
		s.nextScan = time.Time{}
		for _, part := range s.parts {
			s.addCand(part)
		}
	}
	cands := s.cands
	for _, part := range cands {
		if full {
			// A batch waiting for a retry registered its delivery timeout
			// (retry, partDeadlines), so none expires before nextScan.
			s.expireRetries(part, now)
		}
		st := &part.seq
		if st.unresolved && len(st.inflight) == 0 {
			bumped := st.resolve()
			s.emit(&tracer.Event{Kind: tracer.ResolveSequences, Partition: part.id, Bumped: bumped})
		}
		if st.bumpReq && !st.outstanding() {
			if p.epoch == p.cfg.maxEpoch {
				s.renew = true // no higher epoch: a new producer id first
				continue
			}
			p.epoch++
			p.stats.bumps.Add(1)
			st.bump(idEpoch{p.pid, p.epoch})
			s.emit(&tracer.Event{Kind: tracer.Bump, Partition: part.id, PID: p.pid, Epoch: p.epoch})
		}
	}
	// Drain each leader's candidates.
	nodes := s.nodes[:0]
	for _, part := range cands {
		if !slices.Contains(nodes, part.leader) {
			nodes = append(nodes, part.leader)
		}
	}
	blocked := 0 // nodes blocked from sending what they have: nodes[:blocked]
	for i, node := range nodes {
		parts := s.nodeParts[:0]
		for _, part := range cands {
			if part.leader == node {
				parts = append(parts, part)
			}
		}
		if s.drainNode(node, parts, now, flushing) {
			nodes[blocked], nodes[i] = nodes[i], nodes[blocked]
			blocked++
		}
		clear(parts)
		s.nodeParts = parts[:0]
	}
	// Deadlines: retry backoffs, lingers, delivery timeouts.
	var dead []*batch
	for _, part := range cands {
		dead = s.partDeadlines(part, now, flushing, full, dead)
	}
	for _, b := range dead {
		s.failBatch(b, ErrDeliveryTimeout, "delivery timeout before the batch was sent")
	}
	if len(dead) > 0 {
		s.scanBy(now)
	}
	// The candidates of blocked nodes stay candidates, and so do those a
	// lost connection made candidates during the step; the others have
	// nothing to send until an event makes them candidates again.
	all := s.cands
	kept := all[:0]
	for i, part := range all {
		if i >= len(cands) || slices.Contains(nodes[:blocked], part.leader) {
			kept = append(kept, part)
		} else {
			part.cand = false
		}
	}
	clear(all[len(kept):])
	s.cands = kept
	s.nodes = nodes[:0]
	next := s.nextScan
	later := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	// Request timeouts and dial backoffs.
	for _, bc := range s.conns {
		if len(bc.outstanding) > 0 {
			deadline := bc.outstanding[0].sent.Add(p.cfg.requestTimeout)
			if !now.Before(deadline) {
				bc.conn.Close() // request.timeout.ms: the reader fails everything outstanding
			} else {
				later(deadline)
			}
		}
		if bc.conn == nil && !bc.dialing && bc.dialAfter.After(now) {
			later(bc.dialAfter)
		}
	}
	if !next.IsZero() {
		p.nextWake.Store(next.UnixNano())
	} else {
		p.nextWake.Store(-1) // nothing scheduled
	}
	return next
}

// partDeadlines registers part's deadlines with scanBy (when a batch waiting
// for a retry expires, when the next retry's backoff ends, when the open
// batch's linger ends if it could then be sent, when an unsent batch
// expires) and takes the unsent batches that reached the delivery timeout
// out of part, appending them to dead. Outside a full scan the deadlines of
// the batches waiting for a retry are known already (retry registered
// them, and nextScan only goes back to zero for a full scan).
func (s *sender) partDeadlines(part *partition, now time.Time, flushing, full bool, dead []*batch) []*batch {
	p := s.p
	st := &part.seq
	r, hasRetry := st.nextRetry()
	if full {
		for _, b := range st.inflight {
			if b.st == stRetry {
				s.scanBy(b.created.Add(p.cfg.deliveryTimeout))
			}
		}
	}
	// The next retry's backoff, on every step that looks at the partition:
	// a retry that became the lowest after a full scan (the ones before it
	// were acknowledged) registered its backoff only when it was answered,
	// and that registration is gone once a full scan has passed.
	if r != nil && !st.bumpReq && r.retryAt.After(now) {
		s.scanBy(r.retryAt)
	}
	lingering := !hasRetry && !flushing && !s.renew && st.drainable(p.current(), p.cfg.rules, now.UnixMilli())
	part.mu.Lock()
	defer part.mu.Unlock()
	// Batches never sent that reached the delivery timeout fail here.
	for len(part.sealed) > 0 && now.Sub(part.sealed[0].created) >= p.cfg.deliveryTimeout {
		dead = append(dead, part.sealed[0])
		part.sealed = part.sealed[1:]
	}
	if len(part.sealed) == 0 && part.open != nil && now.Sub(part.open.created) >= p.cfg.deliveryTimeout {
		dead = append(dead, part.open)
		part.open = nil
	}
	switch {
	case len(part.sealed) > 0:
		s.scanBy(part.sealed[0].created.Add(p.cfg.deliveryTimeout))
	case part.open != nil:
		s.scanBy(part.open.created.Add(p.cfg.deliveryTimeout))
		if d := part.open.created.Add(p.cfg.linger); lingering && d.After(now) {
			s.scanBy(d)
		}
	}
	return dead
}

// expireRetries fails batches waiting for a retry that reached
// delivery.timeout.ms (ExpireBatch): their sequences become unresolved.
func (s *sender) expireRetries(part *partition, now time.Time) {
	st := &part.seq
	for i := 0; i < len(st.inflight); i++ {
		b := st.inflight[i]
		if b.st != stRetry || now.Sub(b.created) < s.p.cfg.deliveryTimeout {
			continue
		}
		s.emit(s.batchEvent(tracer.ExpireBatch, b))
		b.st = stFailed
		st.remove(b)
		i--
		st.unresolved = true
		s.failRecords(b, ErrDeliveryTimeout)
	}
}

// quiet reports whether the producer may take a new id: no request is
// outstanding, and only the partitions waiting for an epoch bump hold
// batches (the others finished theirs under the old id).
func (s *sender) quiet() bool {
	for _, part := range s.parts {
		st := &part.seq
		if st.outstanding() || (!st.bumpReq && (st.unresolved || len(st.inflight) > 0)) {
			return false
		}
	}
	return true
}

// renewID gets a new producer id when a partition needs an epoch bump and
// the epoch is at its maximum (TransactionManager.bumpIdempotentProducerEpoch
// at Short.MAX_VALUE calls resetIdempotentProducerId). The partitions waiting
// for the bump are renumbered from 0 under the new id; the others move to it
// at their next batch, as after a bump. If InitProducerId fails, it is tried
// again after the retry backoff; the waiting batches meanwhile meet their
// delivery timeout as usual.
func (s *sender) renewID(ctx context.Context, now time.Time) {
	p := s.p
	ictx, cancel := context.WithTimeout(ctx, p.cfg.requestTimeout)
	err := p.initProducerID(ictx)
	cancel()
	if err != nil {
		s.renewAfter = now.Add(p.cfg.retryBackoff)
		return
	}
	s.renew, s.renewAfter = false, time.Time{}
	p.stats.renewals.Add(1)
	s.enc.pid = p.pid
	id := p.current()
	for _, part := range s.parts {
		if st := &part.seq; st.bumpReq {
			p.stats.bumps.Add(1)
			st.bump(id)
			s.emit(&tracer.Event{Kind: tracer.Bump, Partition: part.id, PID: p.pid, Epoch: p.epoch})
		}
	}
}

// failBatch fails b to the application for a reason the spec has no action
// for (a Fail event); a batch never sent has sequence and epoch -1.
func (s *sender) failBatch(b *batch, err error, reason string) {
	b.st = stFailed
	e := s.batchEvent(tracer.Fail, b)
	e.Reason = reason
	s.emit(e)
	s.failRecords(b, err)
}

func (s *sender) failRecords(b *batch, err error) {
	s.tell(b, err)
	for _, r := range b.recs {
		r.done(r.msg, err)
	}
	s.release(b)
}

// release frees a done batch's buffer slots (with the others freed in the
// same pass over the inbox or step: see freeSlots) and recycles its
// compressed records.
func (s *sender) release(b *batch) {
	s.freed += len(b.recs)
	if b.payload != nil {
		s.p.bufs.put(b.payload[:0])
		b.payload = nil
	}
}

// drainNode sends produce requests to node while it has room: each request
// takes at most one batch per partition of parts, as RecordAccumulator.drain
// does. It reports whether it stopped with something left to send that the
// node cannot take now (no leader, no connection, a full connection).
func (s *sender) drainNode(node int32, parts []*partition, now time.Time, flushing bool) bool {
	p := s.p
	if node < 0 {
		return true // no leader known; a metadata refresh is pending
	}
	bc := s.conns[node]
	if bc == nil {
		bc = &brokerConn{node: node}
		s.conns[node] = bc
	}
	for {
		if len(bc.outstanding) >= p.cfg.maxInFlight {
			return true
		}
		if bc.conn == nil {
			if s.anyReady(parts, now, flushing) {
				s.dial(bc, now)
				return true
			}
			return false
		}
		var batches []*batch
		var fresh []bool
		n := len(parts)
		for i := 0; i < n; i++ {
			part := parts[(s.rot+i)%n]
			b, isNew := s.nextBatch(part, now, flushing)
			if b != nil {
				if batches == nil {
					batches, fresh = make([]*batch, 0, n-i), make([]bool, 0, n-i)
				}
				batches = append(batches, b)
				fresh = append(fresh, isNew)
			}
		}
		s.rot++
		if len(batches) == 0 {
			return false
		}
		s.send(bc, batches, fresh, now)
	}
}

// anyReady reports whether some partition has something to send.
func (s *sender) anyReady(parts []*partition, now time.Time, flushing bool) bool {
	for _, part := range parts {
		if r, hasRetry := part.seq.nextRetry(); hasRetry {
			if r != nil {
				return true
			}
			continue
		}
		part.mu.Lock()
		ready := len(part.sealed) > 0 || (part.open != nil && (flushing || now.Sub(part.open.created) >= s.p.cfg.linger))
		part.mu.Unlock()
		if ready {
			return true
		}
	}
	return false
}

// nextBatch returns the partition's next batch to send, if any: a retry (the
// lowest sequence in flight, after its backoff) or, when no retry waits and
// the rules allow, a new batch that gets its sequence now.
func (s *sender) nextBatch(part *partition, now time.Time, flushing bool) (*batch, bool) {
	p := s.p
	st := &part.seq
	if r, hasRetry := st.nextRetry(); hasRetry {
		if r == nil || st.bumpReq || now.Before(r.retryAt) {
			return nil, false
		}
		return r, false
	}
	if s.renew || !st.drainable(p.current(), p.cfg.rules, now.UnixMilli()) {
		return nil, false
	}
	part.mu.Lock()
	var b *batch
	switch {
	case len(part.sealed) > 0:
		b = part.sealed[0]
		part.sealed = part.sealed[1:]
	case part.open != nil && (flushing || now.Sub(part.open.created) >= p.cfg.linger):
		b = part.open
		part.open = nil
	}
	part.mu.Unlock()
	if b == nil {
		return nil, false
	}
	if s.enc.codec != recordbatch.CodecNone {
		if err := s.enc.compress(b, p.bufs); err != nil {
			err = fmt.Errorf("encode record batch: %w", err)
			s.failBatch(b, err, "encoding: "+err.Error())
			return nil, false
		}
	}
	st.canDrainNew(p.current(), p.cfg.rules, now.UnixMilli()) // resets the sequence in a new epoch
	st.assign(b)
	return b, true
}

func (s *sender) send(bc *brokerConn, batches []*batch, fresh []bool, now time.Time) {
	p := s.p
	req := &produceRequest{timeout: int32(p.cfg.requestTimeout / time.Millisecond), batches: batches, enc: &s.enc}
	for _, b := range batches {
		b.st = stSent
	}
	r := &request{conn: bc.conn, batches: batches, sent: now}
	p.stats.requests.Add(1)
	p.stats.batches.Add(int64(len(batches)))
	for _, isNew := range fresh {
		if !isNew {
			p.stats.retries.Add(1)
		}
	}
	emitted := false
	onWrite := func(corr int32) {
		r.corr, emitted = corr, true
		s.emitSends(bc.node, corr, batches, fresh)
	}
	conn := bc.conn
	_, err := conn.Send(req, onWrite, func(resp kmsg.Response, err error) {
		it := inboxItem{bc: bc, req: r, err: err}
		if err == nil {
			it.resp = resp.(*kmsg.ProduceResponse)
		}
		p.inbox.push(it)
		p.wakeSender()
	})
	bc.outstanding = append(bc.outstanding, r)
	if err != nil {
		if !emitted {
			s.emitSends(bc.node, -1, batches, fresh)
		}
		s.disconnect(bc, conn, now)
	}
}

func (s *sender) emitSends(node, corr int32, batches []*batch, fresh []bool) {
	if s.p.trace == nil {
		return
	}
	for i, b := range batches {
		kind := tracer.Resend
		if fresh[i] {
			kind = tracer.SendNew
		}
		e := s.batchEvent(kind, b)
		e.N, e.Req, e.Node = b.n(), corr, node
		if fresh[i] {
			e.Records = b.ids
			b.traced = true
		}
		s.p.trace.Emit(e)
	}
}

func (s *sender) dial(bc *brokerConn, now time.Time) {
	if bc.dialing || now.Before(bc.dialAfter) {
		return
	}
	addr, ok := s.snap.brokers[bc.node]
	if !ok {
		s.p.mloop.refresh("")
		return
	}
	bc.dialing = true
	p := s.p
	s.dials.Add(1)
	go func() {
		defer s.dials.Done()
		ctx, cancel := context.WithTimeout(context.Background(), p.cfg.dialTimeout)
		defer cancel()
		c, err := wire.Dial(ctx, addr, p.cfg.clientID)
		p.inbox.push(inboxItem{bc: bc, isDial: true, dialed: c, err: err})
		p.wakeSender()
	}()
}

// disconnect handles a lost connection: every batch in one of its outstanding
// requests goes back to be retried (the spec's Disconnect).
func (s *sender) disconnect(bc *brokerConn, conn *wire.Conn, now time.Time) {
	if bc.conn != conn || conn == nil {
		return // already handled
	}
	conn.Close()
	bc.conn = nil
	bc.dialAfter = now.Add(s.p.cfg.retryBackoff)
	s.p.stats.disconnects.Add(1)
	s.emit(&tracer.Event{Kind: tracer.Disconnect, Node: bc.node})
	for _, r := range bc.outstanding {
		for _, b := range r.batches {
			if b.st == stSent {
				s.retry(b, now)
				s.addCand(b.part)
			}
		}
	}
	bc.outstanding = nil
	s.p.mloop.refresh("")
}

func (s *sender) retry(b *batch, now time.Time) {
	b.st = stRetry
	b.attempts++
	b.retryAt = now.Add(s.p.cfg.retryBackoff)
	s.scanBy(b.retryAt)
	s.scanBy(b.created.Add(s.p.cfg.deliveryTimeout))
}

// freeSlots gives back the buffer slots of the batches done since it last
// ran, all at once: blocked producers wake once, not once per batch.
func (s *sender) freeSlots() {
	if s.freed > 0 {
		s.p.gate.release(s.freed)
		s.freed = 0
	}
}

func (s *sender) processInbox(now time.Time) {
	s.items = s.p.inbox.take(s.items)
	for i := range s.items {
		it := &s.items[i]
		bc := it.bc
		switch {
		case it.isDial:
			bc.dialing = false
			if it.err != nil {
				bc.dialAfter = now.Add(s.p.cfg.retryBackoff)
				s.p.mloop.refresh("")
				continue
			}
			if s.p.closed.Load() && s.p.gate.buffered() == 0 {
				it.dialed.Close()
				continue
			}
			bc.conn, bc.dialAfter = it.dialed, time.Time{}
		case it.err != nil:
			s.disconnect(bc, it.req.conn, now)
		default:
			if len(bc.outstanding) == 0 || bc.outstanding[0] != it.req {
				continue // from a connection we already gave up on
			}
			bc.outstanding = bc.outstanding[1:]
			s.handleResponse(bc, it.req, it.resp, now)
		}
		*it = inboxItem{}
	}
}

func (s *sender) handleResponse(bc *brokerConn, r *request, resp *kmsg.ProduceResponse, now time.Time) {
	var at respCursor
	refresh := false
	for _, b := range r.batches {
		s.addCand(b.part) // an answer may unblock the partition
		code, off, lso := kerr.UnknownServerError.Code, int64(-1), int64(-1)
		if pr := at.find(resp, b.part.topic, b.part.id); pr != nil {
			code, off, lso = pr.ErrorCode, pr.BaseOffset, pr.LogStartOffset
		}
		if s.p.trace != nil {
			e := s.batchEvent(tracer.Receive, b)
			e.Req, e.Node, e.Err, e.Offset, e.LogStart = r.corr, bc.node, tracer.ErrorName(code), off, lso
			s.p.trace.Emit(e)
		}
		if b.st != stSent {
			continue
		}
		if s.handleBatch(b, code, off, lso, now) {
			refresh = true
		}
	}
	if refresh {
		s.p.mloop.refresh("")
	}
}

// respCursor finds a batch's partition in a produce response. Brokers answer
// in the order asked, so it looks where the previous one was found first,
// and searches the whole response only when that fails.
type respCursor struct{ t, p int }

func (c *respCursor) find(resp *kmsg.ProduceResponse, topic string, part int32) *kmsg.ProduceResponseTopicPartition {
	if c.t < len(resp.Topics) {
		if t := &resp.Topics[c.t]; t.Topic == topic {
			for j := c.p; j < len(t.Partitions); j++ {
				if t.Partitions[j].Partition == part {
					c.p = j + 1
					return &t.Partitions[j]
				}
			}
		}
	}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.Topic != topic {
			continue
		}
		for j := range t.Partitions {
			if t.Partitions[j].Partition == part {
				c.t, c.p = i, j+1
				return &t.Partitions[j]
			}
		}
	}
	return nil
}

// handleBatch applies one partition's answer to its batch (Sender.completeBatch)
// and reports whether metadata should be refreshed.
func (s *sender) handleBatch(b *batch, code int16, off, lso int64, now time.Time) bool {
	st := &b.part.seq
	if code == 0 || code == kerr.DuplicateSequenceNumber.Code {
		// DUPLICATE_SEQUENCE_NUMBER comes without an offset; it acknowledges
		// this batch only, never an earlier one.
		if code != 0 {
			off = -1
		}
		st.acked(b)
		for i, r := range b.recs {
			r.msg.Offset = -1
			if off >= 0 {
				r.msg.Offset = off + int64(i)
			}
		}
		s.tell(b, nil)
		for _, r := range b.recs {
			r.done(r.msg, nil)
		}
		s.release(b)
		return false
	}
	if code == kerr.OutOfOrderSequenceNumber.Code {
		s.p.stats.ooo.Add(1)
	}
	kerrv := kerr.ErrorForCode(code)
	switch st.onError(b, code, lso, kerr.IsRetriable(kerrv)) {
	case vRetryBump:
		st.bumpReq = true
		s.retry(b, now)
	case vRetry:
		s.retry(b, now)
	case vFail:
		st.remove(b)
		st.unresolved = true
		s.failBatch(b, &BrokerError{Topic: b.part.topic, Partition: b.part.id, Err: kerrv}, tracer.ErrorName(code))
	}
	switch code {
	case kerr.NotLeaderForPartition.Code, kerr.UnknownTopicOrPartition.Code, kerr.LeaderNotAvailable.Code,
		kerr.FencedLeaderEpoch.Code, kerr.UnknownLeaderEpoch.Code:
		return true
	}
	return false
}

// abort fails everything still buffered or in flight with ErrClosed and
// closes every connection.
func (s *sender) abort() {
	s.refreshPartitions()
	for _, bc := range s.conns {
		if bc.conn != nil {
			bc.conn.Close()
		}
	}
	for _, part := range s.parts {
		st := &part.seq
		for _, b := range st.inflight {
			s.failBatch(b, ErrClosed, "producer closed")
		}
		st.inflight = nil
		part.mu.Lock()
		rest := part.sealed
		if part.open != nil {
			rest = append(rest, part.open)
		}
		part.sealed, part.open = nil, nil
		part.mu.Unlock()
		for _, b := range rest {
			s.failBatch(b, ErrClosed, "producer closed")
		}
	}
	s.freeSlots()
	// Dials still running deliver to the inbox; close what they opened.
	s.dials.Wait()
	for _, it := range s.p.inbox.take(nil) {
		if it.dialed != nil {
			it.dialed.Close()
		}
	}
}
