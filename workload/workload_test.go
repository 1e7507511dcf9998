package workload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/outcomes"
)

func config(t *testing.T, firstAck bool) Config {
	return Config{
		KfakeVersion: "4.1", Topic: "t", Partitions: 8, Records: 600, ValueBytes: 100, Keys: 64,
		Codec: recordbatch.CodecGzip, FirstAck: firstAck, HoldWhileRetrying: true, MaxInFlight: 5, Linger: 0, BatchBytes: 512,
		DeliveryTimeout: time.Second, RequestTimeout: 500 * time.Millisecond,
		Faults:    []fault.Fault{{Kind: fault.SeedRace, Count: -1, Delay: 50 * time.Millisecond}},
		Seed:      1,
		TracePath: filepath.Join(t.TempDir(), "run.jsonl"),
	}
}

// readTrace reads a trace back with the strict reader and counts its kinds.
func readTrace(t *testing.T, path string) (tracer.Header, map[tracer.Kind]int) {
	t.Helper()
	f, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[tracer.Kind]int{}
	if err := f.Each(func(_ int, e *tracer.Event) error { kinds[e.Kind]++; return nil }); err != nil {
		t.Fatal(err)
	}
	return f.Header(), kinds
}

func TestRuleOnIsClean(t *testing.T) {
	cfg := config(t, true)
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Clean() {
		t.Fatalf("rule on: not clean: %+v", sum)
	}
	h, kinds := readTrace(t, cfg.TracePath)
	if !h.FirstAck || h.Broker.NoStateRule != "v25to44" {
		t.Fatalf("header: %+v", h)
	}
	if kinds[tracer.ReadBack] != 8 || kinds[tracer.Fault] != 8 || kinds[tracer.SendNew] == 0 {
		t.Fatalf("trace kinds: %v", kinds)
	}
}

// A run without a trace still tells its records apart in the read-back
// (they carry kcheck ids all the same): clean, each read back once, and the
// report of what each callback was told has a line per record.
func TestUntracedRunIsJudged(t *testing.T) {
	cfg := config(t, true)
	cfg.TracePath = ""
	cfg.OutcomesPath = filepath.Join(t.TempDir(), "outcomes.jsonl")
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Clean() || sum.ReadBack != cfg.Records || sum.Lost != 0 {
		t.Fatalf("untraced rule-on run: %+v", sum)
	}
	f, err := os.Open(cfg.OutcomesPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := outcomes.Read(f, cfg.OutcomesPath)
	if err != nil || len(lines) != cfg.Records {
		t.Fatalf("outcomes: %d lines, %v; want %d", len(lines), err, cfg.Records)
	}
}

func TestRuleOffLoses(t *testing.T) {
	cfg := config(t, false)
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Lost == 0 || sum.OutOfOrderAnswers == 0 || !sum.Anomalies() {
		t.Fatalf("rule off: expected a loss after OUT_OF_ORDER_SEQUENCE_NUMBER stalls: %+v", sum)
	}
	_, kinds := readTrace(t, cfg.TracePath)
	if kinds[tracer.ExpireBatch] == 0 {
		t.Fatalf("rule off: no ExpireBatch in the trace: %v", kinds)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"partitions", func(c *Config) { c.Partitions = 0 }, "--partitions 0"},
		{"records", func(c *Config) { c.Records = -1 }, "--records -1"},
		{"in flight", func(c *Config) { c.MaxInFlight = 6 }, "--max-in-flight 6"},
		{"version", func(c *Config) { c.KfakeVersion = "9.9" }, `--kfake-version "9.9"`},
		{"unreachable", func(c *Config) { c.Brokers, c.Faults = []string{"127.0.0.1:1"}, nil }, "no broker reachable"},
		{"faults on a real broker", func(c *Config) { c.Brokers = []string{"127.0.0.1:1"} }, "needs kcheck proxy"},
		{"expiry on kfake", func(c *Config) { c.Faults = []fault.Fault{{Kind: fault.StateExpiry}} }, "needs a real Kafka broker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(t, true)
			tc.mod(&cfg)
			_, err := Run(context.Background(), cfg)
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}

// TestCreateTopicTwice: a topic that exists is a usage error that says to
// pick another, so a run's read-back never counts an earlier run's records.
func TestCreateTopicTwice(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := CreateTopic(ctx, c.ListenAddrs(), "t", 4, 5*time.Second); err != nil {
		t.Fatalf("first create: %v", err)
	}
	err = CreateTopic(ctx, c.ListenAddrs(), "t", 4, 5*time.Second)
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `topic "t" already exists: pick a new --topic`) {
		t.Fatalf("second create: got %v, want a UsageError saying the topic exists", err)
	}
}
