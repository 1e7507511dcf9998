package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/drivers/logtest"
	"github.com/kcheck/kcheck/tracer"
)

func TestRunClean(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	code, stdout, stderr := runKcheck(t, "run", "--partitions", "4", "--records", "300", "--value-bytes", "50",
		"--fault", "seed-race", "--fault", "not-enough-replicas:rate=0.05", "--trace", trace)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"kcheck run: clean", "sent 300, acknowledged 300, failed 0, read back 300", "lost 0 (0 of them acknowledged), duplicated 0, out of order 0"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(trace); err != nil {
		t.Fatal(err)
	}
}

// TestRunReplicationFactor: --replication-factor reaches the topic's
// creation; the embedded cluster takes 2 of its 3 brokers.
func TestRunReplicationFactor(t *testing.T) {
	code, stdout, stderr := runKcheck(t, "run", "--partitions", "2", "--records", "50", "--value-bytes", "20", "--replication-factor", "2")
	if code != exitOK || !strings.Contains(stdout, "kcheck run: clean") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestRunRuleOffLoses(t *testing.T) {
	code, stdout, stderr := runKcheck(t, "run", "--partitions", "4", "--records", "400", "--value-bytes", "50",
		"--linger", "0", "--batch-bytes", "256", "--delivery-timeout", "1s", "--request-timeout", "500ms",
		"--fault", "seed-race", "--first-ack", "off")
	if code != exitMismatch {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "NOT CLEAN") {
		t.Fatalf("summary:\n%s", stdout)
	}
}

// A schedule file's faults are injected (and named in the trace header), a
// bad one is refused with its line.
func TestRunSchedule(t *testing.T) {
	dir := t.TempDir()
	sched := filepath.Join(dir, "seedgap.txt")
	os.WriteFile(sched, []byte("# every partition's first attempt refused\nreject:err=NOT_ENOUGH_REPLICAS,attempt=1,count=-1\n"), 0o644)
	trace := filepath.Join(dir, "run.jsonl")
	code, stdout, stderr := runKcheck(t, "run", "--partitions", "4", "--records", "200", "--value-bytes", "50", "--schedule", sched, "--trace", trace)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(trace)
	header, _, _ := strings.Cut(string(data), "\n")
	if !strings.Contains(header, `"faults":["reject:count=-1,attempt=1,err=NOT_ENOUGH_REPLICAS"]`) || strings.Count(string(data), `"fault":"RejectBeforeAppend"`) != 4 {
		t.Fatalf("header %s; %d RejectBeforeAppend faults, want 4", header, strings.Count(string(data), `"fault":"RejectBeforeAppend"`))
	}
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("seed-race\nreject\n"), 0o644)
	code, _, stderr = runKcheck(t, "run", "--schedule", bad)
	if code != exitUsage || !strings.Contains(stderr, "bad.txt:2: fault \"reject\": err=NAME is required") {
		t.Fatalf("bad schedule: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runKcheck(t, "run", "--fault", "reject:err=INVALID_RECORD,until=next,delay=1s")
	if code != exitUsage || !strings.Contains(stderr, "until=next needs kcheck proxy") {
		t.Fatalf("until=next on kfake: exit %d, stderr %q", code, stderr)
	}
	// What kfake cannot do is refused, naming the fault and kcheck proxy.
	for f, want := range map[string]string{
		"reject:err=INVALID_RECORD,until=seq:3,delay=1s": "fault reject:delay=1s,err=INVALID_RECORD,until=seq:3: until=seq needs kcheck proxy",
		"hold:delay=1s": "fault hold:delay=1s: holding the answer to an attempt the broker handles needs kcheck proxy",
		"append-then-error:err=REQUEST_TIMED_OUT,delay=1s":  "needs kcheck proxy",
		"cut:when=after,seq=3":                              "fault cut:seq=3,when=after: cut:when=after needs kcheck proxy",
		"append-then-error:err=INVALID_RECORD,partitions=1": "fault append-then-error:err=INVALID_RECORD,partitions=1: kfake appends a faulted produce only when it answers REQUEST_TIMED_OUT or NOT_ENOUGH_REPLICAS_AFTER_APPEND: use kcheck proxy",
	} {
		code, _, stderr = runKcheck(t, "run", "--fault", f)
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("--fault %s on kfake: exit %d, stderr %q, want %q", f, code, stderr, want)
		}
	}
}

// A schedule's selectors and cuts on kfake: every partition's first
// attempt refused, the retry of partition 1's first batch (try=2 of base
// sequence 0 in the first epoch) cut as it arrives, the first attempts of
// partition 2 after an answer refused again (twice: a cut request's other
// attempts are not handled, so a fault chosen for one of them does not
// act). The run is clean and kcheck verify agrees.
func TestRunScheduleSelectors(t *testing.T) {
	dir := t.TempDir()
	sched := filepath.Join(dir, "steps.schedule")
	os.WriteFile(sched, []byte(`reject:err=NOT_ENOUGH_REPLICAS,attempt=1,count=-1
cut:epoch=0,seq=0,try=2,partitions=1
reject:err=NOT_LEADER_OR_FOLLOWER,after=answer,count=2,partitions=2
`), 0o644)
	trace := filepath.Join(dir, "run.jsonl")
	code, stdout, stderr := runKcheck(t, "run", "--partitions", "4", "--records", "200", "--value-bytes", "50", "--schedule", sched, "--trace", trace)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	f, err := tracer.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	faults := map[string]int{}
	err = f.Each(func(_ int, e *tracer.Event) error {
		if e.Kind == tracer.Fault {
			faults[fmt.Sprintf("%s p%d e%d s%d %s", e.Fault, e.Partition, e.Epoch, e.Seq, e.Err)]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range 4 {
		if faults[fmt.Sprintf("RejectBeforeAppend p%d e0 s0 NOT_ENOUGH_REPLICAS", p)] != 1 {
			t.Errorf("partition %d's first attempt not refused once: %v", p, faults)
		}
	}
	if faults["DropConnection p1 e0 s0 "] != 1 || faults["RejectBeforeAppend p2 e0 s0 NOT_LEADER_OR_FOLLOWER"] == 0 {
		t.Errorf("faults %v: want partition 1's retry cut, partition 2's refused", faults)
	}
	code, stdout, stderr = runKcheck(t, "verify", trace)
	if code != exitOK || !strings.Contains(stdout, "VALID") {
		t.Fatalf("verify: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// kcheck run's batch shapes and idle phase (drivers/WORKLOADS.md), through
// an in-process proxy in front of kfake (Kafka 4.1), checked on the wire:
// one record a batch with --batch-records one, some batches of more with
// many; with the idle phase, a gap of at least --idle between produce
// attempts after the first --idle-after records, and its line in the
// summary.
func TestRunShapes(t *testing.T) {
	up := kfakeUpstream(t)
	for i, tc := range []struct {
		shape      string
		partitions int
		idleAfter  int // -1: none
	}{
		{"one", 16, -1},
		{"one", 1, 100},
		{"many", 1, -1},
		{"many", 16, 100},
	} {
		t.Run(fmt.Sprintf("%s-%dp-idle%d", tc.shape, tc.partitions, tc.idleAfter), func(t *testing.T) {
			topic := fmt.Sprintf("shape-%d", i)
			addr, finish := logtest.TraceProxy(t, up, topic)
			const idle = time.Second
			args := []string{"run", "--brokers", addr, "--broker-version", "4.1.0", "--topic", topic, "--partitions", fmt.Sprint(tc.partitions),
				"--records", "200", "--value-bytes", "100", "--batch-records", tc.shape, "--trace", filepath.Join(t.TempDir(), "own.jsonl")}
			if tc.idleAfter >= 0 {
				args = append(args, "--idle-after", fmt.Sprint(tc.idleAfter), "--idle", idle.String())
			}
			code, stdout, stderr := runKcheck(t, args...)
			if code != exitOK || !strings.Contains(stdout, "kcheck run: clean") || !strings.Contains(stdout, "batch records "+tc.shape) {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if tc.idleAfter >= 0 {
				var from, to int64
				var unanswered int
				_, err := fmt.Sscanf(stdout[strings.Index(stdout, "  idle "):], "  idle 1s after 100 records: from %d to %d (unix ms), %d of them unanswered", &from, &to, &unanswered)
				if err != nil || to-from < idle.Milliseconds() || unanswered != 0 {
					t.Errorf("idle line: %v, from %d to %d, %d unanswered:\n%s", err, from, to, unanswered, stdout)
				}
			}
			sizes := logtest.CheckShape(t, finish(), tc.shape, tc.idleAfter, idle)
			t.Logf("batches (records: batches) %v", sizes)
		})
	}
}

func TestRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--records", "0"}, "--records 0"},
		{[]string{"run", "--partitions", "-3"}, "--partitions -3"},
		{[]string{"run", "--partitions", "2147483647"}, "--partitions 2147483647: at most 1000000"},
		{[]string{"run", "--fault", "teleport"}, `unknown fault "teleport"`},
		{[]string{"run", "--first-ack", "maybe"}, `--first-ack "maybe"`},
		{[]string{"run", "--compression", "brotli"}, "--compression"},
		{[]string{"run", "--no-such-flag"}, "flag provided but not defined"},
		{[]string{"run", "--brokers", "127.0.0.1:1", "--trace", filepath.Join(dir, "x.jsonl")}, "no broker reachable"},
		{[]string{"run", "--fault", "state-expiry"}, "needs a real Kafka broker"},
		{[]string{"run", "--batch-records", "few"}, `--batch-records "few": want one, many or default`},
		{[]string{"run", "--batch-records", "one", "--batch-bytes", "100"}, "--batch-records one sets --batch-bytes: give one or the other"},
		{[]string{"run", "--batch-records", "many", "--linger", "1ms"}, "--batch-records many sets --linger: give one or the other"},
		{[]string{"run", "--batch-records", "many", "--delivery-timeout", "1s", "--request-timeout", "1s"}, "--delivery-timeout 1s: must be at least --linger (20ms) + --request-timeout"},
		{[]string{"run", "--idle-after", "-1", "--idle", "1s"}, "--idle-after -1: must be 0..--records (2000)"},
		{[]string{"run", "--records", "10", "--idle-after", "11", "--idle", "1s"}, "--idle-after 11: must be 0..--records (10)"},
		{[]string{"run", "--idle-after", "5", "--idle", "-1s"}, "--idle -1s: must not be negative"},
		{[]string{"run", "--idle-after", "5"}, "--idle-after needs --idle"},
		{[]string{"run", "--idle", "1s"}, "--idle needs --idle-after"},
		{[]string{"run", "--replication-factor", "0"}, "--replication-factor 0: must be 1..32767, or -1 for the brokers' default.replication.factor"},
		{[]string{"run", "--replication-factor", "-2"}, "--replication-factor -2: must be 1..32767"},
		{[]string{"run", "--replication-factor", "40000"}, "--replication-factor 40000: must be 1..32767"},
		{[]string{"run", "--replication-factor", "x"}, `invalid value "x" for flag -replication-factor`},
		{[]string{"run", "--replication-factor", "4"}, "INVALID_REPLICATION_FACTOR"}, // 4 on the embedded cluster's 3 brokers
	} {
		code, _, stderr := runKcheck(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
		if strings.Contains(stderr, "goroutine ") {
			t.Errorf("%v: a stack trace on stderr", tc.args)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.jsonl")); !os.IsNotExist(err) {
		t.Errorf("a failed run left its trace file behind (%v)", err)
	}
}
