package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kcheck/kcheck/workload"
)

// TestMain lets the test binary stand in for kcheck: as a client command of
// kcheck proxy (KCHECK_TEST_AS_KCHECK=1), and as the kcheck command of the
// CLI scripts (testscript, script_test.go).
func TestMain(m *testing.M) {
	if os.Getenv("KCHECK_TEST_AS_KCHECK") == "1" {
		// As main: interrupted or terminated, the command stops cleanly.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, append([]string{"kcheck"}, os.Args[1:]...), os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	testscript.Main(m, map[string]func(){
		"kcheck": func() { os.Exit(runWithStdin(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
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
// verifies, and with --tlc (when the jar is there) TLC accepts it too.
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
	if !strings.Contains(stdout, "kcheck run: clean") || !strings.Contains(stderr, "faults injected") ||
		!strings.Contains(stderr, "merged what the client told its application about 300 records (0 more never reached the wire)") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	code, stdout, stderr = runKcheck(t, "verify", trace)
	if code != exitOK || !strings.Contains(stdout, "VALID") || !strings.Contains(stdout, "kcheck-proxy") ||
		!strings.Contains(stdout, "the application was told: 300 delivered, 0 failed, 0 no answer") {
		t.Fatalf("verify: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	jar := os.Getenv("KCHECK_TLA2TOOLS")
	if jar == "" {
		t.Log("KCHECK_TLA2TOOLS is not set: verify --tlc of the proxy trace not run")
		return
	}
	code, stdout, stderr = runKcheck(t, "verify", "--tlc", "--jar", jar, "--spec-dir", "../../spec", trace)
	if code != exitOK || !strings.Contains(stdout, "TLC trace validation: accepted") || !strings.Contains(stdout, "TLC (TraceWire)") {
		t.Fatalf("verify --tlc of a proxy trace: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
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
		{[]string{"proxy", "--trace", trace}, "--bootstrap HOST:PORT (the upstream cluster) is required"},
		{[]string{"proxy", "--upstream", "127.0.0.1:1", "--trace", trace}, "upstream 127.0.0.1:1 does not answer"},
		{[]string{"proxy", "--upstream", up, "--fault", "cut:when=later", "--trace", trace}, `fault "cut:when=later": when: "later": want before`},
		{[]string{"proxy", "--upstream", up, "--fault", "hold:delay=1s,err=INVALID_RECORD", "--trace", trace}, "hold answers no error of its own"},
		// state-expiry is the upstream's to do: the proxy says so.
		{[]string{"proxy", "--upstream", up, "--fault", "state-expiry:delay=2s", "--trace", trace, "--", "true"},
			"fault state-expiry:delay=2s: the proxy cannot expire the broker's producer state: the upstream must run with producer.id.expiration.ms=2000"},
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

// The client's report (drivers/OUTCOMES.md) is checked before it is merged:
// a bad one fails the run with its file and line, and leaves no trace.
func TestProxyRefusesBadReport(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KCHECK_TEST_AS_KCHECK", "1")
	up := kfakeUpstream(t)
	dir := t.TempDir()
	for i, tc := range []struct{ name, extra, want string }{
		{"never sent", `{"id":99999,"p":0,"off":0}`, `:301: record 99999 is reported delivered, but no produce request to topic "t1" through the proxy carried it`},
		{"twice", `{"id":1,"p":0,"off":0}`, ":301: record 1 was reported already on line"},
		{"malformed", `{"id":5`, ":301: not an outcome"},
		{"a failure never sent", `{"id":0,"p":-1,"err":"x"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := fmt.Sprintf("t%d", i+1)
			trace := filepath.Join(dir, topic+".jsonl")
			script := fmt.Sprintf(`"$0" run --brokers "$1" --topic %s --partitions 4 --records 300 --value-bytes 50 --trace %s && echo '%s' >>"$KCHECK_OUTCOMES"`,
				topic, filepath.Join(dir, topic+"-own.jsonl"), tc.extra)
			code, _, stderr := runKcheck(t, "proxy", "--upstream", up, "--broker-kind", "kfake", "--topic", topic, "--trace", trace, "--",
				"sh", "-c", script, exe, "{bootstrap}")
			if tc.want == "" { // a record never sent that failed: not merged, counted
				if code != exitOK || !strings.Contains(stderr, "about 300 records (1 more never reached the wire)") {
					t.Fatalf("exit %d, stderr:\n%s", code, stderr)
				}
				return
			}
			if code != exitUsage || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "outcomes.jsonl:301") {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, exitUsage, tc.want)
			}
			if _, err := os.Stat(trace); !os.IsNotExist(err) {
				t.Errorf("a refused report left the trace behind (%v)", err)
			}
		})
	}
}
