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

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/matrix"
	"github.com/kcheck/kcheck/wire"
)

// TestScenariosOnYourClusterOnKafka runs the matrix on a cluster kcheck
// did not start: Kafka 4.1.0 started apart, by kcheck kafka, as a user
// would. The version comes from its ApiVersions, the expiry scenario is
// skipped with why, the Baseline and the seed's scenario run ours with
// the rule on, clean, and no topic of the run is left on the cluster. It
// runs only with KCHECK_KAFKA=1 (make kafka-test).
func TestScenariosOnYourClusterOnKafka(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
	exe, err := os.Executable() // the test binary, run as kcheck (TestMain)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KCHECK_TEST_AS_KCHECK", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kafka := exec.CommandContext(ctx, exe, "kafka", "--version", "4.1.0")
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
	defer func() {
		kafka.Process.Signal(os.Interrupt)
		if err := kafka.Wait(); err != nil {
			t.Errorf("kcheck kafka did not stop cleanly: %v", err)
		}
	}()
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

	dir := t.TempDir()
	js := filepath.Join(dir, "results.json")
	code, _, stderr := runKcheck(t, "scenarios", "run", "--dir", "../../spec/scenarios", "--root", "../..",
		"--bootstrap", addr, "--scenario", "Baseline,SeedGap.NoGap,ExpiryKgo.NoGap", "--clients", "ours-on", "--shapes", "1p-one",
		"--keep", filepath.Join(dir, "keep"), "--json", js, "--results", filepath.Join(dir, "results.md"))
	t.Logf("exit %d\n%s", code, stderr)
	if code != exitOK {
		t.Fatalf("scenarios run --bootstrap %s: exit %d", addr, code)
	}
	if want := "Kafka 4.1 (ApiVersions: v4.1), 1 broker,"; !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q", want)
	}
	f, err := os.Open(js)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := matrix.ReadResults(f, js)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bootstrap != addr || len(res.Brokers) != 1 || res.Brokers[0] != "4.1" {
		t.Errorf("results on %s, brokers %q; want %s, [4.1]", res.Bootstrap, res.Brokers, addr)
	}
	if len(res.Skipped) != 1 || !strings.HasPrefix(res.Skipped[0].Scenario, "ExpiryKgo.") || !strings.Contains(res.Skipped[0].Why, "producer.id.expiration.ms") {
		t.Errorf("skipped %+v; want the group of ExpiryKgo.NoGap, for its producer-state expiry", res.Skipped)
	}
	if len(res.Cells) != 2 {
		t.Fatalf("%d cells; want 2 (Baseline and SeedGap.NoGap, ours-on, 1p-one)", len(res.Cells))
	}
	for _, c := range res.Cells {
		if c.Err != "" || c.Happened.Anomaly() || c.Verdict != "valid" {
			t.Errorf("%s: error %q, %s, verify %s; want ours-on clean", c.Scenario, c.Err, c.What, c.Verdict)
		}
	}
	if want := "deleted the 2 topics this run made on " + addr; !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q", want)
	}
	// The deletes are committed; the broker's metadata follows them.
	conn, err := wire.Dial(ctx, addr, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for {
		resp, err := conn.Request(ctx, kmsg.NewPtrMetadataRequest())
		if err != nil {
			t.Fatalf("metadata after the run (the topics named kcheck-* left): %v", err)
		}
		var left []string
		for _, tp := range resp.(*kmsg.MetadataResponse).Topics {
			if tp.Topic != nil && strings.HasPrefix(*tp.Topic, "kcheck-") {
				left = append(left, *tp.Topic)
			}
		}
		if len(left) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topics left on the cluster: %q", left)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
