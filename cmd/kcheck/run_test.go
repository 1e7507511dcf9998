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
