package proxy_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/proxy"
	"github.com/kcheck/kcheck/workload"
)

// through runs kcheck's own producer (with the given rules) against a kfake
// cluster through the proxy, which injects faults, and returns the run's
// summary and the proxy's verified trace.
func through(t *testing.T, rules bool, faults []fault.Fault, seed int64) (*workload.Summary, *verify.Report, string) {
	sum, rep, path, _ := throughBoth(t, rules, faults, seed, 2*time.Second)
	return sum, rep, path
}

// throughBoth is through, also returning the producer's own trace.
func throughBoth(t *testing.T, rules bool, faults []fault.Fault, seed int64, deliveryTimeout time.Duration) (*workload.Summary, *verify.Report, string, string) {
	t.Helper()
	// kfake emulating Kafka 4.1, the seed's broker: it accepts any first
	// sequence from a producer it has no state for.
	cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(workload.Emulations["4.1"].Versions))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	path := filepath.Join(t.TempDir(), "proxy.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var logs bytes.Buffer
	ctx := context.Background()
	own := filepath.Join(t.TempDir(), "producer.jsonl")
	p, err := proxy.Start(ctx, proxy.Config{
		Listen: "127.0.0.1:0", Upstream: cluster.ListenAddrs()[0], Topic: "t",
		Broker: tracer.Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"},
		Faults: faults, Seed: seed, Trace: f,
		Logf: func(format string, args ...any) { logs.WriteString(strings.TrimSpace(format) + "\n") },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sum, err := workload.Run(ctx, workload.Config{
		Brokers: []string{p.Addr()}, BrokerVersion: "4.1.0", Topic: "t", Partitions: 8, Records: 800, ValueBytes: 100, Keys: 64,
		Codec: recordbatch.CodecGzip, FirstAck: rules, HoldWhileRetrying: rules, MaxInFlight: 5, Linger: 0, BatchBytes: 512,
		DeliveryTimeout: deliveryTimeout, RequestTimeout: time.Second, Seed: uint64(seed),
		// The producer's own trace too: with it on, records carry kcheck ids.
		TracePath: own,
	})
	if err != nil {
		t.Fatalf("seed %d: run through the proxy: %v (proxy log: %s)", seed, err, logs.String())
	}
	if err := p.Finish(ctx); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	rep, err := verify.File(ctx, path, verify.Options{LinzTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("seed %d: verify: %v", seed, err)
	}
	// A failing test keeps both traces for a look.
	t.Cleanup(func() {
		if t.Failed() {
			for _, f := range []string{path, own} {
				keep := filepath.Join(os.TempDir(), fmt.Sprintf("kcheck-%s-seed%d-%s", strings.ReplaceAll(t.Name(), "/", "-"), seed, filepath.Base(f)))
				if b, err := os.ReadFile(f); err == nil && os.WriteFile(keep, b, 0o644) == nil {
					t.Logf("kept %s", keep)
				}
			}
		}
	})
	return sum, rep, path, own
}

// attempts lists, per batch (named by its first record's id), the attempts
// a trace shows and their answers: "SendNew e0 s3", "Receive e0 s3 NONE".
func attempts(t *testing.T, path string) map[int64][]string {
	t.Helper()
	f, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first := map[[2]int64]int64{} // (partition, batch) -> first record id
	out := map[int64][]string{}
	err = f.Each(func(_ int, e *tracer.Event) error {
		key := [2]int64{int64(e.Partition), e.Batch}
		switch e.Kind {
		case tracer.SendNew:
			first[key] = e.Records[0]
			fallthrough
		case tracer.Resend, tracer.Receive:
			id := first[key]
			s := fmt.Sprintf("%s e%d s%d", e.Kind, e.Epoch, e.Seq)
			if e.Kind == tracer.Receive {
				s += " " + e.Err
			}
			out[id] = append(out[id], s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func answers(steps []string) []string { return filter(steps, true) }
func sends(steps []string) []string   { return filter(steps, false) }

func filter(steps []string, receives bool) []string {
	var out []string
	for _, s := range steps {
		if strings.HasPrefix(s, "Receive") == receives {
			out = append(out, s)
		}
	}
	return out
}

// subsequence reports whether a is b with some elements left out.
func subsequence(a, b []string) bool {
	i := 0
	for _, s := range b {
		if i < len(a) && a[i] == s {
			i++
		}
	}
	return i == len(a)
}

func TestCleanRunVerifies(t *testing.T) {
	sum, rep, path := through(t, true, nil, 1)
	if !sum.Clean() {
		t.Fatalf("run not clean: %+v", sum)
	}
	if rep.Verdict != verify.Valid {
		t.Fatalf("verify %s: %s, conformance %q, violations %v", path, rep.Verdict, rep.Conformance, rep.Violations)
	}
	if rep.Header.Writer != tracer.ProxyWriter || rep.Header.Client != "kcheck" || rep.Header.Partitions != 8 {
		t.Fatalf("header: %+v", rep.Header)
	}
}

// The seed's race, injected by the proxy: with the Java client's rules our
// producer loses records and kcheck verify names it; with the first-ack
// rule it loses nothing and verify passes.
func TestSeedRaceThroughProxy(t *testing.T) {
	race := []fault.Fault{{Kind: fault.SeedRace, Count: -1, Delay: 50 * time.Millisecond}}
	for _, seed := range []int64{1, 2} {
		sum, rep, path := through(t, false, race, seed)
		if sum.Lost == 0 {
			t.Fatalf("seed %d: rules off through the proxy lost nothing: %+v", seed, sum)
		}
		if rep.Verdict != verify.Violations || rep.Conformance != "" {
			t.Fatalf("seed %d: verify %s of a losing run: %s, conformance %q", seed, path, rep.Verdict, rep.Conformance)
		}
		sum, rep, path = through(t, true, race, seed)
		if !sum.Clean() {
			t.Fatalf("seed %d: rule on through the proxy: %+v", seed, sum)
		}
		if rep.Verdict != verify.Valid {
			t.Fatalf("seed %d: verify %s: %s, conformance %q, violations %v", seed, path, rep.Verdict, rep.Conformance, rep.Violations)
		}
	}
}

// Every fault the proxy injects, on a producer that survives them: the run
// is clean and verify agrees.
func TestFaultsThroughProxy(t *testing.T) {
	faults := []fault.Fault{
		{Kind: fault.NotEnoughReplicas, Rate: 0.05, Count: 10},
		{Kind: fault.NotLeader, Rate: 0.05, Count: 10},
		{Kind: fault.TimeoutAfterAppend, Rate: 0.05, Count: 10},
		{Kind: fault.DropConnection, Rate: 0.02, Count: 2},
	}
	for _, seed := range []int64{1, 2, 3} {
		// A delivery timeout with room for a loaded machine: a record failed
		// by it is not what this test looks for.
		sum, rep, path, own := throughBoth(t, true, faults, seed, 10*time.Second)
		if !sum.Clean() {
			t.Fatalf("seed %d: not clean: %+v", seed, sum)
		}
		if rep.Verdict != verify.Valid {
			t.Fatalf("seed %d: verify %s: %s, conformance %q, violations %v", seed, path, rep.Verdict, rep.Conformance, rep.Violations)
		}
		// What the proxy saw on the wire is what the producer did and was
		// told: the same attempts and answers, but for attempts written into
		// a connection the proxy had already cut and answers lost with one.
		seen, did := attempts(t, path), attempts(t, own)
		if len(did) == 0 || len(seen) != len(did) {
			t.Fatalf("seed %d: the proxy traced %d batches, the producer %d", seed, len(seen), len(did))
		}
		for id, want := range did {
			got := seen[id]
			// The proxy saw no attempt the producer did not make, and the
			// producer read no answer the proxy did not pass on.
			if !subsequence(sends(got), sends(want)) || !subsequence(answers(want), answers(got)) {
				t.Fatalf("seed %d: batch of record %d:\nproducer: %v\nproxy:    %v", seed, id, want, got)
			}
		}
	}
}

func TestUpstreamDown(t *testing.T) {
	_, err := proxy.Start(context.Background(), proxy.Config{Listen: "127.0.0.1:0", Upstream: "127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("Start with an upstream that is down: %v", err)
	}
}

// A schedule means the same on kfake and through the proxy: the same
// faults, parsed from their command-line form, installed on kfake by
// kcheck run (fault.InstallKfake) and interpreted by the proxy, hit the
// same attempts of our producer (rule on, so each partition's first batch
// is alone until acknowledged, and retried alone) and trace the same Fault
// events. Every selector is in it: attempt, epoch with seq, try, idle and
// after=answer.
func TestScheduleOnKfakeAndThroughProxy(t *testing.T) {
	var faults []fault.Fault
	for _, s := range []string{
		// partition 0's first attempt, its answer held 400ms
		"reject:err=NOT_ENOUGH_REPLICAS,attempt=1,delay=400ms,partitions=0",
		"reject:err=NOT_ENOUGH_REPLICAS,attempt=1,count=-1", // every other partition's first attempt
		"append-then-error:err=REQUEST_TIMED_OUT,attempt=2,partitions=3",
		"reject:err=NOT_LEADER_OR_FOLLOWER,attempt=3,partitions=5",
		// the first attempt after 250ms without one: partition 0's retry
		"reject:err=NOT_LEADER_OR_FOLLOWER,idle=250ms,partitions=0",
		// the first batch's second attempt, its retry
		"append-then-error:err=REQUEST_TIMED_OUT,epoch=0,seq=0,try=2,partitions=4",
		// the first attempt after an answer: the retry again
		"reject:err=NOT_LEADER_OR_FOLLOWER,after=answer,partitions=6",
	} {
		f, err := fault.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		faults = append(faults, f)
	}
	// The Fault events of a trace: fault, partition, epoch, error, and the
	// sequence of a partition's first two attempts (later ones depend on
	// how records fell into batches).
	faultsOf := func(path string) []string {
		f, err := tracer.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var out []string
		hits := map[int32]int{}
		err = f.Each(func(_ int, e *tracer.Event) error {
			if e.Kind == tracer.Fault {
				hits[e.Partition]++
				seq := "?"
				if hits[e.Partition] <= 2 {
					seq = fmt.Sprint(e.Seq)
				}
				out = append(out, fmt.Sprintf("%s p%d e%d s%s %s", e.Fault, e.Partition, e.Epoch, seq, e.Err))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	own := filepath.Join(t.TempDir(), "kfake.jsonl")
	sum, err := workload.Run(context.Background(), workload.Config{
		KfakeVersion: "4.1", Topic: "t", Partitions: 8, Records: 800, ValueBytes: 100, Keys: 64,
		Codec: recordbatch.CodecGzip, FirstAck: true, HoldWhileRetrying: true, MaxInFlight: 5, Linger: 0, BatchBytes: 512,
		DeliveryTimeout: 10 * time.Second, RequestTimeout: time.Second, Seed: 1, Faults: faults, TracePath: own,
	})
	if err != nil || !sum.Clean() {
		t.Fatalf("on kfake: %v, %+v", err, sum)
	}
	_, rep, path := through(t, true, faults, 1)
	if rep.Verdict != verify.Valid {
		t.Fatalf("through the proxy: %s %v", rep.Verdict, rep.Violations)
	}
	onKfake, onProxy := faultsOf(own), faultsOf(path)
	for _, want := range []string{
		"RejectBeforeAppend p0 e0 s0 NOT_LEADER_OR_FOLLOWER", "AppendThenFail p4 e0 s0 REQUEST_TIMED_OUT",
		"RejectBeforeAppend p6 e0 s0 NOT_LEADER_OR_FOLLOWER", "AppendThenFail p3 e0 s0 REQUEST_TIMED_OUT",
	} {
		if !slices.Contains(onKfake, want) {
			t.Errorf("on kfake, no %s", want)
		}
	}
	if len(onKfake) != 8+1+1+3 || !slices.Equal(onKfake, onProxy) {
		t.Fatalf("Fault events differ:\nkfake: %v\nproxy: %v", onKfake, onProxy)
	}
}

// until=next makes the seed's race exact: each partition's first attempt is
// refused NOT_LEADER_OR_FOLLOWER and its answer held until the partition's
// next attempt has gone to the broker. With the first-ack rule off our
// producer sends that attempt while the first is unanswered (the
// scenario's dangerous state, reached) and loses the first batch's records;
// with the rule on it never does (held back: the hold runs to its bound)
// and is clean.
func TestRejectUntilNext(t *testing.T) {
	// The bound is below the producer's request timeout (1 s), which would
	// otherwise end a hold the producer's rules keep.
	f, err := fault.Parse("reject:err=NOT_LEADER_OR_FOLLOWER,attempt=1,until=next,delay=800ms,count=-1")
	if err != nil {
		t.Fatal(err)
	}
	// reached counts the partitions whose first attempt was refused and had
	// a later batch sent before its answer.
	reached := func(path string) (refused, reached int) {
		tr, err := tracer.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		held := map[int32]bool{} // refused and not yet answered
		got := map[int32]bool{}
		first := map[int32]int64{}
		err = tr.Each(func(_ int, e *tracer.Event) error {
			switch e.Kind {
			case tracer.SendNew:
				if _, ok := first[e.Partition]; !ok {
					first[e.Partition] = e.Batch
				} else if held[e.Partition] {
					got[e.Partition] = true
				}
			case tracer.Fault:
				held[e.Partition] = true
				refused++
			case tracer.Receive:
				if e.Batch == first[e.Partition] {
					held[e.Partition] = false
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return refused, len(got)
	}
	for _, rules := range []bool{false, true} {
		sum, rep, path := through(t, rules, []fault.Fault{f}, 1)
		refused, got := reached(path)
		t.Logf("rule %v: %d partitions refused, %d reached; %+v; %s %v", rules, refused, got, sum, rep.Verdict, rep.Violations)
		if refused != 8 {
			t.Fatalf("rule %v: %d first attempts refused, want 8", rules, refused)
		}
		if rules {
			if got != 0 || !sum.Clean() || rep.Verdict != verify.Valid {
				t.Fatalf("rule on: %d partitions reached, clean %v, %s: want none reached, clean, valid", got, sum.Clean(), rep.Verdict)
			}
			continue
		}
		if got == 0 || sum.Lost == 0 || rep.Verdict != verify.Violations {
			t.Fatalf("rule off: %d partitions reached, %d lost, %s: want the seed's loss", got, sum.Lost, rep.Verdict)
		}
	}
}

// No false alarms: our producer with the first-ack rule on survives every
// new kind of schedule step and selector through the proxy, and kcheck
// verify finds each trace valid; the rule-off producer under the SeedGap
// schedule loses records and is flagged.
func TestScheduleStepsNoFalseAlarm(t *testing.T) {
	for _, tc := range []struct {
		schedule []string
		fault    string // a Fault event the run must have ("": none)
	}{
		{[]string{"hold:delay=300ms,attempt=2,count=-1"}, "Delay"},
		{[]string{"hold:delay=800ms,attempt=1,until=next,count=-1"}, "Delay"},
		{[]string{"cut:attempt=3,count=3"}, "DropConnection"},
		{[]string{"cut:when=after,attempt=4,count=3"}, "DropResponse"},
		{[]string{"reject:err=NOT_LEADER_OR_FOLLOWER,attempt=1,until=seq:0,delay=800ms,count=-1"}, "RejectBeforeAppend"},
		{[]string{"append-then-error:err=NOT_ENOUGH_REPLICAS_AFTER_APPEND,attempt=2,until=next,delay=500ms,count=-1"}, "AppendThenFail"},
		{[]string{"state-expiry:delay=2s"}, ""},
		{[]string{
			"reject:err=NOT_ENOUGH_REPLICAS,attempt=1,count=-1",
			"append-then-error:err=REQUEST_TIMED_OUT,try=2,count=-1",
			"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,after=answer,count=4",
			"reject:err=NOT_ENOUGH_REPLICAS,idle=50ms,count=-1",
			"cut:seq=0,try=3,partitions=1+2",
		}, "AppendThenFail"},
	} {
		var faults []fault.Fault
		for _, s := range tc.schedule {
			f, err := fault.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			faults = append(faults, f)
		}
		sum, rep, path, _ := throughBoth(t, true, faults, 1, 10*time.Second)
		if !sum.Clean() || rep.Verdict != verify.Valid {
			t.Fatalf("%v: clean %v %+v; verify %s: %s, conformance %q, violations %v", tc.schedule, sum.Clean(), sum, path, rep.Verdict, rep.Conformance, rep.Violations)
		}
		if tc.fault != "" {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), `"fault":"`+tc.fault+`"`) {
				t.Fatalf("%v: no Fault %s in %s", tc.schedule, tc.fault, path)
			}
		}
		if faults[0].Kind == fault.StateExpiry && !slices.Equal(rep.Header.Faults, []string{"state-expiry:delay=2s"}) {
			t.Fatalf("header faults %q", rep.Header.Faults)
		}
	}
	f, err := fault.Parse("reject:err=NOT_LEADER_OR_FOLLOWER,attempt=1,until=next,delay=1500ms,partitions=0")
	if err != nil {
		t.Fatal(err)
	}
	sum, rep, path := through(t, false, []fault.Fault{f}, 1)
	if sum.Lost == 0 || rep.Verdict != verify.Violations || rep.Conformance != "" {
		t.Fatalf("rule off under SeedGap: lost %d, verify %s: %s, conformance %q", sum.Lost, path, rep.Verdict, rep.Conformance)
	}
}
