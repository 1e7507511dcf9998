package producer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/producer/core"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/wire"
)

// The sender is the loop around the protocol's core (package core): the
// core decides sequences, retries, bumps, expiries and what to send; the
// sender does the I/O it asks for (connections and dials, request timeouts,
// encoding and compression, the application's callbacks, the trace) and
// feeds it what happened (answers, lost connections, the time, a new
// producer id). The partition buffers Produce fills are the core's Buffer:
// it reads them when it drains.

// request is one produce request outstanding on a connection.
type request struct {
	cr   *core.Request
	conn *wire.Conn
	sent time.Time // when it was written whole
	corr int32
}

// brokerConn is the sender's connection to one broker.
type brokerConn struct {
	node        int32
	conn        *wire.Conn // nil while not connected
	dialing     bool
	dialAfter   time.Time
	outstanding []*request // oldest first; the core holds the same requests
	// answered is when the connection's latest answer arrived. A broker
	// handles one request of a connection at a time, in order (Kafka's
	// SocketServer mutes a connection until its answer is sent), so the
	// oldest request's time to answer counts from its write or from the
	// answer before it, whichever is later: see step.
	answered time.Time
}

// inboxItem is something that happened off the sender goroutine.
type inboxItem struct {
	bc     *brokerConn
	req    *request
	resp   *kmsg.ProduceResponse
	at     time.Time // when the answer arrived
	err    error
	dialed *wire.Conn // a dial finished (conn or err)
	isDial bool
	txn    *txnCmd // a transactional call of the application
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

// sender is the one goroutine that drives the core.
type sender struct {
	p     *Producer
	core  *core.Core
	conns map[int32]*brokerConn

	ev tracer.Event // the event tell and emitSends fill and emit, reused (tracer.Sink keeps none)

	snap   *snapshot
	parts  []*partition // every partition of snap, topic then id order
	byPart []*partition // by core.Part
	items  []inboxItem
	dials  sync.WaitGroup // dials in progress
	enc    encoder
	freed  int // buffer slots of done batches not yet given back (freeSlots)

	spare    []*partition
	results  []core.Result
	failed   []int32  // nodes whose Send failed while a Ready's requests were sent
	unenc    []*batch // batches the core took that could not be encoded
	unencErr []error

	// needID: the core needs a new producer id (Ready.NeedID); renewAfter
	// is when to try again after a failure.
	needID     bool
	renewAfter time.Time

	ctx      context.Context // the sender's, for the coordinator's requests
	txnReply chan error      // the application waiting for its transaction's end
}

func newSender(p *Producer) *sender {
	c := &p.cfg
	cc := core.New(core.Config{MaxInFlight: c.maxInFlight, Linger: c.linger, DeliveryTimeout: c.deliveryTimeout,
		RetryBackoff: c.retryBackoff, MaxEpoch: c.maxEpoch, MaxRequestBytes: c.maxRequestBytes, Rules: c.rules, Trace: p.trace != nil,
		Txn: c.txnID != "", TV2: c.txnID != "" && p.tv2, WaitMarkers: c.waitMarkers}, p.pid, p.epoch)
	return &sender{p: p, core: cc, conns: make(map[int32]*brokerConn), ctx: context.Background(),
		enc: encoder{pid: p.pid, codec: p.cfg.codec, traced: p.ids, txn: c.txnID != ""}}
}

func (s *sender) run(ctx context.Context) {
	defer close(s.p.done)
	s.ctx = ctx
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		s.processInbox(now)
		s.apply(now)  // deliver the answers' outcomes before the step
		s.freeSlots() // before the step: producers refill while it sends
		next := s.step(now)
		if s.needID {
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
	e := tracer.Event{Kind: tracer.Told, Partition: b.part.id, Batch: b.id, Offset: -1, Result: tracer.Delivered}
	if err != nil {
		e.Result, e.Reason = tracer.Failed, err.Error()
		var ke *kerr.Error
		if errors.As(err, &ke) {
			e.Err = tracer.ErrorName(ke.Code)
		}
	}
	if err == nil && len(b.recs) > 0 {
		e.Offset = b.recs[0].msg.Offset // deliver numbered the rest from it, or set all -1
	}
	// A Told per record is on the traced hot path: tracer.EmitRun hands a
	// RunSink the batch's in one call (tracer.Writer writes one ToldBatch
	// line, naming the batch whose SendNew listed b.ids), any other sink
	// one event each, the sender's own (a Sink does not keep it).
	s.ev = e
	tracer.EmitRun(s.p.trace, &s.ev, b.ids)
}

// refreshPartitions registers new partitions with the core and gives it
// the partitions' leaders when the snapshot changed, and reports whether
// it did.
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
			if part.cp < 0 {
				part.cp = s.core.AddPartition(part.id, part.leader)
				s.byPart = append(s.byPart, part)
			} else {
				s.core.SetLeader(part.cp, part.leader)
			}
		}
	}
	s.core.ScanAll()
	return true
}

// takeTouched makes the partitions Produce changed since the last step the
// core's candidates.
func (s *sender) takeTouched() {
	p := s.p
	p.touchMu.Lock()
	list := p.touched
	p.touched = s.spare[:0]
	p.touchMu.Unlock()
	for i, part := range list {
		part.touched.Store(false) // from here on, Produce queues it again
		if part.cp >= 0 {
			s.core.Touch(part.cp)
		}
		list[i] = nil
	}
	s.spare = list[:0]
}

// Head, Take and Drop are the core's view of the partition buffers
// (core.Buffer): the sealed batches, oldest first, then the open one.

// Head describes partition cp's next unsent batch.
func (s *sender) Head(cp core.Part) (time.Time, bool, bool) {
	part := s.byPart[cp]
	part.mu.Lock()
	defer part.mu.Unlock()
	switch {
	case len(part.sealed) > 0:
		return part.sealed[0].created, true, true
	case part.open != nil:
		return part.open.created, false, true
	}
	return time.Time{}, false, false
}

// pop removes part's next unsent batch.
func (s *sender) pop(part *partition) *batch {
	part.mu.Lock()
	defer part.mu.Unlock()
	var b *batch
	switch {
	case len(part.sealed) > 0:
		// Shift the rest down rather than reslice, so that the slice keeps
		// its capacity and Produce's append does not allocate again.
		b = part.sealed[0]
		n := copy(part.sealed, part.sealed[1:])
		part.sealed[n] = nil
		part.sealed = part.sealed[:n]
	case part.open != nil:
		b = part.open
		part.open = nil
	}
	return b
}

// Take removes cp's next unsent batch for sending, compressing it for a
// compressed codec; a batch that cannot be encoded is failed after the
// step (failUnencoded) and not given to the core.
func (s *sender) Take(cp core.Part) *core.Batch {
	b := s.pop(s.byPart[cp])
	if b == nil {
		return nil
	}
	if s.enc.codec != recordbatch.CodecNone {
		if err := s.enc.compress(b, s.p.bufs); err != nil {
			s.unenc = append(s.unenc, b)
			s.unencErr = append(s.unencErr, fmt.Errorf("encode record batch: %w", err))
			return nil
		}
	}
	cb := b.coreBatch()
	cb.Bytes = s.enc.batchSize(b)
	return cb
}

// HeadBytes is the size of cp's next unsent batch before compression.
func (s *sender) HeadBytes(cp core.Part) int {
	part := s.byPart[cp]
	part.mu.Lock()
	defer part.mu.Unlock()
	switch {
	case len(part.sealed) > 0:
		return part.sealed[0].size
	case part.open != nil:
		return part.open.size
	}
	return 0
}

// Drop removes cp's next unsent batch, to be failed.
func (s *sender) Drop(cp core.Part) *core.Batch {
	if b := s.pop(s.byPart[cp]); b != nil {
		return b.coreBatch()
	}
	return nil
}

// failUnencoded fails the batches Take could not encode (a Fail event
// each: they never had a sequence).
func (s *sender) failUnencoded() {
	for i, b := range s.unenc {
		err := s.unencErr[i]
		pid, _ := s.core.ID()
		s.emit(&tracer.Event{Kind: tracer.Fail, Partition: b.part.id, Batch: b.id, PID: pid, Epoch: -1, Seq: -1, Reason: "encoding: " + err.Error()})
		s.failRecords(b, err)
		s.unenc[i], s.unencErr[i] = nil, nil
	}
	s.unenc, s.unencErr = s.unenc[:0], s.unencErr[:0]
}

// step feeds the core the time and does what it asks, and returns when to
// look again. The core looks only at its candidates (core.Tick): the
// partitions touched, answered or blocked since the last step, and every
// partition at its deadlines, on a metadata change and when a flush begins.
func (s *sender) step(now time.Time) time.Time {
	p := s.p
	p.stats.steps.Add(1)
	p.nextWake.Store(0) // busy: Produce wakes us for any new batch meanwhile
	s.refreshPartitions()
	s.takeTouched()
	s.core.Tick(now, p.flushing.Load() > 0, s)
	s.failUnencoded()
	next := s.apply(now)
	later := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	// Request timeouts and dial backoffs. request.timeout.ms bounds how long
	// the broker takes over the oldest request: from its write, or from the
	// answer to the request before it if that came later, as the broker
	// starts on it only then. The Java client counts from the write, so a
	// request pipelined behind a slow one there times out on the slow
	// one's time too.
	for _, bc := range s.conns {
		if len(bc.outstanding) > 0 {
			start := bc.outstanding[0].sent
			if bc.answered.After(start) {
				start = bc.answered
			}
			deadline := start.Add(p.cfg.requestTimeout)
			if !now.Before(deadline) {
				s.core.RequestTimedOut(bc.node)
				bc.conn.Close() // the reader fails everything outstanding: a Disconnect
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

// apply does what the core asks until it asks nothing more, and returns
// the core's next deadline.
func (s *sender) apply(now time.Time) time.Time {
	for {
		rd := s.core.Ready()
		s.p.stats.bumps.Add(int64(rd.Bumps))
		s.p.stats.ooo.Add(int64(rd.OutOfOrder))
		for i := range rd.Events {
			s.emit(&rd.Events[i])
		}
		for _, o := range rd.Outcomes {
			s.deliver(o)
		}
		for _, r := range rd.Requests {
			s.send(r, now)
		}
		for _, node := range rd.Dial {
			s.dial(s.conn(node), now)
		}
		if rd.Refresh {
			s.p.mloop.refresh("")
		}
		s.needID = rd.NeedID
		more := false // a transactional answer changed the core: ask it again
		if len(rd.AddPartitions) > 0 {
			s.addPartitions(s.ctx, rd.AddPartitions, now)
			more = true
		}
		if rd.EndTxn != nil {
			s.endTxn(s.ctx, rd.EndTxn, now)
			more = true
		}
		if rd.DescribeTxn {
			s.describeTxn(s.ctx)
			more = true
		}
		if rd.TxnDone != nil {
			s.txnDone(s.ctx, rd.TxnDone)
			more = true
		}
		if more && s.ctx.Err() != nil {
			more = false // shutting down: abort fails what is left
		}
		if more {
			// The answer may let partitions drain (added to the
			// transaction, a new epoch): step again now, after the wait.
			now = time.Now()
			s.core.Tick(now, s.p.flushing.Load() > 0, s)
			s.failUnencoded()
		}
		if len(s.failed) == 0 {
			if more {
				continue
			}
			return rd.Wake
		}
		for _, node := range s.failed {
			if bc := s.conns[node]; bc.conn != nil {
				s.disconnect(bc, bc.conn, now)
			} else {
				s.core.Disconnect(node, now)
			}
		}
		s.failed = s.failed[:0]
	}
}

// deliver tells the application a batch's outcome.
func (s *sender) deliver(o core.Outcome) {
	b := of(o.Batch)
	switch o.Cause {
	case core.Acked:
		for i, r := range b.recs {
			r.msg.Offset = -1
			if o.Offset >= 0 {
				r.msg.Offset = o.Offset + int64(i)
			}
		}
		s.tell(b, nil)
		for _, r := range b.recs {
			r.done(r.msg, nil)
		}
		s.release(b)
	case core.BrokerError:
		s.failRecords(b, &BrokerError{Topic: b.part.topic, Partition: b.part.id, Err: kerr.ErrorForCode(o.Code)})
	case core.DeliveryTimeout:
		s.failRecords(b, ErrDeliveryTimeout)
	case core.Closed:
		s.failRecords(b, ErrClosed)
	case core.TxnAborted:
		s.failRecords(b, ErrTxnAborted)
	}
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
// compressed records and the batch itself (batchStore): the application has
// been told of its records, and neither the core (the batch is out of its
// partition's in-flight batches and of every outstanding request) nor the
// sender looks at it again.
func (s *sender) release(b *batch) {
	s.freed += len(b.recs)
	if b.payload != nil {
		s.p.bufs.put(b.payload[:0])
		b.payload = nil
	}
	s.p.batches.put(b)
}

func (s *sender) conn(node int32) *brokerConn {
	bc := s.conns[node]
	if bc == nil {
		bc = &brokerConn{node: node}
		s.conns[node] = bc
	}
	return bc
}

// send writes the core's request cr to its node's connection. A request to
// a node whose Send failed in this Ready is lost with that connection (its
// events are traced with correlation id -1, then the Disconnect).
func (s *sender) send(cr *core.Request, now time.Time) {
	p := s.p
	bc := s.conn(cr.Node)
	batches := make([]*batch, len(cr.Batches))
	for i, cb := range cr.Batches {
		b := of(cb)
		b.seq, b.epoch = cb.Seq(), cb.Epoch()
		batches[i] = b
	}
	r := &request{cr: cr, conn: bc.conn, sent: now, corr: -1}
	bc.outstanding = append(bc.outstanding, r)
	p.stats.requests.Add(1)
	p.stats.batches.Add(int64(len(batches)))
	for _, isNew := range cr.New {
		if !isNew {
			p.stats.retries.Add(1)
		}
	}
	if bc.conn == nil || s.lost(cr.Node) {
		s.emitSends(cr, -1)
		s.fail(cr.Node)
		return
	}
	req := &produceRequest{timeout: int32(p.cfg.requestTimeout / time.Millisecond), batches: batches, enc: &s.enc, txnID: p.cfg.txnID}
	if p.cfg.txnID != "" && !p.tv2 {
		req.maxVersion = 11
	}
	emitted := false
	onWrite := func(corr int32) {
		r.corr, emitted = corr, true
		s.emitSends(cr, corr)
	}
	_, err := bc.conn.Send(req, onWrite, func(resp kmsg.Response, err error) {
		it := inboxItem{bc: bc, req: r, err: err}
		if err == nil {
			it.resp, it.at = resp.(*kmsg.ProduceResponse), time.Now()
		}
		p.inbox.push(it)
		p.wakeSender()
	})
	r.sent = time.Now() // written whole: Send returns after the write
	if err != nil {
		if !emitted {
			s.emitSends(cr, -1)
		}
		s.fail(cr.Node)
	}
}

func (s *sender) lost(node int32) bool {
	for _, n := range s.failed {
		if n == node {
			return true
		}
	}
	return false
}

func (s *sender) fail(node int32) {
	if !s.lost(node) {
		s.failed = append(s.failed, node)
	}
}

func (s *sender) emitSends(cr *core.Request, corr int32) {
	if s.p.trace == nil {
		return
	}
	for i, cb := range cr.Batches {
		s.ev = cr.Event(i, corr)
		if cr.New[i] {
			of(cb).traced = true
		}
		s.p.trace.Emit(&s.ev)
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

// disconnect handles a lost connection: the core sends every batch of its
// outstanding requests again (the spec's Disconnect).
func (s *sender) disconnect(bc *brokerConn, conn *wire.Conn, now time.Time) {
	if bc.conn != conn || conn == nil {
		return // already handled
	}
	conn.Close()
	bc.conn = nil
	bc.dialAfter = now.Add(s.p.cfg.retryBackoff)
	s.p.stats.disconnects.Add(1)
	clear(bc.outstanding)
	bc.outstanding = bc.outstanding[:0]
	s.core.Disconnect(bc.node, now)
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
		case it.txn != nil:
			s.txnCommand(it.txn)
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
			s.core.Connected(bc.node)
		case it.err != nil:
			s.disconnect(bc, it.req.conn, now)
		default:
			if len(bc.outstanding) == 0 || bc.outstanding[0] != it.req {
				continue // from a connection we already gave up on
			}
			bc.outstanding[0] = nil
			bc.outstanding = bc.outstanding[1:]
			bc.answered = it.at
			s.handleResponse(it.req, it.resp, now)
		}
		*it = inboxItem{}
	}
}

// handleResponse gives the core each batch's answer in resp.
func (s *sender) handleResponse(r *request, resp *kmsg.ProduceResponse, now time.Time) {
	var at respCursor
	res := s.results[:0]
	for _, cb := range r.cr.Batches {
		b := of(cb)
		rs := core.Result{Code: kerr.UnknownServerError.Code, Offset: -1, LogStart: -1}
		if pr := at.find(resp, b.part.topic, b.part.id); pr != nil {
			rs = core.Result{Code: pr.ErrorCode, Offset: pr.BaseOffset, LogStart: pr.LogStartOffset}
		}
		res = append(res, rs)
	}
	s.core.Respond(r.cr, r.corr, res, now)
	s.results = res[:0]
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

// renewID gets a new producer id when the core needs one (an epoch bump is
// due and the epoch is at its maximum: TransactionManager's
// resetIdempotentProducerId). If InitProducerId fails, it is tried again
// after the retry backoff; the waiting batches meanwhile meet their
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
	s.needID, s.renewAfter = false, time.Time{}
	p.stats.renewals.Add(1)
	s.enc.pid = p.pid
	s.core.NewProducerID(p.pid, p.epoch)
	s.apply(now)
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
	s.core.Abort(s)
	s.apply(time.Now())
	if s.txnReply != nil {
		s.txnReply <- ErrClosed
		s.txnReply = nil
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
