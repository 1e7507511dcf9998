package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
