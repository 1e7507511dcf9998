package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kcheck/kcheck/drivers/logtest"
	"github.com/kcheck/kcheck/kafka"
	"github.com/kcheck/kcheck/tracer/outcomes"
)

// TestKfake runs the experiment in-process against kfake emulating Kafka 4.1
// (3 brokers): every record acknowledged, read back once, in order; the
// outcomes file has one success per record at the partition and offset an
// independent read-back (kgo) finds it at; the same topic again is a setup
// error. The topic has the --replication-factor given (2).
func TestKfake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(kversion.V4_1_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	bootstrap := strings.Join(c.ListenAddrs(), ",")
	path := filepath.Join(t.TempDir(), "outcomes.jsonl")
	argv := []string{"--bootstrap", bootstrap, "--topic", "sarama-test", "--partitions", "4", "--records", "300",
		"--value-bytes", "100", "--keys", "64", "--compression", "lz4", "--delivery-timeout-ms", "30000",
		"--request-timeout-ms", "5000", "--outcomes", path, "--replication-factor", "2"}
	var stdout, stderr bytes.Buffer
	if code := run(argv, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, stdout.String(), stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	if n := strings.Count(stdout.String(), "\n"); n != 1 || !strings.HasSuffix(stdout.String(), "}\n") {
		t.Errorf("stdout is not one line of JSON: %q", stdout.String())
	}
	var res result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	t.Logf("%s", stdout.String())
	if res.Client != "sarama" || res.Version != "1.61.1" || res.Sent != 300 || res.Acked != 300 || res.Failed != 0 ||
		res.ReadBack != 300 || res.Lost != 0 || res.LostAcked != 0 || res.Duplicated != 0 || res.OutOfOrder != 0 ||
		res.Foreign != 0 || len(res.FailedErrors) != 0 || res.FirstError != "" {
		t.Errorf("result: %s", stdout.String())
	}
	if res.MaxInFlight != 1 || res.RetryMax != 300 || res.RetryBackoffMs != 100 || res.KafkaVersion != "4.1.0" || res.Differs == "" {
		t.Errorf("what differs: %s", stdout.String())
	}

	logged := logtest.ReadLog(t, c.ListenAddrs(), "sarama-test", 300)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	logtest.Same(t, logtest.Delivered(t, f, path, 300), logged)
	if n := logtest.Replicas(t, c.ListenAddrs(), "sarama-test"); len(n) != 4 || n[0] != 2 || n[1] != 2 || n[2] != 2 || n[3] != 2 {
		t.Errorf("replicas by partition %v, want 2 each of 4", n)
	}

	stdout.Reset()
	stderr.Reset()
	if code := run(argv, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "already exists") || stdout.Len() > 0 {
		t.Errorf("the same topic again: exit %d, stdout %q, stderr %q; want 2 and a message that it exists", code, stdout.String(), stderr.String())
	}
}

// TestErrorCode: the code of sarama's own error types, as sarama hands
// them over (a KError, also inside a ProducerError or wrapped), and none for
// sarama's errors that are not the broker's.
func TestErrorCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int16
	}{
		{sarama.ErrInvalidRecord, 87},
		{sarama.ErrRequestTimedOut, 7},
		{sarama.ErrNotLeaderForPartition, 6},
		{sarama.ErrUnknown, -1}, // written without a code (tracer/outcomes)
		{&sarama.ProducerError{Err: sarama.ErrOutOfOrderSequenceNumber}, 45},
		{fmt.Errorf("wrapped: %w", sarama.ErrDuplicateSequenceNumber), 46},
		{sarama.ErrOutOfBrokers, 0},
		{sarama.ErrShuttingDown, 0},
		{sarama.ConfigurationError("x"), 0},
		{errors.New("kafka server: not a KError"), 0},
	} {
		if got := errorCode(c.err); got != c.want {
			t.Errorf("errorCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	var b bytes.Buffer
	o := outcomes.New(&b)
	o.Failed(1, 2, sarama.ErrInvalidRecord.Error(), errorCode(sarama.ErrInvalidRecord))
	o.Failed(2, -1, sarama.ErrOutOfBrokers.Error(), errorCode(sarama.ErrOutOfBrokers))
	o.Close()
	want := `{"id":1,"p":2,"err":"` + sarama.ErrInvalidRecord.Error() + `","code":87}` + "\n" +
		`{"id":2,"p":-1,"err":"` + sarama.ErrOutOfBrokers.Error() + `"}` + "\n"
	if b.String() != want {
		t.Errorf("lines:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestBadFlags: each is exit 2 with a message, before any broker is asked.
func TestBadFlags(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic", "t", "--bogus", "1"}, "sarama driver: unknown flag --bogus\n" + usage},
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic"}, usage},
		{[]string{"--topic", "t"}, "sarama driver: --bootstrap is required"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic", "t", "--records", "x"}, "sarama driver: --records wants a number, not x"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic", "t", "--compression", "brotli"}, "sarama driver: --compression wants"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic", "t", "--replication-factor", "0"}, "sarama driver: --replication-factor wants a number from 1 to 32767, or -1 (the brokers' default.replication.factor), not 0"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic", "t", "--replication-factor", "two"}, "sarama driver: --replication-factor wants a number, not two"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic", "t", "--batch-records", "some"}, "sarama driver: --batch-records wants one, many or default, not some"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic", "t", "--idle-after", "-2", "--idle-ms", "1"}, "sarama driver: --idle-after wants a number of at least 0, not -2"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic", "t", "--idle-after", "2", "--idle-ms", "-1"}, "sarama driver: --idle-ms wants a number of at least 0, not -1"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic", "t", "--records", "3", "--idle-after", "4", "--idle-ms", "1"}, "sarama driver: --idle-after wants a number of at most --records (3), not 4"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic", "t", "--idle-ms", "1"}, "sarama driver: --idle-ms needs --idle-after"},
		{[]string{"--bootstrap", "127.0.0.1:1", "--topic", "t", "--outcomes", filepath.Join(t.TempDir(), "no", "such")}, "sarama driver: --outcomes: "},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.argv, &stdout, &stderr); code != 2 || !strings.HasPrefix(stderr.String(), c.want) || stdout.Len() > 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", c.argv, code, stdout.String(), stderr.String(), c.want)
		}
	}
	// Without --outcomes, $KCHECK_OUTCOMES is the file: one in no directory
	// is the same setup error.
	t.Setenv(outcomes.Env, filepath.Join(t.TempDir(), "no", "such"))
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--bootstrap", "127.0.0.1:1", "--topic", "t"}, &stdout, &stderr); code != 2 ||
		!strings.HasPrefix(stderr.String(), "sarama driver: --outcomes: ") {
		t.Errorf("$KCHECK_OUTCOMES in no directory: exit %d, stderr %q; want 2 and --outcomes", code, stderr.String())
	}
}

// TestProducerConfig pins the mapping of the flags and sarama's rule for
// idempotence (config.go, Config.Validate): more than one open request is
// refused.
func TestProducerConfig(t *testing.T) {
	cfg, err := parseArgs([]string{"--bootstrap", "h:1", "--topic", "t", "--compression", "zstd"})
	if err != nil {
		t.Fatal(err)
	}
	pc, retryMax := producerConfig(cfg)
	if err := pc.Validate(); err != nil {
		t.Fatal(err)
	}
	if !pc.Producer.Idempotent || pc.Net.MaxOpenRequests != 1 || retryMax != 50 || pc.Producer.Retry.Max != 50 ||
		pc.Producer.Timeout != 2*time.Second || pc.Net.ReadTimeout != 2*time.Second || pc.Producer.Compression.String() != "zstd" {
		t.Errorf("config: idempotent %v, open requests %d, retries %d, timeout %v, read timeout %v, compression %v",
			pc.Producer.Idempotent, pc.Net.MaxOpenRequests, pc.Producer.Retry.Max, pc.Producer.Timeout, pc.Net.ReadTimeout, pc.Producer.Compression)
	}
	if f := pc.Producer.Flush; f.Frequency != 0 || f.Bytes != 0 || f.Messages != 0 || f.MaxMessages != 0 {
		t.Errorf("default batching: Flush %+v, want sarama's zeros", f)
	}
	pc.Net.MaxOpenRequests = 2
	if err := pc.Validate(); err == nil || !strings.Contains(err.Error(), "MaxOpenRequests") {
		t.Errorf("two open requests with idempotence: %v, want sarama to refuse", err)
	}
	for shape, want := range map[string]func(c *sarama.Config) bool{
		"one": func(c *sarama.Config) bool {
			return c.Producer.Flush.MaxMessages == 1 && c.Producer.Flush.Frequency == 0
		},
		"many": func(c *sarama.Config) bool {
			return c.Producer.Flush.Frequency == 20*time.Millisecond && c.Producer.Flush.Bytes == 256<<10
		},
	} {
		cfg, err := parseArgs([]string{"--bootstrap", "h:1", "--topic", "t", "--batch-records", shape})
		if err != nil {
			t.Fatal(err)
		}
		pc, _ := producerConfig(cfg)
		if err := pc.Validate(); err != nil || !want(pc) || !pc.Producer.Idempotent || pc.Net.MaxOpenRequests != 1 {
			t.Errorf("--batch-records %s: Flush %+v, %v", shape, pc.Producer.Flush, err)
		}
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
			topic := fmt.Sprintf("sarama-shape-%d", i)
			addr, finish := logtest.TraceProxy(t, c.ListenAddrs()[0], topic)
			var stdout, stderr bytes.Buffer
			if code := run(tc.Args(addr, topic), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d, stdout %s, stderr %s", code, stdout.String(), stderr.String())
			}
			var res result
			if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
				t.Fatalf("%v: %s", err, stdout.String())
			}
			if res.Acked != 200 || res.ReadBack != 200 {
				t.Errorf("result: %s", stdout.String())
			}
			tc.CheckIdleResult(t, res.IdleResult, stdout.String())
			if want := strings.TrimPrefix(tc.Shape, "default"); res.BatchRecords != want {
				t.Errorf("batch_records %q, want %q", res.BatchRecords, want)
			}
			sizes := logtest.CheckShape(t, finish(), tc.Shape, tc.IdleAfter, logtest.ShapeIdle)
			t.Logf("batches (records: batches) %v; %s", sizes, stdout.String())
		})
	}
}

// TestKafka runs a small workload against a real broker: it fetches Kafka
// with mvn, so it runs only with KCHECK_KAFKA=1, as drivers/kgo's.
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
	path := filepath.Join(t.TempDir(), "outcomes.jsonl")
	argv := []string{"--bootstrap", c.Bootstrap(), "--topic", "sarama-test", "--partitions", "8", "--records", "500",
		"--value-bytes", "200", "--compression", "lz4", "--delivery-timeout-ms", "30000", "--outcomes", path}
	var stdout, stderr bytes.Buffer
	code := run(argv, &stdout, &stderr)
	t.Logf("exit %d: %s%s", code, stdout.String(), stderr.String())
	var res result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if res.Sent != 500 || res.ReadBack+res.Lost != 500 || res.Duplicated != 0 || res.OutOfOrder != 0 || res.Foreign != 0 ||
		res.LostAcked != 0 || res.Acked+res.Failed != 500 || res.Version == "unknown" {
		t.Errorf("result: %s", stdout.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n != 500 {
		t.Errorf("%d outcomes, want 500", n)
	}

	stdout.Reset()
	stderr.Reset()
	if code := run(argv, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "already exists") {
		t.Errorf("the same topic again: exit %d, stderr %q; want 2 and a message that it exists", code, stderr.String())
	}
}

// offsetsClient answers GetOffset from a script of errors, then end.
type offsetsClient struct {
	sarama.Client
	errs      []error
	end       int64
	asked     int
	refreshed int
}

func (c *offsetsClient) GetOffset(string, int32, int64) (int64, error) {
	c.asked++
	if len(c.errs) > 0 {
		err := c.errs[0]
		c.errs = c.errs[1:]
		return -1, err
	}
	return c.end, nil
}

func (c *offsetsClient) RefreshMetadata(...string) error { c.refreshed++; return nil }

// The read-back asks a just-healed cluster for an end offset again while
// the answer is one a new leader gives, and gives up at once on any other.
func TestEndOffsetAsksAgain(t *testing.T) {
	c := &offsetsClient{errs: []error{sarama.ErrOffsetNotAvailable, sarama.ErrNotLeaderForPartition}, end: 42}
	if end, err := endOffset(c, "t", 0); err != nil || end != 42 || c.asked != 3 || c.refreshed != 2 {
		t.Errorf("endOffset after two retriable answers: %d, %v (asked %d, refreshed %d); want 42 after 3 asks, 2 refreshes", end, err, c.asked, c.refreshed)
	}
	c = &offsetsClient{errs: []error{sarama.ErrUnknownTopicOrPartition}, end: 42}
	if _, err := endOffset(c, "t", 0); !errors.Is(err, sarama.ErrUnknownTopicOrPartition) || c.asked != 1 {
		t.Errorf("endOffset on UNKNOWN_TOPIC_OR_PARTITION: %v after %d asks; want that error after 1", err, c.asked)
	}
}

// TestTransactionalKfake runs --transactional against kfake (Kafka 4.1, 3
// brokers): 200 records in transactions of 20, every third aborted; each
// record and each transaction's end in the report, as drivers/OUTCOMES.md
// orders them, and the JSON line's counts.
func TestTransactionalKfake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(kversion.V4_1_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	path := filepath.Join(t.TempDir(), "outcomes.jsonl")
	argv := []string{"--bootstrap", strings.Join(c.ListenAddrs(), ","), "--topic", "sarama-txn", "--partitions", "4", "--records", "200",
		"--value-bytes", "100", "--keys", "64", "--compression", "lz4", "--delivery-timeout-ms", "30000",
		"--request-timeout-ms", "5000", "--outcomes", path, "--transactional", "--txn-records", "20", "--txn-abort-every", "3"}
	var stdout, stderr bytes.Buffer
	if code := run(argv, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, stdout.String(), stderr.String())
	}
	t.Logf("%s", stdout.String())
	var res result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if res.Sent != 200 || res.Acked != 200 || res.ReadBack != 200 || !res.Clean() || res.Result == nil || res.TxnCommitted != 7 ||
		res.TxnAborted != 3 || res.TxnFailed != 0 || res.TransactionalID != "kcheck-sarama-txn" {
		t.Errorf("result: %s", stdout.String())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := outcomes.Read(f, path)
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
