package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/drivers/logtest"
	"github.com/kcheck/kcheck/kafka"
	"github.com/kcheck/kcheck/tracer/outcomes"
)

// TestJavaRandom checks loadgen.JavaRandom, which this driver draws with,
// against values printed by Java's new java.util.Random(1): the letters'
// String.hashCode, then a hash of 3,000 nextInt(1024) draws (the seed's
// keys), then five draws of a bound that is no power of two.
func TestJavaRandom(t *testing.T) {
	r := loadgen.NewJavaRandom(1)
	var h int32
	for range 10240 {
		h = 31*h + ('a' + r.NextInt(26))
	}
	if h != -272447338 {
		t.Errorf("letters hash %d, want -272447338", h)
	}
	var s int64
	for range 3000 {
		s = s*31 + int64(r.NextInt(1024))
	}
	if s != -4138879308510851376 {
		t.Errorf("keys hash %d, want -4138879308510851376", s)
	}
	for i, want := range []int32{775073953, 96911320, 206625761, 506627155, 720236926} {
		if got := r.NextInt(1000000007); got != want {
			t.Errorf("draw %d: %d, want %d", i, got, want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs([]string{"--bootstrap", "h:1", "--topic", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.partitions != 64 || cfg.records != 3000 || cfg.valueBytes != 10240 || cfg.keys != 1024 ||
		cfg.compression != "gzip" || cfg.deliveryTimeout != 5*time.Second || cfg.requestTimeout != 2*time.Second ||
		cfg.replicationFactor != 1 {
		t.Errorf("defaults: %+v", cfg)
	}
	for _, rf := range []int16{3, -1} {
		cfg, err := parseArgs([]string{"--bootstrap", "h:1", "--topic", "t", "--replication-factor", fmt.Sprint(rf)})
		if err != nil || cfg.replicationFactor != rf {
			t.Errorf("--replication-factor %d: %+v, %v", rf, cfg, err)
		}
	}
	for _, argv := range [][]string{
		{"--bootstrap", "h:1", "--topic"},
		{"--bootstrap", "h:1", "--topic", "t", "--bogus", "1"},
		{"--bootstrap", "h:1", "--topic", "t", "--records", "x"},
		{"--bootstrap", "h:1", "--topic", "t", "--partitions", "0"},
		{"--bootstrap", "h:1", "--topic", "t", "--replication-factor", "0"},
		{"--bootstrap", "h:1", "--topic", "t", "--replication-factor", "x"},
		{"--bootstrap", "h:1", "--topic", "t", "--compression", "brotli"},
		{"--bootstrap", "h:1", "--topic", "t", "--batch-records", "two"},
		{"--bootstrap", "h:1", "--topic", "t", "--idle-after", "-1", "--idle-ms", "10"},
		{"--bootstrap", "h:1", "--topic", "t", "--idle-after", "1", "--idle-ms", "-10"},
		{"--bootstrap", "h:1", "--topic", "t", "--records", "5", "--idle-after", "6", "--idle-ms", "10"},
		{"--bootstrap", "h:1", "--topic", "t", "--idle-after", "6"},
		{"--topic", "t"},
		{"bootstrap", "h:1"},
	} {
		var se *setupError
		if _, err := parseArgs(argv); !errors.As(err, &se) {
			t.Errorf("parseArgs(%q): %v, want a setup error", argv, err)
		}
	}
}

// TestParseOutcomes: --outcomes is the driver's own flag.
func TestParseOutcomes(t *testing.T) {
	cfg, err := parseArgs([]string{"--bootstrap", "h:1", "--topic", "t", "--outcomes", "f"})
	if err != nil || cfg.outcomes != "f" {
		t.Errorf("--outcomes f: %+v, %v", cfg, err)
	}
}

// TestErrorCode: the code of kgo's own error values as its promises hand
// them over (a *kerr.Error, also wrapped in ErrRecordTimeout with the last
// error of the retries), none for kgo's own errors.
func TestErrorCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int16
	}{
		{kerr.InvalidRecord, 87},
		{kerr.RequestTimedOut, 7},
		{kerr.NotLeaderForPartition, 6},
		{kerr.UnknownServerError, -1}, // written without a code (tracer/outcomes)
		{kerr.ErrorForCode(45), 45},
		{fmt.Errorf("%w, last err: %w", kgo.ErrRecordTimeout, kerr.NotEnoughReplicas), 19}, // producer.go's wrapping
		{fmt.Errorf("%w (uncompressed_bytes=%d)", kerr.MessageTooLarge, 5), 10},            // sink.go's, kgo's own check
		{kgo.ErrRecordTimeout, 0},
		{kgo.ErrRecordRetries, 0},
		{kgo.ErrClientClosed, 0},
		{context.DeadlineExceeded, 0},
	} {
		if got := errorCode(c.err); got != c.want {
			t.Errorf("errorCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// TestKfake runs the experiment in-process against kfake (Kafka 4.1, 3
// brokers) with outcomes: one success per record, at the partition and
// offset the read-back of the log finds it at; the topic has the
// --replication-factor given (2).
func TestKfake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(kversion.V4_1_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg, err := parseArgs([]string{"--bootstrap", strings.Join(c.ListenAddrs(), ","), "--topic", "kgo-test",
		"--partitions", "4", "--records", "300", "--value-bytes", "100", "--keys", "64", "--compression", "lz4",
		"--delivery-timeout-ms", "30000", "--request-timeout-ms", "5000", "--replication-factor", "2"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	out := outcomes.New(&b)
	res, err := run(context.Background(), cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Sent != 300 || res.Acked != 300 || res.ReadBack != 300 || !res.Clean() {
		line, _ := loadgen.EncodeLine(res)
		t.Errorf("result: %s", line)
	}
	logged := logtest.ReadLog(t, c.ListenAddrs(), "kgo-test", 300)
	logtest.Same(t, logtest.Delivered(t, &b, "outcomes", 300), logged)
	if n := logtest.Replicas(t, c.ListenAddrs(), "kgo-test"); len(n) != 4 || n[0] != 2 || n[1] != 2 || n[2] != 2 || n[3] != 2 {
		t.Errorf("replicas by partition %v, want 2 each of 4", n)
	}
}

// TestShapes runs --batch-records one and many, 1 and 16 partitions, and an
// idle phase, in-process against kfake (Kafka 4.1, 3 brokers) through
// kcheck's proxy, and checks the batches on the wire (drivers/WORKLOADS.md):
// one record each with one, some of more with many; with the idle phase, a
// gap of at least --idle-ms between produce attempts after the first
// --idle-after records, and its times in the JSON line.
func TestShapes(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(kversion.V4_1_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for i, tc := range logtest.ShapeCases() {
		t.Run(tc.Name(), func(t *testing.T) {
			topic := fmt.Sprintf("kgo-shape-%d", i)
			addr, finish := logtest.TraceProxy(t, c.ListenAddrs()[0], topic)
			cfg, err := parseArgs(tc.Args(addr, topic))
			if err != nil {
				t.Fatal(err)
			}
			res, err := run(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			line, _ := loadgen.EncodeLine(res)
			if res.Acked != 200 || res.ReadBack != 200 || !res.Clean() {
				t.Errorf("result: %s", line)
			}
			tc.CheckIdleResult(t, res.IdleResult, string(line))
			if want := tc.Shape; res.BatchRecords != want && (want != loadgen.BatchDefault || res.BatchRecords != "") {
				t.Errorf("batch_records %q, want %q (none for the default)", res.BatchRecords, want)
			}
			sizes := logtest.CheckShape(t, finish(), tc.Shape, tc.IdleAfter, logtest.ShapeIdle)
			t.Logf("batches (records: batches) %v; %s", sizes, line)
		})
	}
}

// TestMainOutcomesEnv: without --outcomes the driver writes to
// $KCHECK_OUTCOMES; one in no directory is exit 2 naming --outcomes, before
// any broker is asked. main exits, so it runs in a child (TestMainChild).
func TestMainOutcomesEnv(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainChild$", "--", "--bootstrap", "127.0.0.1:1", "--topic", "t")
	cmd.Env = append(os.Environ(), "KCHECK_KGO_MAIN=1", outcomes.Env+"="+filepath.Join(t.TempDir(), "no", "such"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.HasPrefix(stderr.String(), "kgo driver: --outcomes: ") {
		t.Errorf("$KCHECK_OUTCOMES in no directory: %v, stderr %q; want exit 2 and --outcomes", err, stderr.String())
	}
}

// TestMainChild runs main with the arguments after "--" (TestMainOutcomesEnv).
func TestMainChild(t *testing.T) {
	if os.Getenv("KCHECK_KGO_MAIN") != "1" {
		t.Skip("run by TestMainOutcomesEnv")
	}
	for i, a := range os.Args {
		if a == "--" {
			os.Args = append([]string{"kcheck-kgo-driver"}, os.Args[i+1:]...)
			break
		}
	}
	main()
}

// TestKafka runs a small workload against a real broker: it fetches Kafka
// with mvn, so it runs only with KCHECK_KAFKA=1, as kafka/kafka_test.go.
func TestKafka(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
	ctx := context.Background()
	cp, err := kafka.Fetch(ctx, "4.1.0", "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := kafka.Start(ctx, kafka.Config{Version: "4.1.0", Classpath: cp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	argv := []string{"--bootstrap", c.Bootstrap(), "--topic", "kgo-test", "--partitions", "8", "--records", "500",
		"--value-bytes", "200", "--compression", "lz4", "--delivery-timeout-ms", "30000"}
	cfg, err := parseArgs(argv)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := loadgen.EncodeLine(res)
	t.Logf("%s", line)
	if res.Sent != 500 || res.ReadBack+res.Lost != 500 || res.Duplicated != 0 || res.OutOfOrder != 0 || res.Foreign != 0 ||
		res.LostAcked != 0 || res.Acked+res.Failed != 500 || res.Version == "unknown" {
		t.Errorf("result: %s", line)
	}

	var se *setupError
	if _, err := run(ctx, cfg, nil); !errors.As(err, &se) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("the same topic again: %v, want a setup error saying it exists", err)
	}
}

// TestTransactionalKfake runs --transactional in-process against kfake
// (Kafka 4.1, 3 brokers): 200 records in transactions of 20, every third
// aborted; each record and each transaction's end in the report, as
// drivers/OUTCOMES.md orders them, and the JSON line's counts.
func TestTransactionalKfake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(kversion.V4_1_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg, err := parseArgs([]string{"--bootstrap", strings.Join(c.ListenAddrs(), ","), "--topic", "kgo-txn",
		"--partitions", "4", "--records", "200", "--value-bytes", "100", "--keys", "64", "--compression", "lz4",
		"--delivery-timeout-ms", "30000", "--request-timeout-ms", "5000", "--transactional", "--txn-records", "20", "--txn-abort-every", "3"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	out := outcomes.New(&b)
	res, err := run(context.Background(), cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	line, _ := loadgen.EncodeLine(res)
	t.Logf("%s", line)
	if res.Sent != 200 || res.Acked != 200 || res.ReadBack != 200 || !res.Clean() || res.TxnCommitted != 7 || res.TxnAborted != 3 ||
		res.TxnFailed != 0 || res.TransactionalID != "kcheck-kgo-txn" {
		t.Errorf("result: %s", line)
	}
	if !strings.Contains(string(line), `"txn_records":20,"txn_abort_every":3,"txn_committed":7,"txn_aborted":3,"txn_failed":0}`) {
		t.Errorf("the JSON line's transactional keys: %s", line)
	}
	lines, err := outcomes.Read(bytes.NewReader(b.Bytes()), "outcomes")
	if err != nil {
		t.Fatal(err)
	}
	ends := 0
	for _, l := range lines {
		if l.Told.Tx > 0 {
			ends++
			if want := l.Told.Tx%3 != 0; l.Told.Commit != want || l.Line != int(l.Told.Tx)*21 {
				t.Errorf("line %d: %+v", l.Line, l.Told)
			}
		} else if l.Txn != l.Told.RecordID/20+1 {
			t.Errorf("line %d: record %d in transaction %d", l.Line, l.Told.RecordID, l.Txn)
		}
	}
	if ends != 10 || len(lines) != 210 {
		t.Errorf("%d lines, %d transaction ends", len(lines), ends)
	}
}
