package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTransactionalOnKafka runs kcheck run --transactional on real Kafka
// 4.1.0 and 4.4.0 (one node each, started by kcheck kafka): in the
// cluster's transaction version, which a new 4.x cluster finalizes at 2
// (TV2), and in TV1; every transaction ends as asked, the read-back's
// markers agree, and kcheck verify judges the trace VALID. It runs only
// with KCHECK_KAFKA=1 (make kafka-test).
func TestTransactionalOnKafka(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
	for _, version := range []string{"4.1.0", "4.4.0"} {
		t.Run(version, func(t *testing.T) {
			addr := startKafka(t, version)
			for _, tc := range []struct {
				name, tv string
				args     []string
			}{
				{"cluster's", "TV2 (the cluster's transaction.version: 2)", nil},
				{"TV1", "TV1 (the cluster's transaction.version: 2)", []string{"--txn-version", "1"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					trace := filepath.Join(t.TempDir(), "run.jsonl")
					args := append([]string{"run", "--bootstrap", addr, "--broker-version", version, "--topic", "txn-" + tc.name[:3],
						"--partitions", "8", "--replication-factor", "1", "--records", "2000", "--transactional", "--txn-records", "50",
						"--txn-abort-every", "3", "--trace", trace}, tc.args...)
					code, stdout, stderr := runKcheck(t, args...)
					t.Logf("%s", stdout)
					if code != exitOK {
						t.Fatalf("exit %d\n%s", code, stderr)
					}
					for _, want := range []string{tc.tv, "transactions committed 27, aborted 13 (as asked), failed 0",
						"read back 2000: committed 1350, aborted 650, open 0", "read_committed sees 1350 records: agrees with the markers"} {
						if !strings.Contains(stdout, want) {
							t.Errorf("summary lacks %q", want)
						}
					}
					code, stdout, _ = runKcheck(t, "verify", trace)
					if code != exitOK || !strings.Contains(stdout, ": VALID") {
						t.Fatalf("verify: exit %d\n%s", code, stdout)
					}
				})
			}
		})
	}
}

// startKafka starts one node of Kafka version with kcheck kafka until the
// test ends, and returns its bootstrap address.
func startKafka(t *testing.T, version string) string {
	t.Helper()
	exe, err := os.Executable() // the test binary, run as kcheck (TestMain)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KCHECK_TEST_AS_KCHECK", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	kafka := exec.CommandContext(ctx, exe, "kafka", "--version", version)
	kafka.Cancel = func() error { return kafka.Process.Signal(os.Interrupt) }
	kafka.WaitDelay = time.Minute
	out, err := kafka.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	kafka.Stderr = os.Stderr
	if err := kafka.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		kafka.Process.Signal(os.Interrupt)
		if err := kafka.Wait(); err != nil {
			t.Errorf("kcheck kafka did not stop cleanly: %v", err)
		}
		cancel()
	})
	sc := bufio.NewScanner(out)
	var addr string
	for addr == "" && sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "bootstrap: "); ok {
			addr = a
		}
	}
	if addr == "" {
		t.Fatalf("kcheck kafka printed no bootstrap address: %v", sc.Err())
	}
	go func() { // the rest of its output, so that it never blocks
		for sc.Scan() {
		}
	}()
	return addr
}
