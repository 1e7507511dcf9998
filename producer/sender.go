package producer

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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

	snap   *snapshot
	parts  []*partition // every partition of snap, topic then id order
	byNode map[int32][]*partition
	rot    int
	items  []inboxItem
	dials  sync.WaitGroup // dials in progress
}

func newSender(p *Producer) *sender {
	return &sender{p: p, conns: make(map[int32]*brokerConn)}
}

func (s *sender) run(ctx context.Context) {
	defer close(s.p.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		s.processInbox(now)
		next := s.step(now)
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

func (s *sender) batchEvent(kind tracer.Kind, b *batch) *tracer.Event {
	return &tracer.Event{Kind: kind, Partition: b.part.id, Batch: b.id, PID: s.p.pid, Epoch: b.epoch, Seq: b.seq}
}

// refreshPartitions rebuilds the partition lists when the snapshot changed.
func (s *sender) refreshPartitions() {
	snap := s.p.meta.Load()
	if snap == s.snap {
		return
	}
	s.snap = snap
	s.parts = s.parts[:0]
	names := make([]string, 0, len(snap.topics))
	for name := range snap.topics {
		names = append(names, name)
	}
	sort.Strings(names)
	s.byNode = make(map[int32][]*partition)
	for _, name := range names {
		for _, part := range snap.topics[name].parts {
			s.parts = append(s.parts, part)
			leader := snap.leader(part)
			s.byNode[leader] = append(s.byNode[leader], part)
		}
	}
}

// step does everything that can be done now and returns when to look again.
// It never schedules a wake-up for a batch that is ready but blocked (a full
// connection, a dial, no leader): the event that unblocks it wakes the sender.
func (s *sender) step(now time.Time) time.Time {
	p := s.p
	p.stats.steps.Add(1)
	p.nextWake.Store(0) // busy: Produce wakes us for any new batch meanwhile
	s.refreshPartitions()
	var next time.Time
	later := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	flushing := p.flushing.Load() > 0
	for _, part := range s.parts {
		s.expireRetries(part, now)
		st := &part.seq
		if st.unresolved && len(st.inflight) == 0 {
			bumped := st.resolve()
			s.emit(&tracer.Event{Kind: tracer.ResolveSequences, Partition: part.id, Bumped: bumped})
		}
		if st.bumpReq && !st.outstanding() {
			p.epoch++
			p.stats.bumps.Add(1)
			st.bump(p.epoch, p.pid)
			s.emit(&tracer.Event{Kind: tracer.Bump, Partition: part.id, PID: p.pid, Epoch: p.epoch})
		}
	}
	for node, parts := range s.byNode {
		s.drainNode(node, parts, now, flushing)
	}
	// When to look again: retry backoffs, lingers, delivery and request timeouts.
	var dead []*batch
	for _, part := range s.parts {
		st := &part.seq
		for _, b := range st.inflight {
			if b.st == stRetry {
				later(b.created.Add(p.cfg.deliveryTimeout))
			}
		}
		r, hasRetry := st.nextRetry()
		if r != nil && !st.bumpReq && r.retryAt.After(now) {
			later(r.retryAt)
		}
		lingering := !hasRetry && !flushing && st.drainable(p.epoch, p.cfg.rules)
		part.mu.Lock()
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
			later(part.sealed[0].created.Add(p.cfg.deliveryTimeout))
		case part.open != nil:
			later(part.open.created.Add(p.cfg.deliveryTimeout))
			if d := part.open.created.Add(p.cfg.linger); lingering && d.After(now) {
				later(d)
			}
		}
		part.mu.Unlock()
	}
	for _, b := range dead {
		s.failBatch(b, ErrDeliveryTimeout, "delivery timeout before the batch was sent")
	}
	if len(dead) > 0 {
		later(now)
	}
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
	for _, r := range b.recs {
		s.p.finish(r, err)
	}
	s.release(b)
}

// release recycles a done batch's buffers.
func (s *sender) release(b *batch) {
	if b.builder != nil {
		s.p.bufs.put(b.builder.head[:0])
		b.builder = nil
	}
	s.p.bufs.put(b.encoded)
	b.encoded = nil
}

// drainNode sends produce requests to node while it has room: each request
// takes at most one batch per partition, as RecordAccumulator.drain does.
func (s *sender) drainNode(node int32, parts []*partition, now time.Time, flushing bool) {
	p := s.p
	if node < 0 {
		return // no leader known; a metadata refresh is pending
	}
	bc := s.conns[node]
	if bc == nil {
		bc = &brokerConn{node: node}
		s.conns[node] = bc
	}
	for len(bc.outstanding) < p.cfg.maxInFlight {
		if bc.conn == nil {
			if s.anyReady(parts, now, flushing) {
				s.dial(bc, now)
			}
			return
		}
		var batches []*batch
		var fresh []bool
		n := len(parts)
		for i := 0; i < n; i++ {
			part := parts[(s.rot+i)%n]
			b, isNew := s.nextBatch(part, now, flushing)
			if b != nil {
				batches = append(batches, b)
				fresh = append(fresh, isNew)
			}
		}
		s.rot++
		if len(batches) == 0 {
			return
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
	if !st.drainable(p.epoch, p.cfg.rules) {
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
	st.canDrainNew(p.epoch, p.cfg.rules) // resets the sequence in a new epoch
	seq := st.next
	b.builder.SetProducer(p.pid, st.epoch, seq)
	head := b.builder.head
	enc, err := b.builder.Finish()
	if err != nil || &enc[0] != &head[0] {
		p.bufs.put(head[:0]) // compressed, moved or failed: the builder's array is free
	}
	b.builder = nil
	if err != nil {
		s.failBatch(b, err, "encoding: "+err.Error())
		return nil, false
	}
	b.encoded = enc
	st.assign(b)
	return b, true
}

func (s *sender) send(bc *brokerConn, batches []*batch, fresh []bool, now time.Time) {
	p := s.p
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = int32(p.cfg.requestTimeout / time.Millisecond)
	byTopic := map[string]int{}
	for _, b := range batches {
		i, ok := byTopic[b.part.topic]
		if !ok {
			i = len(req.Topics)
			byTopic[b.part.topic] = i
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = b.part.topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = b.part.id
		rp.Records = b.encoded
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
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
			if s.p.closed.Load() && s.p.buffered.Load() == 0 {
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
	type key struct {
		topic string
		part  int32
	}
	results := make(map[key]*kmsg.ProduceResponseTopicPartition)
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			results[key{t.Topic, t.Partitions[j].Partition}] = &t.Partitions[j]
		}
	}
	refresh := false
	for _, b := range r.batches {
		code, off, lso := kerr.UnknownServerError.Code, int64(-1), int64(-1)
		if pr := results[key{b.part.topic, b.part.id}]; pr != nil {
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
			s.p.finish(r, nil)
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
	// Dials still running deliver to the inbox; close what they opened.
	s.dials.Wait()
	for _, it := range s.p.inbox.take(nil) {
		if it.dialed != nil {
			it.dialed.Close()
		}
	}
}
