// Package loadgen is the throughput mode ("--bench") shared by the two Go
// producers bench/ measures: ours (bench/cmd/produce) and franz-go's kgo
// (drivers/kgo). It parses the mode's flags, produces a warm-up and then the
// timed records (as fast as the client takes them, or paced at --rate),
// measures each record's produce-to-ack latency, and prints one line of JSON.
// drivers/java (Bench.java) and drivers/python (bench.py) implement the same
// flags, loop and JSON, so bench/run.sh can run every client alike.
//
// The topic must exist (bench/ creates a fresh one per measurement). Records
// carry one of --keys keys drawn by java.util.Random(1) (every client draws
// the same sequence and partitions keys with murmur2, so every client builds
// the same batches) and a value of --value-bytes letters; no headers.
//
// Latency is from just before the client's produce call (so time blocked on
// a full buffer counts) to the ack callback; percentiles are nearest-rank
// over the acknowledged timed records. records/s is acknowledged timed
// records over the time from the first timed produce call to the last ack;
// cpu_seconds is the process's CPU time (every thread) over the same span.
// Exit status: 0 every record acknowledged, 1 some failed, 2 setup errors.
//
// seed.go holds what the Go drivers (drivers/kgo, drivers/sarama) share of
// the seed's experiment, their default mode: its flags, each record's value
// and how the read-back is counted; outcomes.go their --outcomes writer
// (drivers/OUTCOMES.md).
package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Flag is the bare switch that selects the throughput mode in a driver.
const Flag = "--bench"

// Config is the throughput mode's command line.
type Config struct {
	Bootstrap, Topic, WarmupTopic, Compression string
	WarmupKeys                                 string // "random" (drawn like the timed records') or "cycle" (key i % keys)

	Records, ValueBytes, Keys     int
	LingerMs, BatchBytes          int
	MaxInFlight, MaxBuffered      int
	Rate, Warmup                  int
	WindowMs                      int // >0: count acknowledgements per window of this many ms (Result.Windows)
	DeliveryTimeoutMs, RequestTMs int

	// Transactional (the bare switch --transactional; HasTxnFlag) groups
	// the records into transactions of TxnRecords, the warm-up's too;
	// every TxnAbortEvery-th is aborted (0: none), with TransactionalID
	// (default kcheck-bench-TOPIC).
	Transactional             bool
	TxnRecords, TxnAbortEvery int
	TransactionalID           string

	// Extra holds the client's own flags (without "--"), e.g. first-ack.
	Extra map[string]string
}

// Defaults of the mode's flags; the same in every driver.
var Defaults = map[string]string{
	"records": "100000", "value-bytes": "1024", "keys": "1024", "compression": "none",
	"linger-ms": "5", "batch-bytes": "16384", "max-in-flight": "5", "max-buffered": "10000",
	"rate": "0", "warmup": "1000", "warmup-topic": "", "warmup-keys": "random", "window-ms": "0",
	"delivery-timeout-ms": "120000", "request-timeout-ms": "30000",
	"txn-records": "100", "txn-abort-every": "0", "transactional-id": "",
}

// TxnFlag is the bare switch of the transactional mode.
const TxnFlag = "--transactional"

// Usage lists the mode's flags.
const Usage = "usage: --bench --bootstrap HOST:PORT --topic T [--records N] [--value-bytes N] [--keys N] " +
	"[--compression C] [--linger-ms N] [--batch-bytes N] [--max-in-flight N] [--max-buffered N] " +
	"[--rate N (records/s, 0: as fast as possible)] [--warmup N] [--warmup-topic T] [--warmup-keys random|cycle] " +
	"[--window-ms N] [--delivery-timeout-ms N] [--request-timeout-ms N] " +
	"[--transactional [--txn-records N] [--txn-abort-every K] [--transactional-id ID]]"

// UsageError is bad input: exit 2 with its message.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// HasFlag reports whether argv selects the throughput mode, and returns argv
// without the switch.
func HasFlag(argv []string) (bool, []string) { return hasSwitch(argv, Flag) }

// hasSwitch reports whether argv holds the bare switch sw, and returns argv
// without it.
func hasSwitch(argv []string, sw string) (bool, []string) {
	i := slices.Index(argv, sw)
	if i < 0 {
		return false, argv
	}
	return true, slices.Delete(slices.Clone(argv), i, i+1)
}

// Parse reads "--flag value" pairs, and the bare switch --transactional. extra maps the client's own flags
// (without "--") to their defaults; prefix starts every error message.
func Parse(argv []string, extra map[string]string, prefix string) (*Config, error) {
	a := map[string]string{"bootstrap": "", "topic": ""}
	for k, v := range Defaults {
		a[k] = v
	}
	for k, v := range extra {
		a[k] = v
	}
	txn, argv := hasSwitch(argv, TxnFlag)
	usage := Usage
	for k := range extra {
		usage += " [--" + k + " " + extra[k] + "]"
	}
	for i := 0; i < len(argv); i++ {
		k := argv[i]
		if !strings.HasPrefix(k, "--") || i+1 == len(argv) {
			return nil, &UsageError{prefix + "bad arguments near " + strconv.Quote(k) + "\n" + usage}
		}
		if _, ok := a[k[2:]]; !ok {
			return nil, &UsageError{prefix + "unknown flag " + k + "\n" + usage}
		}
		i++
		a[k[2:]] = argv[i]
	}
	c := &Config{Bootstrap: a["bootstrap"], Topic: a["topic"], WarmupTopic: a["warmup-topic"],
		Compression: a["compression"], WarmupKeys: a["warmup-keys"], Extra: map[string]string{}}
	if c.WarmupKeys != "random" && c.WarmupKeys != "cycle" {
		return nil, &UsageError{prefix + "--warmup-keys wants random or cycle, not " + strconv.Quote(c.WarmupKeys) + "\n" + usage}
	}
	if c.Bootstrap == "" || c.Topic == "" {
		return nil, &UsageError{prefix + "--bootstrap and --topic are required\n" + usage}
	}
	if c.WarmupTopic == "" {
		c.WarmupTopic = c.Topic
	}
	var err error
	num := func(k string, min int) int { return flagNumber(a, k, min, prefix, &err) }
	c.Records = num("records", 1)
	c.ValueBytes = num("value-bytes", 0)
	c.Keys = num("keys", 0)
	c.LingerMs = num("linger-ms", 0)
	c.BatchBytes = num("batch-bytes", 1)
	c.MaxInFlight = num("max-in-flight", 1)
	c.MaxBuffered = num("max-buffered", 1)
	c.Rate = num("rate", 0)
	c.Warmup = num("warmup", 0)
	c.WindowMs = num("window-ms", 0)
	c.DeliveryTimeoutMs = num("delivery-timeout-ms", 1)
	c.RequestTMs = num("request-timeout-ms", 1)
	c.TxnRecords = num("txn-records", 1)
	c.TxnAbortEvery = num("txn-abort-every", 0)
	if err != nil {
		return nil, err
	}
	c.Transactional, c.TransactionalID = txn, a["transactional-id"]
	if !txn {
		for _, k := range []string{"txn-records", "txn-abort-every", "transactional-id"} {
			if a[k] != Defaults[k] {
				return nil, &UsageError{prefix + "--" + k + " needs --transactional\n" + usage}
			}
		}
	}
	if c.TransactionalID == "" {
		c.TransactionalID = "kcheck-bench-" + c.Topic
	}
	if c.MaxInFlight > 5 {
		return nil, &UsageError{fmt.Sprintf("%s--max-in-flight %d: idempotence allows at most 5", prefix, c.MaxInFlight)}
	}
	if err := checkCompression(prefix, c.Compression); err != nil {
		return nil, err
	}
	for k := range extra {
		c.Extra[k] = a[k]
	}
	return c, nil
}

// Callback is how a Sender reports a record's outcome: the start time that
// was passed to Send, and nil or the error it failed with.
type Callback func(start time.Time, err error)

// Sender is one client: Send produces one record (blocking while the client's
// buffer is full) and arranges for the Callback given to the constructor to
// be called once with start and its outcome.
type Sender interface {
	Send(ctx context.Context, topic string, key, value []byte, start time.Time)
	Close()
}

// TxnSender is a Sender that can group its records into transactions: the
// transactional mode (--transactional) needs one. Commit returns once the
// transaction is committed (every record answered first, as the Java
// client's commitTransaction flushes), Abort once it is aborted.
type TxnSender interface {
	Sender
	Begin() error
	Commit(ctx context.Context) error
	Abort(ctx context.Context) error
}

// Txns is the transactional mode's part of the JSON line: the timed part's
// transactions, and the time from before the begin call to the return of
// the commit call of those committed, nearest-rank, in milliseconds.
type Txns struct {
	Committed     int        `json:"committed"`
	Aborted       int        `json:"aborted"`
	Records       int        `json:"records_per_txn"`
	BeginToCommit TxnLatency `json:"begin_to_commit_ms"`
}

// TxnLatency is percentiles of begin-to-commit time, in milliseconds.
type TxnLatency struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Latency is the percentiles of produce-to-ack latency, in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Result is the JSON line; drivers/java and drivers/python print the same
// keys in the same order.
type Result struct {
	Client       string         `json:"client"`
	Version      string         `json:"version"`
	Mode         string         `json:"mode"`
	Topic        string         `json:"topic"`
	Records      int            `json:"records"`
	Acked        int            `json:"acked"`
	Failed       int            `json:"failed"`
	FailedErrors map[string]int `json:"failed_errors"`
	FirstError   string         `json:"first_error,omitempty"`
	Seconds      float64        `json:"seconds"`
	CPUSeconds   float64        `json:"cpu_seconds"`
	RecordsPerS  float64        `json:"records_per_s"`
	LatencyMs    Latency        `json:"latency_ms"`
	LingerMs     int            `json:"linger_ms"`
	BatchBytes   int            `json:"batch_bytes"`
	MaxInFlight  int            `json:"max_in_flight"`
	MaxBuffered  int            `json:"max_buffered"`
	Rate         int            `json:"rate"`
	Ms           int64          `json:"ms"`
	// With --window-ms: acknowledgements of timed records per window of
	// WindowMs from the first timed produce call (the last window partial).
	WindowMs int     `json:"window_ms,omitempty"`
	Windows  []int64 `json:"windows,omitempty"`
	// With --transactional: the timed part's transactions.
	Txns *Txns `json:"transactions,omitempty"`
	// What the client counted of itself over the whole run, warm-up
	// included, where it can say (ours: producer.Stats).
	ClientStats any `json:"client_stats,omitempty"`
}

// Write prints r as one line of JSON.
func (r *Result) Write(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// ExitCode is 0 when every record was acknowledged, else 1.
func (r *Result) ExitCode() int {
	if r.Failed > 0 || r.Acked != r.Records {
		return 1
	}
	return 0
}

// JavaRandom is java.util.Random, so that every driver draws the same
// letters and keys as the Java driver's new Random(1).
type JavaRandom struct{ seed int64 }

// NewJavaRandom is new java.util.Random(seed).
func NewJavaRandom(seed int64) *JavaRandom {
	return &JavaRandom{(seed ^ 0x5DEECE66D) & (1<<48 - 1)}
}

func (r *JavaRandom) next(bits uint) int32 {
	r.seed = (r.seed*0x5DEECE66D + 0xB) & (1<<48 - 1)
	return int32(r.seed >> (48 - bits))
}

// NextInt is Random.nextInt(bound).
func (r *JavaRandom) NextInt(bound int32) int32 {
	rv := r.next(31)
	m := bound - 1
	if bound&m == 0 {
		return int32((int64(bound) * int64(rv)) >> 31)
	}
	for u := rv; ; u = r.next(31) {
		rv = u % bound
		if u-rv+m >= 0 { // int32 overflow, as in Java
			return rv
		}
	}
}

// Workload is the records every driver produces: the value's letters, then
// one key index a record (-1: no key), from java.util.Random(1).
type Workload struct {
	Value []byte
	Keys  [][]byte // key i is "key-<i>"
	rng   *JavaRandom
	nkeys int
}

// NewWorkload draws the value (valueBytes letters) first, as every driver.
func NewWorkload(valueBytes, keys int) *Workload {
	w := &Workload{rng: NewJavaRandom(1), nkeys: keys, Value: make([]byte, valueBytes)}
	for i := range w.Value {
		w.Value[i] = byte('a' + w.rng.NextInt(26))
	}
	for i := 0; i < keys; i++ {
		w.Keys = append(w.Keys, []byte("key-"+strconv.Itoa(i)))
	}
	return w
}

// NextKey is the next record's key, nil with no keys.
func (w *Workload) NextKey() []byte {
	if i := w.NextKeyIndex(); i >= 0 {
		return w.Keys[i]
	}
	return nil
}

// NextKeyCycle is key i % keys (nil with no keys), drawing nothing: the
// warm-up's keys with --warmup-keys cycle, so that a warm-up of at least
// keys records writes every partition some key maps to.
func (w *Workload) NextKeyCycle(i int) []byte {
	if w.nkeys == 0 {
		return nil
	}
	return w.Keys[i%w.nkeys]
}

// NextKeyIndex is the next record's key as its index in Keys, -1 with no
// keys (no draw); NextKey and NextKeyIndex draw from the same sequence.
func (w *Workload) NextKeyIndex() int32 {
	if w.nkeys == 0 {
		return -1
	}
	return w.rng.NextInt(int32(w.nkeys))
}

// Recorder collects outcomes; its Callback is what a Sender calls.
type Recorder struct {
	lat     []time.Duration
	n       atomic.Int64 // latencies recorded
	open    atomic.Int64 // records not yet done
	allDone chan struct{}

	mu     sync.Mutex
	failed int
	errs   map[string]int
	first  string
	name   func(error) string

	win      time.Duration // >0: count acks per window of win since winStart
	winStart time.Time
	wins     []atomic.Int64 // the last one also counts every later ack
}

// maxWindows bounds Result.Windows.
const maxWindows = 3600

// NewRecorder makes a recorder; name names an error for failed_errors.
func NewRecorder(name func(error) string) *Recorder {
	if name == nil {
		name = func(err error) string { return err.Error() }
	}
	return &Recorder{errs: map[string]int{}, name: name}
}

// expect arms the recorder for n records; timed ones keep their latencies.
func (r *Recorder) expect(n int, timed bool) {
	r.lat = nil
	if timed {
		r.lat = make([]time.Duration, n)
	}
	r.n.Store(0)
	r.open.Store(int64(n))
	r.allDone = make(chan struct{})
	if n == 0 {
		close(r.allDone)
	}
}

// Callback records one outcome; safe for concurrent use.
func (r *Recorder) Callback(start time.Time, err error) {
	if err != nil {
		r.mu.Lock()
		r.failed++
		nm := r.name(err)
		r.errs[nm]++
		if r.first == "" {
			r.first = err.Error()
		}
		r.mu.Unlock()
	} else if r.lat != nil {
		now := time.Now()
		if i := r.n.Add(1) - 1; int(i) < len(r.lat) {
			r.lat[i] = now.Sub(start)
		}
		if r.win > 0 {
			r.wins[min(int(now.Sub(r.winStart)/r.win), len(r.wins)-1)].Add(1)
		}
	}
	if r.open.Add(-1) == 0 {
		close(r.allDone)
	}
}

// wait waits for every expected outcome, at most d.
func (r *Recorder) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.allDone:
		return true
	case <-t.C:
		return false
	}
}

// Percentile is the nearest-rank q-quantile of sorted (0 for none).
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// Run produces the warm-up (not timed: connections, producer id, metadata)
// and then cfg.Records timed records with s, whose outcomes go to rec, and
// returns the result with Client and Version left for the caller.
func Run(ctx context.Context, cfg *Config, s Sender, rec *Recorder, t0 time.Time) (*Result, error) {
	w := NewWorkload(cfg.ValueBytes, cfg.Keys)
	grace := time.Duration(cfg.DeliveryTimeoutMs)*time.Millisecond + 30*time.Second

	ts, _ := s.(TxnSender)
	if cfg.Transactional && ts == nil {
		return nil, &UsageError{"--transactional: this client has no transactional mode"}
	}
	rec.expect(cfg.Warmup, false)
	sendWarm := func(i int) {
		key := w.NextKeyCycle(i) // every key in turn: every partition a key maps to gets a record
		if cfg.WarmupKeys == "random" {
			key = w.NextKey()
		}
		s.Send(ctx, cfg.WarmupTopic, key, w.Value, time.Now())
	}
	if cfg.Transactional {
		if _, _, err := txnLoop(ctx, cfg, ts, cfg.Warmup, sendWarm); err != nil {
			return nil, fmt.Errorf("the warm-up: %w", err)
		}
	} else {
		for i := 0; i < cfg.Warmup; i++ {
			sendWarm(i)
		}
	}
	if !rec.wait(grace) {
		return nil, &UsageError{fmt.Sprintf("the warm-up's %d records were not all done within the delivery timeout + 30 s", cfg.Warmup)}
	}
	rec.mu.Lock()
	failed, first := rec.failed, rec.first
	rec.failed, rec.first, rec.errs = 0, "", map[string]int{}
	rec.mu.Unlock()
	if failed > 0 {
		return nil, &UsageError{fmt.Sprintf("%d warm-up records failed: %s", failed, first)}
	}

	res := &Result{Mode: "bench", Topic: cfg.Topic, Records: cfg.Records, LingerMs: cfg.LingerMs,
		BatchBytes: cfg.BatchBytes, MaxInFlight: cfg.MaxInFlight, MaxBuffered: cfg.MaxBuffered, Rate: cfg.Rate}
	rec.expect(cfg.Records, true)
	cpu0 := processCPU()
	start := time.Now()
	if cfg.WindowMs > 0 {
		rec.win, rec.winStart = time.Duration(cfg.WindowMs)*time.Millisecond, start
		rec.wins = make([]atomic.Int64, maxWindows)
		res.WindowMs = cfg.WindowMs
	}
	send := func(i int) {
		if cfg.Rate > 0 {
			due := start.Add(time.Duration(float64(i) / float64(cfg.Rate) * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
		s.Send(ctx, cfg.Topic, w.NextKey(), w.Value, time.Now())
	}
	var txnLat []time.Duration
	var aborted int
	if cfg.Transactional {
		var err error
		if txnLat, aborted, err = txnLoop(ctx, cfg, ts, cfg.Records, send); err != nil {
			return nil, err
		}
	} else {
		for i := 0; i < cfg.Records; i++ {
			send(i)
		}
	}
	done := rec.wait(grace)
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0

	rec.mu.Lock()
	res.Failed, res.FirstError, res.FailedErrors = rec.failed, rec.first, rec.errs
	if !done {
		open := int(rec.open.Load())
		res.Failed += open
		res.FailedErrors["no callback within delivery timeout + 30 s"] += open
	}
	rec.mu.Unlock()
	lat := slices.Clone(rec.lat[:min(int(rec.n.Load()), len(rec.lat))])
	slices.Sort(lat)
	res.Acked = len(lat)
	res.Seconds = elapsed.Seconds()
	res.CPUSeconds = cpu.Seconds()
	res.RecordsPerS = float64(res.Acked) / elapsed.Seconds()
	res.LatencyMs = Latency{P50: ms(Percentile(lat, 0.50)), P95: ms(Percentile(lat, 0.95)),
		P99: ms(Percentile(lat, 0.99)), P999: ms(Percentile(lat, 0.999)), Max: ms(Percentile(lat, 1))}
	res.Ms = time.Since(t0).Milliseconds()
	if cfg.Transactional {
		slices.Sort(txnLat)
		res.Txns = &Txns{Committed: len(txnLat), Aborted: aborted, Records: cfg.TxnRecords,
			BeginToCommit: TxnLatency{P50: ms(Percentile(txnLat, 0.50)), P99: ms(Percentile(txnLat, 0.99)), Max: ms(Percentile(txnLat, 1))}}
	}
	if rec.win > 0 {
		n := min(int(elapsed/rec.win)+1, len(rec.wins))
		for i := range n {
			res.Windows = append(res.Windows, rec.wins[i].Load())
		}
	}
	return res, nil
}

// txnLoop sends records 0..n-1 (send(i) sends record i) in transactions of
// cfg.TxnRecords (the last may be smaller), aborting every
// cfg.TxnAbortEvery-th, and returns each committed transaction's time from
// before Begin to the return of Commit, and how many were aborted. A
// transaction that does not end as asked ends the run: the bench measures
// clean runs.
func txnLoop(ctx context.Context, cfg *Config, ts TxnSender, n int, send func(i int)) ([]time.Duration, int, error) {
	var lat []time.Duration
	aborted := 0
	for i, tx := 0, 1; i < n; tx++ {
		t := time.Now()
		if err := ts.Begin(); err != nil {
			return nil, 0, fmt.Errorf("transaction %d: begin: %w", tx, err)
		}
		for end := min(i+cfg.TxnRecords, n); i < end; i++ {
			send(i)
		}
		if cfg.TxnAbortEvery > 0 && tx%cfg.TxnAbortEvery == 0 {
			if err := ts.Abort(ctx); err != nil {
				return nil, 0, fmt.Errorf("transaction %d: abort: %w", tx, err)
			}
			aborted++
			continue
		}
		if err := ts.Commit(ctx); err != nil {
			return nil, 0, fmt.Errorf("transaction %d: commit: %w", tx, err)
		}
		lat = append(lat, time.Since(t))
	}
	return lat, aborted, nil
}

// ProcessCPU is the CPU time the process has used so far (every thread; 0
// where unknown), for a client that writes the mode's JSON line without
// Run (bench/cmd/ceiling).
func ProcessCPU() time.Duration { return processCPU() }
