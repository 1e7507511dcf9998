// Command ceiling is what one broker can take on this machine with no
// client in the way: a minimal producer that sends record batches built
// before the clock starts (keys, partitions, batches and sequences the same
// as the clients', precomputed), pipelined up to --max-in-flight Produce
// requests on one connection, as fast as the broker answers. It has no
// client logic: no linger, no retries, no first-ack rule, no buffer; any
// error ends the run, named. Idempotent, or with --transactional TV2
// transactions (Produce v12 adds each partition; EndTxn commits and bumps
// the epoch, which the pre-built batches of the next transaction carry).
// bench/cmd/suite's txn phase (bench/run.sh --txn) reports every client's
// records/s as a fraction of it.
//
//	go build -o bin/kcheck-bench-ceiling ./bench/cmd/ceiling
//	bin/kcheck-bench-ceiling --bench --bootstrap HOST:PORT --topic T [--transactional --txn-records N] [the throughput mode's flags]
//
// It takes the throughput mode's flags and prints its JSON line
// (bench/loadgen), with client "ceiling". --linger-ms, --max-buffered,
// --rate, --compression, --delivery-timeout-ms and --window-ms do not
// apply (refused when not their defaults, except --window-ms and
// --linger-ms, which the suite passes every client and which are
// ignored). Records are produced in rounds: a Produce request holds the
// next batch of every partition that has one. Latency: idempotent, each
// record's request from written to answered; transactional, a
// transaction from its first request written to its EndTxn answered.
// The topic must exist and every partition's leader be one broker. Exit 0
// every record acknowledged, 2 bad usage, a setup error or any error
// answer.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/wire"
)

const prefix = "kcheck bench ceiling: "

func main() {
	t0 := time.Now()
	_, argv := loadgen.HasFlag(os.Args[1:])
	cfg, err := loadgen.Parse(argv, nil, prefix)
	if err != nil {
		die(err.Error())
	}
	for _, k := range []string{"max-buffered", "rate", "compression", "delivery-timeout-ms"} {
		if v := flagValue(argv, k); v != "" && v != loadgen.Defaults[k] {
			die(fmt.Sprintf("%s--%s %s: the ceiling has no such setting (it sends pre-built batches as fast as the broker answers)", prefix, k, v))
		}
	}
	if cfg.TxnAbortEvery != 0 {
		die(prefix + "--txn-abort-every: the ceiling only commits")
	}
	res, err := run(cfg, t0)
	if err != nil {
		die(prefix + err.Error())
	}
	if err := res.Write(os.Stdout); err != nil {
		die(prefix + err.Error())
	}
}

func die(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(2)
}

// flagValue is argv's value of --k, "" if absent.
func flagValue(argv []string, k string) string {
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == "--"+k {
			return argv[i+1]
		}
	}
	return ""
}

func run(cfg *loadgen.Config, t0 time.Time) (*loadgen.Result, error) {
	ctx := context.Background()
	rt := time.Duration(cfg.RequestTMs) * time.Millisecond
	conn, parts, err := dialLeader(ctx, cfg.Bootstrap, cfg.Topic, rt)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	coord := conn
	var txnID *string
	if cfg.Transactional {
		if lvl := conn.Feature("transaction.version"); lvl < 2 {
			return nil, fmt.Errorf("%s: the cluster's finalized transaction.version is %d: the ceiling speaks TV2 only", conn.Addr(), lvl)
		}
		txnID = &cfg.TransactionalID
		if coord, err = findCoordinator(ctx, conn, cfg.TransactionalID, rt); err != nil {
			return nil, err
		}
		if coord != conn {
			defer coord.Close()
		}
	}
	pid, epoch, err := initProducerID(ctx, coord, txnID, rt)
	if err != nil {
		return nil, err
	}

	// The records: the warm-up's keys, then the timed part's, as every
	// client draws them (bench/loadgen.Workload), cut into units.
	w := loadgen.NewWorkload(cfg.ValueBytes, cfg.Keys)
	var keys [][][]byte
	var timed []bool
	cut := func(n int, key func(i int) []byte, t bool) {
		size := n
		if cfg.Transactional {
			size = cfg.TxnRecords
		}
		for i := 0; i < n; {
			var ks [][]byte
			for end := min(i+size, n); i < end; i++ {
				ks = append(ks, key(i))
			}
			keys, timed = append(keys, ks), append(timed, t)
		}
	}
	cut(cfg.Warmup, func(i int) []byte {
		if cfg.WarmupKeys == "random" {
			return w.NextKey()
		}
		return w.NextKeyCycle(i)
	}, false)
	cut(cfg.Records, func(int) []byte { return w.NextKey() }, true)
	units, err := plan(planSpec{Partitions: parts, BatchBytes: cfg.BatchBytes, Value: w.Value, PID: pid, Epoch: epoch,
		Transactional: cfg.Transactional, Timestamp: time.Now().UnixMilli()}, keys, timed)
	if err != nil {
		return nil, err
	}
	reqs := make([][]*kmsg.ProduceRequest, len(units))
	for u, un := range units {
		for _, round := range un.Rounds {
			reqs[u] = append(reqs[u], produceRequest(cfg.Topic, txnID, int32(cfg.RequestTMs), round))
		}
	}

	s := &sender{conn: conn, inFlight: make(chan struct{}, cfg.MaxInFlight)}
	var lat, txnLat []time.Duration
	var cpu0 time.Duration
	var start time.Time
	acked := 0
	for u, un := range units {
		if un.Timed && start.IsZero() {
			cpu0, start = loadgen.ProcessCPU(), time.Now()
		}
		tb := time.Now()
		ul, err := s.sendAll(reqs[u], un.Rounds)
		if err != nil {
			return nil, fmt.Errorf("unit %d of %d: %w", u+1, len(units), err)
		}
		if cfg.Transactional {
			next, err := endTxn(ctx, coord, cfg.TransactionalID, pid, un.Epoch, rt)
			if err != nil {
				return nil, fmt.Errorf("transaction %d: %w", u+1, err)
			}
			if next != un.Epoch+1 && u+1 < len(units) {
				return nil, fmt.Errorf("transaction %d: EndTxn answered epoch %d, and the next transaction's batches were built with %d (TV2 bumps by one)", u+1, next, un.Epoch+1)
			}
		}
		if un.Timed {
			acked += un.Records
			lat = append(lat, ul...)
			txnLat = append(txnLat, time.Since(tb))
		}
	}
	elapsed := time.Since(start)
	cpu := loadgen.ProcessCPU() - cpu0

	res := &loadgen.Result{Client: "ceiling", Version: fmt.Sprintf("pre-built batches, %d in flight", cfg.MaxInFlight),
		Mode: "bench", Topic: cfg.Topic, Records: cfg.Records, Acked: acked, FailedErrors: map[string]int{},
		Seconds: elapsed.Seconds(), CPUSeconds: cpu.Seconds(), RecordsPerS: float64(acked) / elapsed.Seconds(),
		BatchBytes: cfg.BatchBytes, MaxInFlight: cfg.MaxInFlight, Ms: time.Since(t0).Milliseconds()}
	if cfg.Transactional {
		res.Version += fmt.Sprintf(", TV2 (transaction.version %d)", coord.Feature("transaction.version"))
	}
	slices.Sort(lat)
	res.LatencyMs = loadgen.Latency{P50: msOf(loadgen.Percentile(lat, 0.5)), P95: msOf(loadgen.Percentile(lat, 0.95)),
		P99: msOf(loadgen.Percentile(lat, 0.99)), P999: msOf(loadgen.Percentile(lat, 0.999)), Max: msOf(loadgen.Percentile(lat, 1))}
	if cfg.Transactional {
		slices.Sort(txnLat)
		res.Txns = &loadgen.Txns{Committed: len(txnLat), Records: cfg.TxnRecords, BeginToCommit: loadgen.TxnLatency{
			P50: msOf(loadgen.Percentile(txnLat, 0.5)), P99: msOf(loadgen.Percentile(txnLat, 0.99)), Max: msOf(loadgen.Percentile(txnLat, 1))}}
	}
	return res, nil
}

func msOf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// produceRequest is one round's Produce request (acks=all).
func produceRequest(topic string, txnID *string, timeoutMs int32, round []batch) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis, req.TransactionID = -1, timeoutMs, txnID
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	for _, b := range round {
		p := kmsg.NewProduceRequestTopicPartition()
		p.Partition, p.Records = b.Partition, b.Bytes
		t.Partitions = append(t.Partitions, p)
	}
	req.Topics = []kmsg.ProduceRequestTopic{t}
	return req
}

// sender pipelines Produce requests on one connection.
type sender struct {
	conn     *wire.Conn
	inFlight chan struct{} // a slot per request in flight
}

// sendAll sends reqs (rounds[i]'s request is reqs[i]) pipelined, waits for
// every answer, and returns each record's latency (its request's, written
// to answered), or the first error answered.
func (s *sender) sendAll(reqs []*kmsg.ProduceRequest, rounds [][]batch) ([]time.Duration, error) {
	var mu sync.Mutex
	var firstErr error
	var lat []time.Duration
	var wg sync.WaitGroup
	for i, req := range reqs {
		s.inFlight <- struct{}{}
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			<-s.inFlight
			break
		}
		n := 0
		for _, b := range rounds[i] {
			n += b.N
		}
		round := rounds[i]
		sent := time.Now()
		wg.Add(1)
		_, err := s.conn.Send(req, nil, func(kr kmsg.Response, err error) {
			defer wg.Done()
			d := time.Since(sent)
			<-s.inFlight
			if err == nil {
				err = produceError(kr.(*kmsg.ProduceResponse), round)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			for range n {
				lat = append(lat, d)
			}
		})
		if err != nil {
			wg.Done()
			<-s.inFlight
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			break
		}
	}
	wg.Wait()
	return lat, firstErr
}

// produceError is the first partition error of a Produce answer, named
// with the partition and the batch's sequence, or nil.
func produceError(resp *kmsg.ProduceResponse, round []batch) error {
	seq := map[int32]int32{}
	for _, b := range round {
		seq[b.Partition] = b.Seq
	}
	got := 0
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			got++
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("Produce: partition %d, batch of base sequence %d: %w", p.Partition, seq[p.Partition], err)
			}
		}
	}
	if got != len(round) {
		return fmt.Errorf("Produce: %d partitions answered of %d sent", got, len(round))
	}
	return nil
}

// dialLeader finds topic's partitions and their leader, which must be one
// broker, and dials it.
func dialLeader(ctx context.Context, bootstrap, topic string, rt time.Duration) (*wire.Conn, int32, error) {
	dctx, cancel := context.WithTimeout(ctx, rt)
	defer cancel()
	c, err := wire.Dial(dctx, strings.Split(bootstrap, ",")[0], "kcheck-bench-ceiling")
	if err != nil {
		return nil, 0, err
	}
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	req.Topics = []kmsg.MetadataRequestTopic{mt}
	kr, err := c.Request(dctx, req)
	if err != nil {
		c.Close()
		return nil, 0, fmt.Errorf("Metadata: %w", err)
	}
	resp := kr.(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 {
		c.Close()
		return nil, 0, fmt.Errorf("Metadata: %d topics answered for %q", len(resp.Topics), topic)
	}
	t := resp.Topics[0]
	if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
		c.Close()
		return nil, 0, fmt.Errorf("Metadata for topic %q: %w", topic, err)
	}
	leaders := map[int32]bool{}
	for _, p := range t.Partitions {
		leaders[p.Leader] = true
	}
	if len(leaders) != 1 || len(t.Partitions) == 0 {
		c.Close()
		return nil, 0, fmt.Errorf("topic %q: %d partitions led by %d brokers: the ceiling runs against one broker", topic, len(t.Partitions), len(leaders))
	}
	var addr string
	for _, b := range resp.Brokers {
		if leaders[b.NodeID] {
			addr = fmt.Sprintf("%s:%d", b.Host, b.Port)
		}
	}
	if addr == "" {
		c.Close()
		return nil, 0, fmt.Errorf("topic %q: its leader is not among the brokers Metadata listed", topic)
	}
	if addr == c.Addr() {
		return c, int32(len(t.Partitions)), nil
	}
	c.Close()
	lc, err := wire.Dial(dctx, addr, "kcheck-bench-ceiling")
	return lc, int32(len(t.Partitions)), err
}

// findCoordinator asks for the transactional id's coordinator: c itself
// when it is c's broker, else a new connection.
func findCoordinator(ctx context.Context, c *wire.Conn, id string, rt time.Duration) (*wire.Conn, error) {
	rctx, cancel := context.WithTimeout(ctx, rt)
	defer cancel()
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorType, req.CoordinatorKeys = id, 1, []string{id}
		kr, err := c.Request(rctx, req)
		if err != nil {
			return nil, fmt.Errorf("FindCoordinator: %w", err)
		}
		resp := kr.(*kmsg.FindCoordinatorResponse)
		code, host, port := resp.ErrorCode, resp.Host, resp.Port
		if len(resp.Coordinators) > 0 {
			co := resp.Coordinators[0]
			code, host, port = co.ErrorCode, co.Host, co.Port
		}
		// The coordinator loading its log is set-up, not the broker
		// refusing work: wait for it (the clock has not started).
		if err := kerr.ErrorForCode(code); errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.CoordinatorLoadInProgress) {
			select {
			case <-rctx.Done():
				return nil, fmt.Errorf("FindCoordinator for %q: still %w", id, err)
			case <-time.After(backoff):
			}
			continue
		} else if err != nil {
			return nil, fmt.Errorf("FindCoordinator for %q: %w", id, err)
		}
		if addr := fmt.Sprintf("%s:%d", host, port); addr != c.Addr() {
			return wire.Dial(rctx, addr, "kcheck-bench-ceiling")
		}
		return c, nil
	}
}

// initProducerID gets a producer id and epoch (for txnID, or idempotent
// with nil), waiting out a coordinator that is still loading.
func initProducerID(ctx context.Context, c *wire.Conn, txnID *string, rt time.Duration) (int64, int16, error) {
	rctx, cancel := context.WithTimeout(ctx, rt)
	defer cancel()
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = txnID, 60000
		req.ProducerID, req.ProducerEpoch = -1, -1
		kr, err := c.Request(rctx, req)
		if err != nil {
			return 0, 0, fmt.Errorf("InitProducerId: %w", err)
		}
		resp := kr.(*kmsg.InitProducerIDResponse)
		err = kerr.ErrorForCode(resp.ErrorCode)
		if errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.CoordinatorLoadInProgress) || errors.Is(err, kerr.ConcurrentTransactions) {
			select {
			case <-rctx.Done():
				return 0, 0, fmt.Errorf("InitProducerId: still %w", err)
			case <-time.After(backoff):
			}
			continue
		}
		if err != nil {
			return 0, 0, fmt.Errorf("InitProducerId: %w", err)
		}
		return resp.ProducerID, resp.ProducerEpoch, nil
	}
}

// endTxn commits the transaction of epoch and returns the epoch the
// coordinator answers (TV2: the next transaction's).
func endTxn(ctx context.Context, c *wire.Conn, id string, pid int64, epoch int16, rt time.Duration) (int16, error) {
	rctx, cancel := context.WithTimeout(ctx, rt)
	defer cancel()
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, true
	kr, err := c.Request(rctx, req)
	if err != nil {
		return 0, fmt.Errorf("EndTxn: %w", err)
	}
	resp := kr.(*kmsg.EndTxnResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, fmt.Errorf("EndTxn (epoch %d): %w", epoch, err)
	}
	return resp.ProducerEpoch, nil
}
