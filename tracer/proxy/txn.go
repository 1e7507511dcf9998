package proxy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/tracer"
)

// Transactions on the wire (format version 5), for any client: the
// transactional id of InitProducerId, AddPartitionsToTxn's answers for the
// traced topic (TV1; a client's versions, 0-3), EndTxn as it goes upstream
// and its answer, with the epoch EndTxn v5 returns (TV2). Transactions are
// numbered in the order their EndTxn succeeds, from 1; what the
// application was told of each is the client's to report, not the wire's:
// Tell merges a driver's report of it as TxnTold events.

// txnKey reports whether key is a transactional request the proxy traces.
func txnKey(key int16) bool {
	switch key {
	case kmsg.InitProducerID.Int16(), kmsg.AddPartitionsToTxn.Int16(), kmsg.EndTxn.Int16():
		return true
	}
	return false
}

// txnRequest decodes a transactional request for its answer, applies the
// transactional faults (late.go), and traces an EndTxn as it goes upstream.
// It reports whether the connection is to be closed instead (a late fault
// kept the request).
func (c *conn) txnRequest(ex *exchange) (drop bool) {
	req, err := ex.rq.decode()
	if err != nil {
		c.p.cfg.Logf("proxy: %v: not traced", err)
		return false
	}
	ex.txn = req
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if c.p.txnFaultLocked(c, ex, req) {
		return true
	}
	if r, ok := req.(*kmsg.EndTxnRequest); ok {
		c.p.emitLocked(tracer.Event{Kind: tracer.EndTxn, PID: r.ProducerID, Epoch: r.ProducerEpoch, Node: c.id, Commit: r.Commit, Tx: c.p.tx + 1})
	}
	return false
}

// txnResponse returns the events of a transactional request's answer.
func (p *Proxy) txnResponse(c *conn, ex *exchange, resp kmsg.Response) []tracer.Event {
	switch r := resp.(type) {
	case *kmsg.InitProducerIDResponse:
		if r.ErrorCode != 0 {
			return nil
		}
		e := tracer.Event{Kind: tracer.InitProducerID, PID: r.ProducerID, Epoch: r.ProducerEpoch, Node: c.id}
		if req, ok := ex.txn.(*kmsg.InitProducerIDRequest); ok && req.TransactionalID != nil {
			e.TxnID = *req.TransactionalID
			// The coordinator aborts a transaction still open when its
			// producer asks again (a KIP-360 bump, kgo's abort of an
			// EndTxn whose outcome it does not know): that ends it
			// (tracer.FORMAT.md, "Transactions").
			p.mu.Lock()
			if p.txOpen {
				p.tx++
				p.txOpen = false
			}
			p.mu.Unlock()
		}
		return []tracer.Event{e}
	case *kmsg.AddPartitionsToTxnResponse:
		req, ok := ex.txn.(*kmsg.AddPartitionsToTxnRequest)
		if !ok || ex.rq.version >= 4 {
			return nil // v4+ is the brokers' (verification), not a client's
		}
		p.mu.Lock()
		tx := p.tx + 1
		p.mu.Unlock()
		var events []tracer.Event
		for _, t := range r.Topics {
			if t.Topic != p.topic {
				continue
			}
			for _, pr := range t.Partitions {
				events = append(events, tracer.Event{Kind: tracer.AddPartitionsToTxn, Partition: pr.Partition, PID: req.ProducerID,
					Epoch: req.ProducerEpoch, Node: c.id, Err: tracer.ErrorName(pr.ErrorCode), Tx: tx})
			}
		}
		return events
	case *kmsg.EndTxnResponse:
		req, ok := ex.txn.(*kmsg.EndTxnRequest)
		if !ok {
			return nil
		}
		e := tracer.Event{Kind: tracer.EndTxnReceive, PID: req.ProducerID, Epoch: req.ProducerEpoch, Node: c.id,
			Err: tracer.ErrorName(r.ErrorCode), Commit: req.Commit, NewEpoch: -1}
		if r.ErrorCode == 0 && ex.rq.version >= 5 {
			e.NewEpoch = r.ProducerEpoch
		}
		p.mu.Lock()
		e.Tx = p.tx + 1
		if r.ErrorCode == 0 {
			p.tx++
			p.txOpen = false
		}
		p.mu.Unlock()
		return []tracer.Event{e}
	}
	return nil
}
