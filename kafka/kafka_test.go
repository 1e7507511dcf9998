//go:build linux

package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/kafka"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/wire"
	"github.com/kcheck/kcheck/workload"
)

// These tests fetch Kafka with mvn and run real brokers: they run only with
// KCHECK_KAFKA=1 (make kafka-test).
func needKafka(t *testing.T) {
	t.Helper()
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
}

// fetch fetches version into the default cache, as make kafka-fetch does.
func fetch(t *testing.T, version string) string {
	t.Helper()
	start := time.Now()
	cached := kafka.Fetched(version, "")
	cp, err := kafka.Fetch(context.Background(), version, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Kafka %s: fetched in %v (already cached: %v)", version, time.Since(start).Round(time.Millisecond), cached)
	return cp
}

func TestFetchVersions(t *testing.T) {
	needKafka(t)
	for _, v := range []string{"4.1.0", "4.3.1", "4.4.0"} {
		libs := strings.TrimSuffix(fetch(t, v), "*")
		for _, pattern := range []string{"kafka_2.13-" + v + ".jar", "kafka-clients-" + v + ".jar", "log4j-core-*.jar", "log4j-slf4j*-impl-*.jar"} {
			if m, _ := filepath.Glob(filepath.Join(libs, pattern)); len(m) != 1 {
				t.Errorf("Kafka %s: %d jars %s in %s, want 1", v, len(m), pattern, libs)
			}
		}
		start := time.Now()
		if _, err := kafka.Fetch(context.Background(), v, ""); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Kafka %s: a warm fetch took %v", v, d)
		}
	}
}

// start starts a cluster whose directory is in the test's temporary
// directory, and checks on cleanup that Stop left nothing behind.
func start(t *testing.T, cfg kafka.Config) *kafka.Cluster {
	t.Helper()
	cfg.Classpath = fetch(t, cfg.Version)
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(t.TempDir(), "kafka")
	}
	c, err := kafka.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Kafka %s, nodes %d: started in %v at %s", cfg.Version, len(c.Nodes()), c.StartDuration().Round(time.Millisecond), c.Bootstrap())
	t.Cleanup(func() { stopAndCheck(t, c) })
	return c
}

// stopAndCheck stops c and checks that no node's process is left and that
// no data is.
func stopAndCheck(t *testing.T, c *kafka.Cluster) {
	t.Helper()
	if err := c.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	for _, n := range c.Nodes() {
		if alive(n) {
			t.Errorf("node %d: process %d still running after Stop", n.ID, n.PID)
		}
		if _, err := os.Stat(filepath.Join(n.Dir, "data")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("node %d: data dir left after Stop: %v", n.ID, err)
		}
	}
}

// alive reports whether n's java process is still running: its pid exists
// and runs this node's server.properties (a pid may be reused).
func alive(n kafka.Node) bool {
	if err := syscall.Kill(n.PID, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n.PID))
	return err == nil && strings.Contains(string(cmdline), filepath.Join(n.Dir, "server.properties"))
}

// TestWorkload runs kcheck run's workload, our producer without faults,
// against a real one-node broker, and verifies its trace.
func TestWorkload(t *testing.T) {
	needKafka(t)
	for _, version := range []string{"4.1.0", "4.3.1", "4.4.0"} {
		t.Run(version, func(t *testing.T) {
			begin := time.Now()
			// One version logs its requests (--request-log), the others not.
			reqLog := version == "4.1.0"
			c := start(t, kafka.Config{Version: version, Nodes: 1, RequestLog: reqLog})
			trace := filepath.Join(t.TempDir(), "run.jsonl")
			sum, err := workload.Run(context.Background(), workload.Config{
				Brokers: c.Addrs(), BrokerVersion: version, Topic: "kcheck-kafka-test", Partitions: 8, Records: 2000,
				ValueBytes: 100, Keys: 1024, Codec: recordbatch.CodecNone, FirstAck: true, HoldWhileRetrying: true,
				MaxInFlight: 5, Linger: 5 * time.Millisecond, BatchBytes: 16 << 10,
				DeliveryTimeout: 10 * time.Second, RequestTimeout: 5 * time.Second, Seed: 1, TracePath: trace,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("workload: sent %d, acked %d, failed %d, read back %d, lost %d, duplicated %d, out of order %d, %d trace events, in %v",
				sum.Sent, sum.Acked, sum.Failed, sum.ReadBack, sum.Lost, sum.Duplicated, sum.OutOfOrder, sum.TraceEvents, sum.Duration.Round(time.Millisecond))
			if !sum.Clean() || sum.ReadBack != 2000 {
				t.Errorf("summary not clean: %+v", sum)
			}
			rep, err := verify.File(context.Background(), trace, verify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != verify.Valid {
				t.Errorf("verdict %s, want valid: %+v", rep.Verdict, rep.Violations)
			}
			if b := rep.Header.Broker; b.Kind != "kafka" || b.Version != version || b.NoStateRule != "v25to44" {
				t.Errorf("trace header broker %+v, want kafka %s v25to44", b, version)
			}
			n := c.Nodes()[0]
			log, err := os.ReadFile(n.Log())
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(log), `"requestApiKeyName":"PRODUCE"`); got != reqLog {
				t.Errorf("node.log has completed produce requests: %v, want %v (RequestLog %v)", got, reqLog, reqLog)
			}
			if gc, err := os.ReadFile(filepath.Join(n.Dir, "gc.log")); err != nil || !strings.Contains(string(gc), "Safepoint") {
				t.Errorf("gc.log: %v, %d bytes without a safepoint line; want the JVM's pauses", err, len(gc))
			}
			stopped := time.Now()
			stopAndCheck(t, c)
			t.Logf("stopped in %v; start, run, verify and stop in %v", time.Since(stopped).Round(time.Millisecond), time.Since(begin).Round(time.Millisecond))
		})
	}
}

// TestThreeNodes starts a cluster of three nodes and checks that each
// lists all three in its metadata.
func TestThreeNodes(t *testing.T) {
	needKafka(t)
	c := start(t, kafka.Config{Version: "4.1.0", Nodes: 3, StartTimeout: 90 * time.Second})
	if len(c.Nodes()) != 3 {
		t.Fatalf("%d nodes", len(c.Nodes()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range c.Nodes() {
		resp, err := metadata(ctx, n.Addr)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int32
		for _, b := range resp.Brokers {
			ids = append(ids, b.NodeID)
			if b.Host != "127.0.0.1" {
				t.Errorf("node %d: broker %d advertised on %s", n.ID, b.NodeID, b.Host)
			}
		}
		if len(ids) != 3 {
			t.Errorf("node %d: metadata lists brokers %v, want 3", n.ID, ids)
		}
	}
	// A paused node answers nothing until resumed.
	n2 := c.Nodes()[1]
	if err := c.Pause(2); err != nil {
		t.Fatal(err)
	}
	if st := procState(t, n2.PID); st != "T" {
		t.Errorf("paused node 2: process state %q, want T (stopped)", st)
	}
	pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	if _, err := metadata(pctx, n2.Addr); err == nil {
		t.Error("a paused node answered")
	}
	pcancel()
	if err := c.Resume(2); err != nil {
		t.Fatal(err)
	}
	if _, err := metadata(ctx, n2.Addr); err != nil {
		t.Errorf("node 2 after Resume: %v", err)
	}
	// A paused node killed meanwhile: Resume says so; it starts again.
	if err := c.Pause(3); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(3); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(3); err == nil || !strings.Contains(err.Error(), "node 3 was paused and has exited meanwhile") {
		t.Errorf("Resume of a killed node: %v", err)
	}
	if err := c.Pause(3); err == nil || !strings.Contains(err.Error(), "node 3 is not running") {
		t.Errorf("Pause of a killed node: %v", err)
	}
	if down := c.Down(); len(down) != 1 || down[0] != 3 {
		t.Errorf("Down after node 3 was killed: %v", down)
	}
	sctx, scancel := context.WithTimeout(context.Background(), 90*time.Second)
	if err := c.StartNode(sctx, 3); err != nil {
		t.Fatal(err)
	}
	scancel()
	if down := c.Down(); len(down) != 0 {
		t.Errorf("Down after node 3 started again: %v", down)
	}
	// Stop continues a paused node, which then stops on its SIGTERM.
	if err := c.Pause(1); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	stopAndCheck(t, c)
	t.Logf("stopped in %v", time.Since(stopped).Round(time.Millisecond))
}

// procState returns the state letter of process pid (/proc/PID/stat).
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ...: comm may hold spaces; the state follows its ")".
	_, rest, _ := strings.Cut(string(b), ") ")
	st, _, _ := strings.Cut(rest, " ")
	return st
}

// metadata asks the node at addr for the cluster's brokers.
func metadata(ctx context.Context, addr string) (*kmsg.MetadataResponse, error) {
	conn, err := wire.Dial(ctx, addr, "kcheck-kafka-test")
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	resp, err := conn.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.MetadataResponse), nil
}

// TestBrokerExitsDuringStart starts a node whose JVM cannot start, and
// checks that the error shows why and that nothing is left.
func TestBrokerExitsDuringStart(t *testing.T) {
	needKafka(t)
	dir := filepath.Join(t.TempDir(), "kafka")
	_, err := kafka.Start(context.Background(), kafka.Config{Version: "4.1.0", Classpath: fetch(t, "4.1.0"), Dir: dir, Nodes: 3, Heap: "1k"})
	if err == nil || !strings.Contains(err.Error(), "exited during start") || !strings.Contains(err.Error(), "Too small") {
		t.Fatalf("Start: %v, want the JVM's complaint about the heap", err)
	}
	for id := 1; id <= 3; id++ {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("node-%d", id), "data")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("node %d: data left: %v", id, err)
		}
	}
	// A setting the storage tool rejects fails before any broker starts.
	_, err = kafka.Start(context.Background(), kafka.Config{Version: "4.1.0", Classpath: fetch(t, "4.1.0"),
		Properties: map[string]string{"num.io.threads": "nope"}})
	if err == nil || !strings.Contains(err.Error(), "Invalid value nope for configuration num.io.threads") {
		t.Fatalf("Start: %v, want Kafka's complaint about num.io.threads", err)
	}
}
