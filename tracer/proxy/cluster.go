package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/tracer"
)

// Cluster does to a real cluster what the faults on its nodes
// (fault.OnCluster) need beyond the proxy's own connections. kcheck proxy
// --cluster gives one (nemesis.Remote) for a cluster kcheck started.
type Cluster interface {
	Nodes(ctx context.Context) ([]int32, error)
	// Leader is the current leader of topic's partition.
	Leader(ctx context.Context, topic string, partition int32) (int32, error)
	// Controller is the active KRaft controller.
	Controller(ctx context.Context) (int32, error)
	// MoveLeaders moves every partition's leader to its next replica and
	// returns how many moved.
	MoveLeaders(ctx context.Context, topic string) (int, error)
	Pause(ctx context.Context, node int32) error  // SIGSTOP
	Resume(ctx context.Context, node int32) error // SIGCONT
	Kill(ctx context.Context, node int32) error   // SIGKILL
	Stop(ctx context.Context, node int32) error   // SIGTERM, and its exit
	// Start starts a node that is down on its data and returns once it
	// answers.
	Start(ctx context.Context, node int32) error
	// Settle returns once every partition of topic has a stable leader and
	// every replica in sync.
	Settle(ctx context.Context, topic string) error
}

// DefaultHealBound bounds each step that heals the cluster after a fault on
// it: a node started again, the replicas back in sync.
const DefaultHealBound = 2 * time.Minute

// gate is what the faults on a node do to the client's connections to it
// (its listener's): while isolated nothing goes up and no answer comes
// back; slow holds each answer that long.
type gate struct {
	isolated atomic.Bool
	slow     atomic.Int64 // a time.Duration
}

// pass waits out what the gate does to an answer about to go to the client
// of a connection that ends with done, and reports whether it may go.
func (g *gate) pass(done <-chan struct{}) bool {
	if g.isolated.Load() {
		<-done // the isolation ends by cutting the connection
		return false
	}
	if d := time.Duration(g.slow.Load()); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-done:
			return false
		}
		if g.isolated.Load() {
			<-done
			return false
		}
	}
	return true
}

// clusterRun is the faults on the cluster of one proxy, running.
type clusterRun struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error
	// healed is closed once the faults ended and the cluster healed for
	// the client's read-back (healedForRead).
	healOnce sync.Once
	healing  bool // guarded by mu
	healed   chan struct{}
}

// progress is what triggers wait on: the first produce, and the records
// acknowledged. Its fields are guarded by the proxy's mu.
type progress struct {
	started   chan struct{} // closed at the first traced SendNew
	acked     int64         // records acknowledged (duplicates counted again)
	ackedMore chan struct{} // closed (and replaced) when acked grows
	sizes     map[int64]int32
}

func newProgress() progress {
	return progress{started: make(chan struct{}), ackedMore: make(chan struct{}), sizes: map[int64]int32{}}
}

// observeLocked counts e toward the triggers.
func (p *Proxy) observeLocked(e *tracer.Event) {
	pr := &p.progress
	switch {
	case e.Kind == tracer.SendNew:
		pr.sizes[e.Batch] = e.N
		select {
		case <-pr.started:
		default:
			close(pr.started)
		}
	case e.Kind == tracer.Receive && e.Err == "NONE":
		pr.acked += int64(pr.sizes[e.Batch])
		close(pr.ackedMore)
		pr.ackedMore = make(chan struct{})
	}
}

// startCluster starts a goroutine per fault on the cluster; each waits for
// its trigger, does its fault, and ends it when it has lasted or the proxy
// closes.
func (p *Proxy) startCluster(faults []fault.Fault) {
	ctx, cancel := context.WithCancel(context.Background())
	run := &clusterRun{cancel: cancel, healed: make(chan struct{})}
	p.cluster = run
	for i, f := range faults {
		run.wg.Add(1)
		// Each fault its own draw from the seed: the moment of one does
		// not depend on another's.
		at, byTime := f.Trigger.Moment(p.faultRand(i))
		go func() {
			defer run.wg.Done()
			if err := p.clusterFault(ctx, f, at, byTime); err != nil {
				run.mu.Lock()
				run.errs = append(run.errs, fmt.Errorf("fault %s: %w", f, err))
				run.mu.Unlock()
			}
		}()
	}
}

// healedForRead is what a client's first read (Fetch, ListOffsets) waits
// for: its produce phase is over, so every fault on the cluster is ended and
// the cluster healed before the client reads back, as a run goes fault ->
// stop -> heal -> read. It reports false if done closed first.
func (p *Proxy) healedForRead(done <-chan struct{}) bool {
	run := p.cluster
	if run == nil {
		return true
	}
	run.healOnce.Do(func() {
		run.mu.Lock()
		run.healing = true
		run.mu.Unlock()
		go func() {
			defer close(run.healed)
			if run.stop() != nil {
				return // Close reports it
			}
			p.mu.Lock()
			topic := p.topic
			p.mu.Unlock()
			if topic == "" {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), p.healBound())
			defer cancel()
			if err := p.cfg.Cluster.Settle(ctx, topic); err != nil {
				run.mu.Lock()
				run.errs = append(run.errs, fmt.Errorf("the cluster did not heal within %v of the client's first read (every partition of %s led, every replica in sync): %w", p.healBound(), topic, err))
				run.mu.Unlock()
			}
		}()
	})
	select {
	case <-run.healed:
		return true
	case <-done:
		return false
	}
}

// endCluster ends every fault on the cluster (a paused node resumed, a
// killed one started again, an isolation or slowness lifted) and waits for
// that, and for a heal for the client's read-back under way; it returns
// what failed.
func (p *Proxy) endCluster() error {
	run := p.cluster
	if run == nil {
		return nil
	}
	err := run.stop()
	run.mu.Lock()
	healing := run.healing
	run.mu.Unlock()
	if healing {
		<-run.healed
		run.mu.Lock()
		err = errors.Join(run.errs...)
		run.mu.Unlock()
	}
	return err
}

// stop ends the faults and returns what failed so far.
func (run *clusterRun) stop() error {
	run.cancel()
	run.wg.Wait()
	run.mu.Lock()
	defer run.mu.Unlock()
	return errors.Join(run.errs...)
}

// clusterFault waits for f's trigger (at after the first produce when
// byTime, else its records acknowledged), then does it until it has lasted
// or ctx ends.
func (p *Proxy) clusterFault(ctx context.Context, f fault.Fault, at time.Duration, byTime bool) error {
	p.mu.Lock()
	started := p.progress.started
	p.mu.Unlock()
	select {
	case <-started:
	case <-ctx.Done():
		p.cfg.Logf("proxy: fault %s never fired: no record was produced", f)
		return nil
	}
	if byTime {
		if !sleep(ctx, at) {
			p.cfg.Logf("proxy: fault %s never fired: the client ended within %v of its first produce", f, at)
			return nil
		}
	} else {
		for {
			p.mu.Lock()
			n, more := p.progress.acked, p.progress.ackedMore
			p.mu.Unlock()
			if n >= int64(f.Trigger.Records) {
				break
			}
			select {
			case <-more:
			case <-ctx.Done():
				p.cfg.Logf("proxy: fault %s never fired: %d records acknowledged", f, n)
				return nil
			}
		}
	}
	p.mu.Lock()
	p.stats.Faults++
	topic := p.topic
	p.mu.Unlock()
	cl := p.cfg.Cluster
	switch f.Kind {
	case fault.MoveLeaders:
		return p.moveLeaders(ctx, f, topic)
	case fault.RollingRestart:
		return p.rollingRestart(ctx, topic)
	}
	node, err := p.target(ctx, f, topic)
	if err != nil {
		return err
	}
	// heal bounds each step that ends the fault, which runs whatever ctx
	// says: the cluster must be whole again before the read-back.
	heal := func(what string, fn func(context.Context, int32) error) error {
		hctx, cancel := context.WithTimeout(context.Background(), p.healBound())
		defer cancel()
		if err := fn(hctx, node); err != nil {
			return fmt.Errorf("node %d: %s: %w", node, what, err)
		}
		return nil
	}
	switch f.Kind {
	case fault.Pause:
		if err := cl.Pause(ctx, node); err != nil {
			return fmt.Errorf("node %d: pausing: %w", node, err)
		}
		p.emitFault(tracer.PauseBroker, node)
		sleep(ctx, f.For)
		if err := heal("resuming after "+f.For.String(), cl.Resume); err != nil {
			return err
		}
		p.emitFault(tracer.ResumeBroker, node)
	case fault.Kill, fault.KillController:
		if err := cl.Kill(ctx, node); err != nil {
			return fmt.Errorf("node %d: killing: %w", node, err)
		}
		p.emitFault(tracer.KillBroker, node)
		sleep(ctx, f.For)
		if err := heal(fmt.Sprintf("did not come back within %v of its start after SIGKILL", p.healBound()), cl.Start); err != nil {
			return err
		}
		p.emitFault(tracer.StartBroker, node)
	case fault.Isolate, fault.SlowNode:
		l, err := p.nodeListener(node)
		if err != nil {
			return err
		}
		start, end := tracer.IsolateBroker, tracer.RejoinBroker
		if f.Kind == fault.SlowNode {
			start, end = tracer.SlowBroker, tracer.SlowBrokerEnd
			l.gate.slow.Store(int64(f.Delay))
		} else {
			l.gate.isolated.Store(true)
		}
		p.emitFault(start, node)
		sleep(ctx, f.For)
		if f.Kind == fault.Isolate {
			p.cutListener(l)
			l.gate.isolated.Store(false)
		} else {
			l.gate.slow.Store(0)
		}
		p.emitFault(end, node)
	default:
		return fmt.Errorf("not a fault on the cluster")
	}
	return nil
}

// moveLeaders moves every partition's leader once, or every f.Every for
// f.For.
func (p *Proxy) moveLeaders(ctx context.Context, f fault.Fault, topic string) error {
	end := time.Now().Add(f.For)
	for {
		if _, err := p.cfg.Cluster.MoveLeaders(ctx, topic); err != nil {
			if ctx.Err() != nil {
				return nil // cut short by the end of the run
			}
			return fmt.Errorf("moving the leaders of %s: %w", topic, err)
		}
		p.emitFault(tracer.MoveLeaders, -1)
		if f.Every == 0 || time.Now().Add(f.Every).After(end) || !sleep(ctx, f.Every) {
			return nil
		}
	}
}

// rollingRestart stops and starts every node in turn, each back and the
// topic's replicas in sync before the next; once begun, a node is always
// started again.
func (p *Proxy) rollingRestart(ctx context.Context, topic string) error {
	cl := p.cfg.Cluster
	nodes, err := cl.Nodes(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if ctx.Err() != nil {
			return nil
		}
		hctx, cancel := context.WithTimeout(context.Background(), p.healBound())
		err := cl.Stop(hctx, n)
		if err == nil {
			p.emitFault(tracer.StopBroker, n)
			if err = cl.Start(hctx, n); err != nil {
				err = fmt.Errorf("did not come back within %v of its restart: %w", p.healBound(), err)
			} else {
				p.emitFault(tracer.StartBroker, n)
				if err = cl.Settle(hctx, topic); err != nil {
					err = fmt.Errorf("after its restart the cluster did not heal within %v (every partition of %s led, every replica in sync): %w", p.healBound(), topic, err)
				}
			}
		}
		cancel()
		if err != nil {
			return fmt.Errorf("node %d: %w", n, err)
		}
	}
	return nil
}

// target is the node a fault on one node acts on: its node, which must be
// the cluster's, or the leader of its partition now.
func (p *Proxy) target(ctx context.Context, f fault.Fault, topic string) (int32, error) {
	cl := p.cfg.Cluster
	if f.Kind == fault.KillController {
		n, err := cl.Controller(ctx)
		if err != nil {
			return -1, fmt.Errorf("no active controller to kill: %w", err)
		}
		return n, nil
	}
	if f.Coordinator {
		p.mu.Lock()
		n, ok := p.txnCoord, p.txnCoordKnown
		p.mu.Unlock()
		if !ok {
			return -1, errors.New("no transaction coordinator to act on: the client has found none (it is not transactional, or the fault fired before its FindCoordinator was answered)")
		}
		return n, nil
	}
	if f.ByNode {
		nodes, err := cl.Nodes(ctx)
		if err != nil {
			return -1, err
		}
		if !slices.Contains(nodes, f.Node) {
			return -1, fmt.Errorf("no node %d: the cluster has nodes %s", f.Node, joinIDs(nodes))
		}
		return f.Node, nil
	}
	part := f.LeaderOf()
	p.mu.Lock()
	parts, known := p.partitions[topic]
	p.mu.Unlock()
	if known && part >= parts {
		return -1, fmt.Errorf("no partition %d to take the leader of: topic %s has %d", part, topic, parts)
	}
	n, err := cl.Leader(ctx, topic, part)
	if err != nil {
		return -1, fmt.Errorf("no leader of %s[%d] to act on: %w", topic, part, err)
	}
	return n, nil
}

// nodeListener is the proxy's listener for the client's connections to
// node, opened if the client has none yet.
func (p *Proxy) nodeListener(node int32) (*listener, error) {
	p.mu.Lock()
	addr, ok := p.nodeAddrs[node]
	p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("node %d: no metadata that passed through the proxy named it", node)
	}
	return p.listenerFor(addr)
}

// cutListener cuts every client connection through l.
func (p *Proxy) cutListener(l *listener) {
	p.mu.Lock()
	var cs []*conn
	for c := range p.conns {
		if c.l == l {
			cs = append(cs, c)
		}
	}
	p.mu.Unlock()
	for _, c := range cs {
		c.close()
	}
}

// emitFault writes a fault on the cluster's Fault event.
func (p *Proxy) emitFault(name string, node int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.emitLocked(tracer.Event{Kind: tracer.Fault, Fault: name, Partition: -1, Epoch: -1, Seq: -1, Node: node})
}

func (p *Proxy) healBound() time.Duration {
	if p.cfg.HealBound > 0 {
		return p.cfg.HealBound
	}
	return DefaultHealBound
}

// sleep waits d and reports true, or false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ", ")
}
