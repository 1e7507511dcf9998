package fault

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseRoundTrip(t *testing.T) {
	for _, s := range []string{
		"seed-race", "seed-race:delay=100ms", "not-enough-replicas:rate=0.1,count=5",
		"timeout-after-append:partitions=0+3", "drop-connection:count=-1", "slow:delay=1s",
		"reject:err=INVALID_RECORD", "reject:count=2,attempt=1,err=NOT_LEADER_OR_FOLLOWER,partitions=0",
		"append-then-error:seq=5,err=REQUEST_TIMED_OUT", "not-leader:err=NOT_ENOUGH_REPLICAS,partitions=1",
	} {
		f, err := Parse(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if got := f.String(); got != s {
			t.Errorf("Parse(%q).String() = %q", s, got)
		}
	}
	f, _ := Parse("seed-race:delay=100ms,partitions=2")
	if want := (Fault{Kind: SeedRace, Count: -1, Delay: 100 * time.Millisecond, Partitions: []int32{2}}); !reflect.DeepEqual(f, want) {
		t.Fatalf("got %+v, want %+v", f, want)
	}
}

// Parse(String(f)) is f for every kind with every parameter it takes, each
// alone and all together; a kind refuses the parameters it has no use for.
func TestParseStringEveryParameter(t *testing.T) {
	samples := []string{"rate=0.5", "count=3", "delay=2s", "partitions=1+4", "attempt=2", "epoch=1", "seq=7",
		"try=2", "idle=300ms", "after=answer", "when=after", "when=before", "err=INVALID_RECORD", "until=next", "until=seq:5",
		"node=2", "leader=3", "for=4s", "every=1s", "at=1s", "records=100", "random=2s", "api=end-txn", "commit=true", "txn=2"}
	selectors := "attempt epoch seq try idle after"
	triggers := "at records random"
	takes := map[Kind]string{
		SeedRace:            "rate count delay partitions until err seq",
		NotEnoughReplicas:   "rate count delay partitions until err " + selectors,
		NotLeader:           "rate count delay partitions until err " + selectors,
		TimeoutAfterAppend:  "rate count delay partitions until err " + selectors,
		Reject:              "rate count delay partitions until err " + selectors,
		AppendThenError:     "rate count delay partitions until err " + selectors,
		Hold:                "rate count delay partitions until " + selectors,
		Cut:                 "rate count partitions when " + selectors,
		DropConnection:      "rate count delay partitions",
		TimeoutBeforeAppend: "rate count delay partitions",
		Slow:                "rate count delay partitions",
		StateExpiry:         "delay",
		MoveLeaders:         "for every " + triggers,
		Pause:               "node leader for " + triggers,
		Kill:                "node leader for " + triggers,
		KillController:      "for " + triggers,
		RollingRestart:      triggers,
		Isolate:             "node leader for " + triggers,
		SlowNode:            "delay node leader for " + triggers,
		LateProduce:         "rate count delay partitions " + selectors,
		LateTxn:             "rate count delay api commit txn",
		TxnCut:              "rate count api commit txn",
	}
	if len(takes) != len(Kinds()) {
		t.Fatalf("the test knows %d kinds, Kinds() %d", len(takes), len(Kinds()))
	}
	roundTrip := func(s string) bool {
		t.Helper()
		f, err := Parse(s)
		if err != nil {
			return false
		}
		g, err := Parse(f.String())
		if err != nil || !reflect.DeepEqual(f, g) {
			t.Errorf("Parse(%q) = %+v; its String %q parses to %+v, %v", s, f, f.String(), g, err)
		}
		return true
	}
	for k := range Kinds() {
		var base []string
		if eff := (&Fault{Kind: k}).Effect(); eff.ErrAnswer && eff.Err == nil {
			base = append(base, "err=NOT_LEADER_OR_FOLLOWER")
		}
		if k == Hold {
			base = append(base, "delay=1s")
		}
		if (&Fault{Kind: k}).Effect().Scope == OnTxn {
			base = append(base, "api=end-txn")
		}
		if k == MoveLeaders {
			base = append(base, "for=4s") // every repeats during for
		}
		var all []string
		for _, kv := range samples {
			key, _, _ := strings.Cut(kv, "=")
			// the sample, and the base's parameters of other keys
			ps := slices.DeleteFunc(slices.Clone(base), func(p string) bool { return strings.HasPrefix(p, key+"=") })
			ps = append(ps, kv)
			if key == "until" && !slices.Contains(ps, "delay=1s") {
				ps = append(ps, "delay=1s")
			}
			s := string(k) + ":" + strings.Join(ps, ",")
			want := slices.Contains(strings.Fields(takes[k]), key)
			if got := roundTrip(s); got != want {
				_, err := Parse(s)
				t.Errorf("Parse(%q): accepted %v, want %v (%v)", s, got, want, err)
			}
			// one trigger: at stands for the three; node for node or leader
			if want && kv != "until=seq:5" && kv != "when=before" && kv != "records=100" && kv != "random=2s" && kv != "leader=3" {
				all = append(all, kv)
			}
		}
		if k == Hold || slices.Contains(all, "until=next") {
			all = slices.DeleteFunc(all, func(p string) bool { return strings.HasPrefix(p, "delay=") })
			all = append(all, "delay=1s")
		}
		if !slices.Contains(all, "err=INVALID_RECORD") {
			all = append(all, base...)
			all = slices.Compact(all)
		}
		if s := string(k) + ":" + strings.Join(slices.Compact(all), ","); !roundTrip(s) {
			_, err := Parse(s)
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
	// The values themselves, and the defaults String leaves out.
	f, err := Parse("reject:err=INVALID_RECORD,epoch=0,seq=3,try=2,idle=250ms,after=answer,until=seq:4,delay=1s,partitions=0")
	want := Fault{Kind: Reject, Rate: 1, Count: 1, Delay: time.Second, Partitions: []int32{0}, ByEpoch: true, BySeq: true, Seq: 3,
		Try: 2, Idle: 250 * time.Millisecond, AfterAnswer: true, Error: f.Error, UntilSeq: true, UntilK: 4}
	if err != nil || !reflect.DeepEqual(f, want) || f.Error.Code != 87 {
		t.Fatalf("got %+v, %v\nwant %+v", f, err, want)
	}
	if s := f.String(); s != "reject:delay=1s,epoch=0,seq=3,try=2,idle=250ms,after=answer,err=INVALID_RECORD,until=seq:4,partitions=0" {
		t.Fatalf("String: %s", s)
	}
	for in, want := range map[string]string{"cut:when=before": "cut", "cut:when=after": "cut:when=after", "state-expiry:delay=2s": "state-expiry:delay=2s"} {
		if f, err := Parse(in); err != nil || f.String() != want {
			t.Errorf("Parse(%q).String() = %q, %v; want %q", in, f.String(), err, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"teleport":                            `unknown fault "teleport"; known faults: append-then-error, cut, drop-connection, hold`,
		"reject":                              "err=NAME is required",
		"reject:err=BOGUS":                    `"BOGUS" is not a Kafka error name`,
		"reject:err=NONE":                     "NONE is no error",
		"reject:err=INVALID_RECORD,attempt=0": "must be 1 or more",
		"reject:err=INVALID_RECORD,seq=-2":    "must not be negative",
		"drop-connection:err=INVALID_RECORD":  "answers no error of its own",
		"slow:attempt=2":                      "attempt, epoch, seq, try, idle and after select a partition's attempts, which slow does not act on",
		"seed-race:delay":                     `parameter "delay" is not key=value`,
		"seed-race:delay=-1s":                 "must not be negative",
		"not-leader:rate=2":                   "must be within 0..1",
		"not-leader:count=-2":                 "must be -1",
		"not-leader:partitions=a":             `"a" is not a partition number`,
		"not-leader:colour=blue":              "unknown parameter",
		// the selectors
		"reject:err=INVALID_RECORD,epoch=-1":          `fault "reject:err=INVALID_RECORD,epoch=-1": epoch: must not be negative`,
		"reject:err=INVALID_RECORD,epoch=x":           `epoch: strconv.Atoi`,
		"reject:err=INVALID_RECORD,try=0":             `fault "reject:err=INVALID_RECORD,try=0": try: must be 1 or more`,
		"reject:err=INVALID_RECORD,idle=0s":           `fault "reject:err=INVALID_RECORD,idle=0s": idle: must be positive`,
		"reject:err=INVALID_RECORD,idle=soon":         `idle: time: invalid duration`,
		"reject:err=INVALID_RECORD,after=send":        `fault "reject:err=INVALID_RECORD,after=send": after: "send": the one condition is answer`,
		"reject:err=INVALID_RECORD,idle=1s,attempt=1": "idle selects no partition's first attempt",
		"drop-connection:try=2":                       "which drop-connection does not act on",
		"slow:after=answer":                           "which slow does not act on",
		"timeout-before-append:idle=1s":               "which timeout-before-append does not act on",
		"state-expiry:epoch=0":                        "which state-expiry does not act on",
		// the actions and conditions
		"reject:err=INVALID_RECORD,until=next":        `fault "reject:err=INVALID_RECORD,until=next": until holds the answer at most delay=D: set it`,
		"reject:err=INVALID_RECORD,until=seq:3":       "until holds the answer at most delay=D",
		"reject:err=INVALID_RECORD,until=seq:-1":      `fault "reject:err=INVALID_RECORD,until=seq:-1": until: must not be negative`,
		"reject:err=INVALID_RECORD,until=seq:x":       `until: strconv.ParseInt`,
		"reject:err=INVALID_RECORD,until=later":       `fault "reject:err=INVALID_RECORD,until=later": until: "later": the conditions are next`,
		"reject:err=INVALID_RECORD,when=after":        `fault "reject:err=INVALID_RECORD,when=after": when: only cut has a when (before or after), not reject`,
		"hold:delay=1s,when=before":                   "when: only cut has a when",
		"hold":                                        `fault "hold": delay=D is required`,
		"hold:delay=1s,err=INVALID_RECORD":            `fault "hold:delay=1s,err=INVALID_RECORD": err: hold answers no error of its own`,
		"cut:err=INVALID_RECORD":                      "err: cut answers no error of its own",
		"cut:when=later":                              `fault "cut:when=later": when: "later": want before`,
		"cut:delay=1s":                                `fault "cut:delay=1s": delay: cut holds no answer`,
		"cut:when=after,until=next,delay=1s":          "until holds an attempt's answer, which cut does not",
		"drop-connection:until=next,delay=1s":         "which drop-connection does not",
		"state-expiry:rate=0.5":                       `fault "state-expiry:rate=0.5": state-expiry takes only delay=D`,
		"state-expiry:count=1":                        "state-expiry takes only delay=D",
		"state-expiry:partitions=1":                   "state-expiry takes only delay=D",
		"state-expiry:err=INVALID_RECORD":             "answers no error of its own",
		"not-leader:delay=1s,until=seq:2,colour=blue": "unknown parameter",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

// A schedule file is faults a line, comments and blank lines skipped; a bad
// line is named by file and line.
func TestReadSchedule(t *testing.T) {
	good := "# SeedGap, partition 0\n\nreject:err=NOT_LEADER_OR_FOLLOWER,attempt=1,until=next,delay=1s,partitions=0\n  seed-race:partitions=1  \n"
	fs, err := ReadSchedule(strings.NewReader(good), "s.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 || fs[0].Kind != Reject || !fs[0].UntilNext || fs[0].Attempt != 1 || fs[1].Kind != SeedRace {
		t.Fatalf("got %+v", fs)
	}
	for in, want := range map[string]string{
		good + "reject\n":                         "s.txt:5: fault \"reject\": err=NAME is required",
		"seed-race\nteleport:x=1\n":               `s.txt:2: unknown fault "teleport"`,
		"seed-race\n" + strings.Repeat("x", 5000): "s.txt:2: a line longer than 4096 bytes",
	} {
		if _, err := ReadSchedule(strings.NewReader(in), "s.txt"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadSchedule(%.40q) = %v, want %q", in, err, want)
		}
	}
}

// Attempts numbers a partition's attempts, its distinct epochs, a batch's
// tries, idleness and answers as the selectors count them.
func TestAttempts(t *testing.T) {
	fs := []Fault{{Kind: Reject, Try: 2}}
	a := NewAttempts(fs)
	if !a.CountsTries() || NewAttempts(nil).CountsTries() {
		t.Fatal("tries are counted only when a fault selects by try")
	}
	t0 := time.Unix(100, 0)
	next := func(p int32, rec, pid int64, ep int16, seq int32, at time.Duration) Attempt {
		return a.Next(p, BatchOf(rec, pid, ep, seq), pid, ep, seq, t0.Add(at))
	}
	got := []Attempt{
		next(0, 10, 7, 0, 0, 0),                    // p0's first
		next(1, 20, 7, 0, 0, time.Millisecond),     // p1's first
		next(0, 10, 7, 0, 0, 300*time.Millisecond), // p0's batch of record 10 again
		next(0, 10, 7, 1, 0, 350*time.Millisecond), // again, renumbered after a bump: the same batch
		next(0, -1, 8, 0, 0, 400*time.Millisecond), // a new producer id, no kcheck ids
		next(0, -1, 8, 0, 0, 400*time.Millisecond), // that batch again
		next(0, -1, 8, 1, 0, 400*time.Millisecond), // bumped: without ids, another batch
	}
	a.Answered(0)
	got = append(got, next(0, 30, 8, 1, 5, time.Second), next(1, 21, 7, 0, 3, time.Second))
	want := []Attempt{
		{N: 1, Epoch: 0, Seq: 0, Try: 1, Idle: -1},
		{N: 1, Epoch: 0, Seq: 0, Try: 1, Idle: -1},
		{N: 2, Epoch: 0, Seq: 0, Try: 2, Idle: 300 * time.Millisecond},
		{N: 3, Epoch: 1, Seq: 0, Try: 3, Idle: 50 * time.Millisecond},
		{N: 4, Epoch: 2, Seq: 0, Try: 1, Idle: 50 * time.Millisecond},
		{N: 5, Epoch: 2, Seq: 0, Try: 2, Idle: 0},
		{N: 6, Epoch: 3, Seq: 0, Try: 1, Idle: 0},
		{N: 7, Epoch: 3, Seq: 5, Try: 1, Idle: 600 * time.Millisecond, AfterAnswer: true},
		{N: 2, Epoch: 0, Seq: 3, Try: 1, Idle: 999 * time.Millisecond},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
	for s, sel := range map[string][]bool{
		"reject:err=INVALID_RECORD":                          {true, true, true, true, true, true, true, true, true},
		"reject:err=INVALID_RECORD,attempt=2":                {false, false, true, false, false, false, false, false, true},
		"reject:err=INVALID_RECORD,epoch=0,seq=0":            {true, true, true, false, false, false, false, false, false},
		"reject:err=INVALID_RECORD,try=2":                    {false, false, true, false, false, true, false, false, false},
		"reject:err=INVALID_RECORD,idle=300ms":               {false, false, true, false, false, false, false, true, true},
		"reject:err=INVALID_RECORD,after=answer":             {false, false, false, false, false, false, false, true, false},
		"reject:err=INVALID_RECORD,epoch=3,seq=5,idle=500ms": {false, false, false, false, false, false, false, true, false},
		"seed-race": {true, true, false, false, false, false, false, false, false},
	} {
		f, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		for i, at := range got {
			if f.Selects(at) != sel[i] {
				t.Errorf("%s selects %+v: %v, want %v", s, at, f.Selects(at), sel[i])
			}
		}
	}
}

func TestParseClusterErrors(t *testing.T) {
	for in, want := range map[string]string{
		"pause:node=2,leader=1":            "already acts on node 2: give node or leader",
		"kill:leader=1,node=2":             "already acts on the leader of partition 1",
		"pause:node=-1":                    `"-1" is not a node id`,
		"pause:at=1s,records=10":           "one trigger (at, records or random); it already has at=1s",
		"pause:records=0":                  "want 1 or more records acknowledged",
		"pause:for=0s":                     "must be positive",
		"pause:rate=0.5":                   "pause acts on the cluster once: it takes only node or leader, for, at, records, random",
		"pause:partitions=1":               "acts on the cluster once",
		"kill:delay=1s":                    "kill holds no answer",
		"slow-node:delay=0s":               "delay=D must be positive",
		"kill-controller:node=1":           "kill-controller picks its own node",
		"rolling-restart:for=1s":           "rolling-restart lasts as long as it takes",
		"pause:every=1s":                   "every repeats move-leaders only",
		"move-leaders:every=1s":            "every=D repeats the moves during for=D",
		"reject:err=INVALID_RECORD,node=1": "node, leader, for, every, at, records and random are for faults on a cluster's nodes, not reject",
		"hold:delay=1s,records=5":          "not hold",
		"pause:attempt=1":                  "which pause does not act on",
		"isolate:leader=x":                 `"x" is not a partition number`,
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", in, err, want)
		}
	}
	f, err := Parse("slow-node:delay=1s,node=2,for=4s,records=100")
	want := Fault{Kind: SlowNode, Rate: 1, Count: 1, Delay: time.Second,
		Cluster: Cluster{ByNode: true, Node: 2, Leader: -1, For: 4 * time.Second, Trigger: Trigger{Records: 100}}}
	if err != nil || !reflect.DeepEqual(f, want) {
		t.Fatalf("got %+v, %v\nwant %+v", f, err, want)
	}
	if f, _ := Parse("pause"); f.LeaderOf() != 0 || f.For != 3*time.Second || f.Trigger != (Trigger{}) {
		t.Errorf("pause's defaults: %+v", f)
	}
}

// node=coordinator: a fault on one node may act on the client's transaction
// coordinator; it is node or leader, not both.
func TestCoordinatorTarget(t *testing.T) {
	f, err := Parse("pause:node=coordinator,for=2s,records=10")
	if err != nil || !f.Coordinator || f.ByNode || f.String() != "pause:node=coordinator,for=2s,records=10" {
		t.Fatalf("Parse: %+v %v (String %q)", f, err, f.String())
	}
	for _, s := range []string{"pause:node=coordinator,leader=1", "pause:leader=1,node=coordinator", "move-leaders:node=coordinator"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

// A late fault waits for a transactional condition, and only a late one does.
func TestLateUntil(t *testing.T) {
	for _, s := range []string{"late-produce:until=answer:init-pid,epoch=0,seq=0,partitions=0",
		"late-txn:api=end-txn,commit=true,txn=1,until=answer:add-partitions", "late-txn:delay=3s,api=end-txn", "late-produce:until=send:produce"} {
		f, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if g, err := Parse(f.String()); err != nil || !reflect.DeepEqual(f, g) {
			t.Errorf("Parse(%q) = %+v; its String %q parses to %+v, %v", s, f, f.String(), g, err)
		}
	}
	for _, s := range []string{"reject:err=NOT_LEADER_OR_FOLLOWER,until=answer:end-txn", "late-produce:until=next,delay=1s",
		"late-txn:until=answer:end-txn", "late-produce:until=answer:fetch", "txn-cut:api=produce", "hold:delay=1s,api=end-txn"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
	for _, s := range []string{"late-produce:seq=0", "late-txn:api=end-txn", "txn-cut:api=end-txn"} {
		f, _ := Parse(s)
		if err := CheckKfake([]Fault{f}); err == nil || !strings.Contains(err.Error(), "needs kcheck proxy") {
			t.Errorf("CheckKfake(%s): %v", s, err)
		}
	}
	f, _ := Parse("txn-cut:api=end-txn,commit=false,txn=2")
	if !f.SelectsTxn("end-txn", false, 2) || f.SelectsTxn("end-txn", true, 2) || f.SelectsTxn("end-txn", false, 1) || f.SelectsTxn("init-pid", false, 2) {
		t.Errorf("%s selects the wrong requests", f)
	}
}
