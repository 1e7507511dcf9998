package replay

import (
	"github.com/kcheck/kcheck/tracer"
)

// A trace written by kcheck's proxy (tracer.ProxyWriter) shows the wire, not
// the client's mind: each attempt a client sent and the broker's answer. The
// client's own steps (a delivery timeout, a KIP-360 epoch bump, a new
// producer id) show only through what it sends next, and which client rules
// it follows is not known. So for such a trace the machine checks the
// broker's side exactly as for any trace — every answer against every broker
// state still possible — and takes the client's attempts as given: a batch
// is new or resent as the wire shows, with the epoch and sequence it carries,
// and in a proxy trace `node` names the client connection (a client can open
// a new connection to a broker while its old one still has requests
// outstanding).

// wireInit is a further InitProducerId on the wire: the same producer id
// with a new epoch (a bump through the broker), or a new producer id, whose
// state every broker starts without.
func (m *Machine) wireInit(e *tracer.Event) {
	if e.PID == m.pid {
		m.epoch = max(m.epoch, e.Epoch)
		return
	}
	m.newProducerID(e)
	for _, pt := range m.parts {
		pt.inflight, pt.faults, pt.cuts = nil, nil, nil
	}
	clear(m.outstanding)
}

// wireSend is an attempt seen on the wire: SendNew for a batch's first,
// Resend for any later one.
func (m *Machine) wireSend(line int, e *tracer.Event) error {
	act := string(e.Kind)
	pt := m.part(e.Partition)
	if e.N < 1 {
		return m.fail(line, act, e.Partition, "batch of n=%d", e.N)
	}
	b := pt.find(e.Batch)
	switch {
	case e.Kind == tracer.SendNew && len(e.Records) != int(e.N):
		return m.fail(line, act, e.Partition, "batch of n=%d with %d record ids", e.N, len(e.Records))
	case e.Kind == tracer.SendNew && b != nil:
		return m.fail(line, act, e.Partition, "batch %d was sent before", e.Batch)
	case b == nil:
		// A batch the machine no longer holds (answered with an error that
		// ends it for kcheck's producer) that this client sends again.
		b = &batch{id: e.Batch}
		pt.inflight = append(pt.inflight, b)
	case b.st == stSent:
		// Sent again on another connection before the proxy saw the old
		// one close: the earlier attempt may or may not be handled,
		// unless its answer came, without it. The old request still
		// waits for its answer, or for the Disconnect the proxy writes
		// when it closes a connection with requests unanswered.
		if _, r := m.request(b.node, b.req); r != nil && r.begun != 0 {
			return m.fail(line, act, e.Partition, "batch %d is sent again, but %s: a response answers every partition of its request at once", e.Batch, r.awaits(b.node))
		}
		cp := *b
		pt.uncertain = append(pt.uncertain, &cp)
	case e.N != b.n && b.n != 0:
		return m.fail(line, act, e.Partition, "batch %d resent with %d records, it has %d", e.Batch, e.N, b.n)
	}
	if b.ep != e.Epoch || b.seq != e.Seq {
		// Renumbered (an epoch bump): an uncertain earlier attempt keeps
		// the epoch and sequence it was sent with.
		for i, u := range pt.uncertain {
			if u == b {
				cp := *b
				pt.uncertain[i] = &cp
			}
		}
		b.reset = b.n != 0
	}
	b.ep, b.seq, b.n = e.Epoch, e.Seq, e.N
	m.epoch = max(m.epoch, e.Epoch)
	pt.pEpoch = e.Epoch
	m.send(b, e.Partition, e.Node, e.Req, line)
	return nil
}
