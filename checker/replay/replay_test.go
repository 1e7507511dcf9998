package replay

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

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
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(h)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.evs {
				err = m.Step(i+1, &tc.evs[i])
				if err != nil {
					break
				}
			}
			var re *Error
			switch {
			case tc.badLine == 0 && err != nil:
				t.Fatalf("want the trace to conform: %v", err)
			case tc.badLine != 0 && (!errors.As(err, &re) || re.Line != tc.badLine):
				t.Fatalf("got %v, want an error at line %d", err, tc.badLine)
			}
		})
	}
}
