// Tests of the throughput mode's flags, percentiles and workload (fast:
// they measure nothing, so they may run in make test).

package loadgen

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kcheck/kcheck/producer"
)

func TestParse(t *testing.T) {
	c, err := Parse([]string{"--bootstrap", "h:1", "--topic", "t"}, map[string]string{"first-ack": "on"}, "x: ")
	if err != nil {
		t.Fatal(err)
	}
	if c.Records != 100000 || c.ValueBytes != 1024 || c.Keys != 1024 || c.LingerMs != 5 || c.BatchBytes != 16384 ||
		c.MaxInFlight != 5 || c.MaxBuffered != 10000 || c.Rate != 0 || c.Warmup != 1000 || c.WarmupTopic != "t" ||
		c.Compression != "none" || c.Extra["first-ack"] != "on" {
		t.Errorf("defaults: %+v", c)
	}
	for _, argv := range [][]string{
		{"--topic", "t"},
		{"--bootstrap", "h:1", "--topic", "t", "--bogus", "1"},
		{"--bootstrap", "h:1", "--topic", "t", "--records", "0"},
		{"--bootstrap", "h:1", "--topic", "t", "--records", "x"},
		{"--bootstrap", "h:1", "--topic", "t", "--max-in-flight", "6"},
		{"--bootstrap", "h:1", "--topic", "t", "--compression", "brotli"},
		{"--bootstrap", "h:1", "--topic"},
	} {
		var ue *UsageError
		if _, err := Parse(argv, nil, "x: "); !errors.As(err, &ue) {
			t.Errorf("Parse(%q): %v, want a usage error", argv, err)
		}
	}
	on, rest := HasFlag([]string{"--topic", "t", "--bench", "--records", "5"})
	if !on || !slices.Equal(rest, []string{"--topic", "t", "--records", "5"}) {
		t.Errorf("HasFlag: %v %q", on, rest)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 1000; i++ {
		d = append(d, time.Duration(i))
	}
	for q, want := range map[float64]time.Duration{0.5: 500, 0.95: 950, 0.99: 990, 0.999: 999, 1: 1000, 0: 1} {
		if got := Percentile(d, q); got != want {
			t.Errorf("Percentile(%v) = %v, want %v", q, got, want)
		}
	}
	if Percentile(nil, 0.5) != 0 {
		t.Error("Percentile of nothing")
	}
}

// TestWorkload checks the letters and keys against java.util.Random(1) as
// drivers/kgo's test does: every driver draws the same records.
func TestWorkload(t *testing.T) {
	w := NewWorkload(10240, 1024)
	var h int32
	for _, c := range w.Value {
		h = 31*h + int32(c)
	}
	if h != -272447338 {
		t.Errorf("letters hash %d, want -272447338", h)
	}
	var s int64
	for range 3000 {
		k := string(w.NextKey())
		var n int64
		for _, c := range k[len("key-"):] {
			n = n*10 + int64(c-'0')
		}
		s = s*31 + n
	}
	if s != -4138879308510851376 {
		t.Errorf("keys hash %d, want -4138879308510851376", s)
	}
	if NewWorkload(4, 0).NextKey() != nil {
		t.Error("no keys: want nil")
	}
}

// fake acknowledges every record after a short while, failing every tenth.
type fake struct {
	cb Callback
	n  int
	wg sync.WaitGroup
}

func (f *fake) Send(_ context.Context, _ string, _, _ []byte, start time.Time) {
	f.n++
	var err error
	if f.n > 5 && f.n%10 == 0 {
		err = errors.New("boom")
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		time.Sleep(time.Millisecond)
		f.cb(start, err)
	}()
}

func (f *fake) Close() { f.wg.Wait() }

// runFake runs the workload of args against the fake client.
func runFake(t *testing.T, args ...string) *Result {
	t.Helper()
	cfg, err := Parse(append([]string{"--bootstrap", "h:1", "--topic", "t"}, args...), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(nil)
	f := &fake{cb: rec.Callback}
	res, err := Run(context.Background(), cfg, f, rec, time.Now())
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRun(t *testing.T) {
	res := runFake(t, "--records", "100", "--warmup", "5", "--rate", "2000")
	if res.Records != 100 || res.Acked != 90 || res.Failed != 10 || res.FailedErrors["boom"] != 10 || res.ExitCode() != 1 {
		t.Errorf("result %+v", res)
	}
	if res.LatencyMs.P50 < 1 || res.LatencyMs.Max < res.LatencyMs.P99 || res.RecordsPerS <= 0 || res.Seconds < 0.04 {
		t.Errorf("latency %+v, %v records/s in %v s (100 records at 2000/s take at least 0.05 s)", res.LatencyMs, res.RecordsPerS, res.Seconds)
	}
}

// TestWarmupCycle: with --warmup-keys cycle, a warm-up of --keys records
// (the default 1,024) writes every partition of 1 and 64 (murmur2, as every
// client partitions keys), so the timed part meets no partition's first
// batch.
func TestWarmupCycle(t *testing.T) {
	w := NewWorkload(4, 1024)
	for _, n := range []int32{1, 64} {
		seen := map[int32]bool{}
		for i := range 1024 {
			seen[producer.KeyPartition(w.NextKeyCycle(i), n)] = true
		}
		if int32(len(seen)) != n {
			t.Errorf("%d partitions: the 1024 keys reach %d", n, len(seen))
		}
	}
	if string(w.NextKeyCycle(1025)) != "key-1" || NewWorkload(4, 0).NextKeyCycle(3) != nil {
		t.Error("NextKeyCycle")
	}
	var ue *UsageError
	if _, err := Parse([]string{"--bootstrap", "h:1", "--topic", "t", "--warmup-keys", "x"}, nil, ""); !errors.As(err, &ue) {
		t.Errorf("--warmup-keys x: %v, want a usage error", err)
	}
}

func TestRunWindows(t *testing.T) {
	res := runFake(t, "--records", "100", "--warmup", "5", "--warmup-keys", "cycle", "--rate", "1000", "--window-ms", "20")
	var sum int64
	for _, n := range res.Windows {
		sum += n
	}
	// 100 records at 1000/s take about 0.1 s: about 5 windows of 20 ms.
	if res.WindowMs != 20 || sum != int64(res.Acked) || len(res.Windows) < 5 {
		t.Errorf("windows %v (window %d ms) for %d acked", res.Windows, res.WindowMs, res.Acked)
	}
}

// fakeTxn is a transactional client that acknowledges every record at once
// and logs the transactional calls with the records between them.
type fakeTxn struct {
	cb  Callback
	log []string
	n   int // records since the last call
}

func (f *fakeTxn) Send(_ context.Context, _ string, _, _ []byte, start time.Time) {
	f.n++
	f.cb(start, nil)
}
func (f *fakeTxn) Close() {}
func (f *fakeTxn) call(what string) error {
	if f.n > 0 {
		f.log = append(f.log, strconv.Itoa(f.n))
		f.n = 0
	}
	f.log = append(f.log, what)
	return nil
}
func (f *fakeTxn) Begin() error                 { return f.call("begin") }
func (f *fakeTxn) Commit(context.Context) error { return f.call("commit") }
func (f *fakeTxn) Abort(context.Context) error  { return f.call("abort") }

// TestRunTxn: --transactional groups the warm-up's and the timed records
// into transactions of --txn-records (the last smaller), aborts every
// --txn-abort-every-th, and reports the timed part's transactions.
func TestRunTxn(t *testing.T) {
	cfg, err := Parse([]string{"--bootstrap", "h:1", "--topic", "t", "--transactional", "--records", "25",
		"--warmup", "4", "--txn-records", "10", "--txn-abort-every", "2"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Transactional || cfg.TxnRecords != 10 || cfg.TxnAbortEvery != 2 || cfg.TransactionalID != "kcheck-bench-t" {
		t.Fatalf("config %+v", cfg)
	}
	rec := NewRecorder(nil)
	f := &fakeTxn{cb: rec.Callback}
	res, err := Run(context.Background(), cfg, f, rec, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"begin", "4", "commit", "begin", "10", "commit", "begin", "10", "abort", "begin", "5", "commit"}
	if !slices.Equal(f.log, want) {
		t.Errorf("calls %q, want %q", f.log, want)
	}
	if res.Txns == nil || res.Txns.Committed != 2 || res.Txns.Aborted != 1 || res.Acked != 25 || res.Txns.BeginToCommit.P99 < res.Txns.BeginToCommit.P50 {
		t.Errorf("result %+v, transactions %+v", res, res.Txns)
	}
	// The transactional flags need the switch, and a client without a
	// transactional mode refuses it.
	var ue *UsageError
	if _, err := Parse([]string{"--bootstrap", "h:1", "--topic", "t", "--txn-records", "5"}, nil, ""); !errors.As(err, &ue) {
		t.Errorf("--txn-records without --transactional: %v, want a usage error", err)
	}
	if _, err := Run(context.Background(), cfg, &fake{cb: rec.Callback}, rec, time.Now()); !errors.As(err, &ue) {
		t.Errorf("a client without transactions: %v, want a usage error", err)
	}
}
