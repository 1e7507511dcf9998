package proxy

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
)

// produceTrace is what the proxy did with one produce request's batches.
type produceTrace struct {
	traced  bool
	req     int32
	batches []tracedBatch
	// own answers for partitions taken out of the request (a fault before
	// the append), merged into the response
	own map[string][]kmsg.ProduceResponseTopicPartition
	// fwd are the first attempts of new batches the request carries on to
	// the broker, by partition and number, and fwdSeq every attempt it
	// carries on, by partition, producer, epoch and base sequence
	// (markForwarded).
	fwd    []nextAttempt
	fwdSeq []seqAttempt
}

type tracedBatch struct {
	topic string
	p     int32
	b     int64
	pid   int64
	ep    int16
	seq   int32
	rec   int64  // its first record's kcheck id, -1 if none
	fault string // "" or the Action of a fault answering code (err) instead of the broker, if the broker appends it
	err   string
	code  int16
	fresh bool // its SendNew: the batch's first attempt
}

// slowDelay is the delay the slow fault adds to every request.
func (p *Proxy) slowDelay() time.Duration {
	for _, f := range p.cfg.Faults {
		if eff := f.Effect(); eff.Scope == fault.OnRequest && eff.Action == "Delay" {
			return f.Delay
		}
	}
	return 0
}

// rollLocked reports whether fault i fires now (its rate, then its count),
// with p.mu held. seed-race has no rate: it hits every first produce.
func (p *Proxy) rollLocked(i int) bool {
	f := p.cfg.Faults[i]
	if p.faultsLeft[i] == 0 {
		return false
	}
	if f.Effect().Rated && f.Rate < 1 && p.rng.Float64() >= f.Rate {
		return false
	}
	if p.faultsLeft[i] > 0 {
		p.faultsLeft[i]--
	}
	p.stats.Faults++
	return true
}

// tracesLocked reports whether produce requests to topic are traced, taking
// the first topic produced to when none was named.
func (p *Proxy) tracesLocked(topic string) bool {
	if p.topic == "" && topic != "" {
		p.topic = topic
	}
	return topic == p.topic
}

// produceRequest traces a produce request's batches of the traced topic and
// applies the faults that hit it. It returns the frame to send upstream,
// whether a response is expected (acks=0 has none) and whether the
// connection is to be cut instead.
func (p *Proxy) produceRequest(c *conn, ex *exchange) (frame []byte, respond, drop bool) {
	frame, respond = ex.rq.raw, true
	req, err := ex.rq.decode()
	if err != nil {
		p.cfg.Logf("proxy: %v: passed through untraced", err)
		return frame, true, false
	}
	pr := req.(*kmsg.ProduceRequest)
	respond = pr.Acks != 0

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return nil, false, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	node := c.id
	pt := &produceTrace{}
	changed := false
	var events, faults []tracer.Event // the batches' events, then the faults'
	var cut *tracer.Event             // the Fault of a cut before the request is forwarded
	var late *partitionFault          // a late-produce: the request kept, the connection closed (late.go)
	for ti := 0; ti < len(pr.Topics); ti++ {
		t := &pr.Topics[ti]
		name := t.Topic
		if ex.rq.version >= 13 {
			name = p.topicIDs[t.TopicID]
		}
		if !p.tracesLocked(name) {
			continue
		}
		if !pt.traced {
			pt.traced = true
			p.nextReq++
			pt.req = p.nextReq
			p.stats.Produces++
			if pr.TransactionID != nil && p.txnID == "" {
				// A transactional client: Produce v12+ adds the partition
				// to the transaction (TV2, KIP-890 part 2), older versions
				// follow AddPartitionsToTxn (TV1).
				p.txnID, p.txnVersion = *pr.TransactionID, 1
				if ex.rq.version >= 12 {
					p.txnVersion = 2
				}
			}
			if err := p.headerLocked(ex.rq.clientID); err != nil {
				p.cfg.Logf("%v", err)
			}
		}
		kept := t.Partitions[:0:0]
		for _, tp := range t.Partitions {
			batches, err := recordbatch.Decode(tp.Records)
			if err != nil || len(batches) == 0 {
				p.cfg.Logf("proxy: %s[%d]: undecodable batch passed through: %v", name, tp.Partition, err)
				kept = append(kept, tp)
				continue
			}
			for _, b := range batches {
				tb := p.traceBatchLocked(name, tp.Partition, &b, node, pt.req, &events)
				pt.batches = append(pt.batches, tb)
			}
			// Faults hit the partition's attempt as a whole; Kafka clients
			// send one batch per partition per request.
			tb := &pt.batches[len(pt.batches)-1]
			a := p.att.Next(tp.Partition, fault.BatchOf(tb.rec, tb.pid, tb.ep, tb.seq), tb.pid, tb.ep, tb.seq, ex.at)
			n := a.N
			var f partitionFault
			i := -1
			if cut == nil && late == nil { // once the request is cut, nothing of it is handled
				f, i = p.partitionFaultLocked(tp.Partition, a)
			}
			here := tracer.Event{Kind: tracer.Fault, Fault: f.action, Partition: tp.Partition, Epoch: tb.ep, Seq: tb.seq, Node: node, Err: f.err}
			switch {
			case i < 0:
			case f.eff.Late:
				// Traced as a Delay (the broker handles it, later), then the
				// Disconnect of the connection closed.
				here.Fault = "Delay"
				cut, late = &here, &f
			case f.eff.Cut == fault.CutBefore:
				cut = &here
			case f.eff.Cut == fault.CutAfter:
				// It acts when the broker's answer arrives (readResponses).
				if ex.cutAfter == nil {
					ex.cutAfter = &here
				}
			case !f.eff.Written: // RejectBeforeAppend: the proxy answers for the broker
				faults = append(faults, here)
				p.holdLocked(ex, tp.Partition, n, tb, f)
				if pt.own == nil {
					pt.own = map[string][]kmsg.ProduceResponseTopicPartition{}
				}
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.BaseOffset, rp.LogStartOffset = tp.Partition, f.code, -1, -1
				pt.own[name] = append(pt.own[name], rp)
				changed = true
				continue
			case f.eff.ErrAnswer: // AppendThenFail
				// It acts on the answer, if the broker appends the batch
				// (produceResponse emits the Fault then).
				tb.fault, tb.err, tb.code = f.action, f.err, f.code
				p.holdLocked(ex, tp.Partition, n, tb, f)
			default: // a hold: the broker's answer, later
				faults = append(faults, here)
				p.holdLocked(ex, tp.Partition, n, tb, f)
			}
			kept = append(kept, tp)
			if tb.fresh { // a new batch, not a retry: what a hold until the next waits for
				pt.fwd = append(pt.fwd, nextAttempt{tp.Partition, n})
			}
			if p.untilSeq {
				pt.fwdSeq = append(pt.fwdSeq, seqAttempt{tp.Partition, tb.pid, tb.ep, tb.seq})
			}
		}
		t.Partitions = kept
	}
	if !pt.traced {
		return frame, respond, false
	}
	ex.produce = pt
	if late != nil {
		p.sendLateLocked(c.l, ex.rq.raw, late.lateUntil, late.delay, *cut)
	}
	if cut != nil {
		// Closed as the attempt arrived: the faults chosen for the
		// request's other attempts never act. The batches were sent and
		// are lost with the connection: closing it emits the Disconnect.
		events = append(events, *cut)
		p.emitAllLocked(events)
		p.stats.Batches += len(pt.batches)
		c.open++
		return nil, false, true
	}
	events = append(events, faults...)
	// Faults on the request as a whole.
	for i, f := range p.cfg.Faults {
		if f.Effect().Scope != fault.OnRequest {
			continue
		}
		switch f.Effect().Action {
		case "DropConnection":
			if p.rollLocked(i) {
				events = append(events, tracer.Event{Kind: tracer.Fault, Fault: "DropConnection", Partition: -1, Epoch: -1, Seq: -1, Node: node})
				p.emitAllLocked(events)
				// The batches were sent and are lost with the connection:
				// closing it emits the Disconnect.
				c.open++
				return nil, false, true
			}
		case "TimeoutBeforeAppend":
			if p.rollLocked(i) {
				events = append(events, tracer.Event{Kind: tracer.Fault, Fault: "TimeoutBeforeAppend", Partition: -1, Epoch: -1, Seq: -1, Node: node})
				ex.forwarded, ex.never = false, true
			}
		}
	}
	p.emitAllLocked(events)
	p.stats.Batches += len(pt.batches)
	if respond {
		c.open++
	}
	if changed {
		var rest int
		topics := pr.Topics[:0]
		for _, t := range pr.Topics {
			if len(t.Partitions) > 0 {
				topics = append(topics, t)
				rest += len(t.Partitions)
			}
		}
		pr.Topics = topics
		if rest == 0 {
			ex.forwarded = false // the proxy answers it all
		} else if ex.forwarded {
			frame = ex.rq.withBody(pr)
		}
	}
	return frame, respond, false
}

func (p *Proxy) emitAllLocked(events []tracer.Event) {
	for _, e := range events {
		p.emitLocked(e)
	}
}

// traceBatchLocked emits the SendNew or Resend of one batch attempt.
func (p *Proxy) traceBatchLocked(topic string, part int32, b *recordbatch.Batch, node, req int32, events *[]tracer.Event) tracedBatch {
	ids := make([]int64, len(b.Records))
	for i, r := range b.Records {
		ids[i] = recordbatch.RecordID(r.Headers)
	}
	// A batch is known by its first record's kcheck id, which stays the same
	// across retries and epoch bumps; without ids, by its producer, epoch
	// and sequence, which an epoch bump changes.
	var id int64
	if len(ids) > 0 && ids[0] >= 0 {
		id = ids[0]
	} else {
		k := batchKey{part, b.ProducerID, b.ProducerEpoch, b.BaseSequence}
		if id = p.batches[k]; id == 0 {
			p.nextSynth++
			id = p.nextSynth
			p.batches[k] = id
		}
		for i := range ids {
			ids[i] = -1
		}
	}
	e := tracer.Event{Partition: part, Batch: id, PID: b.ProducerID, Epoch: b.ProducerEpoch, Seq: b.BaseSequence,
		N: int32(len(b.Records)), Req: req, Node: node}
	if b.MaxTimestamp > 0 {
		// The broker's producer-state expiry counts from it
		// (ProducerStateEntry.lastTimestamp, set from the appended batch's
		// maxTimestamp): a batch retried for long is older than its send.
		// Wall-clock nanoseconds until the event is written (stamp).
		e.BatchTime = time.UnixMilli(b.MaxTimestamp).UnixNano()
	}
	if p.sentOnce[id] {
		e.Kind = tracer.Resend
	} else {
		p.sentOnce[id] = true
		e.Kind, e.Records = tracer.SendNew, ids
	}
	*events = append(*events, e)
	rec := int64(-1)
	if len(ids) > 0 {
		rec = ids[0]
	}
	return tracedBatch{topic: topic, p: part, b: id, rec: rec, pid: b.ProducerID, ep: b.ProducerEpoch, seq: b.BaseSequence, fresh: e.Kind == tracer.SendNew}
}

// partitionFault is what a fault does to one partition's attempt.
type partitionFault struct {
	eff    fault.Effect
	action string // the spec action it forces
	err    string
	code   int16
	hold   time.Duration
	// untilNext: the hold ends early once the partition's next new batch
	// has gone to the broker (fault.Fault.UntilNext); untilSeq, once its
	// attempt with base sequence untilK (same producer and epoch) has.
	untilNext, untilSeq bool
	untilK              int32
	// lateUntil and delay: a late-produce's condition and bound (late.go).
	lateUntil string
	delay     time.Duration
}

// nextAttempt is a partition and the number of its attempt whose answer is
// held until a later one has been sent.
type nextAttempt struct {
	p int32
	n int
}

// seqAttempt is an attempt by partition, producer, epoch and base sequence.
type seqAttempt struct {
	p   int32
	pid int64
	ep  int16
	seq int32
}

// partitionFaultLocked picks the first per-partition fault (fault.OnAttempt)
// that fires for attempt a on partition part. It returns index -1 if none
// does.
func (p *Proxy) partitionFaultLocked(part int32, a fault.Attempt) (partitionFault, int) {
	for i, f := range p.cfg.Faults {
		eff := f.Effect()
		if eff.Scope != fault.OnAttempt || !f.Hits(part) || !f.Selects(a) {
			continue
		}
		if p.rollLocked(i) {
			pf := partitionFault{eff: eff, action: eff.Action, untilNext: f.UntilNext, untilSeq: f.UntilSeq, untilK: f.UntilK,
				lateUntil: f.LateUntil, delay: f.Delay}
			if eff.Holds {
				// The seed's race: the first produce's answer is held so
				// that the client sends its next batch first (KAFKA-14359).
				pf.hold = f.Delay
			}
			if e := f.Err(); eff.ErrAnswer && e != nil {
				pf.err, pf.code = tracer.ErrorName(e.Code), e.Code
			}
			return pf, i
		}
	}
	return partitionFault{}, -1
}

// holdLocked holds ex's answer as fault f says, for the n-th attempt of
// partition part, tb.
func (p *Proxy) holdLocked(ex *exchange, part int32, n int, tb *tracedBatch, f partitionFault) {
	if f.hold <= 0 {
		return
	}
	ex.hold = max(ex.hold, f.hold)
	if f.untilNext {
		ex.untilNext = append(ex.untilNext, nextAttempt{part, n})
	}
	if f.untilSeq {
		ex.untilSeq = append(ex.untilSeq, seqAttempt{part, tb.pid, tb.ep, f.untilK})
	}
}

// markForwarded notes that ex's attempts have gone to the broker, waking
// the answers held until a partition's next attempt, or one with a given
// sequence (holdAnswer).
func (p *Proxy) markForwarded(ex *exchange) {
	if ex.produce == nil || len(ex.produce.fwd) == 0 && len(ex.produce.fwdSeq) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range ex.produce.fwd {
		p.forwarded[a.p] = max(p.forwarded[a.p], a.n)
	}
	for _, a := range ex.produce.fwdSeq {
		p.forwardedSeq[a] = true
	}
	close(p.sent)
	p.sent = make(chan struct{})
}

// holdAnswer holds ex's answer for ex.hold from its arrival, or, for a
// hold until a condition, until it holds and fault.NextGrace has passed, if
// that comes sooner: for ex.untilNext, until each of its partitions has had
// a later batch's first attempt forwarded (a retry of the held batch does
// not count); for ex.untilSeq, until each of its attempts has been
// forwarded (the one sent before the held one included). It reports false
// if the connection closed meanwhile.
func (p *Proxy) holdAnswer(c *conn, ex *exchange) bool {
	deadline := ex.at.Add(ex.hold)
	timer := time.NewTimer(time.Until(deadline))
	defer func() { timer.Stop() }()
	for len(ex.untilNext) > 0 || len(ex.untilSeq) > 0 {
		p.mu.Lock()
		done, wake := true, p.sent
		for _, a := range ex.untilNext {
			if p.forwarded[a.p] <= a.n {
				done = false
			}
		}
		for _, a := range ex.untilSeq {
			if !p.forwardedSeq[a] {
				done = false
			}
		}
		p.mu.Unlock()
		if done {
			if g := time.Now().Add(fault.NextGrace); g.Before(deadline) {
				timer.Stop()
				timer = time.NewTimer(time.Until(g))
			}
			break
		}
		select {
		case <-wake:
		case <-timer.C:
			return true
		case <-c.done:
			return false
		}
	}
	select {
	case <-timer.C:
		return true
	case <-c.done:
		return false
	}
}
