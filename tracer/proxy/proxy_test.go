package proxy_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/producer"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/proxy"
	"github.com/kcheck/kcheck/workload"
)

// through runs kcheck's own producer (with the given rules) against a kfake
// cluster through the proxy, which injects faults, and returns the run's
// summary and the proxy's verified trace.
func through(t *testing.T, rules bool, faults []fault.Fault, seed int64) (*workload.Summary, *verify.Report, string) {
	t.Helper()
	// kfake emulating Kafka 4.1, the seed's broker: it accepts any first
	// sequence from a producer it has no state for.
	cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(workload.Emulations["4.1"].Versions))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	path := filepath.Join(t.TempDir(), "proxy.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var logs bytes.Buffer
	ctx := context.Background()
	p, err := proxy.Start(ctx, proxy.Config{
		Listen: "127.0.0.1:0", Upstream: cluster.ListenAddrs()[0], Topic: "t",
		Broker: tracer.Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"},
		Faults: faults, Seed: seed, Trace: f,
		Logf: func(format string, args ...any) { logs.WriteString(strings.TrimSpace(format) + "\n") },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sum, err := workload.Run(ctx, workload.Config{
		Brokers: []string{p.Addr()}, BrokerVersion: "4.1.0", Topic: "t", Partitions: 8, Records: 800, ValueBytes: 100, Keys: 64,
		Codec: producer.CodecGzip, FirstAck: rules, HoldWhileRetrying: rules, MaxInFlight: 5, Linger: 0, BatchBytes: 512,
		DeliveryTimeout: 2 * time.Second, RequestTimeout: 500 * time.Millisecond, Seed: uint64(seed),
		// The producer's own trace too: with it on, records carry kcheck ids.
		TracePath: filepath.Join(t.TempDir(), "producer.jsonl"),
	})
	if err != nil {
		t.Fatalf("seed %d: run through the proxy: %v (proxy log: %s)", seed, err, logs.String())
	}
	if err := p.Finish(ctx); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	rep, err := verify.File(ctx, path, verify.Options{LinzTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("seed %d: verify: %v", seed, err)
	}
	return sum, rep, path
}

func TestCleanRunVerifies(t *testing.T) {
	sum, rep, path := through(t, true, nil, 1)
	if !sum.Clean() {
		t.Fatalf("run not clean: %+v", sum)
	}
	if rep.Verdict != verify.Valid {
		t.Fatalf("verify %s: %s, conformance %q, violations %v", path, rep.Verdict, rep.Conformance, rep.Violations)
	}
	if rep.Header.Writer != tracer.ProxyWriter || rep.Header.Client != "kcheck" || rep.Header.Partitions != 8 {
		t.Fatalf("header: %+v", rep.Header)
	}
}

// The seed's race, injected by the proxy: with the Java client's rules our
// producer loses records and kcheck verify names it; with the first-ack
// rule it loses nothing and verify passes.
func TestSeedRaceThroughProxy(t *testing.T) {
	race := []fault.Fault{{Kind: fault.SeedRace, Count: -1, Delay: 50 * time.Millisecond}}
	for _, seed := range []int64{1, 2} {
		sum, rep, path := through(t, false, race, seed)
		if sum.Lost == 0 {
			t.Fatalf("seed %d: rules off through the proxy lost nothing: %+v", seed, sum)
		}
		if rep.Verdict != verify.Violations || rep.Conformance != "" {
			t.Fatalf("seed %d: verify %s of a losing run: %s, conformance %q", seed, path, rep.Verdict, rep.Conformance)
		}
		sum, rep, path = through(t, true, race, seed)
		if !sum.Clean() {
			t.Fatalf("seed %d: rule on through the proxy: %+v", seed, sum)
		}
		if rep.Verdict != verify.Valid {
			t.Fatalf("seed %d: verify %s: %s, conformance %q, violations %v", seed, path, rep.Verdict, rep.Conformance, rep.Violations)
		}
	}
}

// Every fault the proxy injects, on a producer that survives them: the run
// is clean and verify agrees.
func TestFaultsThroughProxy(t *testing.T) {
	faults := []fault.Fault{
		{Kind: fault.NotEnoughReplicas, Rate: 0.05, Count: 10},
		{Kind: fault.NotLeader, Rate: 0.05, Count: 10},
		{Kind: fault.TimeoutAfterAppend, Rate: 0.05, Count: 10},
		{Kind: fault.DropConnection, Rate: 0.02, Count: 2},
	}
	for _, seed := range []int64{1, 2, 3} {
		sum, rep, path := through(t, true, faults, seed)
		if !sum.Clean() {
			t.Fatalf("seed %d: not clean: %+v", seed, sum)
		}
		if rep.Verdict != verify.Valid {
			t.Fatalf("seed %d: verify %s: %s, conformance %q, violations %v", seed, path, rep.Verdict, rep.Conformance, rep.Violations)
		}
	}
}

func TestUpstreamDown(t *testing.T) {
	_, err := proxy.Start(context.Background(), proxy.Config{Listen: "127.0.0.1:0", Upstream: "127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("Start with an upstream that is down: %v", err)
	}
}
