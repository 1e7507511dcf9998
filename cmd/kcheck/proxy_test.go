package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kcheck/kcheck/workload"
)

// TestMain lets the test binary stand in for kcheck as a client command of
// kcheck proxy.
func TestMain(m *testing.M) {
	if os.Getenv("KCHECK_TEST_AS_KCHECK") == "1" {
		os.Exit(run(context.Background(), append([]string{"kcheck"}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// kfakeUpstream starts an embedded broker emulating Kafka 4.1 to proxy to.
func kfakeUpstream(t *testing.T) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(workload.Emulations["4.1"].Versions))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

// kcheck proxy runs a client command through itself: here kcheck run, our
// producer, with the proxy injecting the seed's race. The proxy's trace
// verifies; --tlc refuses it, saying why.
func TestProxyRunsClient(t *testing.T) {
	exe, err := os.Executable() // the test binary, run as kcheck (TestMain)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KCHECK_TEST_AS_KCHECK", "1")
	up := kfakeUpstream(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "proxy.jsonl")
	code, stdout, stderr := runKcheck(t, "proxy", "--upstream", up, "--broker-kind", "kfake", "--broker-version", "4.1",
		"--topic", "t", "--fault", "seed-race", "--trace", trace, "--",
		exe, "run", "--brokers", "{bootstrap}", "--topic", "t", "--partitions", "4", "--records", "300", "--value-bytes", "50",
		"--trace", filepath.Join(dir, "own.jsonl"))
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "kcheck run: clean") || !strings.Contains(stderr, "faults injected") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	code, stdout, stderr = runKcheck(t, "verify", trace)
	if code != exitOK || !strings.Contains(stdout, "VALID") || !strings.Contains(stdout, "kcheck-proxy") {
		t.Fatalf("verify: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, _, stderr = runKcheck(t, "verify", "--tlc", "--jar", os.Args[0], trace)
	if code != exitUsage || !strings.Contains(stderr, "traced on the wire") {
		t.Fatalf("verify --tlc of a proxy trace: exit %d, stderr %q", code, stderr)
	}
}

func TestProxyUsageErrors(t *testing.T) {
	up := kfakeUpstream(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "x.jsonl")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--trace", trace}, "--upstream HOST:PORT is required"},
		{[]string{"proxy", "--upstream", "127.0.0.1:1", "--trace", trace}, "upstream 127.0.0.1:1 does not answer"},
		{[]string{"proxy", "--upstream", up, "--fault", "state-expiry", "--trace", trace}, "cannot expire"},
		{[]string{"proxy", "--upstream", up, "--broker-kind", "redpanda", "--trace", trace}, `--broker-kind "redpanda"`},
		{[]string{"proxy", "--upstream", up, "--listen", "nowhere", "--trace", trace}, `--listen "nowhere"`},
		{[]string{"proxy", "--upstream", up, "--trace", trace, "--", filepath.Join(dir, "no-such-client")}, "starting the client"},
		{[]string{"proxy", "--upstream", up, "--trace", trace, "--", "false"}, `the client "false" exited with status 1 (it saw something wrong); and proxy: no client produced`},
	} {
		code, _, stderr := runKcheck(t, tc.args...)
		want := exitUsage
		if code != want || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, want, tc.want)
		}
		if strings.Contains(stderr, "goroutine ") {
			t.Errorf("%v: a stack trace on stderr", tc.args)
		}
		if _, err := os.Stat(trace); !os.IsNotExist(err) {
			t.Errorf("%v: a failed proxy run left its trace file behind (%v)", tc.args, err)
		}
	}
}
