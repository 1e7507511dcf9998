// Package proxy is a Kafka-protocol proxy that traces any client: it sits
// between a client and a cluster, rewrites the broker addresses in metadata
// so the client keeps talking through it, records every produce request and
// response to one topic in kcheck's trace format (tracer/FORMAT.md, writer
// "kcheck-proxy"), injects the faults kcheck run knows, and reads the topic
// back at the end.
//
// What the proxy sees is the wire: the batches a client sends (producer id,
// epoch, sequence, records) and the broker's answers. The client's own
// decisions (a delivery timeout, an epoch bump) show only through what it
// sends next, so the checker judges such traces by the broker's rules and
// by the read-back, not by one client's rules. In a proxy trace an event's
// node is the number of the client connection it travelled on (1, 2, ...):
// a client may reconnect to a broker while its old connection still has
// requests outstanding, and a lost connection loses only its own.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/outcomes"
	"github.com/kcheck/kcheck/tracer/poll"
	"github.com/kcheck/kcheck/tracer/readback"
)

// Writer is the trace header's writer for traces the proxy writes.
const Writer = tracer.ProxyWriter

// Config configures a Proxy.
type Config struct {
	Listen   string // the bootstrap listener, host:port (port 0: any free port)
	Upstream string // one broker of the cluster, host:port
	// Topic is the topic whose produce requests are traced; "" traces the
	// first topic a client produces to. Other topics pass through untraced.
	Topic string
	// Client names the client under test in the header; "" takes the client
	// id of the first traced produce request.
	Client string
	Broker tracer.Broker // what the upstream cluster is, for the header
	Faults []fault.Fault
	// Cluster does the faults on the cluster's nodes (fault.OnCluster);
	// they need one. HealBound bounds each step that ends one (0:
	// DefaultHealBound).
	Cluster   Cluster
	HealBound time.Duration
	Seed      int64
	// Trace receives the trace; nil traces nothing (a plain proxy).
	Trace io.Writer
	// Logf reports what the proxy could not handle (an upstream that went
	// away, a request it could not decode); nil discards it.
	Logf func(format string, args ...any)
	// Poll has a read_committed consumer poll a transactional client's
	// topic while it runs and after it (poll.go); PollRetries and
	// PollBound are the poller's bounds (tracer/poll's defaults when zero).
	Poll        bool
	PollRetries int
	PollBound   time.Duration
}

// Stats counts what passed through a Proxy.
type Stats struct {
	Connections int // client connections accepted
	Produces    int // produce requests with traced batches
	Batches     int // traced batch attempts
	Faults      int // faults injected
	// The read_committed poller (Config.Poll): its polls, the records
	// they returned, the partitions it gave up.
	Polls, PollRecords, PollGaveUp int
}

// Proxy is a running proxy. Its methods are safe for concurrent use.
type Proxy struct {
	cfg  Config
	host string // the host listeners bind to
	wg   sync.WaitGroup

	mu sync.Mutex
	tx int64 // transactions ended: EndTxn succeeded, or InitProducerId answered while one was open (txn.go); guarded by mu
	// txOpen: the transaction after tx has sent a batch or added a
	// partition; guarded by mu.
	txOpen bool
	// txnID and txnVersion: the traced client is transactional, as its
	// first produce to the topic showed (the header's transactional_id and
	// txn_version); guarded by mu.
	txnID      string
	txnVersion int
	rng        *rand.Rand
	boot       *listener            // the bootstrap listener (Config.Listen): any broker will do
	listeners  map[string]*listener // one per broker, by its address
	conns      map[*conn]struct{}
	closed     bool
	topic      string              // the traced topic, once known
	topicIDs   map[[16]byte]string // from metadata, for produce v13+
	partitions map[string]int32    // partition counts from metadata
	trace      *tracer.Writer
	early      []tracer.Event  // events before the header could be written
	acked      *readback.Acked // the highest acknowledged offsets, for the read-back
	batches    map[batchKey]int64
	sentOnce   map[int64]bool  // batch ids seen: the next attempt is a Resend
	sentIDs    map[int64]int64 // record ids SendNew carried, for Tell: the transaction (txn.go) of the first
	att        *fault.Attempts // every partition's attempts so far (fault.Fault.Selects)
	sent       chan struct{}   // closed (and replaced) when an attempt has been forwarded, for holds until the next
	forwarded  map[int32]int   // per partition, the number of its last attempt forwarded to the broker
	// forwardedSeq: the attempts forwarded, by partition, producer, epoch
	// and base sequence, when a fault holds an answer until one (untilSeq)
	forwardedSeq map[seqAttempt]bool
	untilSeq     bool
	faultsLeft   []int // per cfg.Faults entry; -1 no limit
	nextReq      int32 // the proxy's request number, the trace's req
	nextSynth    int64 // batch ids for batches without kcheck ids
	stats        Stats
	// The faults on the cluster (cluster.go): what their triggers wait
	// on, the nodes' addresses from metadata, and the faults running.
	progress   progress
	nodeAddrs  map[int32]string
	cluster    *clusterRun
	clusterErr error        // what the faults on the cluster failed to do (Err)
	poller     *poll.Poller // a transactional client's read_committed poller (poll.go); nil for none
	// The late requests (late.go): the client-visible steps seen so far
	// ("send:API", "answer:API"), a channel closed (and replaced) at each,
	// and quit, closed by Close; guarded by mu.
	seenSteps map[string]int
	seenWake  chan struct{}
	quit      chan struct{}
	// txnCoord: the node the client's last FindCoordinator for its
	// transactional id named, when txnCoordKnown; guarded by mu.
	txnCoord      int32
	txnCoordKnown bool
}

type batchKey struct {
	p   int32
	pid int64
	ep  int16
	seq int32
}

// listener accepts the connections meant for one upstream broker.
type listener struct {
	ln       net.Listener
	upstream string
	// bootstrap: a connection goes to upstream, or to any other broker the
	// proxy knows of when upstream does not answer (a fault took it down).
	bootstrap bool
	gate      gate // what faults on its node do to its connections
}

// dialTimeout bounds a connection to the upstream cluster.
const dialTimeout = 10 * time.Second

// Start checks that the upstream answers, listens on cfg.Listen and serves
// until Close.
func Start(ctx context.Context, cfg Config) (*Proxy, error) {
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("proxy: --listen %q: %w", cfg.Listen, err)
	}
	if _, _, err := net.SplitHostPort(cfg.Upstream); err != nil {
		return nil, fmt.Errorf("proxy: --upstream %q: %w", cfg.Upstream, err)
	}
	var onCluster []fault.Fault
	for _, f := range cfg.Faults {
		if f.Effect().Scope == fault.OnCluster {
			onCluster = append(onCluster, f)
		}
	}
	if len(onCluster) > 0 && cfg.Cluster == nil {
		return nil, fmt.Errorf("proxy: fault %s acts on the cluster's nodes: it needs a cluster kcheck started (kcheck kafka --nodes 3 --control ADDR, then kcheck proxy --cluster ADDR)", onCluster[0])
	}
	d := net.Dialer{Timeout: dialTimeout}
	probe, err := d.DialContext(ctx, "tcp", cfg.Upstream)
	if err != nil {
		return nil, fmt.Errorf("proxy: upstream %s does not answer: %w", cfg.Upstream, err)
	}
	probe.Close()
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	p := &Proxy{
		cfg:        cfg,
		host:       host,
		rng:        rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6b636865636b)),
		listeners:  map[string]*listener{},
		conns:      map[*conn]struct{}{},
		topic:      cfg.Topic,
		topicIDs:   map[[16]byte]string{},
		partitions: map[string]int32{},
		batches:    map[batchKey]int64{},
		sentOnce:   map[int64]bool{},
		att:        fault.NewAttempts(cfg.Faults), forwarded: map[int32]int{}, sent: make(chan struct{}),
		forwardedSeq: map[seqAttempt]bool{},
		nextSynth:    1 << 40,
		progress:     newProgress(),
		nodeAddrs:    map[int32]string{},
		quit:         make(chan struct{}),
	}
	for _, f := range cfg.Faults {
		p.faultsLeft = append(p.faultsLeft, f.Count)
		p.untilSeq = p.untilSeq || f.UntilSeq
		if f.Effect().Scope == fault.OnBroker {
			// Named in the header like every fault; the broker's own
			// configuration does it.
			ms := "set low"
			if f.Delay > 0 {
				ms = fmt.Sprintf("=%d", f.Delay.Milliseconds())
			}
			cfg.Logf("proxy: fault %s: the proxy cannot expire the broker's producer state: the upstream must run with producer.id.expiration.ms%s (kcheck kafka --producer-id-expiration), and the client leave partitions idle that long", f, ms)
		}
	}
	p.mu.Lock()
	p.boot, err = p.listenLocked(cfg.Listen, cfg.Upstream, true)
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if len(onCluster) > 0 {
		p.startCluster(onCluster)
	}
	return p, nil
}

// brokers lists the upstream and every other broker the proxy has seen in
// metadata, the upstream first.
func (p *Proxy) brokers() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	addrs := []string{p.cfg.Upstream}
	for _, id := range slices.Sorted(maps.Keys(p.nodeAddrs)) {
		if a := p.nodeAddrs[id]; a != p.cfg.Upstream {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// dialUpstream connects l's client connection upstream: to l's broker, or
// for the bootstrap listener to the first broker that answers.
func (p *Proxy) dialUpstream(l *listener) (net.Conn, error) {
	addrs := []string{l.upstream}
	if l.bootstrap {
		addrs = p.brokers()
	}
	var errs []error
	for _, a := range addrs {
		up, err := net.DialTimeout("tcp", a, dialTimeout)
		if err == nil {
			return up, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// faultRand is the random source of the i-th fault's choices, drawn from
// the seed alone.
func (p *Proxy) faultRand(i int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(p.cfg.Seed), 0x636c7573746572+uint64(i)))
}

// Addr returns the bootstrap address clients connect to.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.boot.ln.Addr().String()
}

// Stats returns what has passed through so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// listenLocked opens a listener at addr for upstream.
func (p *Proxy) listenLocked(addr, upstream string, bootstrap bool) (*listener, error) {
	if p.closed {
		return nil, errors.New("proxy: closed")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("proxy: listening on %s: %w", addr, err)
	}
	l := &listener{ln: ln, upstream: upstream, bootstrap: bootstrap}
	if !bootstrap {
		p.listeners[upstream] = l
	}
	p.wg.Add(1)
	go p.accept(l)
	return l, nil
}

// listenerFor returns the listener for the broker at upstream, opening one
// on a free port of the proxy's host if there is none.
func (p *Proxy) listenerFor(upstream string) (*listener, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.listeners[upstream]
	if l == nil {
		var err error
		if l, err = p.listenLocked(net.JoinHostPort(p.host, "0"), upstream, false); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (p *Proxy) accept(l *listener) {
	defer p.wg.Done()
	for {
		cc, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			cc.Close()
			return
		}
		p.stats.Connections++
		c := newConn(p, int32(p.stats.Connections), l, cc)
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			c.serve()
			p.mu.Lock()
			delete(p.conns, c)
			p.mu.Unlock()
		}()
	}
}

// Close ends the faults on the cluster, stops listening, cuts every
// connection and waits for them to end; it stops the read_committed poller
// without its final polls (Finish runs them).
func (p *Proxy) Close() {
	p.closeConns()
	p.stopPoll()
}

// closeConns is Close but for the poller.
func (p *Proxy) closeConns() {
	if err := p.endCluster(); err != nil {
		p.mu.Lock()
		p.clusterErr = err
		p.mu.Unlock()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.quit)
	if p.boot != nil {
		p.boot.ln.Close()
	}
	for _, l := range p.listeners {
		l.ln.Close()
	}
	var cs []*conn
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	for _, c := range cs {
		c.close()
	}
	p.wg.Wait()
}

// Err returns what the faults on the cluster failed to do, once the proxy
// is closed: a node not found, not back, a cluster not healed.
func (p *Proxy) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clusterErr
}

// Finish closes the proxy, which ends its faults, reads the traced topic
// back from the upstream cluster once it has settled, ends the trace with a
// ReadBack event per partition (and a ReadBackShort where a high watermark
// never passed what the client was acknowledged) and flushes it. It fails
// when no produce request to the topic passed through.
func (p *Proxy) Finish(ctx context.Context) error {
	p.closeConns()
	p.finishPoll(ctx) // poll.go: before the read-back, to each partition's end
	if err := p.Err(); err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	if p.cfg.Trace == nil {
		return nil
	}
	p.mu.Lock()
	topic := p.topic
	var acked map[int32]int64
	if p.acked != nil {
		acked = p.acked.Offsets()
	}
	p.mu.Unlock()
	if topic == "" {
		return errors.New("proxy: no client produced through the proxy: nothing to trace")
	}
	parts, err := readback.Topic(ctx, readback.Config{Bootstrap: p.brokers(), Topic: topic, Acked: acked})
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.trace == nil {
		// Nothing was produced to the topic, but it exists: a trace of only
		// its read-back.
		p.partitions[topic] = int32(len(parts))
		if err := p.headerLocked(p.cfg.Client); err != nil {
			return err
		}
	}
	for i := range parts {
		for _, e := range parts[i].Events() {
			p.trace.Emit(&e)
		}
	}
	return p.trace.Flush()
}

// TellStats counts what Tell merged into the trace.
type TellStats struct {
	Merged int // Told events written
	Unsent int // failures and no answers of records no produce request carried: not merged
	// Transactions: TxnTold events written, and the ends (aborted or
	// failed) of transactions none of whose records reached the wire, not
	// merged.
	TxnMerged, TxnUnsent int
}

// Tell closes the proxy and writes a Told event for each of outs, what the
// client told its application (read from the report called name), in their
// order. It checks them all before it writes any: a record reported
// delivered that no produce request through the proxy carried, or a
// partition the topic does not have, is an error naming the report's line.
// A failure or no answer of a record that never reached the wire is not
// merged, only counted.
//
// A transaction's end (TxnTold, the driver's own number) is written
// numbered as the wire's transaction (txn.go) that its first record sent
// went in. It is an error naming the line when none of its records reached
// the wire and it is told committed (the wire never saw it begin; told
// aborted or failed it is only counted), or when its records went in the
// wire transaction of an earlier one. Call it before Finish.
func (p *Proxy) Tell(outs []outcomes.Line, name string) (TellStats, error) {
	p.closeConns()
	var st TellStats
	if p.cfg.Trace == nil {
		return st, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	parts := p.partitions[p.topic]
	keep := make([]bool, len(outs))
	wire := map[int64]int64{} // the driver's transaction -> the wire's its records went in (the lowest)
	for i := range outs {
		e := &outs[i].Told
		if e.Kind == tracer.TxnTold {
			continue
		}
		tx, sent := p.sentIDs[e.RecordID]
		switch {
		case !sent && e.Result == tracer.Delivered:
			return st, fmt.Errorf("%s:%d: record %d is reported delivered, but no produce request to topic %q through the proxy carried it: the report is not of this run, or the client wrote elsewhere",
				name, outs[i].Line, e.RecordID, p.topic)
		case !sent:
			st.Unsent++
		case e.Partition >= parts:
			return st, fmt.Errorf("%s:%d: record %d is reported on partition %d, but topic %q has %d partitions",
				name, outs[i].Line, e.RecordID, e.Partition, p.topic, parts)
		default:
			keep[i] = true
			if t := outs[i].Txn; t > 0 {
				if w, ok := wire[t]; !ok || tx < w {
					wire[t] = tx
				}
			}
		}
	}
	told := make([]int64, len(outs)) // a TxnTold's number on the wire
	var prev, prevWire int64
	prevLine := 0
	for i := range outs {
		e := &outs[i].Told
		if e.Kind != tracer.TxnTold {
			continue
		}
		w, ok := wire[e.Tx]
		switch {
		case !ok && e.Result == tracer.Committed:
			return st, fmt.Errorf("%s:%d: transaction %d is reported committed, but none of its records reached the wire through the proxy: a commit of a transaction the wire never saw begin",
				name, outs[i].Line, e.Tx)
		case !ok:
			st.TxnUnsent++
			continue
		case e.Tx != prev && w <= prevWire:
			return st, fmt.Errorf("%s:%d: transaction %d's records went in the wire's transaction %d, as transaction %d's did (line %d): the wire never saw transaction %d begin",
				name, outs[i].Line, e.Tx, w, prev, prevLine, e.Tx)
		}
		keep[i], told[i] = true, w
		prev, prevWire, prevLine = e.Tx, w, outs[i].Line
	}
	for i := range outs {
		if !keep[i] {
			continue
		}
		e := outs[i].Told
		if e.Kind == tracer.TxnTold {
			e.Tx = told[i]
			st.TxnMerged++
		} else {
			st.Merged++
		}
		p.trace.Emit(&e)
	}
	return st, nil
}

// emitLocked writes e to the trace, or keeps it until the header is known.
func (p *Proxy) emitLocked(e tracer.Event) {
	p.observeLocked(&e)
	if p.cfg.Trace == nil {
		return
	}
	if p.acked == nil {
		p.acked = readback.NewAcked()
	}
	p.acked.Observe(&e)
	if e.Kind == tracer.SendNew || e.Kind == tracer.AddPartitionsToTxn && e.Err == "NONE" {
		p.txOpen = true
	}
	if e.Kind == tracer.SendNew {
		if p.sentIDs == nil {
			p.sentIDs = map[int64]int64{}
		}
		for _, id := range e.Records {
			if _, ok := p.sentIDs[id]; !ok {
				p.sentIDs[id] = p.tx + 1
			}
		}
	}
	if p.trace == nil {
		p.early = append(p.early, e)
		return
	}
	stamp(p.trace, &e)
	p.trace.Emit(&e)
}

// stamp makes a SendNew's or Resend's BatchTime, kept as wall-clock
// nanoseconds until the event is written, trace time.
func stamp(w *tracer.Writer, e *tracer.Event) {
	if e.BatchTime == 0 {
		return
	}
	if e.BatchTime = w.At(time.Unix(0, e.BatchTime)); e.BatchTime == 0 {
		e.BatchTime = -1 // 0 is "not known"
	}
}

// headerLocked writes the trace's header once the topic, its partition count
// and the client are known, then the events kept until then.
func (p *Proxy) headerLocked(client string) error {
	if p.trace != nil || p.cfg.Trace == nil {
		return nil
	}
	if p.cfg.Client != "" {
		client = p.cfg.Client
	}
	var names []string
	for _, f := range p.cfg.Faults {
		names = append(names, f.String())
	}
	h := tracer.Header{
		Writer: Writer, Client: client, Topic: p.topic, Partitions: p.partitions[p.topic],
		// The client's rules are not known on the wire: the checker judges
		// a proxy trace by the broker's rules (checker/replay).
		MaxInFlight: 5,
		Broker:      p.cfg.Broker, Faults: names, Seed: p.cfg.Seed,
		Config:          map[string]string{"upstream": p.cfg.Upstream},
		TransactionalID: p.txnID, TxnVersion: p.txnVersion,
	}
	w, err := tracer.NewWriter(p.cfg.Trace, h)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	p.trace = w
	for i := range p.early {
		stamp(w, &p.early[i])
		w.Emit(&p.early[i])
	}
	p.early = nil
	p.startPollLocked() // poll.go
	return nil
}
