// The seed's experiment (KAFKA-14359), the drivers' default mode: its flags,
// its records and how a read-back is counted, shared by the Go drivers
// (drivers/kgo, drivers/sarama). drivers/java (Main.java) is the reference;
// drivers/python implements the same.

package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

const (
	// SeedPrefix starts every record's value: "rec=<n>;" then letters.
	SeedPrefix = "rec="
	// SeedIDHeader is the header every record carries: n in decimal ASCII.
	SeedIDHeader = "kcheck-id"
	// SeedUsage lists the experiment's flags.
	SeedUsage = "usage: --bootstrap HOST:PORT --topic T [--partitions N] [--replication-factor N] [--records N] [--value-bytes N] " +
		"[--keys N] [--compression C] [--delivery-timeout-ms N] [--request-timeout-ms N] " +
		"[--batch-records one|many|default] [--idle-after N --idle-ms D]"
)

// The workload shapes (drivers/WORKLOADS.md): --batch-records picks how many
// records a produce batch holds, --idle-after and --idle-ms an idle phase.
const (
	// BatchDefault leaves the client's batching as the seed runs it: linger
	// 0 and the client's default batch size, records produced as fast as the
	// client takes them.
	BatchDefault = "default"
	// BatchOne configures the client so that every batch holds one record.
	BatchOne = "one"
	// BatchMany configures the client so that batches hold many records:
	// a linger of ManyLinger and a batch size of ManyBatchBytes where the
	// client has them.
	BatchMany = "many"

	// ManyLinger and ManyBatchBytes are what BatchMany sets, the same in
	// every driver.
	ManyLinger     = 20 * time.Millisecond
	ManyBatchBytes = 256 << 10
)

// SeedDefaults are the experiment's defaults, the Java driver's.
var SeedDefaults = map[string]string{
	"partitions": "64", "replication-factor": "1", "records": "3000", "value-bytes": "10240", "keys": "1024",
	"compression": "gzip", "delivery-timeout-ms": "5000", "request-timeout-ms": "2000",
	"batch-records": BatchDefault, "idle-after": "", "idle-ms": "", // "": no idle phase
}

// SeedConfig is the experiment's command line.
type SeedConfig struct {
	Bootstrap, Topic, Compression         string
	Partitions, Records, ValueBytes, Keys int
	DeliveryTimeout, RequestTimeout       time.Duration
	// ReplicationFactor is the new topic's: at least 1, or -1 for the
	// brokers' default.replication.factor.
	ReplicationFactor int16

	// BatchRecords is the batch shape: BatchDefault, BatchOne or BatchMany.
	BatchRecords string
	// IdleAfter is how many records are produced (and answered) before the
	// idle phase, -1 for no idle phase; Idle is how long it lasts.
	IdleAfter int
	Idle      time.Duration

	// Extra holds the driver's own flags (without "--").
	Extra map[string]string
}

// ParseSeed reads "--flag value" pairs as the Java driver does: an unknown
// flag, a flag without a value, a bad number or an unknown compression is a
// *UsageError. extra maps the driver's own flags (without "--") to their
// defaults; prefix starts the messages (not the bare usage, as in Java);
// usage is the driver's usage line.
func ParseSeed(argv []string, extra map[string]string, prefix, usage string) (*SeedConfig, error) {
	a := map[string]string{"bootstrap": "", "topic": ""}
	for k, v := range SeedDefaults {
		a[k] = v
	}
	for k, v := range extra {
		a[k] = v
	}
	for i := 0; i < len(argv); i++ {
		k := argv[i]
		if !strings.HasPrefix(k, "--") || i+1 == len(argv) {
			return nil, &UsageError{usage}
		}
		if _, ok := a[k[2:]]; !ok {
			return nil, &UsageError{prefix + "unknown flag " + k + "\n" + usage}
		}
		i++
		a[k[2:]] = argv[i]
	}
	c := &SeedConfig{Bootstrap: a["bootstrap"], Topic: a["topic"], Compression: a["compression"], Extra: map[string]string{}}
	if c.Bootstrap == "" {
		return nil, &UsageError{prefix + "--bootstrap is required"}
	}
	if c.Topic == "" {
		return nil, &UsageError{prefix + "--topic is required"}
	}
	var err error
	num := func(k string, min int) int { return flagNumber(a, k, min, prefix, &err) }
	c.Partitions = num("partitions", 1)
	rf := num("replication-factor", math.MinInt32) // -1 or 1..MaxInt16, checked here
	if err == nil && (rf < 1 && rf != -1 || rf > math.MaxInt16) {
		err = &UsageError{fmt.Sprintf("%s--replication-factor wants a number from 1 to %d, or -1 (the brokers' default.replication.factor), not %s",
			prefix, math.MaxInt16, a["replication-factor"])}
	}
	c.ReplicationFactor = int16(rf)
	c.Records = num("records", 0)
	c.ValueBytes = num("value-bytes", 0)
	c.Keys = num("keys", 0)
	c.DeliveryTimeout = time.Duration(num("delivery-timeout-ms", 1)) * time.Millisecond
	c.RequestTimeout = time.Duration(num("request-timeout-ms", 1)) * time.Millisecond
	c.IdleAfter = -1
	if a["idle-after"] != "" {
		c.IdleAfter = num("idle-after", 0)
	}
	if a["idle-ms"] != "" {
		c.Idle = time.Duration(num("idle-ms", 0)) * time.Millisecond
	}
	if err != nil {
		return nil, err
	}
	if err := checkCompression(prefix, c.Compression); err != nil {
		return nil, err
	}
	if c.BatchRecords = a["batch-records"]; c.BatchRecords != BatchDefault && c.BatchRecords != BatchOne && c.BatchRecords != BatchMany {
		return nil, &UsageError{prefix + "--batch-records wants one, many or default, not " + c.BatchRecords}
	}
	if err := checkIdle(prefix, a["idle-after"] != "", a["idle-ms"] != "", c.IdleAfter, c.Records); err != nil {
		return nil, err
	}
	for k := range extra {
		c.Extra[k] = a[k]
	}
	return c, nil
}

// checkIdle refuses an idle phase with only one of its flags, or one after
// more records than the run has.
func checkIdle(prefix string, after, ms bool, n, records int) error {
	switch {
	case after && !ms:
		return &UsageError{prefix + "--idle-after needs --idle-ms (how long the idle phase lasts)"}
	case ms && !after:
		return &UsageError{prefix + "--idle-ms needs --idle-after (how many records come before the idle phase)"}
	case after && n > records:
		return &UsageError{fmt.Sprintf("%s--idle-after wants a number of at most --records (%d), not %d", prefix, records, n)}
	}
	return nil
}

// checkCompression refuses a --compression that is none of Kafka's codecs.
func checkCompression(prefix, codec string) error {
	switch codec {
	case "none", "gzip", "snappy", "lz4", "zstd":
		return nil
	}
	return &UsageError{prefix + "--compression wants none, gzip, snappy, lz4 or zstd, not " + codec}
}

// ModuleVersion is the version (without "v") of the module at path that
// this binary was built with (its replacement's if replaced), or "unknown".
func ModuleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil && d.Replace.Version != "" {
					return strings.TrimPrefix(d.Replace.Version, "v")
				}
				if d.Version != "" && d.Version != "(devel)" {
					return strings.TrimPrefix(d.Version, "v")
				}
			}
		}
	}
	return "unknown"
}

// SeedValue is record n's value: letters with "rec=<n>;" written over its
// start (cut short if letters is shorter), a copy of its own.
func SeedValue(letters []byte, n int) []byte {
	v := slices.Clone(letters)
	copy(v, SeedPrefix+strconv.Itoa(n)+";")
	return v
}

// RecordNumber returns n from a value that starts "rec=<n>;", or -1.
func RecordNumber(v []byte) int64 {
	if len(v) < len(SeedPrefix)+2 || !bytes.HasPrefix(v, []byte(SeedPrefix)) {
		return -1
	}
	var n int64
	for i := len(SeedPrefix); i < len(v) && i < len(SeedPrefix)+11; i++ {
		if v[i] == ';' {
			return n
		}
		if v[i] < '0' || v[i] > '9' {
			return -1
		}
		n = n*10 + int64(v[i]-'0')
	}
	return -1
}

// Tally counts a read-back as the Java driver does. A value that is no
// record of this run is foreign; a record seen again is duplicated (and not
// read back again); a record read after a higher-numbered one on the same
// partition is out of order: Kafka appends one producer's records to a
// partition in the order they were sent, whatever their keys, and every
// driver sends in record order. Not safe for concurrent use.
type Tally struct {
	ReadBack, Duplicated, OutOfOrder, Foreign int
	Lost, LostAcked                           int // set by Finish

	keyOf []int32 // record n's key index, -1 for none
	seen  []int   // how often record n was read
	last  map[partKey]int64
}

type partKey struct{ p, key int32 }

// NewTally counts the records whose key indexes are keyOf (len(keyOf)
// records; -1: no key).
func NewTally(keyOf []int32) *Tally {
	return &Tally{keyOf: keyOf, seen: make([]int, len(keyOf)), last: map[partKey]int64{}}
}

// Add counts one record read from partition p, in the partition's order.
func (t *Tally) Add(p int32, value []byte) {
	n := RecordNumber(value)
	if n < 0 || n >= int64(len(t.seen)) {
		t.Foreign++
		return
	}
	if t.seen[n]++; t.seen[n] > 1 {
		t.Duplicated++
		return
	}
	t.ReadBack++
	k := partKey{p: p}
	prev, ok := t.last[k]
	if ok && n < prev {
		t.OutOfOrder++
	}
	if !ok || n > prev {
		t.last[k] = n
	}
}

// Finish counts the lost: of the first sent records, those never read; and
// of them, those acked says were acknowledged.
func (t *Tally) Finish(sent int, acked []bool) {
	t.Lost, t.LostAcked = 0, 0
	for n := 0; n < sent; n++ {
		if t.seen[n] == 0 {
			t.Lost++
			if acked[n] {
				t.LostAcked++
			}
		}
	}
}

// SeedResult is the experiment's JSON line as every driver writes it: the
// Java driver's keys, in its order. A driver whose client differs embeds it
// and adds its own keys after these.
type SeedResult struct {
	Client       string         `json:"client"`
	Version      string         `json:"version"`
	Sent         int            `json:"sent"`
	Acked        int            `json:"acked"`
	Failed       int            `json:"failed"`
	ReadBack     int            `json:"read_back"`
	Lost         int            `json:"lost"`
	LostAcked    int            `json:"lost_acked"`
	Duplicated   int            `json:"duplicated"`
	OutOfOrder   int            `json:"out_of_order"`
	Foreign      int            `json:"foreign"`
	FailedErrors map[string]int `json:"failed_errors"`
	FirstError   string         `json:"first_error,omitempty"`
	Ms           int64          `json:"ms"`

	// BatchRecords is --batch-records when it is not the default.
	BatchRecords string `json:"batch_records,omitempty"`
	// IdleResult is the idle phase's account, nil (no keys) without one.
	*IdleResult
}

// IdleResult is what the JSON line says of the idle phase
// (drivers/WORKLOADS.md): --idle-after and --idle-ms, when the idle began
// and ended (unix milliseconds), and how many of the records before it had
// no answer yet when it began (0 unless the wait for them, bounded by the
// delivery timeout and grace, gave up).
type IdleResult struct {
	IdleAfter      int   `json:"idle_after"`
	IdleMs         int64 `json:"idle_ms"`
	IdleStartMs    int64 `json:"idle_start_ms"`
	IdleEndMs      int64 `json:"idle_end_ms"`
	IdleUnanswered int   `json:"idle_unanswered"`
}

// IdlePhase is the idle phase of a driver's produce loop: produce the first
// IdleAfter records, wait until each has been answered (delivered or
// failed), produce nothing for Idle, then produce the rest. A nil
// *IdlePhase is no idle phase; its methods do nothing.
type IdlePhase struct {
	after int
	d     time.Duration
	open  atomic.Int64 // of the first after records, those not yet answered
	done  chan struct{}
	res   *IdleResult
}

// NewIdlePhase returns the idle phase c asks for, nil for none.
func NewIdlePhase(c *SeedConfig) *IdlePhase {
	if c.IdleAfter < 0 {
		return nil
	}
	ip := &IdlePhase{after: c.IdleAfter, d: c.Idle, done: make(chan struct{})}
	ip.open.Store(int64(c.IdleAfter))
	if c.IdleAfter == 0 {
		close(ip.done)
	}
	return ip
}

// Answered counts record n's first answer; call it once per record, from
// any goroutine.
func (ip *IdlePhase) Answered(n int) {
	if ip != nil && n < ip.after && ip.open.Add(-1) == 0 {
		close(ip.done)
	}
}

// Before is called before record n is produced, and once more with n the
// number of records after the last: at n == IdleAfter it waits (at most
// bound) until the records before n have been answered, then sleeps for the
// idle phase's duration, and notes both times.
func (ip *IdlePhase) Before(n int, bound time.Duration) {
	if ip == nil || n != ip.after || ip.res != nil {
		return
	}
	WaitAtMost(ip.done, bound)
	start := time.Now()
	open := int(max(ip.open.Load(), 0))
	time.Sleep(ip.d)
	ip.res = &IdleResult{IdleAfter: ip.after, IdleMs: ip.d.Milliseconds(), IdleStartMs: start.UnixMilli(),
		IdleEndMs: time.Now().UnixMilli(), IdleUnanswered: open}
}

// Result is the idle phase's account for the JSON line: nil without an idle
// phase, or before it ran.
func (ip *IdlePhase) Result() *IdleResult {
	if ip == nil {
		return nil
	}
	return ip.res
}

// Clean reports whether nothing failed, was lost, duplicated, reordered or
// foreign: the driver's exit 0.
func (r *SeedResult) Clean() bool {
	return r.Failed == 0 && r.Lost == 0 && r.Duplicated == 0 && r.OutOfOrder == 0 && r.Foreign == 0
}

// Unanswered counts n records that got no callback within the delivery
// timeout plus grace as failed, as the Java driver does.
func (r *SeedResult) Unanswered(n int, grace time.Duration) {
	if n > 0 {
		r.Failed += n
		r.FailedErrors[fmt.Sprintf("no callback within delivery timeout + %d s", int(grace/time.Second))] += n
	}
}

// WaitAtMost waits until done is closed or d has passed: a bounded wait
// for a producer's callbacks, so that a stalled one is reported rather than
// waited on forever.
func WaitAtMost(done <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// EncodeLine returns v as one line of JSON with no HTML escaping, as the
// Java driver writes its line.
func EncodeLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// flagNumber returns the number flag --k holds in a (at least min, an int32),
// or 0 with the first bad flag's *UsageError in *err; once *err is set it
// reads nothing more.
func flagNumber(a map[string]string, k string, min int, prefix string, err *error) int {
	if *err != nil {
		return 0
	}
	n, e := strconv.Atoi(a[k])
	switch {
	case e != nil || n > math.MaxInt32:
		*err = &UsageError{fmt.Sprintf("%s--%s wants a number, not %s", prefix, k, a[k])}
	case n < min:
		*err = &UsageError{fmt.Sprintf("%s--%s wants a number of at least %d, not %s", prefix, k, min, a[k])}
	}
	return n
}
