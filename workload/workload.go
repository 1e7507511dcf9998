// Package workload is what kcheck run does: start (or reach) a broker, create
// a topic, produce records with our producer under injected faults while
// writing a trace, read every partition back into the trace, and summarise
// what was lost, duplicated or reordered.
package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/producer"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/topics"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/outcomes"
	"github.com/kcheck/kcheck/tracer/poll"
	"github.com/kcheck/kcheck/tracer/readback"
	"github.com/kcheck/kcheck/wire"
)

// Config is one run.
type Config struct {
	Brokers           []string // empty: an embedded kfake cluster of 3 brokers
	KfakeVersion      string   // the Kafka version the embedded broker emulates (see Emulations)
	BrokerVersion     string   // the Kafka version at Brokers, such as "4.1.0", for the trace header; "": unknown
	Topic             string
	Partitions        int32
	ReplicationFactor int16 // of the new topic; 0 or topics.BrokerDefault (-1): the brokers' default.replication.factor
	Records           int
	ValueBytes        int
	Keys              int // distinct keys, spread with the Java client's partitioner
	Codec             recordbatch.Codec
	FirstAck          bool
	HoldWhileRetrying bool          // kcheck's rule: no new sequence while a retried batch is unacknowledged
	IdleRearm         bool          // kcheck's rule: a partition idle past IdleRearmAfter awaits its first ack again
	IdleRearmAfter    time.Duration // its bound; 0: derived from the brokers' producer.id.expiration.ms
	MaxInFlight       int
	Linger            time.Duration
	BatchBytes        int
	MaxRequestBytes   int // max.request.size; 0: no cap (the producer's default)
	DeliveryTimeout   time.Duration
	RequestTimeout    time.Duration
	Faults            []fault.Fault
	Seed              uint64
	TracePath         string        // "" for no trace
	OutcomesPath      string        // where to report what each record's callback was told (drivers/OUTCOMES.md); "" for nowhere
	ReadBackBrokers   []string      // where the read-back reads the topic (Brokers when empty): the cluster itself when Brokers is a proxy
	ReadBackBound     time.Duration // bounds the read-back's waits for a settled cluster and a caught-up high watermark (readback.DefaultBound when zero)
	Progress          io.Writer     // a progress line on long runs; nil for none

	// BatchRecords is the batch shape (drivers/WORKLOADS.md): "" or
	// "default" keeps Linger and BatchBytes; "one" sets BatchBytes to 1, so
	// that every batch holds one record; "many" sets Linger to ManyLinger
	// and BatchBytes to ManyBatchBytes.
	BatchRecords string
	Idle         *Idle // an idle phase; nil for none

	// Txn makes the run transactional; nil: idempotent.
	Txn *Txn
	// Poll, in a transactional run with a trace, has a read_committed
	// consumer poll every partition while the run goes on and after it
	// (tracer/poll): Poll and PollEnd events. PollRetries and PollBound
	// are its bounds (poll.DefaultRetries, poll.DefaultBound when zero).
	Poll        bool
	PollRetries int
	PollBound   time.Duration
}

// Txn is a transactional run: the records in transactions of Records
// records each (across the partitions), every AbortEvery-th of them
// aborted on purpose (after its records were written), the others
// committed.
type Txn struct {
	ID         string // the transactional id
	Records    int    // records a transaction
	AbortEvery int    // 0: none aborted
	Version    int    // the transaction version asked: 0 the cluster's, 1 or 2
}

// The batch shapes of Config.BatchRecords, and what "many" sets: the same
// as every driver's (bench/loadgen's BatchMany).
const (
	BatchDefault   = "default"
	BatchOne       = "one"
	BatchMany      = "many"
	ManyLinger     = 20 * time.Millisecond
	ManyBatchBytes = 256 << 10
)

// Idle is an idle phase: produce the first After records, wait until each
// has its outcome (at most the delivery timeout and 30 s), produce nothing
// for For, then produce the rest.
type Idle struct {
	After int
	For   time.Duration
}

// Summary is what a run saw.
type Summary struct {
	Sent, Acked, Failed int
	ReadBack            int // records of this run found in the log
	Lost                int // sent, never found in the log
	LostAcked           int // of Lost, those the broker had acknowledged
	Duplicated          int // found more than once
	OutOfOrder          int // found after a record produced later to the same partition
	OutOfOrderAnswers   int // OUT_OF_ORDER_SEQUENCE_NUMBER answers the producer got (a stall is when they go on until the delivery timeout)
	FirstErrors         []string
	Short               []readback.Partition // partitions whose high watermark never passed what was acknowledged (their Short says what the read-back saw)
	Duration            time.Duration
	TraceEvents         int64
	// The idle phase (Config.Idle), zero without one: when it began (the
	// records before it had their outcomes, or the wait for them ended) and
	// ended, and how many of those records had no outcome when it began.
	IdleStart, IdleEnd time.Time
	IdleUnanswered     int

	// A transactional run (Config.Txn): the transaction version spoken and
	// the cluster's transaction.version; transactions committed, aborted
	// (as asked) and failed (not ended as asked); the records read back
	// committed, aborted and in no ended transaction (open), and the
	// records of committed transactions found aborted or absent
	// (CommitLost) or of aborted ones found committed (AbortCommitted).
	TxnVersion, TxnFeature               int
	TxnCommitted, TxnAborted, TxnFailed  int
	ReadCommitted, ReadAborted, ReadOpen int
	CommitLost, AbortCommitted           int
	// The partitions read again as read_committed (readback.Committed):
	// the records it sees, and where it disagrees with the markers.
	CommittedVisible  int
	CommittedDisagree []string
	// The read_committed poller (Config.Poll): its polls, the records they
	// returned, the partitions it gave up, and how long its final polls
	// took.
	Polls, PollRecords, PollGaveUp int
	PollFinal                      time.Duration
}

// Clean reports whether every record was acknowledged and read back once and in order;
// in a transactional run, whether every transaction ended as asked, and its
// records were read back once, in order, as it ended.
func (s *Summary) Clean() bool {
	if s.TxnVersion > 0 {
		return s.TxnFailed == 0 && !s.Anomalies() && s.ReadOpen == 0 && len(s.CommittedDisagree) == 0
	}
	return s.Failed == 0 && s.Lost == 0 && s.Duplicated == 0 && s.OutOfOrder == 0 && s.Acked == s.Sent
}

// Anomalies reports whether the read-back shows a loss, duplicate or reorder
// (in a transactional run: a committed transaction's record lost or
// aborted, an aborted one's committed).
func (s *Summary) Anomalies() bool {
	if s.TxnVersion > 0 {
		return s.CommitLost > 0 || s.AbortCommitted > 0 || s.Duplicated > 0 || s.OutOfOrder > 0
	}
	return s.Lost > 0 || s.Duplicated > 0 || s.OutOfOrder > 0
}

// UsageError is a bad configuration or an unreachable broker: kcheck run exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usage(format string, args ...any) error { return &UsageError{fmt.Errorf(format, args...)} }

// Emulations are the Kafka versions the embedded kfake broker can emulate,
// with the spec's NoStateRule each implies.
var Emulations = map[string]struct {
	Versions *kversion.Versions // nil: uncapped
	Rule     string
}{
	"2.4": {kversion.V2_4_0(), "pre25"},
	"3.9": {kversion.V3_9_0(), "v25to44"},
	"4.0": {kversion.V4_0_0(), "v25to44"},
	"4.1": {kversion.V4_1_0(), "v25to44"},
	"4.2": {kversion.V4_2_0(), "v25to44"},
	"4.3": {kversion.V4_3_0(), "v25to44"},
	"4.4": {kversion.V4_4_0(), "v25to44"},
	"4.5": {nil, "v45"},
}

func (c *Config) validate() error {
	var errs []string
	if c.Partitions < 1 {
		errs = append(errs, fmt.Sprintf("--partitions %d: must be at least 1", c.Partitions))
	}
	if c.Records < 1 {
		errs = append(errs, fmt.Sprintf("--records %d: must be at least 1", c.Records))
	}
	if c.ValueBytes < 1 {
		errs = append(errs, fmt.Sprintf("--value-bytes %d: must be at least 1", c.ValueBytes))
	}
	if c.Keys < 0 {
		errs = append(errs, fmt.Sprintf("--keys %d: must not be negative (0: no keys)", c.Keys))
	}
	switch c.BatchRecords {
	case "", BatchDefault, BatchOne, BatchMany:
	default:
		errs = append(errs, fmt.Sprintf("--batch-records %q: want one, many or default", c.BatchRecords))
	}
	if c.Idle != nil {
		if c.Idle.After < 0 || c.Idle.After > c.Records {
			errs = append(errs, fmt.Sprintf("--idle-after %d: must be 0..--records (%d)", c.Idle.After, c.Records))
		}
		if c.Idle.For < 0 {
			errs = append(errs, fmt.Sprintf("--idle %v: must not be negative", c.Idle.For))
		}
	}
	if c.MaxInFlight < 1 || c.MaxInFlight > 5 {
		errs = append(errs, fmt.Sprintf("--max-in-flight %d: must be 1..5 (idempotence allows at most 5)", c.MaxInFlight))
	}
	if c.Topic == "" {
		errs = append(errs, "--topic: must not be empty")
	}
	if len(c.Brokers) == 0 {
		if _, ok := Emulations[c.KfakeVersion]; !ok {
			var vs []string
			for v := range Emulations {
				vs = append(vs, v)
			}
			sort.Strings(vs)
			errs = append(errs, fmt.Sprintf("--kfake-version %q: the embedded broker emulates %s", c.KfakeVersion, strings.Join(vs, ", ")))
		}
	}
	if len(c.Brokers) == 0 {
		if err := fault.CheckKfake(c.Faults); err != nil {
			errs = append(errs, err.Error())
		}
	} else if len(c.Faults) > 0 {
		errs = append(errs, "--fault with --brokers: kcheck run injects faults only into the embedded kfake; a real broker needs kcheck proxy (kcheck proxy --upstream HOST:PORT --fault F -- kcheck run --brokers {bootstrap} ...), or run without --brokers")
	}
	if t := c.Txn; t != nil {
		if t.Records < 1 {
			errs = append(errs, fmt.Sprintf("--txn-records %d: must be at least 1", t.Records))
		}
		if t.AbortEvery < 0 {
			errs = append(errs, fmt.Sprintf("--txn-abort-every %d: must not be negative (0: none aborted)", t.AbortEvery))
		}
		if t.Version < 0 || t.Version > 2 {
			errs = append(errs, fmt.Sprintf("--txn-version %d: want 0 (the cluster's), 1 or 2", t.Version))
		}
		if t.ID == "" {
			errs = append(errs, "--transactional-id: must not be empty")
		}
		if c.Idle != nil {
			errs = append(errs, "--idle-after with --transactional: an idle phase is not in a transactional run")
		}
	}
	if len(errs) > 0 {
		return &UsageError{errors.New(strings.Join(errs, "; "))}
	}
	return nil
}

// KafkaBroker describes a real Apache Kafka broker of version ("" when not
// known) for a trace header: the spec's NoStateRule is that of the emulation
// of the same major.minor version, 2.5-4.4's rule when there is none.
func KafkaBroker(version string) tracer.Broker {
	b := tracer.Broker{Kind: "kafka", Version: "unknown", NoStateRule: "v25to44"}
	if version != "" {
		b.Version = version
		if mm := strings.SplitN(version, ".", 3); len(mm) >= 2 {
			if em, ok := Emulations[mm[0]+"."+mm[1]]; ok {
				b.NoStateRule = em.Rule
			}
		}
	}
	return b
}

// Run runs the workload in its phases, in order: Start (the broker, the
// topic, the trace, the faults, the producer), Produce (the records, under
// the faults, then the producer closed), Heal (every fault stopped), then
// ReadBack (every partition read back into the trace) and the summary. A
// *UsageError means bad input or an unreachable broker; any other error is
// a failure of the run itself. Callers that disturb a real cluster
// themselves (the nemesis) call the phases one by one and heal the cluster
// before the read-back.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	s, err := Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := s.Produce(ctx); err != nil {
		return nil, err
	}
	s.Heal()
	return s.ReadBack(ctx)
}

// Session is one run between its phases.
type Session struct {
	cfg        Config
	start      time.Time
	brokers    []string
	cluster    *kfake.Cluster // the embedded cluster, nil on a real one
	trace      *tracer.Writer // nil without a trace
	traceFile  *os.File
	stopFaults func() // ends kfake's faults; nil when there are none
	p          *producer.Producer
	poller     *poll.Poller // a transactional run's read_committed poller; nil for none
	sum        *Summary
	sent       map[int64]*sentRecord
	acked      map[int32]int64 // the highest acknowledged offset per partition
	done       bool            // the trace is complete: Close keeps it
}

// Start begins a run: the broker (the embedded one when cfg.Brokers is
// empty), the topic, the trace's header, kfake's faults and the producer.
func Start(ctx context.Context, cfg Config) (_ *Session, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	switch cfg.BatchRecords {
	case BatchOne:
		cfg.BatchBytes = 1 // a batch is sealed with its first record (producer.BatchBytes)
	case BatchMany:
		cfg.Linger, cfg.BatchBytes = ManyLinger, ManyBatchBytes
	}
	s := &Session{cfg: cfg, start: time.Now(), brokers: cfg.Brokers}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	brokerInfo := KafkaBroker(cfg.BrokerVersion)
	if len(s.brokers) == 0 {
		em := Emulations[cfg.KfakeVersion]
		opts := []kfake.Opt{kfake.NumBrokers(3)}
		if em.Versions != nil {
			opts = append(opts, kfake.MaxVersions(em.Versions))
		}
		var err error
		if s.cluster, err = kfake.NewCluster(opts...); err != nil {
			return nil, fmt.Errorf("starting the embedded kfake cluster: %w", err)
		}
		s.brokers = s.cluster.ListenAddrs()
		brokerInfo = tracer.Broker{Kind: "kfake", Version: cfg.KfakeVersion, NoStateRule: em.Rule}
	}
	rf := cfg.ReplicationFactor
	if rf == 0 {
		rf = topics.BrokerDefault
	}
	if err := createTopic(ctx, s.brokers, cfg.Topic, cfg.Partitions, rf, cfg.RequestTimeout); err != nil {
		return nil, err
	}

	var sink tracer.Sink
	if cfg.TracePath != "" {
		f, err := os.Create(cfg.TracePath)
		if err != nil {
			return nil, usage("--trace: %v", err)
		}
		s.traceFile = f
		var names []string
		for _, fl := range cfg.Faults {
			names = append(names, fl.String())
		}
		conf := map[string]string{"compression": cfg.Codec.String(), "records": fmt.Sprint(cfg.Records),
			"value_bytes": fmt.Sprint(cfg.ValueBytes), "keys": fmt.Sprint(cfg.Keys), "linger": cfg.Linger.String()}
		if cfg.BatchRecords != "" && cfg.BatchRecords != BatchDefault {
			conf["batch_records"], conf["batch_bytes"] = cfg.BatchRecords, fmt.Sprint(cfg.BatchBytes)
		}
		if cfg.Idle != nil {
			conf["idle_after"], conf["idle"] = fmt.Sprint(cfg.Idle.After), cfg.Idle.For.String()
		}
		s.trace, err = tracer.NewDeferredWriter(f, tracer.Header{
			Writer: "kcheck-producer", Client: "kcheck/producer", Topic: cfg.Topic, Partitions: cfg.Partitions,
			FirstAck: cfg.FirstAck, HoldWhileRetrying: cfg.HoldWhileRetrying, MaxInFlight: cfg.MaxInFlight, DeliveryTimeoutMs: cfg.DeliveryTimeout.Milliseconds(),
			Broker: brokerInfo, Faults: names, Seed: int64(cfg.Seed), Config: conf,
		})
		if err != nil {
			return nil, err
		}
		sink = s.trace
	}
	if s.cluster != nil {
		stop, err := fault.InstallKfake(fault.Target{Cluster: s.cluster, Topic: cfg.Topic, Partitions: cfg.Partitions,
			Seed: cfg.Seed, Trace: sink, RequestTimeout: cfg.RequestTimeout}, cfg.Faults)
		if err != nil {
			return nil, &UsageError{err}
		}
		s.stopFaults = stop
	}

	opts := []producer.Opt{
		producer.Brokers(s.brokers...), producer.FirstAckRule(cfg.FirstAck), producer.HoldWhileRetrying(cfg.HoldWhileRetrying), producer.MaxInFlight(cfg.MaxInFlight),
		producer.IdleRearm(cfg.IdleRearm && cfg.FirstAck), producer.IdleRearmAfter(cfg.IdleRearmAfter),
		producer.Compression(cfg.Codec), producer.Linger(cfg.Linger), producer.BatchBytes(cfg.BatchBytes),
		producer.DeliveryTimeout(cfg.DeliveryTimeout), producer.RequestTimeout(cfg.RequestTimeout),
		producer.RetryBackoff(20 * time.Millisecond),
		producer.RecordIDs(true), // the read-back matches records by their ids, traced or not
	}
	if cfg.MaxRequestBytes > 0 {
		opts = append(opts, producer.MaxRequestBytes(cfg.MaxRequestBytes))
	}
	if sink != nil {
		opts = append(opts, producer.Trace(sink))
	}
	if t := cfg.Txn; t != nil {
		opts = append(opts, producer.TransactionalID(t.ID), producer.TransactionVersion(t.Version))
	}
	nctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	s.p, err = producer.New(nctx, opts...)
	cancel()
	if err != nil {
		var te *producer.TxnUnsupportedError
		if errors.As(err, &te) {
			return nil, usage("--transactional: %v", err)
		}
		return nil, &UsageError{err}
	}
	if cfg.Txn != nil && cfg.Poll && s.trace != nil {
		from := s.brokers
		if len(cfg.ReadBackBrokers) > 0 {
			from = cfg.ReadBackBrokers
		}
		if s.poller, err = poll.Start(poll.Config{Brokers: from, Topic: cfg.Topic, Partitions: cfg.Partitions,
			Sink: s.trace, Retries: cfg.PollRetries, Bound: cfg.PollBound}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Brokers returns the addresses the run produces to.
func (s *Session) Brokers() []string { return s.brokers }

// Produce sends the run's records, waits for every outcome and closes the
// producer: the workload itself, under whatever faults are on.
func (s *Session) Produce(ctx context.Context) error {
	s.sum = &Summary{}
	out, err := outcomes.Create(s.cfg.OutcomesPath)
	if err != nil {
		return usage("--outcomes: %v", err)
	}
	if s.cfg.Txn != nil {
		s.sent, s.acked = produceTxn(ctx, s.p, s.cfg, s.sum, out)
	} else {
		s.sent, s.acked = produce(ctx, s.p, s.cfg, s.sum, out)
	}
	if err := s.p.Close(ctx); err != nil {
		out.Close()
		return fmt.Errorf("closing the producer: %w", err)
	}
	if err := out.Close(); err != nil {
		return usage("--outcomes: %v", err)
	}
	return nil
}

// Heal ends the faults the run installed on the embedded broker. Faults on
// a real cluster are the caller's to stop and heal before ReadBack.
func (s *Session) Heal() {
	if s.stopFaults != nil {
		s.stopFaults()
	}
}

// ReadBack reads every partition back into the trace, once the cluster has
// settled (readback.Topic waits for it), and summarises the run.
func (s *Session) ReadBack(ctx context.Context) (*Summary, error) {
	if s.sum == nil {
		return nil, errors.New("workload: ReadBack before Produce")
	}
	if s.poller != nil {
		// The final polls, to each partition's end, before the read-back.
		st := s.poller.Finish(ctx)
		s.poller = nil
		s.sum.Polls, s.sum.PollRecords, s.sum.PollGaveUp, s.sum.PollFinal = st.Polls, st.Records, st.GaveUp, st.Final
	}
	from := s.brokers
	if len(s.cfg.ReadBackBrokers) > 0 {
		from = s.cfg.ReadBackBrokers
	}
	parts, err := readback.Topic(ctx, readback.Config{Bootstrap: from, Topic: s.cfg.Topic, Acked: s.acked,
		Settle: s.cfg.ReadBackBound, CatchUp: s.cfg.ReadBackBound})
	if err != nil {
		return nil, err
	}
	if s.trace != nil {
		for i := range parts {
			for _, e := range parts[i].Events() {
				s.trace.Emit(&e)
			}
		}
		if err := s.trace.Flush(); err != nil {
			return nil, err
		}
		s.sum.TraceEvents = s.trace.Events()
	}
	summarise(s.sum, s.sent, parts, s.p)
	if s.cfg.Txn != nil {
		summariseTxn(s.sum, s.sent, parts, s.p)
	}
	for _, p := range parts {
		if p.Short != nil {
			s.sum.Short = append(s.sum.Short, p)
		}
	}
	s.sum.Duration = time.Since(s.start)
	s.done = true
	return s.sum, nil
}

// Close releases the run's broker and trace file. A run that did not reach
// the end of its read-back leaves no trace behind: a partial one would look
// like a run to the checker.
func (s *Session) Close() {
	if s.poller != nil {
		s.poller.Close()
		s.poller = nil
	}
	if s.p != nil && !s.done {
		s.p.Close(context.Background())
	}
	if s.traceFile != nil {
		s.traceFile.Close()
		if !s.done {
			os.Remove(s.cfg.TracePath)
		}
		s.traceFile = nil
	}
	if s.cluster != nil {
		s.cluster.Close()
		s.cluster = nil
	}
}

// sentRecord is what the run remembers of one record.
type sentRecord struct {
	partition int32
	acked     bool
	txn       int  // a transactional run: the record's transaction, from 1
	committed bool // a transactional run: its transaction was told committed
}

// produce sends cfg.Records records and waits for their outcomes. It
// returns what it sent and, per partition, the highest offset acknowledged.
func produce(ctx context.Context, p *producer.Producer, cfg Config, sum *Summary, out *outcomes.Writer) (map[int64]*sentRecord, map[int32]int64) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	value := make([]byte, cfg.ValueBytes)
	for i := range value {
		value[i] = byte('a' + rng.IntN(26)) // compressible, like text
	}
	sent := make(map[int64]*sentRecord, cfg.Records)
	acked := map[int32]int64{}
	var mu sync.Mutex
	var done atomic.Int64
	var wg sync.WaitGroup
	// The idle phase: firstOpen counts the records before it without an
	// outcome; firstDone is closed when there are none.
	var firstOpen atomic.Int64
	firstDone := make(chan struct{})
	idleAt := -1
	if cfg.Idle != nil {
		idleAt = cfg.Idle.After
		if firstOpen.Store(int64(idleAt)); idleAt == 0 {
			close(firstDone)
		}
	}
	idle := func(i int) {
		if i != idleAt {
			return
		}
		t := time.NewTimer(cfg.DeliveryTimeout + 30*time.Second)
		select {
		case <-firstDone:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		sum.IdleStart = time.Now()
		sum.IdleUnanswered = int(max(firstOpen.Load(), 0))
		select {
		case <-time.After(cfg.Idle.For):
		case <-ctx.Done():
		}
		sum.IdleEnd = time.Now()
	}
	lastProgress := time.Now()
	for i := 0; i < cfg.Records; i++ {
		idle(i)
		m := &producer.Message{Topic: cfg.Topic, Value: value}
		if cfg.Keys > 0 {
			m.Key = fmt.Appendf(nil, "key-%d", rng.IntN(cfg.Keys))
		}
		wg.Add(1)
		p.Produce(ctx, m, func(m *producer.Message, err error) {
			defer wg.Done()
			done.Add(1)
			if i < idleAt && firstOpen.Add(-1) == 0 {
				close(firstDone)
			}
			mu.Lock()
			defer mu.Unlock()
			r := &sentRecord{partition: m.Partition, acked: err == nil}
			sent[m.ID] = r
			switch {
			case m.ID == 0:
				// Failed before the producer gave it a kcheck id (ids start
				// at 1): no record the trace or a report can name.
			case err == nil:
				out.Delivered(int(m.ID), m.Partition, m.Offset)
			default:
				var code int16
				if ke := (*kerr.Error)(nil); errors.As(err, &ke) {
					code = ke.Code
				}
				out.Failed(int(m.ID), m.Partition, err.Error(), code)
			}
			if err == nil {
				sum.Acked++
				if last, ok := acked[m.Partition]; !ok || m.Offset > last {
					acked[m.Partition] = m.Offset
				}
			} else {
				sum.Failed++
				if len(sum.FirstErrors) < 3 {
					sum.FirstErrors = append(sum.FirstErrors, err.Error())
				}
			}
		})
		sum.Sent++
		if cfg.Progress != nil && time.Since(lastProgress) > time.Second {
			lastProgress = time.Now()
			fmt.Fprintf(cfg.Progress, "kcheck run: %d/%d produced, %d done\n", i+1, cfg.Records, done.Load())
		}
	}
	idle(cfg.Records) // an idle phase after the last record
	_ = p.Flush(ctx)
	wg.Wait()
	return sent, acked
}

// summarise compares what was sent with what was read back.
func summarise(sum *Summary, sent map[int64]*sentRecord, parts []readback.Partition, p *producer.Producer) {
	pid, _ := p.ProducerID()
	found := make(map[int64]int, len(sent))
	for _, rp := range parts {
		var last int64 = -1
		for _, r := range rp.Log {
			if r.PID != pid || r.ID < 0 {
				continue
			}
			found[r.ID]++
			if found[r.ID] > 1 {
				sum.Duplicated++
				continue
			}
			sum.ReadBack++
			if r.ID < last {
				sum.OutOfOrder++
			}
			last = max(last, r.ID)
		}
	}
	for id := range sent {
		if found[id] == 0 {
			sum.Lost++
			if sent[id].acked {
				sum.LostAcked++
			}
		}
	}
	sum.OutOfOrderAnswers = int(p.Stats().OutOfOrderAnswers)
}

// CreateTopic creates topic with n partitions (and the brokers'
// default.replication.factor) on the controller and waits until every
// partition has a leader.
func CreateTopic(ctx context.Context, brokers []string, topic string, n int32, timeout time.Duration) error {
	return createTopic(ctx, brokers, topic, n, topics.BrokerDefault, timeout)
}

func createTopic(ctx context.Context, brokers []string, topic string, n int32, rf int16, timeout time.Duration) error {
	dctx, cancel := context.WithTimeout(ctx, timeout+10*time.Second)
	defer cancel()
	c, err := dialAny(dctx, brokers)
	if err != nil {
		return err
	}
	defer c.Close()
	meta, err := metadata(dctx, c, topic)
	if err != nil {
		return err
	}
	ctl := c
	for _, b := range meta.Brokers {
		if b.NodeID == meta.ControllerID {
			if ctl, err = wire.Dial(dctx, fmt.Sprintf("%s:%d", b.Host, b.Port), "kcheck-admin"); err != nil {
				return usage("reaching the controller: %v", err)
			}
			defer ctl.Close()
		}
	}
	if err := topics.Create(dctx, ctl, n, rf, topic); err != nil {
		if errors.Is(err, kerr.TopicAlreadyExists) {
			return usage("topic %q already exists: pick a new --topic, so the read-back sees only this run's records", topic)
		}
		return usage("creating topic %q (waiting at most %v for its leaders): %v", topic, timeout+10*time.Second, err)
	}
	return nil
}

func dialAny(ctx context.Context, brokers []string) (*wire.Conn, error) {
	var errs []error
	for _, addr := range brokers {
		c, err := wire.Dial(ctx, addr, "kcheck-admin")
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, usage("no broker reachable at %s: %v", strings.Join(brokers, ","), errors.Join(errs...))
}

func metadata(ctx context.Context, c *wire.Conn, topic string) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, mt)
	req.AllowAutoTopicCreation = false
	kresp, err := c.Request(ctx, req)
	if err != nil {
		return nil, usage("metadata from %s: %v", c.Addr(), err)
	}
	return kresp.(*kmsg.MetadataResponse), nil
}

// produceTxn sends cfg.Records records in transactions of cfg.Txn.Records
// each (the last may be smaller), aborting every cfg.Txn.AbortEvery-th
// transaction once its records are written and committing the others,
// and waits for their outcomes. It returns what it sent, with each
// record's transaction, and per partition the highest offset acknowledged.
func produceTxn(ctx context.Context, p *producer.Producer, cfg Config, sum *Summary, out *outcomes.Writer) (map[int64]*sentRecord, map[int32]int64) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	value := make([]byte, cfg.ValueBytes)
	for i := range value {
		value[i] = byte('a' + rng.IntN(26))
	}
	sent := make(map[int64]*sentRecord, cfg.Records)
	acked := map[int32]int64{}
	var mu sync.Mutex
	note := func(err error) {
		if len(sum.FirstErrors) < 3 {
			sum.FirstErrors = append(sum.FirstErrors, err.Error())
		}
	}
	lastProgress := time.Now()
	// told: the report gets each transaction's end (drivers/OUTCOMES.md),
	// until a transaction none of whose records was reported (failed before
	// it had an id), which the report's rules cannot hold.
	told := true
	for tx, i := 1, 0; i < cfg.Records; tx++ {
		if err := p.BeginTransaction(); err != nil {
			mu.Lock()
			sum.TxnFailed++
			note(fmt.Errorf("transaction %d: begin: %w", tx, err))
			mu.Unlock()
			break
		}
		var wg sync.WaitGroup
		var recs []*sentRecord
		reported := 0 // record lines of this transaction
		for k := 0; k < cfg.Txn.Records && i < cfg.Records; k, i = k+1, i+1 {
			m := &producer.Message{Topic: cfg.Topic, Value: value}
			if cfg.Keys > 0 {
				m.Key = fmt.Appendf(nil, "key-%d", rng.IntN(cfg.Keys))
			}
			r := &sentRecord{txn: tx}
			recs = append(recs, r)
			wg.Add(1)
			p.Produce(ctx, m, func(m *producer.Message, err error) {
				defer wg.Done()
				mu.Lock()
				defer mu.Unlock()
				r.partition, r.acked = m.Partition, err == nil
				if m.ID != 0 {
					sent[m.ID] = r
				}
				switch {
				case m.ID == 0:
				case err == nil:
					out.Delivered(int(m.ID), m.Partition, m.Offset)
					reported++
				default:
					out.Failed(int(m.ID), m.Partition, err.Error(), kafkaCode(err))
					reported++
				}
				if err == nil {
					sum.Acked++
					if last, ok := acked[m.Partition]; !ok || m.Offset > last {
						acked[m.Partition] = m.Offset
					}
				} else {
					sum.Failed++
					note(err)
				}
			})
			sum.Sent++
		}
		abort := cfg.Txn.AbortEvery > 0 && tx%cfg.Txn.AbortEvery == 0
		var err error
		if abort {
			// Written first, so that the log holds the aborted records
			// and their markers.
			if err = p.Flush(ctx); err == nil {
				err = p.AbortTransaction(ctx)
			}
		} else {
			err = p.CommitTransaction(ctx)
		}
		wg.Wait()
		mu.Lock()
		told = told && reported > 0
		if told {
			switch {
			case err != nil:
				out.TxnFailed(tx, !abort, err.Error(), kafkaCode(err))
			case abort:
				out.Aborted(tx)
			default:
				out.Committed(tx)
			}
		}
		switch {
		case err != nil:
			sum.TxnFailed++
			note(fmt.Errorf("transaction %d: %w", tx, err))
		case abort:
			sum.TxnAborted++
		default:
			sum.TxnCommitted++
			for _, r := range recs {
				r.committed = true
			}
		}
		mu.Unlock()
		if err != nil {
			var te *producer.TxnError
			if errors.As(err, &te) && te.Abortable {
				aerr := p.AbortTransaction(ctx)
				if told && !abort {
					if aerr != nil {
						out.TxnFailed(tx, false, aerr.Error(), kafkaCode(aerr))
					} else {
						out.Aborted(tx)
					}
				}
				if aerr != nil {
					note(fmt.Errorf("transaction %d: abort after a failed commit: %w", tx, aerr))
					break
				}
				continue
			}
			break
		}
		if cfg.Progress != nil && time.Since(lastProgress) > time.Second {
			lastProgress = time.Now()
			fmt.Fprintf(cfg.Progress, "kcheck run: %d/%d produced, transaction %d\n", i, cfg.Records, tx)
		}
	}
	_ = p.Flush(ctx)
	sum.TxnVersion, sum.TxnFeature = p.TxnVersion(), int(p.TxnFeature())
	return sent, acked
}

// summariseTxn holds a transactional run's read-back to what the
// application was told: each record's fate (tracer.Fates: its producer's
// next marker) against its transaction's end.
func summariseTxn(sum *Summary, sent map[int64]*sentRecord, parts []readback.Partition, p *producer.Producer) {
	pid, _ := p.ProducerID()
	fate := map[int64]tracer.Fate{}
	for _, rp := range parts {
		if c := rp.Committed; c != nil {
			sum.CommittedVisible += c.Visible
			if c.Disagree != "" {
				sum.CommittedDisagree = append(sum.CommittedDisagree, fmt.Sprintf("partition %d: %s", rp.ID, c.Disagree))
			}
		}
		for i, f := range tracer.Fates(rp.Log, rp.Ctl) {
			r := rp.Log[i]
			if r.PID != pid || r.ID < 0 {
				continue
			}
			if _, seen := fate[r.ID]; seen {
				continue // counted as duplicated by summarise
			}
			fate[r.ID] = f
			switch f {
			case tracer.FateCommitted:
				sum.ReadCommitted++
			case tracer.FateAborted:
				sum.ReadAborted++
			default:
				sum.ReadOpen++
			}
		}
	}
	for id, r := range sent {
		f, found := fate[id]
		switch {
		case r.committed && (!found || f != tracer.FateCommitted):
			sum.CommitLost++
		case !r.committed && found && f == tracer.FateCommitted:
			sum.AbortCommitted++
		}
	}
}

// kafkaCode is the Kafka error code err carries (a *kerr.Error), 0 if none.
func kafkaCode(err error) int16 {
	if ke := (*kerr.Error)(nil); errors.As(err, &ke) {
		return ke.Code
	}
	return 0
}
