package replay

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/tracer"
)

func replayFile(t *testing.T, path string) error {
	t.Helper()
	f, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Trace(f.Reader)
}

// The traces of real runs in traces/ conform to the spec: our producer with
// the rule on, and the Java client's rules with it off (the loss is allowed
// by the spec with FirstAckRule off: that is the point).
func TestRealTracesConform(t *testing.T) {
	for _, name := range []string{"run.jsonl", "first-ack-off.jsonl"} {
		t.Run(name, func(t *testing.T) {
			if err := replayFile(t, filepath.Join("..", "..", "traces", name)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A trace that says the rule was on but shows the producer pipelining past an
// unacknowledged first batch is caught.
func TestRuleOnHeaderCatchesPipelining(t *testing.T) {
	path := filepath.Join("..", "..", "traces", "first-ack-off.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flipped := []byte(string(data))
	i := indexOf(flipped, `"first_ack":false`)
	if i < 0 {
		t.Fatal("first-ack-off.jsonl header does not say first_ack false")
	}
	copy(flipped[i:], `"first_ack":true `)
	tmp := filepath.Join(t.TempDir(), "flipped.jsonl")
	if err := os.WriteFile(tmp, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	err = replayFile(t, tmp)
	var re *Error
	if !errors.As(err, &re) || re.Action != "SendNew" {
		t.Fatalf("got %v, want SendNew not enabled by the first-ack rule", err)
	}
	t.Log(err)
}

func indexOf(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}

// A second InitProducerId from kcheck's producer (a new producer id, taken
// when the epoch can go no higher) is accepted only when no batch of the old
// id could be sent again unrenumbered, and moves every partition to sequence
// 0 under the new id, even when the new id's epoch equals the old one.
func TestNewProducerID(t *testing.T) {
	h := tracer.Header{Writer: "kcheck-producer", Partitions: 1, FirstAck: true, HoldWhileRetrying: true, MaxInFlight: 5,
		DeliveryTimeoutMs: 1000, Broker: tracer.Broker{Kind: "kafka", NoStateRule: "v25to44"}}
	init := func(pid int64) tracer.Event { return tracer.Event{Kind: tracer.InitProducerID, PID: pid, Node: -1} }
	send := func(pid int64, b int64, seq int32, req int32) tracer.Event {
		return tracer.Event{Kind: tracer.SendNew, PID: pid, Batch: b, Seq: seq, N: 1, Req: req, Node: 1, Records: []int64{b}}
	}
	recv := func(pid int64, b int64, seq int32, req int32, err string, off int64) tracer.Event {
		return tracer.Event{Kind: tracer.Receive, PID: pid, Batch: b, Seq: seq, Req: req, Node: 1, Err: err, Offset: off, LogStart: -1}
	}
	for _, tc := range []struct {
		name    string
		evs     []tracer.Event
		badLine int // 0: the trace conforms
	}{
		{"idle partition starts at 0 under the new id", []tracer.Event{
			init(1000), send(1000, 1, 0, 1), recv(1000, 1, 0, 1, "NONE", 0),
			init(2000), send(2000, 2, 0, 2), recv(2000, 2, 0, 2, "NONE", 1),
		}, 0},
		{"the old id's next sequence under the new id", []tracer.Event{
			init(1000), send(1000, 1, 0, 1), recv(1000, 1, 0, 1, "NONE", 0),
			init(2000), send(2000, 2, 1, 2),
		}, 5},
		{"a batch waiting for a retry and no bump pending", []tracer.Event{
			init(1000), send(1000, 1, 0, 1), recv(1000, 1, 0, 1, "NOT_LEADER_OR_FOLLOWER", -1),
			init(2000),
		}, 4},
		{"a request outstanding", []tracer.Event{
			init(1000), send(1000, 1, 0, 1),
			init(2000),
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) { wantLine(t, replayAll(t, h, tc.evs), tc.badLine, "") })
	}
}

// A fault on a cluster's node forces no spec action: the trace conforms
// with it wherever it falls; a fault no injector has is refused.
func TestClusterFaults(t *testing.T) {
	h := tracer.Header{Writer: "kcheck-proxy", Partitions: 1, MaxInFlight: 5, DeliveryTimeoutMs: 1000,
		Broker: tracer.Broker{Kind: "kafka", NoStateRule: "v25to44"}}
	fault := func(name string, node int32) tracer.Event {
		return tracer.Event{Kind: tracer.Fault, Fault: name, Partition: -1, Epoch: -1, Seq: -1, Node: node}
	}
	evs := []tracer.Event{
		{Kind: tracer.InitProducerID, PID: 1000, Node: -1},
		fault(tracer.PauseBroker, 2),
		{Kind: tracer.SendNew, PID: 1000, Batch: 1, Seq: 0, N: 1, Req: 1, Node: 2, Records: []int64{1}},
		fault(tracer.ResumeBroker, 2), fault(tracer.MoveLeaders, -1), fault(tracer.IsolateBroker, 2), fault(tracer.RejoinBroker, 2),
		{Kind: tracer.Receive, PID: 1000, Batch: 1, Seq: 0, Req: 1, Node: 2, Err: "NONE", Offset: 0, LogStart: -1},
		fault(tracer.KillBroker, 3), fault(tracer.StartBroker, 3), fault(tracer.StopBroker, 1), fault(tracer.SlowBroker, 1), fault(tracer.SlowBrokerEnd, 1),
	}
	wantLine(t, replayAll(t, h, evs), 0, "")
	wantLine(t, replayAll(t, h, append(evs, fault("FreezeBroker", 1))), len(evs)+1, `unknown fault "FreezeBroker"`)
}

// The wire's rules hold on every trace, our producer's and the proxy's: a
// connection's requests are answered in the order sent, each for every
// partition it carried, or lost with a Disconnect of the connection, by the
// time the partitions are read back.
func TestWireRules(t *testing.T) {
	type ev = tracer.Event
	send := func(p int32, b int64, seq int32, node, req int32) ev {
		return ev{Kind: tracer.SendNew, PID: 1000, Partition: p, Batch: b, Seq: seq, N: 1, Req: req, Node: node, Records: []int64{b}}
	}
	resend := func(p int32, b int64, seq int32, node, req int32) ev {
		return ev{Kind: tracer.Resend, PID: 1000, Partition: p, Batch: b, Seq: seq, N: 1, Req: req, Node: node}
	}
	recv := func(p int32, b int64, seq int32, node, req int32, off int64) ev {
		return ev{Kind: tracer.Receive, PID: 1000, Partition: p, Batch: b, Seq: seq, Req: req, Node: node, Err: "NONE", Offset: off, LogStart: -1}
	}
	dup := func(p int32, b int64, seq int32, node, req int32) ev {
		e := recv(p, b, seq, node, req, -1)
		e.Err = "DUPLICATE_SEQUENCE_NUMBER"
		return e
	}
	cut := func(fault string, p int32, seq int32, node int32) ev {
		return ev{Kind: tracer.Fault, Fault: fault, Partition: p, Epoch: int16(min(seq, 0)), Seq: seq, Node: node}
	}
	init := ev{Kind: tracer.InitProducerID, PID: 1000, Node: -1}
	disc := func(node int32) ev { return ev{Kind: tracer.Disconnect, Node: node} }
	readBack := ev{Kind: tracer.ReadBack, Partition: 0}
	closed := func(p int32, b int64, seq int32) ev {
		return ev{Kind: tracer.Fail, PID: 1000, Partition: p, Batch: b, Seq: seq, Reason: "producer closed"}
	}
	for _, tc := range []struct {
		name    string
		writers []string // nil: both
		evs     []ev
		badLine int // 0: the trace conforms
		reason  string
	}{
		{"two partitions in one request, answered whole", nil, []ev{
			init, send(0, 1, 0, 1, 1), send(1, 2, 0, 1, 1), recv(0, 1, 0, 1, 1, 0), recv(1, 2, 0, 1, 1, 0), readBack,
		}, 0, ""},
		{"answers in request order", nil, []ev{
			init, send(0, 1, 0, 1, 1), send(1, 2, 0, 1, 2), recv(0, 1, 0, 1, 1, 0), recv(1, 2, 0, 1, 2, 0), readBack,
		}, 0, ""},
		{"two connections answer in any order", nil, []ev{
			init, send(0, 1, 0, 1, 1), send(1, 2, 0, 2, 2), recv(1, 2, 0, 2, 2, 0), recv(0, 1, 0, 1, 1, 0), readBack,
		}, 0, ""},
		{"a later request answered first", nil, []ev{
			init, send(0, 1, 0, 1, 1), send(1, 2, 0, 1, 2), recv(1, 2, 0, 1, 2, 0), recv(0, 1, 0, 1, 1, 0),
		}, 4, "request 2 on node 1 is answered while request 1 on node 1 (line 2) still awaits its answer for partition 0 (batch 1, line 2)"},
		{"a partition left out of an answer, the next request answered", nil, []ev{
			init, send(0, 1, 0, 1, 1), send(1, 2, 0, 1, 1), send(0, 3, 1, 1, 2),
			recv(0, 1, 0, 1, 1, 0), recv(0, 3, 1, 1, 2, 1),
		}, 6, "awaits its answer for partition 1 (batch 2, line 3), though the answer to its other partitions came at line 5"},
		{"a partition left out of an answer, then the connection lost", nil, []ev{
			init, send(0, 1, 0, 1, 1), send(1, 2, 0, 1, 1), recv(0, 1, 0, 1, 1, 0), disc(1),
		}, 5, "a response answers every partition of its request at once"},
		{"a lost connection loses its requests", nil, []ev{
			init, send(0, 1, 0, 1, 1), send(0, 2, 1, 1, 2), disc(1),
			resend(0, 1, 0, 1, 3), recv(0, 1, 0, 1, 3, 0), resend(0, 2, 1, 1, 4), recv(0, 2, 1, 1, 4, 1), readBack,
		}, 0, ""},
		{"a request unanswered at the read-back", nil, []ev{
			init, send(0, 1, 0, 1, 1), send(0, 2, 1, 1, 2), recv(0, 1, 0, 1, 1, 0), readBack,
		}, 5, "the run is over but request 2 on node 1 (line 3) still awaits its answer for partition 0 (batch 2, line 3), and no Disconnect of node 1 lost it"},
		{"a request unanswered in a trace cut off before its read-back", nil, []ev{
			init, send(0, 1, 0, 1, 1), send(0, 2, 1, 1, 2), recv(0, 1, 0, 1, 1, 0),
		}, 0, ""},
		{"an answer on another connection than its request's", nil, []ev{
			init, send(0, 1, 0, 1, 1), recv(0, 1, 0, 2, 1, 0),
		}, 3, "no outstanding attempt of batch 1 in request 1 on node 2"},
		{"a batch sent again on another connection, its request unanswered", []string{tracer.ProxyWriter}, []ev{
			init, send(0, 1, 0, 1, 1), send(1, 2, 0, 1, 1), resend(0, 1, 0, 2, 2), resend(1, 2, 0, 2, 2),
			recv(0, 1, 0, 2, 2, 0), recv(1, 2, 0, 2, 2, 0), disc(1), readBack,
		}, 0, ""},
		{"a batch sent again on another connection, the old one never lost", []string{tracer.ProxyWriter}, []ev{
			init, send(0, 1, 0, 1, 1), resend(0, 1, 0, 2, 2), recv(0, 1, 0, 2, 2, 0), readBack,
		}, 5, "the run is over but request 1 on node 1 (line 2) still awaits its answer for partition 0 (batch 1, line 2)"},
		{"a batch waiting for its retry when our producer's run is over", []string{"kcheck-producer"}, []ev{
			init, send(0, 1, 0, 1, 1), {Kind: tracer.Receive, PID: 1000, Batch: 1, Req: 1, Node: 1, Err: "NOT_LEADER_OR_FOLLOWER", Offset: -1, LogStart: -1}, readBack,
		}, 4, "the run is over but batch 1 (sent at line 2) is retry, with no outcome"},
		{"a batch left out of an answer sent again", []string{tracer.ProxyWriter}, []ev{
			init, send(0, 1, 0, 1, 1), send(1, 2, 0, 1, 1), recv(0, 1, 0, 1, 1, 0), resend(1, 2, 0, 2, 2),
		}, 5, "batch 2 is sent again, but request 1 on node 1 (line 2) still awaits its answer for partition 1 (batch 2, line 3), though the answer to its other partitions came at line 4"},
		// A connection cut as an attempt arrived (a Fault DropConnection
		// naming it) loses that attempt unhandled: its retry cannot be a
		// duplicate. Cut with no attempt named, or as its answer came
		// (DropResponse), it may have been handled.
		{"a cut as the attempt arrived loses it unhandled", nil, []ev{
			init, send(0, 1, 0, 1, 1), cut("DropConnection", 0, 0, 1), disc(1), resend(0, 1, 0, 2, 2), dup(0, 1, 0, 2, 2),
		}, 6, "the broker answered batch 1 (epoch 0 seq 0) with DUPLICATE_SEQUENCE_NUMBER"},
		{"a cut as the attempt arrived, its retry appended", nil, []ev{
			init, send(0, 1, 0, 1, 1), cut("DropConnection", 0, 0, 1), disc(1), resend(0, 1, 0, 2, 2), recv(0, 1, 0, 2, 2, 0), readBack,
		}, 0, ""},
		{"a cut of another attempt leaves it uncertain", nil, []ev{
			init, send(0, 1, 0, 1, 1), send(1, 2, 0, 1, 2), cut("DropConnection", 1, 0, 1), disc(1),
			resend(0, 1, 0, 2, 3), dup(0, 1, 0, 2, 3), resend(1, 2, 0, 2, 4), recv(1, 2, 0, 2, 4, 0), readBack,
		}, 0, ""},
		{"a cut on another connection does not count", nil, []ev{
			init, send(0, 1, 0, 1, 1), cut("DropConnection", 0, 0, 2), disc(1), resend(0, 1, 0, 2, 2), dup(0, 1, 0, 2, 2), readBack,
		}, 0, ""},
		{"a cut naming no attempt leaves them uncertain", nil, []ev{
			init, send(0, 1, 0, 1, 1), cut("DropConnection", -1, -1, 1), disc(1), resend(0, 1, 0, 2, 2), dup(0, 1, 0, 2, 2), readBack,
		}, 0, ""},
		{"a response dropped as it came leaves its attempt uncertain", nil, []ev{
			init, send(0, 1, 0, 1, 1), cut("DropResponse", 0, 0, 1), disc(1), resend(0, 1, 0, 2, 2), dup(0, 1, 0, 2, 2), readBack,
		}, 0, ""},
		{"a held answer changes nothing", nil, []ev{
			init, send(0, 1, 0, 1, 1), cut("Delay", 0, 0, 1), recv(0, 1, 0, 1, 1, 0), readBack,
		}, 0, ""},
		{"our producer closing fails what is in flight", []string{"kcheck-producer"}, []ev{
			init, send(0, 1, 0, 1, 1), send(0, 2, 1, 1, 2), recv(0, 1, 0, 1, 1, 0), closed(0, 2, 1), readBack,
		}, 0, ""},
	} {
		writers := tc.writers
		if writers == nil {
			writers = []string{"kcheck-producer", tracer.ProxyWriter}
		}
		for _, w := range writers {
			t.Run(w+"/"+tc.name, func(t *testing.T) {
				h := tracer.Header{Writer: w, Partitions: 2, MaxInFlight: 5, DeliveryTimeoutMs: 1000,
					Broker: tracer.Broker{Kind: "kafka", NoStateRule: "v25to44"}}
				m, err := New(h)
				if err != nil {
					t.Fatal(err)
				}
				for i := range tc.evs {
					if err = m.Step(i+1, &tc.evs[i]); err != nil {
						break
					}
				}
				var re *Error
				switch {
				case tc.badLine == 0 && err != nil:
					t.Fatalf("want the trace to conform: %v", err)
				case tc.badLine != 0 && (!errors.As(err, &re) || re.Line != tc.badLine || !strings.Contains(re.Reason, tc.reason)):
					t.Fatalf("got %v,\nwant an error at line %d saying %q", err, tc.badLine, tc.reason)
				}
				if err != nil {
					t.Log(err)
				}
			})
		}
	}
}

// TestStateExpiryOnTheWire: with state-expiry:delay=D in the header's
// faults, the broker may have forgotten the producer before an attempt sent
// D or more after the partition's last appended batch (ExpireProducerState
// is not on the wire), so a later sequence accepted after a refused one
// conforms; sent sooner, or without the fault, it does not.
func TestStateExpiryOnTheWire(t *testing.T) {
	type ev = tracer.Event
	at := func(e ev, d time.Duration) ev { e.T = d.Nanoseconds(); return e }
	trace := func(gap, stamp time.Duration) []ev {
		return []ev{
			{Kind: tracer.InitProducerID, PID: 1000, Node: -1},
			at(ev{Kind: tracer.SendNew, PID: 1000, Batch: 1, Seq: 0, N: 1, Req: 1, Node: 1, Records: []int64{1}, BatchTime: stamp.Nanoseconds()}, 0),
			at(ev{Kind: tracer.Receive, PID: 1000, Batch: 1, Seq: 0, Req: 1, Node: 1, Err: "NONE", Offset: 0, LogStart: -1}, time.Millisecond),
			at(ev{Kind: tracer.SendNew, PID: 1000, Batch: 2, Seq: 1, N: 1, Req: 2, Node: 1, Records: []int64{2}}, gap),
			at(ev{Kind: tracer.Fault, Fault: "RejectBeforeAppend", Seq: 1, Node: 1, Err: "NOT_LEADER_OR_FOLLOWER"}, gap),
			at(ev{Kind: tracer.SendNew, PID: 1000, Batch: 3, Seq: 2, N: 1, Req: 3, Node: 1, Records: []int64{3}}, gap),
			at(ev{Kind: tracer.Receive, PID: 1000, Batch: 2, Seq: 1, Req: 2, Node: 1, Err: "NOT_LEADER_OR_FOLLOWER", Offset: -1, LogStart: -1}, gap+time.Millisecond),
			at(ev{Kind: tracer.Receive, PID: 1000, Batch: 3, Seq: 2, Req: 3, Node: 1, Err: "NONE", Offset: 1, LogStart: -1}, gap+time.Millisecond),
		}
	}
	for _, tc := range []struct {
		name    string
		faults  []string
		gap     time.Duration
		stamp   time.Duration // batch 1's BatchTime; 0: not known (its send)
		conform bool
	}{
		{"idle past the expiry", []string{"state-expiry:delay=2s"}, 3 * time.Second, 0, true},
		{"idle short of the expiry", []string{"state-expiry:delay=2s"}, time.Second, 0, false},
		{"no expiry in the header", nil, 3 * time.Second, 0, false},
		// The broker counts from the appended batch's max timestamp, which
		// its client set when it made it, here 1.5 s before its send.
		{"idle short of the expiry, the batch older than its send", []string{"state-expiry:delay=2s"}, time.Second, -1500 * time.Millisecond, true},
		{"the batch's timestamp not old enough", []string{"state-expiry:delay=2s"}, time.Second, -500 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tracer.Header{Writer: tracer.ProxyWriter, Partitions: 1, MaxInFlight: 5, Faults: tc.faults,
				Broker: tracer.Broker{Kind: "kafka", NoStateRule: "v25to44"}}
			m, err := New(h)
			if err != nil {
				t.Fatal(err)
			}
			evs := trace(tc.gap, tc.stamp)
			for i := range evs {
				if err = m.Step(i+1, &evs[i]); err != nil {
					break
				}
			}
			var re *Error
			switch {
			case tc.conform && err != nil:
				t.Fatalf("want the trace to conform: %v", err)
			case !tc.conform && (!errors.As(err, &re) || re.Line != 8 || !strings.Contains(re.Reason, "OUT_OF_ORDER_SEQUENCE_NUMBER")):
				t.Fatalf("got %v, want line 8 answered OUT_OF_ORDER_SEQUENCE_NUMBER by the spec", err)
			}
		})
	}
}

// The idle re-arm rule in the header (idle_rearm_ms): a partition whose
// last acknowledgement is older than the bound (and the slack) must not
// pipeline a second batch behind its next; within the bound, or with the
// rule off, it may.
func TestIdleRearmRule(t *testing.T) {
	ms := int64(time.Millisecond)
	send := func(at int64, b int64, seq int32, req int32) tracer.Event {
		return tracer.Event{Kind: tracer.SendNew, T: at * ms, PID: 1, Batch: b, Seq: seq, N: 1, Req: req, Node: 1, Records: []int64{b}}
	}
	recv := func(at int64, b int64, seq int32, req int32, off int64) tracer.Event {
		return tracer.Event{Kind: tracer.Receive, T: at * ms, PID: 1, Batch: b, Seq: seq, Req: req, Node: 1, Err: "NONE", Offset: off, LogStart: -1}
	}
	// After the first batch's ack at 2 ms: batch 2 at `at`, batch 3 behind it.
	trace := func(at int64) []tracer.Event {
		return []tracer.Event{{Kind: tracer.InitProducerID, PID: 1, Node: -1},
			send(1, 1, 0, 1), recv(2, 1, 0, 1, 0), send(at, 2, 1, 2), send(at+1, 3, 2, 3)}
	}
	for _, tc := range []struct {
		name    string
		rearmMs int64
		at      int64
		badLine int
	}{
		{"within the bound", 1000, 900, 0},
		{"within the slack", 1000, 1050, 0},
		{"past the bound", 1000, 1500, 5},
		{"rule off", 0, 5000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tracer.Header{Writer: "kcheck-producer", Partitions: 1, FirstAck: true, HoldWhileRetrying: true, MaxInFlight: 5,
				IdleRearmMs: tc.rearmMs, DeliveryTimeoutMs: 1000, Broker: tracer.Broker{Kind: "kafka", NoStateRule: "v25to44"}}
			wantLine(t, replayAll(t, h, trace(tc.at)), tc.badLine, "idle re-arm")
		})
	}
}

// TestCorrelationOrder: a connection's correlation ids never go back; a
// request never written (id -1: its connection was lost first) has none,
// and a lost connection starts the numbering again.
func TestCorrelationOrder(t *testing.T) {
	h := tracer.Header{Writer: "kcheck-producer", Partitions: 2, MaxInFlight: 5,
		DeliveryTimeoutMs: 1000, Broker: tracer.Broker{Kind: "kafka", NoStateRule: "v25to44"}}
	send := func(p int32, b int64, req int32) tracer.Event {
		return tracer.Event{Kind: tracer.SendNew, Partition: p, PID: 1, Batch: b, N: 1, Req: req, Node: 1, Records: []int64{b}}
	}
	lost := tracer.Event{Kind: tracer.Disconnect, Node: 1}
	for _, tc := range []struct {
		name    string
		evs     []tracer.Event
		badLine int // 0: the trace conforms
	}{
		{"a request never written", []tracer.Event{send(0, 1, 3), send(1, 2, -1), lost}, 0},
		{"a new connection starts again", []tracer.Event{send(0, 1, 3), lost, send(1, 2, 0)}, 0},
		{"ids go back", []tracer.Event{send(0, 1, 3), send(1, 2, 2)}, 3},
		{"ids go back, then the connection is lost", []tracer.Event{send(0, 1, 3), send(1, 2, 2), lost}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := append([]tracer.Event{{Kind: tracer.InitProducerID, PID: 1, Node: -1}}, tc.evs...)
			wantLine(t, replayAll(t, h, evs), tc.badLine, "")
		})
	}
}

// replayAll steps a machine for h through evs (line i+1 each) and returns
// the first error.
func replayAll(t *testing.T, h tracer.Header, evs []tracer.Event) error {
	t.Helper()
	m, err := New(h)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := m.Step(i+1, &evs[i]); err != nil {
			return err
		}
	}
	return nil
}

// wantLine checks err: nil when badLine is 0, else replay's error at
// badLine, saying want when want is not empty.
func wantLine(t *testing.T, err error, badLine int, want string) {
	t.Helper()
	var re *Error
	switch {
	case badLine == 0 && err != nil:
		t.Fatalf("want the trace to conform: %v", err)
	case badLine != 0 && (!errors.As(err, &re) || re.Line != badLine || !strings.Contains(err.Error(), want)):
		t.Fatalf("got %v, want an error at line %d saying %q", err, badLine, want)
	}
}

// TestTransactionAbortable: a transactional producer's batch answered
// TRANSACTION_ABORTABLE (the leader could not verify its partition in the
// transaction, KIP-890 part 1) was refused before the append: its retry
// is appended where the spec's log is. An idempotent producer never gets
// that answer.
func TestTransactionAbortable(t *testing.T) {
	for _, txnal := range []bool{true, false} {
		h := tracer.Header{Writer: tracer.ProxyWriter, Partitions: 1, MaxInFlight: 5, Broker: tracer.Broker{Kind: "kafka", NoStateRule: "v25to44"}}
		if txnal {
			h.TransactionalID, h.TxnVersion = "t", 1
		}
		evs := []tracer.Event{
			{Kind: tracer.InitProducerID, PID: 1000, Node: -1},
			{Kind: tracer.SendNew, PID: 1000, Partition: 0, Batch: 1, N: 1, Req: 1, Node: 1, Records: []int64{1}},
			{Kind: tracer.Receive, PID: 1000, Partition: 0, Batch: 1, Req: 1, Node: 1, Err: "TRANSACTION_ABORTABLE", Offset: -1, LogStart: -1},
			{Kind: tracer.Resend, PID: 1000, Partition: 0, Batch: 1, N: 1, Req: 2, Node: 1},
			{Kind: tracer.Receive, PID: 1000, Partition: 0, Batch: 1, Req: 2, Node: 1, Err: "NONE", Offset: 0, LogStart: -1},
		}
		err := replayAll(t, h, evs)
		var re *Error
		switch {
		case txnal && err != nil:
			t.Errorf("transactional: want the trace to conform: %v", err)
		case !txnal && (!errors.As(err, &re) || re.Line != 3):
			t.Errorf("idempotent: got %v, want a nonconformance at line 3", err)
		}
	}
}

// TestLateEndTxn: a late request to the coordinator (tracer.LateSent of no
// partition) may end the open transaction when it lands, its marker at any
// offset until the client's own end, which then may write none: the next
// transaction's batch at the offset after the gap conforms. Without it,
// the client's end writes a marker for sure, and that offset is taken.
func TestLateEndTxn(t *testing.T) {
	for _, late := range []bool{true, false} {
		h := tracer.Header{Writer: tracer.ProxyWriter, Partitions: 1, MaxInFlight: 5, TransactionalID: "t", TxnVersion: 1,
			Broker: tracer.Broker{Kind: "kafka", NoStateRule: "v25to44"}}
		send := func(b int64, seq int32, req int32) tracer.Event {
			return tracer.Event{Kind: tracer.SendNew, PID: 1000, Partition: 0, Batch: b, Seq: seq, N: 1, Req: req, Node: 1, Records: []int64{b}}
		}
		recv := func(b int64, seq int32, req int32, off int64) tracer.Event {
			return tracer.Event{Kind: tracer.Receive, PID: 1000, Partition: 0, Batch: b, Seq: seq, Req: req, Node: 1, Err: "NONE", Offset: off, LogStart: -1}
		}
		add := func(tx int64) tracer.Event {
			return tracer.Event{Kind: tracer.AddPartitionsToTxn, PID: 1000, Partition: 0, Node: 2, Err: "NONE", Tx: tx}
		}
		evs := []tracer.Event{
			{Kind: tracer.InitProducerID, PID: 1000, Node: 2, TxnID: "t"},
			add(1), send(1, 0, 1), recv(1, 0, 1, 0),
			{Kind: tracer.Fault, Fault: tracer.LateSent, Partition: -1, Epoch: 0, Seq: -1, Node: 2},
			send(2, 1, 2), recv(2, 1, 2, 2), // the late EndTxn's marker at offset 1
			{Kind: tracer.EndTxn, PID: 1000, Node: 2, Commit: true, Tx: 1},
			{Kind: tracer.EndTxnReceive, PID: 1000, Node: 2, Err: "NONE", Commit: true, Tx: 1, NewEpoch: -1},
			add(2), send(3, 2, 3), recv(3, 2, 3, 3), // no marker of its own: the transaction had ended
		}
		if !late {
			evs = slices.Delete(evs, 4, 5)
		}
		err := replayAll(t, h, evs)
		var re *Error
		switch {
		case late && err != nil:
			t.Errorf("with the late request: want the trace to conform: %v", err)
		case !late && (!errors.As(err, &re) || !strings.Contains(re.Reason, "at offset 4 or later")):
			t.Errorf("without it: got %v, want the batch at offset 3 refused (the spec appends at offset 4 or later)", err)
		}
	}
}
