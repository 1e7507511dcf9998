package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/nemesis"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/proxy"
	"github.com/kcheck/kcheck/wire"
	"github.com/kcheck/kcheck/workload"
)

// fakeCluster is a kfake cluster's brokers asked over the wire, with the
// processes' actions recorded instead of done, and made to fail on demand.
type fakeCluster struct {
	nemesis.Wire
	mu      sync.Mutex
	calls   []string
	fail    map[string]error // by "action node"
	leaders map[int32]int32  // the leaders it told, by partition
}

func (f *fakeCluster) Leader(ctx context.Context, topic string, p int32) (int32, error) {
	n, err := f.Wire.Leader(ctx, topic, p)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.leaders == nil {
		f.leaders = map[int32]int32{}
	}
	f.leaders[p] = n
	return n, err
}

func (f *fakeCluster) act(action string, node int32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := fmt.Sprintf("%s %d", action, node)
	f.calls = append(f.calls, k)
	return f.fail[k]
}

func (f *fakeCluster) Nodes(context.Context) ([]int32, error)    { return []int32{0, 1, 2}, nil }
func (f *fakeCluster) Pause(_ context.Context, n int32) error    { return f.act("pause", n) }
func (f *fakeCluster) Resume(_ context.Context, n int32) error   { return f.act("resume", n) }
func (f *fakeCluster) Kill(_ context.Context, n int32) error     { return f.act("kill", n) }
func (f *fakeCluster) Stop(_ context.Context, n int32) error     { return f.act("stop", n) }
func (f *fakeCluster) Start(_ context.Context, n int32) error    { return f.act("start", n) }
func (f *fakeCluster) Settle(context.Context, string) error      { return nil }
func (f *fakeCluster) Controller(context.Context) (int32, error) { return 1, nil }

// clusterRun runs our producer through the proxy on a 3-broker kfake with
// the given faults on the cluster; it returns the proxy's trace (verified
// when finish succeeds), the run's summary and Finish's error.
func clusterRun(t *testing.T, fc *fakeCluster, schedule ...string) (string, *workload.Summary, error) {
	t.Helper()
	var faults []fault.Fault
	for _, s := range schedule {
		f, err := fault.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		faults = append(faults, f)
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(workload.Emulations["4.1"].Versions))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	fc.Bootstrap = kc.ListenAddrs()
	path := filepath.Join(t.TempDir(), "proxy.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	p, err := proxy.Start(ctx, proxy.Config{
		Listen: "127.0.0.1:0", Upstream: kc.ListenAddrs()[0], Topic: "t",
		Broker: tracer.Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"},
		Faults: faults, Cluster: fc, HealBound: 5 * time.Second, Seed: 1, Trace: f,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sum, err := workload.Run(ctx, workload.Config{
		Brokers: []string{p.Addr()}, BrokerVersion: "4.1.0", Topic: "t", Partitions: 8, Records: 2000, ValueBytes: 100, Keys: 64,
		Codec: recordbatch.CodecGzip, FirstAck: true, HoldWhileRetrying: true, MaxInFlight: 5, Linger: 5 * time.Millisecond, BatchBytes: 512,
		DeliveryTimeout: 20 * time.Second, RequestTimeout: 2 * time.Second, Seed: 1, TracePath: filepath.Join(t.TempDir(), "own.jsonl"),
	})
	if err != nil {
		t.Fatalf("run through the proxy: %v", err)
	}
	return path, sum, p.Finish(ctx)
}

// clusterEvents lists the trace's Fault events of faults on the cluster as
// "Name node", and its Disconnects, and the records acknowledged before
// each.
func clusterEvents(t *testing.T, path string) (names []string, ackedBefore []int) {
	t.Helper()
	r, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sizes, acked := map[int64]int32{}, 0
	err = r.Each(func(_ int, e *tracer.Event) error {
		switch {
		case e.Kind == tracer.SendNew:
			sizes[e.Batch] = e.N
		case e.Kind == tracer.Receive && e.Err == "NONE":
			acked += int(sizes[e.Batch])
		case e.Kind == tracer.Disconnect:
			names = append(names, "Disconnect")
			ackedBefore = append(ackedBefore, acked)
		case e.Kind == tracer.Fault && tracer.IsClusterFault(e.Fault):
			names = append(names, fmt.Sprintf("%s %d", e.Fault, e.Node))
			ackedBefore = append(ackedBefore, acked)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names, ackedBefore
}

// Each fault on the cluster fires at its trigger, acts on its node, is
// ended before the read-back, and names what it did in the trace, which
// still verifies; the producer meets isolation and slowness on the wire and
// loses nothing.
func TestClusterFaultsThroughProxy(t *testing.T) {
	fc := &fakeCluster{}
	path, sum, err := clusterRun(t, fc, "pause:node=2,for=200ms,records=500", "kill:node=1,for=100ms,records=1000",
		"isolate:leader=0,for=300ms,records=200", "slow-node:node=1,delay=50ms,for=300ms,at=100ms")
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Clean() {
		t.Errorf("not clean: %+v", sum)
	}
	rep, err := verify.File(context.Background(), path, verify.Options{})
	if err != nil || rep.Verdict != verify.Valid {
		t.Fatalf("verify: %v %v %v", err, rep.Verdict, rep.Violations)
	}
	names, acked := clusterEvents(t, path)
	// The isolated node is partition 0's leader, which has its records.
	leader, ok := fc.leaders[0]
	if !ok {
		t.Fatal("isolate:leader=0 asked for no leader")
	}
	for _, want := range [][2]string{{"PauseBroker 2", "ResumeBroker 2"}, {"KillBroker 1", "StartBroker 1"},
		{fmt.Sprint("IsolateBroker ", leader), fmt.Sprint("RejoinBroker ", leader)}, {"SlowBroker 1", "SlowBrokerEnd 1"}} {
		i, j := slices.Index(names, want[0]), slices.Index(names, want[1])
		if i < 0 || j < i {
			t.Errorf("want %q then %q in the trace's cluster faults %q", want[0], want[1], names)
		}
	}
	// The isolation ends by cutting the producer's connections to the
	// node, which had requests waiting: the only connections cut in the run.
	if i, j := slices.Index(names, fmt.Sprint("IsolateBroker ", leader)), slices.Index(names, fmt.Sprint("RejoinBroker ", leader)); i >= 0 && !slices.Contains(names[i:j], "Disconnect") {
		t.Errorf("no Disconnect between the isolation's start and end: %q", names)
	}
	// A trigger by progress waits for its records.
	if i := slices.Index(names, "PauseBroker 2"); i >= 0 && acked[i] < 500 {
		t.Errorf("pause fired after %d records acknowledged, want 500 or more", acked[i])
	}
	if i := slices.Index(names, "KillBroker 1"); i >= 0 && acked[i] < 1000 {
		t.Errorf("kill fired after %d records acknowledged, want 1000 or more", acked[i])
	}
	// The faults run side by side; each ends what it began.
	if len(fc.calls) != 4 || slices.Index(fc.calls, "pause 2") > slices.Index(fc.calls, "resume 2") ||
		slices.Index(fc.calls, "kill 1") > slices.Index(fc.calls, "start 1") || slices.Index(fc.calls, "pause 2") < 0 || slices.Index(fc.calls, "kill 1") < 0 {
		t.Errorf("the cluster was asked %q, want pause 2 then resume 2, kill 1 then start 1", fc.calls)
	}
}

// A fault that cannot act, or a node that does not come back, fails the
// run with a message naming the fault, the node and what was waited for.
func TestClusterFaultErrors(t *testing.T) {
	for _, tc := range []struct {
		fault string
		fail  map[string]error
		want  string
	}{
		{"pause:node=7", nil, "fault pause:node=7: no node 7: the cluster has nodes 0, 1, 2"},
		{"isolate:leader=8", nil, "fault isolate:leader=8: no partition 8 to take the leader of: topic t has 8"},
		{"pause:node=1,for=50ms", map[string]error{"resume 1": errors.New("kafka: node 1 was paused and has exited meanwhile")},
			"fault pause:node=1,for=50ms: node 1: resuming after 50ms: kafka: node 1 was paused and has exited meanwhile"},
		{"kill:node=2,for=50ms", map[string]error{"start 2": errors.New("kafka: node 2 did not answer after its restart")},
			"fault kill:node=2,for=50ms: node 2: did not come back within 5s of its start after SIGKILL: kafka: node 2 did not answer"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			_, _, err := clusterRun(t, &fakeCluster{fail: tc.fail}, tc.fault)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Finish: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A fault on the cluster needs one to act on.
func TestClusterFaultNeedsCluster(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	f, _ := fault.Parse("kill-controller")
	_, err = proxy.Start(context.Background(), proxy.Config{Listen: "127.0.0.1:0", Upstream: kc.ListenAddrs()[0], Faults: []fault.Fault{f}})
	if err == nil || !strings.Contains(err.Error(), "fault kill-controller acts on the cluster's nodes: it needs a cluster kcheck started") {
		t.Fatalf("Start: %v", err)
	}
}

// The bootstrap listener reaches any broker the proxy has seen: a client
// that bootstraps while the upstream broker is down (killed by a fault)
// still gets the cluster's metadata.
func TestBootstrapFallsBack(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := proxy.Start(ctx, proxy.Config{Listen: "127.0.0.1:0", Upstream: kc.ListenAddrs()[0]})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	metadata := func() error {
		c, err := wire.Dial(ctx, p.Addr(), "kcheck-test")
		if err != nil {
			return err
		}
		defer c.Close()
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{}
		_, err = c.Request(ctx, req)
		return err
	}
	if err := metadata(); err != nil { // the proxy learns the brokers
		t.Fatal(err)
	}
	upstream := kc.ListenAddrs()[0]
	if err := kc.RemoveNode(0); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", upstream, time.Second); err == nil {
		c.Close()
		t.Fatalf("the upstream %s still answers after its node was removed", upstream)
	}
	if err := metadata(); err != nil {
		t.Fatalf("bootstrap with the upstream down: %v", err)
	}
}

// pause:node=coordinator acts on the node the transactional client's
// FindCoordinator named, asked of the cluster the same way here.
func TestPauseCoordinator(t *testing.T) {
	f, err := fault.Parse("pause:node=coordinator,for=200ms,records=100")
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(workload.Emulations["4.1"].Versions))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	fc := &fakeCluster{}
	fc.Bootstrap = kc.ListenAddrs()
	ctx := context.Background()
	p, err := proxy.Start(ctx, proxy.Config{
		Listen: "127.0.0.1:0", Upstream: kc.ListenAddrs()[0], Topic: "t",
		Broker: tracer.Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"},
		Faults: []fault.Fault{f}, Cluster: fc, HealBound: 5 * time.Second, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sum, err := workload.Run(ctx, workload.Config{
		Brokers: []string{p.Addr()}, BrokerVersion: "4.1.0", Topic: "t", Partitions: 4, Records: 400, ValueBytes: 50, Keys: 16,
		Codec: recordbatch.CodecNone, FirstAck: true, MaxInFlight: 5, Linger: time.Millisecond, BatchBytes: 512,
		DeliveryTimeout: 20 * time.Second, RequestTimeout: 2 * time.Second, Seed: 1,
		Txn: &workload.Txn{ID: "coord", Records: 40, Version: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if sum.TxnCommitted != 10 {
		t.Errorf("run: %+v", sum)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKey = 1, "coord"
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("FindCoordinator: %v %+v", err, resp)
	}
	want := []string{fmt.Sprint("pause ", resp.NodeID), fmt.Sprint("resume ", resp.NodeID)}
	if !slices.Equal(fc.calls, want) {
		t.Errorf("the cluster was asked %q, want %q (the transaction coordinator)", fc.calls, want)
	}
}
