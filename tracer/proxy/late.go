package proxy

import (
	"bufio"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/tracer"
)

// Late requests (fault.LateProduce, fault.LateTxn): the proxy keeps a
// request from the broker, closes the client's connection as the client's
// own request timeout would, and sends the request later on a connection of
// its own, once the fault's condition holds: the client-visible step the
// counterexample took before the spec's HandleLateProduce or HandleLateCoord
// (until=answer:API, until=send:API), counted here as requests go upstream
// and answers reach the client.

// lateTimeout bounds the late request's own exchange with the broker.
const lateTimeout = 10 * time.Second

// apiOf names the request key as the late faults' conditions do ("" for
// one they do not count).
func apiOf(key int16) string {
	switch key {
	case kmsg.Produce.Int16():
		return "produce"
	case kmsg.AddPartitionsToTxn.Int16():
		return "add-partitions"
	case kmsg.EndTxn.Int16():
		return "end-txn"
	case kmsg.InitProducerID.Int16():
		return "init-pid"
	}
	return ""
}

// seen counts a client-visible step (what is "send:API" or "answer:API")
// and wakes the late requests waiting for one.
func (p *Proxy) seen(what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seenSteps == nil {
		p.seenSteps = map[string]int{}
	}
	p.seenSteps[what]++
	if p.seenWake != nil {
		close(p.seenWake)
	}
	p.seenWake = make(chan struct{})
}

// sendLateLocked sends frame, a request kept from the broker behind l, once
// until (a fault's LateUntil) has been seen again, or delay has passed
// (whichever first; with neither, never). kept is the Fault event that
// traced its keeping: when its condition held (or it has none but a
// delay), the request's going is traced as kept with tracer.LateSent; sent
// on its delay before its condition, it is not. Call with p.mu held.
func (p *Proxy) sendLateLocked(l *listener, frame []byte, until string, delay time.Duration, kept tracer.Event) {
	if until == "" && delay <= 0 {
		p.cfg.Logf("proxy: a late request is never sent (no until, no delay)")
		return
	}
	if p.seenSteps == nil {
		p.seenSteps = map[string]int{}
	}
	if p.seenWake == nil {
		p.seenWake = make(chan struct{})
	}
	from := p.seenSteps[until]
	frame = append([]byte(nil), frame...)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		var deadline <-chan time.Time
		if delay > 0 {
			t := time.NewTimer(delay)
			defer t.Stop()
			deadline = t.C
		}
	wait:
		for until != "" {
			p.mu.Lock()
			done, wake := p.seenSteps[until] > from, p.seenWake
			p.mu.Unlock()
			if done {
				// as for a hold until the next: the broker a moment to
				// handle what the client sent (or the client to act on
				// what it read)
				time.Sleep(fault.NextGrace)
				break
			}
			select {
			case <-wake:
			case <-deadline:
				break wait
			case <-p.quit:
				// Closing sends what was due already, and nothing else.
				p.mu.Lock()
				done = p.seenSteps[until] > from
				p.mu.Unlock()
				if !done {
					return
				}
				break wait
			}
		}
		if until == "" {
			select {
			case <-deadline:
			case <-p.quit:
				return
			}
		}
		p.mu.Lock()
		if until == "" || p.seenSteps[until] > from {
			kept.Fault = tracer.LateSent
			p.emitLocked(kept)
		}
		p.mu.Unlock()
		p.sendLate(l, frame, until)
	}()
}

// sendLate sends one request to l's broker on a connection of its own and
// reads its answer, which nobody gets.
func (p *Proxy) sendLate(l *listener, frame []byte, until string) {
	up, err := p.dialUpstream(l)
	if err != nil {
		p.cfg.Logf("proxy: a late request could not reach %s: %v", l.upstream, err)
		return
	}
	defer up.Close()
	_ = up.SetDeadline(time.Now().Add(lateTimeout))
	if _, err := up.Write(appendFrame(nil, frame)); err != nil {
		p.cfg.Logf("proxy: a late request to %s: %v", l.upstream, err)
		return
	}
	if _, err := readFrame(bufio.NewReader(up)); err != nil {
		p.cfg.Logf("proxy: the answer to a late request from %s: %v", l.upstream, err)
		return
	}
	p.cfg.Logf("proxy: a late request (until %s) went to %s and was answered", until, l.upstream)
}

// txnFault applies the first transactional fault (fault.OnTxn) that
// selects ex, a request to the transaction coordinator in the wire's
// transaction tx: a late one is kept from the coordinator (drop: the
// connection is to be closed), a txn-cut closes the connection when the
// answer arrives. Call with p.mu held.
func (p *Proxy) txnFaultLocked(c *conn, ex *exchange, req kmsg.Request) (drop bool) {
	api := apiOf(ex.rq.key)
	commit := false
	if r, ok := req.(*kmsg.EndTxnRequest); ok {
		commit = r.Commit
	}
	if _, ok := req.(*kmsg.AddPartitionsToTxnRequest); ok && ex.rq.version >= 4 {
		return false // a broker's verification, not the client's
	}
	for i, f := range p.cfg.Faults {
		if f.Effect().Scope != fault.OnTxn || !f.SelectsTxn(api, commit, p.tx+1) || !p.rollLocked(i) {
			continue
		}
		if f.Effect().Late {
			p.cfg.Logf("proxy: fault %s: %s kept from the coordinator, the client's connection closed", f, api)
			kept := tracer.Event{Kind: tracer.Fault, Fault: "Delay", Partition: -1, Epoch: txnEpoch(req), Seq: -1, Node: c.id}
			p.emitLocked(kept)
			p.sendLateLocked(c.l, ex.rq.raw, f.LateUntil, f.Delay, kept)
			return true
		}
		p.cfg.Logf("proxy: fault %s: the answer to %s will be lost", f, api)
		ex.cutTxn = true
		return false
	}
	return false
}

// txnEpoch is the producer epoch a request to the transaction coordinator
// carries, -1 if none.
func txnEpoch(req kmsg.Request) int16 {
	switch r := req.(type) {
	case *kmsg.EndTxnRequest:
		return r.ProducerEpoch
	case *kmsg.AddPartitionsToTxnRequest:
		return r.ProducerEpoch
	case *kmsg.InitProducerIDRequest:
		return r.ProducerEpoch
	}
	return -1
}

// noteTxnCoordinator keeps the node a FindCoordinator for a transactional
// id named (the target of a fault with node=coordinator, cluster.go),
// before its addresses are rewritten.
func (p *Proxy) noteTxnCoordinator(ex *exchange, r *kmsg.FindCoordinatorResponse) {
	req, err := ex.rq.decode()
	if err != nil {
		return
	}
	fc, ok := req.(*kmsg.FindCoordinatorRequest)
	if !ok || fc.CoordinatorType != 1 {
		return
	}
	node := int32(-1)
	if ex.rq.version < 4 {
		if r.ErrorCode == 0 {
			node = r.NodeID
		}
	} else {
		for _, c := range r.Coordinators {
			if c.ErrorCode == 0 {
				node = c.NodeID
			}
		}
	}
	if node < 0 {
		return
	}
	p.mu.Lock()
	p.txnCoord, p.txnCoordKnown = node, true
	p.mu.Unlock()
}
