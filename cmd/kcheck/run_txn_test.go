package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunTransactional: kcheck run --transactional on the embedded kfake,
// in the cluster's version (TV2) and TV1, commits and aborts as asked, its
// read_committed poller returns the committed records and reaches every
// partition's end (none with --poll=false), and kcheck verify judges its
// trace VALID.
func TestRunTransactional(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		tv   string
		poll bool
	}{
		{"cluster's", nil, "TV2 (the cluster's transaction.version: 2)", true},
		{"TV1", []string{"--txn-version", "1"}, "TV1 (the cluster's transaction.version: 2)", true},
		{"no poller", []string{"--poll=false"}, "TV2 (the cluster's transaction.version: 2)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trace := filepath.Join(t.TempDir(), "run.jsonl")
			args := append([]string{"run", "--transactional", "--txn-records", "40", "--txn-abort-every", "3", "--partitions", "4",
				"--records", "400", "--value-bytes", "50", "--fault", "not-enough-replicas:rate=0.05", "--trace", trace}, tc.args...)
			code, stdout, stderr := runKcheck(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for _, want := range []string{"kcheck run: clean", tc.tv, "transactions committed 7, aborted 3 (as asked), failed 0",
				"read back 400: committed 280, aborted 120, open 0", "read_committed sees 280 records: agrees with the markers", "of committed transactions lost or aborted 0; of aborted ones committed 0"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("summary lacks %q:\n%s", want, stdout)
				}
			}
			if polled := strings.Contains(stdout, ", 280 records returned; reached every partition's end"); polled != tc.poll {
				t.Errorf("poller: %v, want %v:\n%s", polled, tc.poll, stdout)
			}
			code, stdout, stderr = runKcheck(t, "verify", trace)
			if code != exitOK || !strings.Contains(stdout, ": VALID") || !strings.Contains(stdout, "records read back 280 committed, 120 aborted, 0 open; read_committed read of 4 partitions held to the markers") {
				t.Fatalf("verify: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if polled := strings.Contains(stdout, " by 1 poller(s), 280 records; checked:"); polled != tc.poll {
				t.Errorf("verify: polls judged %v, want %v:\n%s", polled, tc.poll, stdout)
			}
		})
	}
}

// A poller that cannot finish its final polls within --poll-bound gives up
// every partition: the run says so, and kcheck verify calls the trace
// inconclusive (exit 1), naming the poller and why, never valid.
func TestRunTransactionalPollerGivesUp(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "run.jsonl")
	code, stdout, stderr := runKcheck(t, "run", "--transactional", "--txn-records", "40", "--txn-abort-every", "3", "--partitions", "4",
		"--records", "400", "--value-bytes", "50", "--poll-bound", "1ns", "--trace", trace)
	if code != exitOK || !strings.Contains(stdout, "GAVE UP on 4 partitions (verify: the poll checks inconclusive)") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runKcheck(t, "verify", trace)
	if code != exitMismatch || !strings.Contains(stdout, ": INCONCLUSIVE") ||
		!strings.Contains(stdout, "INCONCLUSIVE: poller 1 gave up on partition 0 at line") || !strings.Contains(stdout, "gave up: the end offsets: context deadline exceeded") {
		t.Fatalf("verify: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestRunTransactionalUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--txn-records", "10"}, "--txn-records needs --transactional"},
		{[]string{"run", "--transactional", "--txn-records", "0"}, "--txn-records 0: must be at least 1"},
		{[]string{"run", "--transactional", "--txn-abort-every", "-1"}, "--txn-abort-every -1: must not be negative"},
		{[]string{"run", "--transactional", "--txn-version", "3"}, "--txn-version 3: want 0 (the cluster's), 1 or 2"},
		{[]string{"run", "--transactional", "--idle-after", "5", "--idle", "1s"}, "a transactional run has no idle phase"},
		{[]string{"run", "--poll-bound", "1s"}, "--poll-bound needs --transactional"},
		{[]string{"run", "--transactional", "--poll-retries", "0"}, "--poll-retries 0: must be at least 1"},
		{[]string{"run", "--transactional", "--poll-bound", "0s"}, "--poll-bound 0s: want a positive duration"},
		// kfake emulating 3.9: no transaction.version 2.
		{[]string{"run", "--transactional", "--txn-version", "2", "--kfake-version", "3.9", "--records", "10"},
			"transaction version 2 asked, but the cluster's finalized transaction.version is 0"},
	} {
		code, _, stderr := runKcheck(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
