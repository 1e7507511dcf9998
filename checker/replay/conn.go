package replay

import (
	"fmt"
	"slices"

	"github.com/kcheck/kcheck/tracer"
)

// The wire's rules, held on every trace (our producer's and the proxy's): a
// broker answers the produce requests of one connection one at a time, in
// the order they were sent (Kafka's SocketServer mutes a connection until
// the response to its request in flight is sent), and a response answers
// every partition of its request at once. So each request sent on a
// connection (a trace's node: the broker, for our producer; the client
// connection, for the proxy) ends in one of three ways:
//
//   - answered, every batch it carried, before any later request of the
//     connection is;
//   - lost with its connection (a Disconnect), if no part of its answer came;
//   - given up by our producer (a Fail: it closed with the batch in flight).
//
// On the wire a client may send a batch again on another connection while
// its old request is unanswered (the old attempt may or may not be
// handled); the old request still ends in one of the first two ways.
//
// A trace's writer settles every request before it reads the partitions
// back: our producer fails what is in flight when it closes, the proxy
// writes a Disconnect for every connection it cuts with a request
// unanswered. So at the first ReadBack nothing may be outstanding, and in
// our producer's traces no batch in flight. A trace with no read-back may
// have been cut off; it is not held to that.

// request is one produce request on a connection, from its first batch
// until each batch it carried is answered or given up.
type request struct {
	req   int32
	line  int    // the line of its first batch
	begun int    // the line of the first Receive of its answer; 0 before it
	left  []slot // its batches not yet answered, in the order sent
}

// slot is one batch of a request.
type slot struct {
	p    int32
	b    int64
	line int
}

// corr is the highest correlation id sent on a connection, and the line
// of the attempt that sent it.
type corr struct {
	req  int32
	line int
}

// corrOrder checks that the attempt e at line does not go back in its
// connection's correlation ids: a client numbers its requests in
// increasing order (Kafka's NetworkClient, one counter per client; our
// producer; the proxy numbers them as they arrive), so a request carries a
// higher id than every request sent before it on the connection, and the
// attempts of one request share its id. A lost connection (a Disconnect)
// ends the numbering: a new connection may start again. A connection lost
// after the ids went back does not excuse them. (A counter that wraps past
// 2^31 requests on one connection would trip this; no trace comes near.)
func (m *Machine) corrOrder(line int, e *tracer.Event) error {
	if e.Req < 0 {
		return nil // never written: our producer traces a request whose connection was already lost with id -1
	}
	last, ok := m.lastReq[e.Node]
	if ok && e.Req < last.req {
		return m.fail(line, string(e.Kind), e.Partition, "request %d on node %d is sent after request %d (line %d) on the same connection: correlation ids go backwards (a client numbers a connection's requests in increasing order)",
			e.Req, e.Node, last.req, last.line)
	}
	if !ok || e.Req > last.req {
		m.lastReq[e.Node] = corr{req: e.Req, line: line}
	}
	return nil
}

// request returns the index and the request req outstanding on node's
// connection, or -1 and nil.
func (m *Machine) request(node, req int32) (int, *request) {
	for i, r := range m.outstanding[node] {
		if r.req == req {
			return i, r
		}
	}
	return -1, nil
}

// pendingRequests is the spec's Pending for the connection to node: requests
// sent and not yet answered.
func (m *Machine) pendingRequests(node int32) int { return len(m.outstanding[node]) }

// room checks what SendNew and Resend share: room on the connection.
func (m *Machine) room(node, req int32) bool {
	_, r := m.request(node, req) // another batch of a request already counted
	return r != nil || m.pendingRequests(node) < m.h.MaxInFlight
}

// send marks b, of partition p, sent in request req on node at line.
func (m *Machine) send(b *batch, p, node, req int32, line int) {
	b.st, b.node, b.req, b.line = stSent, node, req, line
	b.sentAt, b.stamp = m.now, m.now
	if m.batchTime != 0 {
		b.stamp = m.batchTime
	}
	m.maxSentEpoch = max(m.maxSentEpoch, b.ep)
	_, r := m.request(node, req)
	if r == nil {
		if n := len(m.free); n > 0 {
			r, m.free = m.free[n-1], m.free[:n-1]
			*r = request{left: r.left[:0]}
		} else {
			r = &request{}
		}
		r.req, r.line = req, line
		m.outstanding[node] = append(m.outstanding[node], r)
	}
	r.left = append(r.left, slot{p: p, b: b.id, line: line})
}

// answered removes batch b of partition p from request req on node, which
// the client no longer waits for; a request with nothing left is done.
func (m *Machine) answered(node, req, p int32, b int64) {
	i, r := m.request(node, req)
	if r == nil {
		return
	}
	r.left = slices.DeleteFunc(r.left, func(s slot) bool { return s.p == p && s.b == b })
	if len(r.left) == 0 {
		m.outstanding[node] = slices.Delete(m.outstanding[node], i, i+1)
		m.free = append(m.free, r)
	}
}

// take is the wire's side of a Receive at line for batch b of partition p
// in request req on node: the request is outstanding there with b in it,
// and no earlier request of the connection is still unanswered.
func (m *Machine) take(line int, node, req, p int32, b int64) error {
	const act = "Receive"
	i, r := m.request(node, req)
	if r == nil || !slices.ContainsFunc(r.left, func(s slot) bool { return s.p == p && s.b == b }) {
		return m.fail(line, act, p, "no outstanding attempt of batch %d in request %d on node %d", b, req, node)
	}
	if i > 0 {
		first := m.outstanding[node][0]
		return m.fail(line, act, p, "request %d on node %d is answered while %s: a broker answers a connection's requests one at a time, in the order sent (Kafka's SocketServer mutes a connection until the response in flight is sent)",
			req, node, first.awaits(node))
	}
	if r.begun == 0 {
		r.begun = line
	}
	m.answered(node, req, p, b)
	return nil
}

// awaits says what r, outstanding on node, still waits for.
func (r *request) awaits(node int32) string {
	s := r.left[0]
	what := fmt.Sprintf("request %d on node %d (line %d) still awaits its answer for partition %d (batch %d, line %d)", r.req, node, r.line, s.p, s.b, s.line)
	if len(r.left) > 1 {
		what += fmt.Sprintf(" and %d more", len(r.left)-1)
	}
	if r.begun != 0 {
		what += fmt.Sprintf(", though the answer to its other partitions came at line %d", r.begun)
	}
	return what
}

// halfAnswered returns the request on node whose answer has begun and left
// some batch out, or nil.
func (m *Machine) halfAnswered(node int32) *request {
	for _, r := range m.outstanding[node] {
		if r.begun != 0 {
			return r // answers come in order: at most one has begun
		}
	}
	return nil
}

// lost is the wire's side of a Disconnect of node at line: the connection's
// requests are lost, unless an answer came for part of one (a response is
// one message: it cannot be cut between its partitions).
func (m *Machine) lost(line int, node int32) error {
	if r := m.halfAnswered(node); r != nil {
		return m.fail(line, "Disconnect", r.left[0].p, "the connection to node %d is lost, but %s: a response answers every partition of its request at once", node, r.awaits(node))
	}
	m.free = append(m.free, m.outstanding[node]...)
	delete(m.outstanding, node)
	delete(m.lastReq, node)
	return nil
}

// settled checks, at the first ReadBack (line), that every request was
// answered, lost with its connection or given up: the writers settle every
// request before they read back.
func (m *Machine) settled(line int) error {
	if m.readBack {
		return nil
	}
	m.readBack = true
	nodes := make([]int32, 0, len(m.outstanding))
	for n, rs := range m.outstanding {
		if len(rs) > 0 {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) > 0 {
		slices.Sort(nodes)
		r := m.outstanding[nodes[0]][0]
		return m.fail(line, "ReadBack", r.left[0].p, "the run is over but %s, and no Disconnect of node %d lost it: a request is answered for each of its partitions, or lost with its connection",
			r.awaits(nodes[0]), nodes[0])
	}
	if m.wire {
		return nil // a client's batches end where the wire cannot see
	}
	ps := make([]int32, 0, len(m.parts))
	for p, pt := range m.parts {
		if len(pt.inflight) > 0 {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	slices.Sort(ps)
	b := m.parts[ps[0]].inflight[0]
	return m.fail(line, "ReadBack", ps[0], "the run is over but batch %d (sent at line %d) is %s, with no outcome: kcheck's producer fails every batch still in flight when it closes",
		b.id, b.line, b.st)
}
