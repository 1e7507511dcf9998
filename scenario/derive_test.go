package scenario

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/checker/tlc"
)

// A hand-written counterexample: an initial state over partitions, then a
// step per event, written as the spec's event record. A step may set reqs
// and resps (connection 0) for the state it leads to, which a Disconnect
// after it reads.
type tstep struct {
	event       string
	reqs, resps string // the sequences of connection 0; "" leaves the last ones
}

func trace(parts []string, steps ...tstep) []tlc.Step {
	var fn []string
	for _, p := range parts {
		fn = append(fn, p+" :> 0")
	}
	reqs, resps := "<<>>", "<<>>"
	conn := func(seq string) string { return "(0 :> " + seq + ")" }
	out := []tlc.Step{{State: 1, Action: tlc.InitialPredicate, Vars: []tlc.Var{
		{Name: "nextSeq", Value: "(" + strings.Join(fn, " @@ ") + ")"},
		{Name: "reqs", Value: conn(reqs)}, {Name: "resps", Value: conn(resps)},
		{Name: "event", Value: `[act |-> "Init"]`},
	}}}
	for i, s := range steps {
		if s.event == "back" {
			out = append(out, tlc.Step{BackTo: 2})
			continue
		}
		if s.reqs != "" {
			reqs = s.reqs
		}
		if s.resps != "" {
			resps = s.resps
		}
		act := strings.Split(strings.Split(s.event, `act |-> "`)[1], `"`)[0]
		out = append(out, tlc.Step{State: i + 2, Action: act, Vars: []tlc.Var{
			{Name: "reqs", Value: conn(reqs)}, {Name: "resps", Value: conn(resps)},
			{Name: "event", Value: s.event},
		}})
	}
	return out
}

func send(p string, b, ep, seq int) tstep {
	return tstep{event: fmt.Sprintf(`[p |-> %s, ep |-> %d, b |-> %d, seq |-> %d, act |-> "SendNew"]`, p, ep, b, seq)}
}

func resend(p string, b, ep, seq int) tstep {
	return tstep{event: fmt.Sprintf(`[p |-> %s, ep |-> %d, b |-> %d, seq |-> %d, act |-> "Resend"]`, p, ep, b, seq)}
}

// broker is a broker step with an error: RejectBeforeAppend, AppendThenFail, HandleProduce.
func broker(act, p string, b, ep, seq int, err string) tstep {
	return tstep{event: fmt.Sprintf(`[p |-> %s, ep |-> %d, b |-> %d, seq |-> %d, err |-> "%s", act |-> "%s"]`, p, ep, b, seq, err, act)}
}

func receive(p string, b, ep, seq int, err string, off int) tstep {
	return tstep{event: fmt.Sprintf(`[p |-> %s, ep |-> %d, b |-> %d, seq |-> %d, off |-> %d, err |-> "%s", act |-> "Receive"]`, p, ep, b, seq, off, err)}
}

func other(act, p string, fields string) tstep {
	if fields != "" {
		fields = ", " + fields
	}
	return tstep{event: fmt.Sprintf(`[p |-> %s%s, act |-> "%s"]`, p, fields, act)}
}

const (
	nl   = "NOT_LEADER_OR_FOLLOWER"
	rto  = "REQUEST_TIMED_OUT"
	ooo  = "OUT_OF_ORDER_SEQUENCE_NUMBER"
	upid = "UNKNOWN_PRODUCER_ID"
)

var p1 = []string{"p1"}

func TestDerive(t *testing.T) {
	tests := []struct {
		name     string
		steps    []tlc.Step
		schedule []string
		needs    Needs
		notes    []string // substrings, one per note
		loop     int
	}{
		{
			// SeedGap's counterexample, as TLC gives it: seq 1 is sent
			// before seq 0 is refused, whose answer is never read.
			name: "SeedGap",
			steps: trace(p1,
				send("p1", 1, 0, 0), send("p1", 2, 0, 1),
				broker("RejectBeforeAppend", "p1", 1, 0, 0, nl),
				broker("HandleProduce", "p1", 2, 0, 1, "NONE")),
			schedule: []string{"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=0,until=next,delay=1500ms,partitions=0"},
			needs:    Needs{Partitions: 1},
		},
		{
			// SeedStall's: seq 1 is sent after the refusal and before its
			// answer is read; the retries loop forever.
			name: "SeedStall",
			steps: trace(p1,
				send("p1", 1, 0, 0),
				broker("RejectBeforeAppend", "p1", 1, 0, 0, nl),
				send("p1", 2, 0, 1),
				receive("p1", 1, 0, 0, nl, -1),
				broker("HandleProduce", "p1", 2, 0, 1, "NONE"),
				receive("p1", 2, 0, 1, "NONE", 0),
				resend("p1", 1, 0, 0),
				broker("HandleProduce", "p1", 1, 0, 0, ooo),
				receive("p1", 1, 0, 0, ooo, -1),
				tstep{event: "back"}),
			schedule: []string{"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=0,until=next,delay=1500ms,partitions=0"},
			needs:    Needs{Partitions: 1},
			loop:     2,
		},
		{
			// SeedTimeout's: the answer is read before anything else is
			// sent (no hold); the delivery timeout ends the retries.
			name: "delivery timeout",
			steps: trace(p1,
				send("p1", 1, 0, 0),
				broker("RejectBeforeAppend", "p1", 1, 0, 0, nl),
				receive("p1", 1, 0, 0, nl, -1),
				other("ExpireBatch", "p1", "b |-> 1, ep |-> 0, seq |-> 0")),
			schedule: []string{"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=0,partitions=0"},
			needs:    Needs{Partitions: 1, DeliveryTimeout: true},
			notes:    []string{"state 5 ExpireBatch: the client's delivery timeout fails partition 0's batch seq 0 (epoch 0)"},
		},
		{
			// BumpLateAnswer's: seq 0's answer is read as its delivery
			// timeout passes (ReceiveLate), which ends its hold as a Receive
			// would, and needs the timeout.
			name: "late answer",
			steps: trace(p1,
				send("p1", 1, 0, 0), send("p1", 2, 0, 1),
				broker("AppendThenFail", "p1", 1, 0, 0, rto),
				other("ReceiveLate", "p1", `b |-> 1, ep |-> 0, seq |-> 0, err |-> "REQUEST_TIMED_OUT"`),
				other("Bump", "p1", "ep |-> 1"),
				resend("p1", 2, 1, 0)), // after the answer: not what the hold waits for
			schedule: []string{"append-then-error:err=REQUEST_TIMED_OUT,epoch=0,seq=0,until=next,delay=1500ms,partitions=0"},
			needs:    Needs{Partitions: 1, DeliveryTimeout: true},
			notes:    []string{"state 5 ReceiveLate: partition 0's batch seq 0 (epoch 0) is answered REQUEST_TIMED_OUT as its delivery timeout passes"},
		},
		{
			// DedupWindowKafka's: the same sequence faulted twice, so both
			// lines say which try; the second waits for four sends, the
			// last seq 6.
			name: "DedupWindowKafka",
			steps: trace(p1,
				send("p1", 1, 0, 0), broker("HandleProduce", "p1", 1, 0, 0, "NONE"), receive("p1", 1, 0, 0, "NONE", 0),
				send("p1", 2, 0, 1), send("p1", 3, 0, 2),
				broker("AppendThenFail", "p1", 2, 0, 1, rto), receive("p1", 2, 0, 1, rto, -1),
				resend("p1", 2, 0, 1), send("p1", 4, 0, 3), send("p1", 5, 0, 4), send("p1", 6, 0, 5),
				broker("HandleProduce", "p1", 3, 0, 2, "NONE"), receive("p1", 3, 0, 2, "NONE", 2),
				send("p1", 7, 0, 6),
				broker("AppendThenFail", "p1", 2, 0, 1, rto), receive("p1", 2, 0, 1, rto, -1),
				resend("p1", 2, 0, 1),
				broker("HandleProduce", "p1", 4, 0, 3, "NONE"),
				broker("HandleProduce", "p1", 2, 0, 1, ooo)),
			schedule: []string{
				"append-then-error:err=REQUEST_TIMED_OUT,epoch=0,seq=1,try=1,until=next,delay=1500ms,partitions=0",
				"append-then-error:err=REQUEST_TIMED_OUT,epoch=0,seq=1,try=2,until=seq:6,delay=1500ms,partitions=0",
			},
			needs: Needs{Partitions: 1},
		},
		{
			// Off19880Unknown's: the retry of seq 0 is written and its
			// answer lost with the connection (cut after), then the bump
			// writes it again.
			name: "lost response",
			steps: trace(p1,
				send("p1", 1, 0, 0), send("p1", 2, 0, 1),
				broker("RejectBeforeAppend", "p1", 1, 0, 0, nl),
				receive("p1", 1, 0, 0, nl, -1),
				resend("p1", 1, 0, 0),
				broker("HandleProduce", "p1", 2, 0, 1, upid),
				receive("p1", 2, 0, 1, upid, -1),
				tstep{event: `[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0, err |-> "NONE", act |-> "HandleProduce"]`,
					reqs: "<<>>", resps: `<<[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0, off |-> 0, err |-> "NONE"]>>`},
				tstep{event: `[c |-> 0, act |-> "Disconnect"]`, resps: "<<>>"},
				other("Bump", "p1", "ep |-> 1"),
				resend("p1", 1, 1, 0),
				broker("HandleProduce", "p1", 1, 1, 0, "NONE")),
			schedule: []string{
				"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=0,try=1,until=next,delay=1500ms,partitions=0",
				"cut:when=after,epoch=0,seq=0,try=2,partitions=0",
			},
			needs: Needs{Partitions: 1},
		},
		{
			// A connection lost with two requests unhandled: cut before the
			// first, the other lost with it.
			name: "unhandled requests",
			steps: trace(p1,
				tstep{event: `[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0, act |-> "SendNew"]`, reqs: `<<[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0]>>`},
				tstep{event: `[p |-> p1, ep |-> 0, b |-> 2, seq |-> 1, act |-> "SendNew"]`,
					reqs: `<<[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0], [p |-> p1, ep |-> 0, b |-> 2, seq |-> 1]>>`},
				tstep{event: `[c |-> 0, act |-> "Disconnect"]`, reqs: "<<>>"}),
			schedule: []string{"cut:when=before,epoch=0,seq=0,partitions=0"},
			needs:    Needs{Partitions: 1},
			notes:    []string{"state 4 Disconnect: 1 more request(s) outstanding on the connection are lost with it (2 unhandled, 0 answers unread)"},
		},
		{
			// ExpiryRuleOn's: the client's re-arm bound passes, the broker
			// forgets the producer while the partition is idle; the first
			// attempt after is refused. The bound passing is a note.
			name: "ExpiryRuleOn",
			steps: trace(p1,
				send("p1", 1, 0, 0), broker("HandleProduce", "p1", 1, 0, 0, "NONE"), receive("p1", 1, 0, 0, "NONE", 0),
				other("BoundPasses", "p1", ""),
				other("ExpireProducerState", "p1", ""),
				send("p1", 2, 0, 1), send("p1", 3, 0, 2),
				broker("RejectBeforeAppend", "p1", 2, 0, 1, nl),
				broker("HandleProduce", "p1", 3, 0, 2, "NONE")),
			schedule: []string{
				"state-expiry:delay=2s",
				"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,idle=3s,until=next,delay=1500ms,partitions=0",
			},
			needs: Needs{Partitions: 1, ExpiryMs: 2000, ExpiryCheckMs: 500, Idle: true},
			notes: []string{"state 5 BoundPasses: time passes on partition 0 (the client's re-arm bound since its last acknowledged batch): not a fault; a client with a re-arm rule needs its bound below the broker's producer.id.expiration.ms (2s)"},
		},
		{
			// After the expiry the fault is on the second attempt: it keeps
			// its sequence, and a note says the partition must idle first.
			name: "expiry, later fault",
			steps: trace(p1,
				send("p1", 1, 0, 0), broker("HandleProduce", "p1", 1, 0, 0, "NONE"), receive("p1", 1, 0, 0, "NONE", 0),
				other("ExpireProducerState", "p1", ""),
				send("p1", 2, 0, 1), send("p1", 3, 0, 2),
				broker("HandleProduce", "p1", 2, 0, 1, "NONE"),
				broker("RejectBeforeAppend", "p1", 3, 0, 2, nl)),
			schedule: []string{
				"state-expiry:delay=2s",
				"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=2,partitions=0",
			},
			needs: Needs{Partitions: 1, ExpiryMs: 2000, ExpiryCheckMs: 500, Idle: true},
			notes: []string{"state 5 ExpireProducerState: the partition must then be idle for 3s; the fault of state 9"},
		},
		{
			// An expiry with no fault after it: the idle phase is a note.
			name: "expiry alone",
			steps: trace(p1,
				send("p1", 1, 0, 0), broker("HandleProduce", "p1", 1, 0, 0, "NONE"), receive("p1", 1, 0, 0, "NONE", 0),
				other("ExpireProducerState", "p1", ""),
				send("p1", 2, 0, 1)),
			schedule: []string{"state-expiry:delay=2s"},
			needs:    Needs{Partitions: 1, ExpiryMs: 2000, ExpiryCheckMs: 500, Idle: true},
			notes:    []string{"state 5 ExpireProducerState: no fault on partition 0 follows the expiry"},
		},
		{
			// Two partitions: p2 is partition 1, and its epochs count from
			// its own first (the producer's epoch 1 is p2's first), a
			// resend among the sends it waits for.
			name: "two partitions",
			steps: trace([]string{"p1", "p2"},
				send("p1", 1, 0, 0), broker("HandleProduce", "p1", 1, 0, 0, upid), receive("p1", 1, 0, 0, upid, -1),
				other("Bump", "p1", "ep |-> 1"),
				send("p2", 1, 1, 0), send("p2", 2, 1, 1),
				broker("AppendThenFail", "p2", 1, 1, 0, rto),
				broker("AppendThenFail", "p2", 2, 1, 1, rto),
				receive("p2", 1, 1, 0, rto, -1),
				resend("p2", 1, 1, 0),
				receive("p2", 2, 1, 1, rto, -1),
				other("ResendByApp", "p2", "b |-> 2")),
			schedule: []string{
				"append-then-error:err=REQUEST_TIMED_OUT,epoch=0,seq=0,until=next,delay=1500ms,partitions=1",
				"append-then-error:err=REQUEST_TIMED_OUT,epoch=0,seq=1,until=seq:0,delay=1500ms,partitions=1",
			},
			needs: Needs{Partitions: 2, AppResends: true},
			notes: []string{"state 13 ResendByApp: the application produces partition 1's failed batch again"},
		},
		{
			// A batch's tries count across an epoch bump, as the selector
			// try=N does; a sequence faulted twice in its epoch says which.
			name: "tries across a bump",
			steps: trace(p1,
				send("p1", 1, 0, 0), broker("RejectBeforeAppend", "p1", 1, 0, 0, nl), receive("p1", 1, 0, 0, nl, -1),
				resend("p1", 1, 0, 0), broker("HandleProduce", "p1", 1, 0, 0, ooo), receive("p1", 1, 0, 0, ooo, -1),
				other("Bump", "p1", "ep |-> 1"),
				resend("p1", 1, 1, 0), broker("RejectBeforeAppend", "p1", 1, 1, 0, nl), receive("p1", 1, 1, 0, nl, -1),
				resend("p1", 1, 1, 0), broker("AppendThenFail", "p1", 1, 1, 0, rto), receive("p1", 1, 1, 0, rto, -1)),
			schedule: []string{
				"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=0,partitions=0",
				"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=1,seq=0,try=3,partitions=0",
				"append-then-error:err=REQUEST_TIMED_OUT,epoch=1,seq=0,try=4,partitions=0",
			},
			needs: Needs{Partitions: 1},
		},
		{
			// The connection is lost with a refused attempt's answer unread:
			// one cut does both (an attempt gets one fault), and a cut holds
			// no answer. The sends after the loss wait for nothing.
			name: "a fault's answer lost",
			steps: trace(p1,
				tstep{event: `[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0, act |-> "SendNew"]`, reqs: `<<[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0]>>`},
				tstep{event: `[p |-> p1, ep |-> 0, b |-> 2, seq |-> 1, act |-> "SendNew"]`,
					reqs: `<<[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0], [p |-> p1, ep |-> 0, b |-> 2, seq |-> 1]>>`},
				tstep{event: `[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0, err |-> "NOT_LEADER_OR_FOLLOWER", act |-> "RejectBeforeAppend"]`,
					reqs: `<<[p |-> p1, ep |-> 0, b |-> 2, seq |-> 1]>>`, resps: `<<[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0, off |-> -1, err |-> "NOT_LEADER_OR_FOLLOWER"]>>`},
				tstep{event: `[c |-> 0, act |-> "Disconnect"]`, reqs: "<<>>", resps: "<<>>"},
				resend("p1", 1, 0, 0), resend("p1", 2, 0, 1)),
			schedule: []string{"cut:when=before,epoch=0,seq=0,partitions=0"},
			needs:    Needs{Partitions: 1},
			notes: []string{
				"state 5 Disconnect: the client sends again on partition 0 (until=next) before the connection is lost",
				"state 5 Disconnect loses the answer of state 4's RejectBeforeAppend: one cut:when=before for both",
				"state 5 Disconnect: 1 more request(s) outstanding on the connection are lost with it (1 unhandled, 1 answers unread)",
			},
		},
	}
	coord := func(act, fields string) tstep { return tstep{event: "[" + fields + `, act |-> "` + act + `"]`} }
	tests = append(tests, []struct {
		name     string
		steps    []tlc.Step
		schedule []string
		needs    Needs
		notes    []string
		loop     int
	}{
		{
			// TxnTV1's: the Produce delayed, its batch expired, the abort and
			// the bump; the late Produce handled after the InitProducerId
			// answer, the last step before it the proxy sees.
			name: "TxnTV1",
			steps: trace(p1,
				coord("BeginTxn", "t |-> 1"),
				coord("AddPartitions", "p |-> p1, ep |-> 0"),
				coord("ReceiveCoord", `p |-> p1, api |-> "AddPartitions", ep |-> 0, err |-> "NONE"`),
				tstep{event: `[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0, act |-> "SendNew"]`, reqs: "<<[p |-> p1, b |-> 1, ep |-> 0, seq |-> 0]>>"},
				tstep{event: `[c |-> 0, act |-> "DelayProduce"]`, reqs: "<<>>"},
				other("ExpireBatch", "p1", "b |-> 1, ep |-> 0, seq |-> 0"),
				coord("EndTxn", "t |-> 1, commit |-> FALSE, ep |-> 0"),
				coord("ReceiveCoord", `p |-> p1, api |-> "EndTxn", ep |-> 0, err |-> "NONE"`),
				coord("InitProducerId", "ep |-> 0"),
				coord("WriteMarker", `p |-> p1, ep |-> 0, ctl |-> "ABORT"`),
				coord("ReceiveCoord", `p |-> p1, api |-> "InitPid", ep |-> 1, err |-> "NONE"`),
				coord("BeginTxn", "t |-> 2"),
				broker("HandleLateProduce", "p1", 1, 0, 0, "NONE")),
			schedule: []string{"late-produce:until=answer:init-pid,epoch=0,seq=0,partitions=0"},
			needs:    Needs{Partitions: 1, DeliveryTimeout: true},
			notes:    []string{"state 7 ExpireBatch"},
		},
		{
			// TxnTV1EndTxn's shape: the EndTxn delayed, handled after the
			// next transaction's AddPartitionsToTxn answer; a lost answer of
			// the second EndTxn; the coordinator's timeout.
			name: "late EndTxn",
			steps: trace(p1,
				coord("EndTxn", "t |-> 1, commit |-> TRUE, ep |-> 0"),
				coord("DelayEndTxn", "commit |-> TRUE, ep |-> 0"),
				coord("ReceiveCoord", `p |-> p1, api |-> "EndTxn", ep |-> 0, err |-> "NONE"`),
				coord("AddPartitions", "p |-> p1, ep |-> 0"),
				coord("ReceiveCoord", `p |-> p1, api |-> "AddPartitions", ep |-> 0, err |-> "NONE"`),
				coord("HandleLateCoord", `api |-> "EndTxn", commit |-> TRUE, ep |-> 0, err |-> "NONE", st |-> "Ongoing"`),
				coord("EndTxn", "t |-> 2, commit |-> FALSE, ep |-> 0"),
				coord("LoseCoordAnswer", `api |-> "EndTxn", err |-> "NONE"`),
				coord("CoordTimeout", "ep |-> 1")),
			schedule: []string{"late-txn:api=end-txn,commit=true,txn=1,until=answer:add-partitions", "txn-cut:api=end-txn,txn=2"},
			needs:    Needs{Partitions: 1, TxnTimeout: true},
			notes:    []string{"state 10 CoordTimeout"},
		},
		{
			// A late request the counterexample never handles is never sent.
			name: "never handled",
			steps: trace(p1,
				tstep{event: `[p |-> p1, ep |-> 0, b |-> 1, seq |-> 0, act |-> "SendNew"]`, reqs: "<<[p |-> p1, b |-> 1, ep |-> 0, seq |-> 0]>>"},
				tstep{event: `[c |-> 0, act |-> "DelayProduce"]`, reqs: "<<>>"}),
			schedule: []string{"late-produce:epoch=0,seq=0,partitions=0"},
			needs:    Needs{Partitions: 1},
			notes:    []string{"never reaches the broker"},
		},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Derive(tt.steps)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Schedule, tt.schedule) {
				t.Errorf("schedule:\n  %s\nwant:\n  %s", strings.Join(s.Schedule, "\n  "), strings.Join(tt.schedule, "\n  "))
			}
			if s.Needs != tt.needs {
				t.Errorf("needs %+v, want %+v", s.Needs, tt.needs)
			}
			if len(s.Notes) != len(tt.notes) {
				t.Errorf("notes %q, want %d", s.Notes, len(tt.notes))
			} else {
				for i, n := range tt.notes {
					if !strings.Contains(s.Notes[i], n) {
						t.Errorf("note %q lacks %q", s.Notes[i], n)
					}
				}
			}
			if s.Loop != tt.loop {
				t.Errorf("loop %d, want %d", s.Loop, tt.loop)
			}
			if want := len(tt.steps) - 1; s.Loop != 0 {
				want--
				if len(s.Steps) != want {
					t.Errorf("%d steps, want %d", len(s.Steps), want)
				}
			} else if len(s.Steps) != want {
				t.Errorf("%d steps, want %d", len(s.Steps), want)
			}
		})
	}
}

// The steps keep the event's fields in a fixed order, act apart.
func TestDeriveSteps(t *testing.T) {
	s, err := Derive(trace(p1, send("p1", 1, 0, 0), broker("RejectBeforeAppend", "p1", 1, 0, 0, nl)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range s.Steps {
		got = append(got, fmt.Sprintf("%d %s", st.State, st))
	}
	want := []string{"2 SendNew p=p1 b=1 ep=0 seq=0", "3 RejectBeforeAppend p=p1 b=1 ep=0 seq=0 err=NOT_LEADER_OR_FOLLOWER"}
	if !slices.Equal(got, want) {
		t.Errorf("steps %q, want %q", got, want)
	}
}

func TestDeriveErrors(t *testing.T) {
	noEvent := trace(p1, send("p1", 1, 0, 0))
	noEvent[1].Vars = noEvent[1].Vars[:2]
	noState := trace(p1, send("p1", 1, 0, 0), tstep{event: `[c |-> 0, act |-> "Disconnect"]`})
	noState[1].Vars = noState[1].Vars[2:]
	tests := []struct {
		name  string
		steps []tlc.Step
		want  string
	}{
		{"unknown action", trace(p1, other("HandBack", "p1", "")), "state 2: action HandBack has no rule in scenario.Derive: add one"},
		{"no event", noEvent, "state 2 (SendNew): no variable event"},
		{"bad event", trace(p1, tstep{event: `[act |-> "SendNew", p |-> <<p1]`}), "state 2: event: value"},
		{"no send", trace(p1, broker("RejectBeforeAppend", "p1", 1, 0, 0, nl)), "state 2: no send of partition p1 batch 1 (epoch 0, seq 0) before it"},
		{"disconnect, no state", noState, "state 3 Disconnect: the state before it has no variable reqs"},
		{"disconnect, nothing outstanding", trace(p1, send("p1", 1, 0, 0), tstep{event: `[c |-> 0, act |-> "Disconnect"]`}),
			"state 3: Disconnect of connection 0 with nothing outstanding"},
		{"initial state only", trace(p1), "the counterexample has no step after its initial state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Derive(tt.steps)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseValue(t *testing.T) {
	v, err := parseValue("( p1 :> << [ep |-> 0, st |-> \"sent\"],\n      [ep |-> -1, st |-> \"unsent\"] >> @@\n  p2 :> <<>> )")
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := v.get("p1")
	st, _ := seq.elems[1].get("st")
	if len(v.keys) != 2 || v.keys[1] != "p2" || len(seq.elems) != 2 || st.text() != "unsent" {
		t.Errorf("parsed %+v", v)
	}
	for _, bad := range []string{"[a |-> 1", "<<1, 2>> x", "(p1 :> 1 @@)", "[a 1]", "{1,}"} {
		if _, err := parseValue(bad); err == nil {
			t.Errorf("parseValue(%q): no error", bad)
		}
	}
}
