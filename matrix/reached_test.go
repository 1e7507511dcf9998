package matrix

import (
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/tracer"
)

// ev builds trace events: kind, partition, epoch, seq, and for Fault the
// fault's name; T from the position.
func ev(kind tracer.Kind, p int32, seq int32, fault string) tracer.Event {
	return tracer.Event{Kind: kind, Partition: p, Seq: seq, Fault: fault}
}

// step is the reached check's step for one schedule line.
func step(t *testing.T, line string) Step {
	t.Helper()
	f, err := fault.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	return StepsOf([]fault.Fault{f})[0]
}

func TestReacher(t *testing.T) {
	hold := step(t, "reject:err=NOT_LEADER_OR_FOLLOWER,seq=0,until=next,delay=1s,partitions=0")
	holdSeq := step(t, "reject:err=NOT_LEADER_OR_FOLLOWER,seq=0,until=seq:2,delay=1s,partitions=0")
	plain := step(t, "append-then-error:err=REQUEST_TIMED_OUT,seq=1")
	try1, try2 := step(t, "append-then-error:err=REQUEST_TIMED_OUT,seq=1,try=1"), step(t, "append-then-error:err=REQUEST_TIMED_OUT,seq=1,try=2")
	idle := step(t, "state-expiry:delay=2s")
	pause, kill := step(t, "pause:leader=0,records=10"), step(t, "kill:node=2")
	pause2 := step(t, "pause:node=1,at=1s")
	lateProduce := step(t, "late-produce:until=answer:init-pid,epoch=0,seq=0,partitions=0")
	lateTxn := step(t, "late-txn:api=end-txn,commit=true,txn=1,until=answer:add-partitions")
	clusterFault := func(name string, node int32) tracer.Event {
		return tracer.Event{Kind: tracer.Fault, Partition: -1, Epoch: -1, Seq: -1, Fault: name, Node: node}
	}
	cases := []struct {
		name   string
		steps  []Step
		events []tracer.Event
		want   string
		why    string
	}{
		{"the next batch sent while the answer is held", []Step{hold}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), ev(tracer.Fault, 0, 0, "RejectBeforeAppend"), ev(tracer.SendNew, 0, 1, ""), ev(tracer.Receive, 0, 0, ""),
		}, Reached, ""},
		{"answered before the next batch", []Step{hold}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), ev(tracer.Fault, 0, 0, "RejectBeforeAppend"), ev(tracer.Receive, 0, 0, ""), ev(tracer.SendNew, 0, 1, ""),
		}, HeldBack, "acted 1 times"},
		{"a retry of the held batch is not the next", []Step{hold}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), ev(tracer.Fault, 0, 0, "RejectBeforeAppend"), ev(tracer.Resend, 0, 0, ""), ev(tracer.Receive, 0, 0, ""),
		}, HeldBack, ""},
		{"another partition's batch is not the next", []Step{hold}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), ev(tracer.Fault, 0, 0, "RejectBeforeAppend"), ev(tracer.SendNew, 1, 0, ""), ev(tracer.Receive, 0, 0, ""),
		}, HeldBack, ""},
		{"a fault on another partition is not the step's", []Step{hold}, []tracer.Event{
			ev(tracer.SendNew, 1, 0, ""), ev(tracer.Fault, 1, 0, "RejectBeforeAppend"), ev(tracer.SendNew, 1, 1, ""),
		}, NotReached, "never acted"},
		{"until seq 2: seq 1 is not enough", []Step{holdSeq}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), ev(tracer.Fault, 0, 0, "RejectBeforeAppend"), ev(tracer.SendNew, 0, 1, ""), ev(tracer.Receive, 0, 0, ""), ev(tracer.SendNew, 0, 2, ""),
		}, HeldBack, "base sequence 2"},
		{"until seq 2 met", []Step{holdSeq}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), ev(tracer.Fault, 0, 0, "RejectBeforeAppend"), ev(tracer.SendNew, 0, 1, ""), ev(tracer.SendNew, 0, 2, ""), ev(tracer.Receive, 0, 0, ""),
		}, Reached, ""},
		{"until seq 2, sent before the held attempt", []Step{holdSeq}, []tracer.Event{
			ev(tracer.SendNew, 0, 2, ""), ev(tracer.SendNew, 0, 0, ""), ev(tracer.Fault, 0, 0, "RejectBeforeAppend"), ev(tracer.Receive, 0, 0, ""),
		}, Reached, ""},
		{"a lost connection ends the hold", []Step{hold}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), ev(tracer.Fault, 0, 0, "RejectBeforeAppend"), {Kind: tracer.Disconnect}, ev(tracer.SendNew, 0, 1, ""),
		}, HeldBack, ""},
		{"every step must act", []Step{hold, plain}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), ev(tracer.Fault, 0, 0, "RejectBeforeAppend"), ev(tracer.SendNew, 0, 1, ""), ev(tracer.Receive, 0, 0, ""),
		}, NotReached, "append-then-error:seq=1"},
		{"a step without a hold acts once", []Step{plain}, []tracer.Event{
			ev(tracer.SendNew, 0, 1, ""), ev(tracer.Fault, 0, 1, "AppendThenFail"),
		}, Reached, ""},
		{"a fault with no attempt before it is no step's", []Step{plain}, []tracer.Event{
			ev(tracer.Fault, 0, 1, "AppendThenFail"),
		}, NotReached, "never acted"},
		{"two steps told apart by try: each claims its own attempt", []Step{try1, try2}, []tracer.Event{
			ev(tracer.SendNew, 0, 1, ""), ev(tracer.Fault, 0, 1, "AppendThenFail"), ev(tracer.Receive, 0, 1, ""),
			ev(tracer.Resend, 0, 1, ""), ev(tracer.Fault, 0, 1, "AppendThenFail"),
		}, Reached, ""},
		{"two steps told apart by try: the second try never faulted", []Step{try1, try2}, []tracer.Event{
			ev(tracer.SendNew, 0, 1, ""), ev(tracer.Fault, 0, 1, "AppendThenFail"), ev(tracer.Receive, 0, 1, ""),
			ev(tracer.Resend, 0, 1, ""), ev(tracer.Receive, 0, 1, ""),
		}, NotReached, "try=2"},
		{"faults on the cluster act", []Step{pause, kill}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), clusterFault(tracer.PauseBroker, 1), clusterFault(tracer.KillBroker, 2),
			clusterFault(tracer.ResumeBroker, 1), clusterFault(tracer.StartBroker, 2),
		}, Reached, ""},
		{"a fault on the cluster that never fired", []Step{pause, kill}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), clusterFault(tracer.KillBroker, 2), clusterFault(tracer.StartBroker, 2),
		}, NotReached, "pause:leader=0,records=10: never acted (the client ended before its trigger)"},
		{"a late produce kept, then sent once its condition held", []Step{lateProduce}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), ev(tracer.Fault, 0, 0, "Delay"), {Kind: tracer.Disconnect}, ev(tracer.Fault, 0, 0, tracer.LateSent),
		}, Reached, ""},
		{"a late produce kept and never sent: the client never did what it waited for", []Step{lateProduce}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), ev(tracer.Fault, 0, 0, "Delay"), {Kind: tracer.Disconnect}, ev(tracer.Resend, 0, 0, ""), ev(tracer.Receive, 0, 0, ""),
		}, HeldBack, "never did get the answer to an InitProducerId while it was kept"},
		{"a late produce whose attempt never came", []Step{lateProduce}, []tracer.Event{
			ev(tracer.SendNew, 0, 1, ""), ev(tracer.Fault, 0, 1, "Delay"),
		}, NotReached, "never acted"},
		{"a late EndTxn kept, then sent", []Step{lateTxn}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), clusterFault("Delay", 7), clusterFault(tracer.LateSent, 7),
		}, Reached, ""},
		{"a late EndTxn kept, never sent", []Step{lateTxn}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""), clusterFault("Delay", 7),
		}, HeldBack, "get the answer to an AddPartitionsToTxn"},
		{"a late EndTxn never kept", []Step{lateTxn}, []tracer.Event{
			ev(tracer.SendNew, 0, 0, ""),
		}, NotReached, "never acted"},
		{"two pauses: each claims its own event", []Step{pause, pause2}, []tracer.Event{
			clusterFault(tracer.PauseBroker, 1), clusterFault(tracer.ResumeBroker, 1),
		}, NotReached, "pause:node=1,at=1s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReacher(c.steps)
			for i := range c.events {
				c.events[i].T = int64(i) * int64(time.Millisecond)
				r.Add(&c.events[i])
			}
			got := r.Result()
			if got.Status != c.want || !strings.Contains(got.Why, c.why) {
				t.Errorf("got %q (%s), want %q with %q", got.Status, got.Why, c.want, c.why)
			}
		})
	}
	t.Run("idle", func(t *testing.T) {
		for _, gap := range []time.Duration{time.Second, 3 * time.Second} {
			r := NewReacher([]Step{idle})
			r.Add(&tracer.Event{Kind: tracer.SendNew, Partition: 0, T: 0})
			r.Add(&tracer.Event{Kind: tracer.SendNew, Partition: 0, T: gap.Nanoseconds()})
			want := NotReached
			if gap >= 2*time.Second {
				want = Reached
			}
			if got := r.Result(); got.Status != want {
				t.Errorf("gap %v: got %q (%s), want %q", gap, got.Status, got.Why, want)
			}
		}
	})
}

func TestStepsOf(t *testing.T) {
	var fs []fault.Fault
	for _, l := range []string{
		"reject:err=NOT_LEADER_OR_FOLLOWER,seq=0,until=seq:2,delay=1500ms,partitions=0",
		"cut:when=after,seq=1",
		"state-expiry:delay=2s",
	} {
		f, err := fault.Parse(l)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	got := StepsOf(fs)
	if len(got) != 3 || got[0].Action != "RejectBeforeAppend" || got[0].Wait != "seq" || got[0].WaitSeq != 2 || !got[0].Fault.BySeq ||
		got[1].Action != "DropResponse" || got[1].Fault.Seq != 1 || got[2].Idle != 2*time.Second {
		t.Errorf("StepsOf: %+v", got)
	}
}
