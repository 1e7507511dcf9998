package proxy

import (
	"bufio"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/tracer"
)

// conn is one client connection and its own connection upstream. Requests
// go up in the order they came, after any injected delay; responses come
// back in the same order (Kafka answers a connection's requests in order),
// and the proxy's own answers take their place in that order.
type conn struct {
	p  *Proxy
	id int32 // the trace's node for this connection (see below)
	l  *listener
	cc net.Conn
	up net.Conn

	pending chan *exchange // requests awaiting their response, in order
	toUp    chan outbound
	done    chan struct{}
	once    sync.Once

	mu   sync.Mutex
	dead bool
	open int // traced produce exchanges forwarded and not yet answered
}

// exchange is one request and what the proxy does with it.
type exchange struct {
	rq        *request
	at        time.Time
	forwarded bool // sent upstream: a response will come
	never     bool // held and never answered (timeout-before-append)
	hold      time.Duration
	untilNext []nextAttempt // the hold ends once each of these partitions has a later attempt forwarded (and fault.NextGrace)
	untilSeq  []seqAttempt  // the hold ends once each of these attempts has been forwarded (and fault.NextGrace)
	// cutAfter is the Fault of a cut when the broker's answer arrives: the
	// connection is closed instead of delivering it.
	cutAfter *tracer.Event
	// cutTxn: a txn-cut's request: the connection is closed when its
	// answer arrives, instead of delivering it (no Fault event: it hits no
	// produce attempt).
	cutTxn  bool
	produce *produceTrace // traced batches, for produce requests
	txn     kmsg.Request  // a transactional request, decoded for its answer's trace (txn.go)
}

type outbound struct {
	frame []byte
	due   time.Time
}

func newConn(p *Proxy, id int32, l *listener, cc net.Conn) *conn {
	return &conn{
		p: p, id: id, l: l, cc: cc,
		pending: make(chan *exchange, 1024),
		toUp:    make(chan outbound, 1024),
		done:    make(chan struct{}),
	}
}

func (c *conn) serve() {
	up, err := c.p.dialUpstream(c.l)
	if err != nil {
		c.p.cfg.Logf("proxy: upstream %s: %v", c.l.upstream, err)
		c.cc.Close()
		return
	}
	c.up = up
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.writeUpstream() }()
	go func() { defer wg.Done(); c.readResponses() }()
	c.readRequests()
	c.close()
	wg.Wait()
}

// close cuts both connections once; traced produce requests still without
// an answer are lost to the client: a Disconnect in the trace.
func (c *conn) close() {
	c.once.Do(func() {
		close(c.done)
		c.cc.Close()
		if c.up != nil {
			c.up.Close()
		}
		c.mu.Lock()
		c.dead = true
		open := c.open
		c.mu.Unlock()
		if open > 0 {
			c.p.mu.Lock()
			c.p.emitLocked(tracer.Event{Kind: tracer.Disconnect, Node: c.id})
			c.p.mu.Unlock()
		}
	})
}

func (c *conn) readRequests() {
	br := bufio.NewReaderSize(c.cc, 64<<10)
	slow := c.p.slowDelay()
	for {
		raw, err := readFrame(br)
		if err != nil {
			return
		}
		rq, err := parseRequest(raw)
		if err != nil {
			c.p.cfg.Logf("proxy: from %s: %v", c.cc.RemoteAddr(), err)
			return
		}
		if (rq.key == kmsg.Fetch.Int16() || rq.key == kmsg.ListOffsets.Int16()) && !c.p.healedForRead(c.done) {
			return // the connection closed while the cluster healed
		}
		ex := &exchange{rq: rq, at: time.Now(), forwarded: true}
		frame := raw
		respond := true
		if rq.key == kmsg.Produce.Int16() && rq.bodyAt >= 0 {
			var drop bool
			frame, respond, drop = c.p.produceRequest(c, ex)
			if drop {
				return // DropConnection: cut instead of handling it
			}
		}
		if txnKey(rq.key) && rq.bodyAt >= 0 && c.txnRequest(ex) {
			return // a late fault kept it: the connection closed as if it timed out
		}
		if respond {
			select {
			case c.pending <- ex:
			case <-c.done:
				return
			}
		}
		if ex.forwarded {
			select {
			case c.toUp <- outbound{frame: frame, due: ex.at.Add(slow)}:
				c.p.markForwarded(ex)
				if api := apiOf(rq.key); api != "" {
					c.p.seen("send:" + api)
				}
			case <-c.done:
				return
			}
		}
	}
}

func (c *conn) writeUpstream() {
	bw := bufio.NewWriterSize(c.up, 64<<10)
	var buf []byte
	for {
		var out outbound
		select {
		case out = <-c.toUp:
		case <-c.done:
			return
		}
		if d := time.Until(out.due); d > 0 {
			// What is written goes now, not with this later request.
			if err := bw.Flush(); err != nil {
				c.close()
				return
			}
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-c.done:
				t.Stop()
				return
			}
		}
		if c.l.gate.isolated.Load() {
			<-c.done // nothing goes up; the isolation ends by cutting c
			return
		}
		buf = appendFrame(buf[:0], out.frame)
		if _, err := bw.Write(buf); err != nil {
			c.close()
			return
		}
		if len(c.toUp) == 0 {
			if err := bw.Flush(); err != nil {
				c.close()
				return
			}
		}
	}
}

func (c *conn) readResponses() {
	ubr := bufio.NewReaderSize(c.up, 64<<10)
	var buf []byte
	for {
		var ex *exchange
		select {
		case ex = <-c.pending:
		case <-c.done:
			return
		}
		if ex.never {
			<-c.done // nothing after it can be answered first
			return
		}
		var frame []byte
		var events []tracer.Event
		if ex.forwarded {
			raw, err := readFrame(ubr)
			if err != nil {
				c.close()
				return
			}
			if len(raw) < 4 || int32(uint32(raw[0])<<24|uint32(raw[1])<<16|uint32(raw[2])<<8|uint32(raw[3])) != ex.rq.corr {
				c.p.cfg.Logf("proxy: upstream %s answered out of order", c.l.upstream)
				c.close()
				return
			}
			if ex.cutAfter != nil || ex.cutTxn {
				c.cutAnswer(ex)
				return
			}
			frame, events = c.p.response(c, ex, raw)
		} else {
			frame, events = c.p.ownResponse(c, ex)
		}
		if ex.hold > 0 && !c.p.holdAnswer(c, ex) {
			return
		}
		if !c.l.gate.pass(c.done) {
			return
		}
		// The answer is traced before the client can have it, so the trace
		// holds every answer the client read (and, when the connection is
		// cut as it is written, one it may not have).
		if !c.answer(ex, events) {
			return
		}
		buf = appendFrame(buf[:0], frame)
		if _, err := c.cc.Write(buf); err != nil {
			c.close()
			return
		}
		if api := apiOf(ex.rq.key); api != "" {
			c.p.seen("answer:" + api)
		}
	}
}

// answer emits the events of a response about to be written to the client,
// unless the connection is already cut (then its Disconnect says it all).
func (c *conn) answer(ex *exchange, events []tracer.Event) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return false
	}
	traced := ex.produce != nil && ex.produce.traced
	if traced {
		c.open--
	}
	if len(events) > 0 || traced {
		c.p.mu.Lock()
		for _, e := range events {
			c.p.emitLocked(e)
		}
		if traced {
			for _, tb := range ex.produce.batches {
				c.p.att.Answered(tb.p) // later attempts are after=answer
			}
		}
		c.p.mu.Unlock()
	}
	return true
}

// cutAnswer closes the connection instead of delivering the broker's answer
// to ex (a cut with when=after): its Fault, then the Disconnect that loses
// ex and every request after it.
func (c *conn) cutAnswer(ex *exchange) {
	c.mu.Lock()
	if !c.dead && ex.cutAfter != nil {
		c.p.mu.Lock()
		c.p.emitLocked(*ex.cutAfter)
		c.p.mu.Unlock()
	}
	c.mu.Unlock()
	c.close()
}
