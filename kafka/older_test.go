//go:build linux

package kafka_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/kafka"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/wire"
	"github.com/kcheck/kcheck/workload"
)

// olderVersions are the releases before 4.0 kcheck runs, each with the
// release franz-go's kversion guesses from its ApiVersions answer. A KRaft
// broker of 3.3 answers with the versions of 3.4's: kversion cannot tell
// them apart, and guesses the newer.
var olderVersions = []struct {
	version, guess string
	zooKeeper      bool
}{
	{"3.9.1", "v3.9", false},
	{"3.5.2", "v3.5", false},
	{"3.3.2", "v3.4", false},
	{"2.8.2", "v2.8", true},
}

// TestOlderVersions starts each release before 4.0 on one node (2.8 with
// its ZooKeeper), runs our producer's workload through it, verifies the
// trace, and stops it, leaving nothing behind.
func TestOlderVersions(t *testing.T) {
	needKafka(t)
	for _, tc := range olderVersions {
		t.Run(tc.version, func(t *testing.T) {
			c := start(t, kafka.Config{Version: tc.version, Nodes: 1, RequestLog: true})
			zk, hasZK := c.ZooKeeper()
			if hasZK != tc.zooKeeper {
				t.Fatalf("a ZooKeeper server: %v, want %v", hasZK, tc.zooKeeper)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			conn, err := wire.Dial(ctx, c.Addrs()[0], "kcheck-kafka-test")
			if err != nil {
				t.Fatal(err)
			}
			guess := conn.VersionGuess()
			conn.Close()
			t.Logf("ApiVersions: franz-go guesses %s", guess)
			if !strings.HasPrefix(guess, tc.guess) {
				t.Errorf("ApiVersions: franz-go guesses %q, want %s", guess, tc.guess)
			}

			trace := filepath.Join(t.TempDir(), "run.jsonl")
			sum, err := workload.Run(ctx, workload.Config{
				Brokers: c.Addrs(), BrokerVersion: tc.version, Topic: "kcheck-kafka-test", Partitions: 4, Records: 1000,
				ValueBytes: 100, Keys: 256, Codec: recordbatch.CodecNone, FirstAck: true, HoldWhileRetrying: true,
				MaxInFlight: 5, Linger: 5 * time.Millisecond, BatchBytes: 16 << 10,
				DeliveryTimeout: 10 * time.Second, RequestTimeout: 5 * time.Second, Seed: 1, TracePath: trace,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("workload: sent %d, acked %d, read back %d, lost %d, duplicated %d, in %v",
				sum.Sent, sum.Acked, sum.ReadBack, sum.Lost, sum.Duplicated, sum.Duration.Round(time.Millisecond))
			if !sum.Clean() || sum.ReadBack != 1000 {
				t.Errorf("summary not clean: %+v", sum)
			}
			rep, err := verify.File(ctx, trace, verify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != verify.Valid {
				t.Errorf("verdict %s, want valid: %+v", rep.Verdict, rep.Violations)
			}
			// Logging goes through log4j 1 to node.log, with the request
			// logger at DEBUG as asked.
			n := c.Nodes()[0]
			log, err := os.ReadFile(n.Log())
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"started (kafka.server.Kafka", "Completed request:"} {
				if !strings.Contains(string(log), want) {
					t.Errorf("node.log has no %q", want)
				}
			}
			if strings.Contains(string(log), "isn't a known config") {
				t.Errorf("node.log: Kafka %s does not know a setting kcheck wrote", tc.version)
			}
			stopped := time.Now()
			stopAndCheck(t, c)
			t.Logf("stopped in %v", time.Since(stopped).Round(time.Millisecond))
			if hasZK {
				if _, err := os.Stat(filepath.Join(zk.Dir, "data")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("ZooKeeper's data left after Stop: %v", err)
				}
				if alive(zk) {
					t.Errorf("ZooKeeper: process %d still running after Stop", zk.PID)
				}
			}
		})
	}
}

// TestOlderThreeNodes starts three nodes of a KRaft release before 4.0
// and of 2.8 on ZooKeeper, checks that each node lists all three, and
// kills one and starts it again.
func TestOlderThreeNodes(t *testing.T) {
	needKafka(t)
	for _, version := range []string{"3.5.2", "2.8.2"} {
		t.Run(version, func(t *testing.T) {
			c := start(t, kafka.Config{Version: version, Nodes: 3, StartTimeout: 2 * time.Minute})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for _, n := range c.Nodes() {
				resp, err := metadata(ctx, n.Addr)
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.Brokers) != 3 {
					t.Errorf("node %d: metadata lists %d brokers, want 3", n.ID, len(resp.Brokers))
				}
			}
			// A node killed, as kcheck proxy --cluster's faults do, starts
			// again on its data.
			if err := c.Kill(3); err != nil {
				t.Fatal(err)
			}
			sctx, scancel := context.WithTimeout(context.Background(), 2*time.Minute)
			begin := time.Now()
			if err := c.StartNode(sctx, 3); err != nil {
				t.Fatal(err)
			}
			scancel()
			t.Logf("node 3 killed and started again in %v", time.Since(begin).Round(time.Millisecond))
			stopped := time.Now()
			stopAndCheck(t, c)
			t.Logf("stopped in %v", time.Since(stopped).Round(time.Millisecond))
		})
	}
}
