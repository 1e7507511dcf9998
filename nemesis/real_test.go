package nemesis_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/kafka"
	"github.com/kcheck/kcheck/nemesis"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/proxy"
	"github.com/kcheck/kcheck/tracer/readback"
	"github.com/kcheck/kcheck/workload"
)

// TestRealFaults runs our producer (first-ack rule on) against a real
// three-node Kafka cluster under each of five faults: leader moves, a
// broker restart (SIGTERM), a broker killed (SIGKILL, its data kept, then
// started again), the active KRaft controller killed the same way, and lost
// responses (the proxy answering REQUEST_TIMED_OUT after the append, and
// cutting connections). Each run goes fault -> stop -> heal -> read: the
// workload produces under the fault, the fault stops, the cluster heals
// (every node up, every partition's leader stable and every replica in
// sync), and only then is the topic read back. Every run must be clean and
// kcheck verify must agree, on the producer's trace and, for lost
// responses, on the proxy's. KCHECK_FAULT_RUNS sets the runs per fault (1),
// KCHECK_FAULT_KAFKA the version (4.1.0), KCHECK_FAULT_KEEP a folder to
// keep every trace in. It needs KCHECK_KAFKA=1.
func TestRealFaults(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka cluster (make faults)")
	}
	runs := 1
	if s := os.Getenv("KCHECK_FAULT_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KCHECK_FAULT_RUNS=%q: want a positive number", s)
		}
		runs = n
	}
	version := os.Getenv("KCHECK_FAULT_KAFKA")
	if version == "" {
		version = "4.1.0"
	}
	ctx := context.Background()
	c, err := kafka.Start(ctx, kafka.Config{Version: version, Nodes: 3, StartTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	t.Logf("Kafka %s, 3 nodes, started in %v", version, c.StartDuration().Round(time.Millisecond))

	var table strings.Builder
	fmt.Fprintf(&table, "| Kafka %s, 3 nodes | runs | runs not clean | records lost | duplicated | reordered | kcheck verify flagged | disturbances | errors the producer saw | run time |\n|---|---|---|---|---|---|---|---|---|---|\n", version)
	for _, kind := range []string{"leader moves", "broker restart", "broker SIGKILL", "controller SIGKILL", "lost responses"} {
		var notClean, lost, dup, reord, flagged, disturbed, seen int
		var took time.Duration
		for i := range runs {
			topic := fmt.Sprintf("nemesis-%s-%d", strings.ReplaceAll(kind, " ", "-"), i)
			dir := t.TempDir()
			brokers := c.Addrs()
			var prox *proxy.Proxy
			var proxyTrace string
			if kind == "lost responses" {
				proxyTrace = filepath.Join(dir, "proxy.jsonl")
				f, err := os.Create(proxyTrace)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				prox, err = proxy.Start(ctx, proxy.Config{Listen: "127.0.0.1:0", Upstream: c.Addrs()[0], Topic: topic,
					Broker: workload.KafkaBroker(version), Seed: int64(i + 1), Trace: f,
					Faults: []fault.Fault{
						{Kind: fault.TimeoutAfterAppend, Rate: 0.05, Count: 20},
						{Kind: fault.DropConnection, Rate: 0.01, Count: 3},
					}})
				if err != nil {
					t.Fatal(err)
				}
				brokers = []string{prox.Addr()}
			}
			trace := filepath.Join(dir, "run.jsonl")
			run, err := workload.Start(ctx, workload.Config{
				Brokers: brokers, ReadBackBrokers: c.Addrs(), BrokerVersion: version, Topic: topic, Partitions: 16, Records: 30000,
				ValueBytes: 1024, Keys: 1024, Codec: recordbatch.CodecLZ4, FirstAck: true, HoldWhileRetrying: true,
				MaxInFlight: 5, Linger: 5 * time.Millisecond, BatchBytes: 16 << 10,
				DeliveryTimeout: 60 * time.Second, RequestTimeout: 5 * time.Second, Seed: uint64(i + 1), TracePath: trace,
			})
			if err != nil {
				t.Fatalf("%s, run %d: %v", kind, i, err)
			}
			// Fault: the workload produces while the nemesis disturbs.
			nctx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- disturb(nctx, c, kind, topic, &disturbed) }()
			perr := run.Produce(ctx)
			// Stop: no more disturbances (a killed node is started again).
			stop()
			if nerr := <-done; nerr != nil {
				t.Fatalf("%s, run %d: %v", kind, i, nerr)
			}
			if perr != nil {
				t.Fatalf("%s, run %d: %v", kind, i, perr)
			}
			traces := []string{trace}
			if prox != nil {
				// The proxy's faults end with it; its read-back waits for
				// the cluster to settle, as the run's does.
				if err := prox.Finish(ctx); err != nil {
					t.Fatalf("%s, run %d: %v", kind, i, err)
				}
				disturbed += prox.Stats().Faults
				traces = append(traces, proxyTrace)
			}
			// Heal: every partition led, its leader stable, every replica in
			// sync (a restarted node caught up).
			if err := readback.Settle(ctx, readback.Config{Bootstrap: c.Addrs(), Topic: topic, Settle: 2 * time.Minute}); err != nil {
				t.Fatalf("%s, run %d: the cluster did not heal: %v", kind, i, err)
			}
			// Read: the topic, into the trace.
			sum, err := run.ReadBack(ctx)
			run.Close()
			if err != nil {
				t.Fatalf("%s, run %d: %v", kind, i, err)
			}
			took += sum.Duration
			seen += errorsSeen(t, trace)
			if !sum.Clean() {
				notClean++
				t.Errorf("%s, run %d (seed %d): not clean: %+v", kind, i, i+1, sum)
			}
			lost, dup, reord = lost+sum.Lost, dup+sum.Duplicated, reord+sum.OutOfOrder
			bad := false
			for _, tr := range traces {
				name := fmt.Sprintf("kcheck-nemesis-%s-%d-%s", strings.ReplaceAll(kind, " ", "-"), i, filepath.Base(tr))
				if dir := os.Getenv("KCHECK_FAULT_KEEP"); dir != "" {
					// Every trace kept, to be checked again by a later kcheck.
					if err := copyFile(tr, filepath.Join(dir, name)); err != nil {
						t.Fatalf("KCHECK_FAULT_KEEP: %v", err)
					}
				}
				rep, err := verify.File(ctx, tr, verify.Options{})
				if err != nil {
					t.Fatalf("%s, run %d: verify %s: %v", kind, i, tr, err)
				}
				if rep.Verdict != verify.Valid {
					bad = true
					keep := filepath.Join(os.TempDir(), name)
					if err := copyFile(tr, keep); err != nil {
						t.Logf("keeping %s: %v", tr, err)
					}
					t.Errorf("%s, run %d (seed %d): verify %s: %s (kept as %s): conformance %q, %d violations: %v",
						kind, i, i+1, tr, rep.Verdict, keep, rep.Conformance, len(rep.Violations), rep.Violations)
				}
			}
			if bad {
				flagged++
			}
		}
		fmt.Fprintf(&table, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %.1f s each |\n", kind, runs, notClean, lost, dup, reord, flagged, disturbed, seen,
			took.Seconds()/float64(runs))
		// A fault that never reached the producer tested nothing.
		if disturbed == 0 || seen == 0 {
			t.Errorf("%s: %d disturbances, %d errors seen by the producer: the fault did not reach the run", kind, disturbed, seen)
		}
	}
	t.Logf("our producer, first-ack rule on, under faults:\n%s", table.String())
}

// copyFile copies the file at from to to.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// errorsSeen counts the error answers and lost connections in a producer's
// trace: the faults as the producer met them.
func errorsSeen(t *testing.T, path string) int {
	t.Helper()
	f, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	err = f.Each(func(_ int, e *tracer.Event) error {
		if (e.Kind == tracer.Receive && e.Err != "NONE") || e.Kind == tracer.Disconnect {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// disturb applies the fault kind to the cluster while the run goes on.
func disturb(ctx context.Context, c *kafka.Cluster, kind, topic string, count *int) error {
	switch kind {
	case "leader moves":
		_, err := nemesis.Every(ctx, 300*time.Millisecond, func(ctx context.Context) error {
			moved, err := nemesis.MoveLeaders(ctx, c.Addrs()[0], topic)
			*count += moved
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				return nil // not created yet
			}
			return err
		})
		return err
	case "broker restart":
		// Node 3 leads a third of the partitions; the restart lasts seconds,
		// the run as long.
		if !after(ctx, 200*time.Millisecond) {
			return nil
		}
		rctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.Restart(rctx, 3); err != nil {
			return err
		}
		*count++
	case "broker SIGKILL", "controller SIGKILL":
		if !after(ctx, 300*time.Millisecond) {
			return nil
		}
		id := int32(3)
		if kind == "controller SIGKILL" {
			var err error
			if id, err = nemesis.ActiveController(ctx, c.Addrs()[0]); err != nil {
				return err
			}
		}
		if err := c.Kill(int(id)); err != nil {
			return err
		}
		*count++
		// Down for a while (or until the run ends), then up again on its
		// data, whatever ctx says: the node must be back before the heal.
		after(ctx, 2*time.Second)
		rctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.StartNode(rctx, int(id)); err != nil {
			return err
		}
	}
	return nil
}

// after waits for d and reports true, or false when ctx ends first.
func after(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
