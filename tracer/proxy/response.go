package proxy

import (
	"maps"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/tracer"
)

// response turns an upstream response into the frame the client reads and
// the trace events it implies: produce answers are traced (and changed by
// the faults that hit them), broker addresses are rewritten to the proxy's
// listeners, producer ids are noted.
func (p *Proxy) response(c *conn, ex *exchange, raw []byte) ([]byte, []tracer.Event) {
	rq := ex.rq
	if rq.kind == nil {
		return raw, nil
	}
	switch rq.key {
	case kmsg.Produce.Int16(), kmsg.Fetch.Int16():
		// Both may name a partition's new leader with its address (KIP-951,
		// produce v10+ and fetch v16+), which clients connect to at once.
		if rq.key == kmsg.Fetch.Int16() && rq.version < 16 {
			return raw, nil
		}
	case kmsg.Metadata.Int16(), kmsg.DescribeCluster.Int16(), kmsg.FindCoordinator.Int16(), kmsg.InitProducerID.Int16(),
		kmsg.AddPartitionsToTxn.Int16(), kmsg.EndTxn.Int16():
	default:
		return raw, nil
	}
	resp, at, err := decodeResponse(raw, rq)
	if err != nil {
		p.cfg.Logf("proxy: %v: passed through", err)
		return raw, nil
	}
	var events []tracer.Event
	switch r := resp.(type) {
	case *kmsg.ProduceResponse:
		for i := range r.Brokers {
			b := &r.Brokers[i]
			b.Host, b.Port = p.rewrite(b.Host, b.Port)
		}
		if ex.produce != nil && ex.produce.traced {
			events = p.produceResponse(c, ex, r)
		}
	case *kmsg.FetchResponse:
		if len(r.Brokers) == 0 {
			return raw, nil
		}
		for i := range r.Brokers {
			b := &r.Brokers[i]
			b.Host, b.Port = p.rewrite(b.Host, b.Port)
		}
	case *kmsg.MetadataResponse:
		p.metadata(r)
	case *kmsg.DescribeClusterResponse:
		for i := range r.Brokers {
			b := &r.Brokers[i]
			b.Host, b.Port = p.rewrite(b.Host, b.Port)
		}
	case *kmsg.FindCoordinatorResponse:
		p.noteTxnCoordinator(ex, r)
		if rq.version < 4 {
			if r.ErrorCode == 0 {
				r.Host, r.Port = p.rewrite(r.Host, r.Port)
			}
		}
		for i := range r.Coordinators {
			co := &r.Coordinators[i]
			if co.ErrorCode == 0 {
				co.Host, co.Port = p.rewrite(co.Host, co.Port)
			}
		}
	case *kmsg.InitProducerIDResponse, *kmsg.AddPartitionsToTxnResponse, *kmsg.EndTxnResponse:
		return raw, p.txnResponse(c, ex, r)
	}
	return encodeResponse(raw[:at], resp), events
}

// ownResponse is the proxy's answer to a produce request it did not forward:
// every traced partition answered by a fault.
func (p *Proxy) ownResponse(c *conn, ex *exchange) ([]byte, []tracer.Event) {
	resp := ex.rq.kind.ResponseKind().(*kmsg.ProduceResponse)
	resp.SetVersion(ex.rq.version)
	events := p.produceResponse(c, ex, resp)
	return encodeResponse(newResponseHeader(ex.rq), resp), events
}

// produceResponse merges the proxy's own answers into r, applies the faults
// after the append, and returns a Receive per traced batch.
func (p *Proxy) produceResponse(c *conn, ex *exchange, r *kmsg.ProduceResponse) []tracer.Event {
	pt := ex.produce
	byName := map[string]int{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range r.Topics {
		name := r.Topics[i].Topic
		if ex.rq.version >= 13 {
			name = p.topicIDs[r.Topics[i].TopicID]
		}
		byName[name] = i
	}
	for name, own := range pt.own {
		i, ok := byName[name]
		if !ok {
			t := kmsg.NewProduceResponseTopic()
			t.Topic = name
			for id, n := range p.topicIDs {
				if n == name {
					t.TopicID = id
				}
			}
			r.Topics = append(r.Topics, t)
			i = len(r.Topics) - 1
			byName[name] = i
		}
		r.Topics[i].Partitions = append(r.Topics[i].Partitions, own...)
	}
	node := c.id
	var events []tracer.Event
	for _, tb := range pt.batches {
		i, ok := byName[tb.topic]
		if !ok {
			continue // no answer for it: the client will time out
		}
		t := &r.Topics[i]
		for j := range t.Partitions {
			rp := &t.Partitions[j]
			if rp.Partition != tb.p {
				continue
			}
			if tb.fault != "" && rp.ErrorCode == 0 {
				// Written (or a duplicate of a written batch), but the
				// client is told the fault's error (AppendThenFail).
				rp.ErrorCode, rp.BaseOffset, rp.LogStartOffset = tb.code, -1, -1
				events = append(events, tracer.Event{Kind: tracer.Fault, Fault: tb.fault, Partition: tb.p, Epoch: tb.ep, Seq: tb.seq, Node: node, Err: tb.err})
			}
			off, lso := rp.BaseOffset, rp.LogStartOffset
			if rp.ErrorCode != 0 {
				off = -1
			}
			events = append(events, tracer.Event{Kind: tracer.Receive, Partition: tb.p, Batch: tb.b, PID: tb.pid, Epoch: tb.ep, Seq: tb.seq,
				Req: pt.req, Node: node, Err: tracer.ErrorName(rp.ErrorCode), Offset: off, LogStart: lso})
			break
		}
	}
	return events
}

// metadata rewrites a metadata response's brokers to the proxy's listeners
// and notes topic ids and partition counts.
func (p *Proxy) metadata(r *kmsg.MetadataResponse) {
	addrs := map[int32]string{}
	for i := range r.Brokers {
		b := &r.Brokers[i]
		addrs[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		b.Host, b.Port = p.rewrite(b.Host, b.Port)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	maps.Copy(p.nodeAddrs, addrs)
	for _, t := range r.Topics {
		if t.Topic == nil || t.ErrorCode != 0 {
			continue
		}
		p.topicIDs[t.TopicID] = *t.Topic
		p.partitions[*t.Topic] = int32(len(t.Partitions))
	}
}

// rewrite returns the proxy's address for the broker at host:port.
func (p *Proxy) rewrite(host string, port int32) (string, int32) {
	l, err := p.listenerFor(net.JoinHostPort(host, strconv.Itoa(int(port))))
	if err != nil {
		p.cfg.Logf("proxy: %v", err)
		return host, port
	}
	a := l.ln.Addr().(*net.TCPAddr)
	return a.IP.String(), int32(a.Port)
}
