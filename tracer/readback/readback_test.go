package readback_test

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/readback"
	"github.com/kcheck/kcheck/workload"
)

const partitions = 4

// cluster starts a kfake cluster of three brokers, emulating Kafka 4.1.
func cluster(t *testing.T) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(workload.Emulations["4.1"].Versions))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// start produces a small run with our producer to c (no faults) and returns
// the session before its read-back.
func start(t *testing.T, c *kfake.Cluster, bound time.Duration) (*workload.Session, string) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	s, err := workload.Start(context.Background(), workload.Config{
		Brokers: c.ListenAddrs(), BrokerVersion: "4.1.0", Topic: "rb", Partitions: partitions, Records: 400, ValueBytes: 50, Keys: 64,
		Codec: recordbatch.CodecNone, FirstAck: true, HoldWhileRetrying: true, MaxInFlight: 5, BatchBytes: 1024,
		DeliveryTimeout: 10 * time.Second, RequestTimeout: 2 * time.Second, Seed: 1, TracePath: trace, ReadBackBound: bound,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Produce(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, trace
}

// lagging answers fetches of the partitions lag says with a high watermark
// of 0 and no records, as a broker that has just become leader and whose
// followers have not fetched yet: each partition's first times fetches
// (every fetch when times is -1). It returns how many fetches it answered.
func lagging(c *kfake.Cluster, lag func(p int32) bool, times int) func() int {
	var mu sync.Mutex
	seen := map[int32]int{}
	n := 0
	c.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.FetchRequest)
		if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
			return nil, nil, false
		}
		rt, rp := req.Topics[0], req.Topics[0].Partitions[0]
		mu.Lock()
		defer mu.Unlock()
		if !lag(rp.Partition) || (times >= 0 && seen[rp.Partition] >= times) {
			return nil, nil, false
		}
		seen[rp.Partition]++
		n++
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.Version = req.Version
		resp.SessionID = 0
		ft := kmsg.NewFetchResponseTopic()
		ft.Topic, ft.TopicID = rt.Topic, rt.TopicID
		fp := kmsg.NewFetchResponseTopicPartition()
		fp.Partition, fp.HighWatermark, fp.LastStableOffset, fp.LogStartOffset = rp.Partition, 0, 0, 0
		ft.Partitions = append(ft.Partitions, fp)
		resp.Topics = append(resp.Topics, ft)
		return resp, nil, true
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// verdict verifies the trace at path.
func verdict(t *testing.T, path string) *verify.Report {
	t.Helper()
	rep, err := verify.File(context.Background(), path, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A leader whose first answer is a high watermark below what was
// acknowledged must not end the read-back: it waits, reads again and
// returns the whole log.
func TestLaggingHighWatermarkIsWaitedFor(t *testing.T) {
	c := cluster(t)
	s, trace := start(t, c, 30*time.Second)
	// Three lagging answers each: more than the two reads of a settled
	// high watermark, so only the acknowledged offsets tell it is short.
	answered := lagging(c, func(int32) bool { return true }, 3)
	sum, err := s.ReadBack(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := answered(); got != 3*partitions {
		t.Fatalf("the lagging answer was given %d times, want three times per partition (%d)", got, 3*partitions)
	}
	if !sum.Clean() || sum.ReadBack != sum.Sent {
		t.Fatalf("the read-back trusted a lagging high watermark: %+v", sum)
	}
	if rep := verdict(t, trace); rep.Verdict != verify.Valid {
		t.Fatalf("verify: %s: %v", rep.Verdict, rep.Violations)
	}
}

// A high watermark that never passes the acknowledged offsets is a
// shortfall only after the bound, and then the trace says what the
// read-back waited for and saw, and verify's lost-write carries it.
func TestShortfallIsEvidenced(t *testing.T) {
	c := cluster(t)
	bound := 300 * time.Millisecond
	s, trace := start(t, c, bound)
	lagging(c, func(p int32) bool { return p == 2 }, -1)
	sum, err := s.ReadBack(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Lost == 0 || sum.LostAcked != sum.Lost {
		t.Fatalf("partition 2 read as empty: want its acknowledged records lost, got %+v", sum)
	}
	f, err := tracer.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var shorts []tracer.Event
	if err := f.Each(func(_ int, e *tracer.Event) error {
		if e.Kind == tracer.ReadBackShort {
			shorts = append(shorts, *e)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(shorts) != 1 || shorts[0].Partition != 2 || shorts[0].HWM != 0 || shorts[0].Offset < 1 || shorts[0].WaitedMs < bound.Milliseconds() {
		t.Fatalf("ReadBackShort events: %+v; want one for partition 2 with hwm 0, the acknowledged offset, and at least %v waited", shorts, bound)
	}
	rep := verdict(t, trace)
	found := false
	for _, v := range rep.Violations {
		if v.Kind == checker.Lost && v.Partition == 2 && strings.Contains(v.Detail, "reported the high watermark 0") {
			found = true
		}
	}
	if rep.Verdict == verify.Valid || !found {
		t.Fatalf("verify: %s, %v; want a lost-write on partition 2 with the read-back's evidence", rep.Verdict, rep.Violations)
	}
}

// Answers that the broker is not (or no longer) the leader at the epoch
// asked for send the read-back back to the metadata; it still reads every
// record once.
func TestLeaderErrorsRetryAtTheLeader(t *testing.T) {
	for _, e := range []*kerr.Error{kerr.NotLeaderForPartition, kerr.FencedLeaderEpoch, kerr.UnknownLeaderEpoch} {
		t.Run(e.Message, func(t *testing.T) {
			c := cluster(t)
			s, trace := start(t, c, 30*time.Second)
			var mu sync.Mutex
			hits := 0
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "rb", Partitions: []int32{0, 1, 2, 3}, Err: e, Count: partitions,
				When: func(kmsg.Request) bool { mu.Lock(); hits++; mu.Unlock(); return true }})
			sum, err := s.ReadBack(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if hits == 0 {
				t.Fatal("the fault never answered a fetch")
			}
			if !sum.Clean() {
				t.Fatalf("not clean after %d %s answers: %+v", hits, e.Message, sum)
			}
			if rep := verdict(t, trace); rep.Verdict != verify.Valid {
				t.Fatalf("verify: %s: %v", rep.Verdict, rep.Violations)
			}
		})
	}
}

// A topic that is gone, a broker that stops answering and a fetch error
// that never clears each end the read-back with an error naming what it
// waited for, within its bound.
func TestReadBackBadClusters(t *testing.T) {
	bound := 300 * time.Millisecond
	t.Run("topic deleted", func(t *testing.T) {
		c := cluster(t)
		if err := c.CreateTopic("gone", 2, nil); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteTopic("gone"); err != nil {
			t.Fatal(err)
		}
		_, err := readback.Topic(context.Background(), readback.Config{Bootstrap: c.ListenAddrs(), Topic: "gone", Settle: bound, CatchUp: bound})
		if err == nil || !strings.Contains(err.Error(), `topic "gone"`) || !strings.Contains(err.Error(), "did not settle") {
			t.Fatalf("err = %v; want the topic named and what the read-back waited for", err)
		}
	})
	t.Run("fetch never answered", func(t *testing.T) {
		c := cluster(t)
		if err := c.CreateTopic("t", 2, nil); err != nil {
			t.Fatal(err)
		}
		c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "t", Partitions: []int32{1}, Err: kerr.UnknownTopicOrPartition, Count: -1})
		_, err := readback.Topic(context.Background(), readback.Config{Bootstrap: c.ListenAddrs(), Topic: "t", Settle: bound, CatchUp: bound})
		if err == nil || !strings.Contains(err.Error(), "t[1]") || !strings.Contains(err.Error(), "gave up after") {
			t.Fatalf("err = %v; want partition t[1] named and the bound", err)
		}
	})
	t.Run("broker stops answering", func(t *testing.T) {
		c := cluster(t)
		if err := c.CreateTopic("t", 2, nil); err != nil {
			t.Fatal(err)
		}
		addrs := c.ListenAddrs()
		c.Close()
		_, err := readback.Topic(context.Background(), readback.Config{Bootstrap: addrs, Topic: "t", Settle: bound, CatchUp: bound})
		if err == nil || !strings.Contains(err.Error(), "no broker reachable") || !strings.Contains(err.Error(), "did not settle") {
			t.Fatalf("err = %v", err)
		}
	})
}

// Acked takes the highest acknowledged offset of each partition from a
// trace's sends and answers.
func TestAcked(t *testing.T) {
	a := readback.NewAcked()
	for _, e := range []tracer.Event{
		{Kind: tracer.SendNew, Partition: 0, Batch: 1, N: 3},
		{Kind: tracer.SendNew, Partition: 0, Batch: 2, N: 2},
		{Kind: tracer.Receive, Partition: 0, Batch: 2, Err: "NONE", Offset: 3},
		{Kind: tracer.Receive, Partition: 0, Batch: 1, Err: "NONE", Offset: 0},
		{Kind: tracer.SendNew, Partition: 1, Batch: 3, N: 4},
		{Kind: tracer.Receive, Partition: 1, Batch: 3, Err: "NOT_LEADER_OR_FOLLOWER", Offset: -1},
		{Kind: tracer.Resend, Partition: 1, Batch: 3, N: 4},
		{Kind: tracer.Receive, Partition: 1, Batch: 3, Err: "DUPLICATE_SEQUENCE_NUMBER", Offset: -1},
	} {
		a.Observe(&e)
	}
	got := a.Offsets()
	if len(got) != 1 || got[0] != 4 {
		t.Fatalf("Offsets() = %v, want map[0:4]", got)
	}
}

// Every fetch carries the leader epoch the metadata gave (KIP-320), so that
// a broker that is no longer the leader refuses it instead of answering with
// its own, older view.
func TestFetchesCarryTheLeaderEpoch(t *testing.T) {
	c := cluster(t)
	s, _ := start(t, c, 30*time.Second)
	for p := int32(0); p < partitions; p++ {
		leader := c.LeaderFor("rb", p)
		if err := c.MoveTopicPartition("rb", p, (leader+1)%3); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	epochs := map[int32][]int32{}
	c.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, rt := range kreq.(*kmsg.FetchRequest).Topics {
			for _, rp := range rt.Partitions {
				mu.Lock()
				epochs[rp.Partition] = append(epochs[rp.Partition], rp.CurrentLeaderEpoch)
				mu.Unlock()
			}
		}
		return nil, nil, false
	})
	if _, err := s.ReadBack(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for p := int32(0); p < partitions; p++ {
		want := c.PartitionInfo("rb", p).Epoch
		if want < 1 || len(epochs[p]) == 0 {
			t.Fatalf("partition %d: leader epoch %d, fetches %v: the leader did not move or was never fetched from", p, want, epochs[p])
		}
		for _, got := range epochs[p] {
			if got != want {
				t.Errorf("partition %d: a fetch carried leader epoch %d, the leader's is %d", p, got, want)
			}
		}
	}
}

// A partition whose replicas never all get back in sync keeps the read-back
// from starting, and the error says which partition and what it waited for.
func TestNeverSettles(t *testing.T) {
	c := cluster(t)
	if err := c.CreateTopic("t", 2, nil); err != nil {
		t.Fatal(err)
	}
	addrs := c.ListenAddrs()
	c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.MetadataRequest)
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		resp.Version = req.Version
		for i, a := range addrs {
			host, port, _ := net.SplitHostPort(a)
			n, _ := strconv.Atoi(port)
			b := kmsg.NewMetadataResponseBroker()
			b.NodeID, b.Host, b.Port = int32(i), host, int32(n)
			resp.Brokers = append(resp.Brokers, b)
		}
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = kmsg.StringPtr("t")
		for p := int32(0); p < 2; p++ {
			mp := kmsg.NewMetadataResponseTopicPartition()
			mp.Partition, mp.Leader, mp.LeaderEpoch, mp.Replicas, mp.ISR = p, 0, 3, []int32{0, 1, 2}, []int32{0, 1, 2}
			if p == 1 {
				mp.ISR = []int32{0, 2} // node 1 never catches up
			}
			mt.Partitions = append(mt.Partitions, mp)
		}
		resp.Topics = append(resp.Topics, mt)
		return resp, nil, true
	})
	bound := 300 * time.Millisecond
	err := readback.Settle(context.Background(), readback.Config{Bootstrap: addrs, Topic: "t", Settle: bound})
	want := "t[1]: leader 0 (epoch 3), in-sync replicas [0 2] of [0 1 2]"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "did not settle within 300ms") {
		t.Fatalf("err = %v; want it to name %q and the bound", err, want)
	}
	if _, err := readback.Topic(context.Background(), readback.Config{Bootstrap: addrs, Topic: "t", Settle: bound, CatchUp: bound}); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Topic: err = %v; want the same", err)
	}
}
