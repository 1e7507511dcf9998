package producer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/readback"
)

// eventLog is a tracer.Sink that keeps every event.
type eventLog struct {
	mu  sync.Mutex
	evs []tracer.Event
}

func (l *eventLog) Emit(e *tracer.Event) {
	l.mu.Lock()
	l.evs = append(l.evs, *e)
	l.mu.Unlock()
}

func (l *eventLog) of(k tracer.Kind) []tracer.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []tracer.Event
	for _, e := range l.evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// runTxns produces three transactions of n records over the topic's
// partitions: the first and third committed, the second aborted. It
// returns each record's transaction (0, 1, 2) by kcheck id.
func runTxns(t *testing.T, p *Producer, n int) map[int64]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	txOf := map[int64]int{}
	for tx := 0; tx < 3; tx++ {
		if err := p.BeginTransaction(); err != nil {
			t.Fatalf("transaction %d: begin: %v", tx+1, err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		for i := 0; i < n; i++ {
			wg.Add(1)
			m := &Message{Topic: "t", Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", tx*n+i))}
			p.Produce(ctx, m, func(m *Message, err error) {
				defer wg.Done()
				mu.Lock()
				txOf[m.ID] = tx
				mu.Unlock()
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		end := p.CommitTransaction
		if tx == 1 {
			// Written before the abort, so that the log holds aborted
			// records and their marker.
			if err := p.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			end = p.AbortTransaction
		}
		if err := end(ctx); err != nil {
			t.Fatalf("transaction %d: end: %v", tx+1, err)
		}
		wg.Wait()
		if tx != 1 && len(errs) > 0 {
			t.Fatalf("transaction %d: %d records failed, first %v", tx+1, len(errs), errs[0])
		}
	}
	return txOf
}

// committedValues reads the topic with read_committed and returns the
// values, sorted.
func committedValues(t *testing.T, addrs []string, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics("t"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var vals []string
	for len(vals) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) { vals = append(vals, string(r.Value)) })
	}
	sort.Strings(vals)
	return vals
}

func TestTransactions(t *testing.T) {
	for _, c := range []struct {
		name    string
		version int
		wantTV  int
		wait    bool // WaitForMarkers
	}{{"cluster's (TV2)", 0, 2, true}, {"TV2 without waiting for the markers", 0, 2, false}, {"TV1", 1, 1, true}} {
		t.Run(c.name, func(t *testing.T) {
			cl := newCluster(t, 4)
			log := &eventLog{}
			p := newProducer(t, cl, TransactionalID("kcheck-test"), TransactionVersion(c.version), Trace(log), Linger(time.Millisecond), WaitForMarkers(c.wait))
			if got := p.TxnVersion(); got != c.wantTV {
				t.Fatalf("transaction version %d, want %d (the cluster's transaction.version is %d)", got, c.wantTV, p.TxnFeature())
			}
			const n = 20
			txOf := runTxns(t, p, n)
			vals := committedValues(t, cl.ListenAddrs(), 2*n)
			var want []string
			for i := 0; i < n; i++ {
				want = append(want, fmt.Sprintf("v%d", i), fmt.Sprintf("v%d", 2*n+i))
			}
			sort.Strings(want)
			if fmt.Sprint(vals) != fmt.Sprint(want) {
				t.Fatalf("read_committed read %d records %v, want the first and third transactions' %d", len(vals), vals, len(want))
			}
			// The read-back keeps the markers apart from the records, and
			// they decide every record's fate: the second transaction's
			// aborted, the others' committed.
			parts, err := readback.Topic(context.Background(), readback.Config{Bootstrap: cl.ListenAddrs(), Topic: "t"})
			if err != nil {
				t.Fatal(err)
			}
			markers, records := 0, 0
			for _, rp := range parts {
				markers += len(rp.Ctl)
				for i, f := range tracer.Fates(rp.Log, rp.Ctl) {
					r := rp.Log[i]
					tx, ok := txOf[r.ID]
					if !ok {
						t.Fatalf("partition %d offset %d: record id %d not produced by the test", rp.ID, r.Offset, r.ID)
					}
					records++
					if want := map[bool]tracer.Fate{true: tracer.FateAborted, false: tracer.FateCommitted}[tx == 1]; f != want {
						t.Errorf("partition %d offset %d (transaction %d): %s, want %s", rp.ID, r.Offset, tx+1, f, want)
					}
				}
			}
			visible := 0
			for _, rp := range parts {
				if rp.Committed == nil || rp.Committed.Disagree != "" {
					t.Fatalf("partition %d: read_committed %+v, want it read and agreeing with the markers", rp.ID, rp.Committed)
				}
				visible += rp.Committed.Visible
			}
			if visible != 2*n {
				t.Errorf("read_committed sees %d records, want the 2 committed transactions' %d", visible, 2*n)
			}
			if records != 3*n || markers < 3 {
				t.Fatalf("read back %d records and %d markers, want %d records and a marker per partition of each transaction", records, markers, 3*n)
			}
			ends := log.of(tracer.EndTxnReceive)
			told := log.of(tracer.TxnTold)
			if len(ends) != 3 || len(told) != 3 {
				t.Fatalf("%d EndTxnReceive and %d TxnTold events, want 3 each", len(ends), len(told))
			}
			for i, e := range ends {
				switch {
				case e.Err != "NONE":
					t.Errorf("EndTxn %d answered %s", i+1, e.Err)
				case c.wantTV == 2 && e.NewEpoch != e.Epoch+1:
					t.Errorf("TV2: EndTxn %d at epoch %d answered epoch %d, want the next", i+1, e.Epoch, e.NewEpoch)
				case c.wantTV == 1 && e.NewEpoch != -1:
					t.Errorf("TV1: EndTxn %d answered epoch %d, want none", i+1, e.NewEpoch)
				}
			}
			if told[0].Result != tracer.Committed || told[1].Result != tracer.Aborted || told[2].Result != tracer.Committed {
				t.Errorf("told %s, %s, %s; want committed, aborted, committed", told[0].Result, told[1].Result, told[2].Result)
			}
			// Under TV2 the second and third transactions' first batches
			// wait for the coordinator to finish the one before: at least
			// one DescribeTransactions each; never under TV1 or when off.
			if d := p.Stats().TxnDescribes; c.wantTV == 2 && c.wait && d < 2 || !(c.wantTV == 2 && c.wait) && d != 0 {
				t.Errorf("%d DescribeTransactions asked (TV%d, WaitForMarkers %v)", d, c.wantTV, c.wait)
			}
			adds := log.of(tracer.AddPartitionsToTxn)
			if c.wantTV == 2 && len(adds) > 0 || c.wantTV == 1 && len(adds) == 0 {
				t.Errorf("%d AddPartitionsToTxn events under TV%d", len(adds), c.wantTV)
			}
			// Each transaction's first batch of a partition has sequence 0
			// under TV2 (a new epoch per transaction).
			if c.wantTV == 2 {
				first := map[[2]int32]int32{}
				for _, e := range log.of(tracer.SendNew) {
					k := [2]int32{e.Partition, int32(e.Epoch)}
					if _, ok := first[k]; !ok {
						first[k] = e.Seq
						if e.Seq != 0 {
							t.Errorf("partition %d's first batch of epoch %d has sequence %d", e.Partition, e.Epoch, e.Seq)
						}
					}
				}
			}
		})
	}
}

func TestTransactionBadInput(t *testing.T) {
	// A cluster whose transaction.version is below 2 (kfake emulating
	// 3.9): TV2 asked is refused, naming what was found.
	cl := newCluster(t, 1, kfake39())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := New(ctx, Brokers(cl.ListenAddrs()...), TransactionalID("x"), TransactionVersion(2))
	var ue *TxnUnsupportedError
	if !errors.As(err, &ue) {
		t.Fatalf("New: %v, want a TxnUnsupportedError", err)
	}
	t.Log(err)
	// A broker without transactions: kfake as 4.1 without EndTxn.
	noTxn := kversion.V4_1_0()
	noTxn.SetMaxKeyVersion(kmsg.EndTxn.Int16(), -1)
	old := newCluster(t, 1, kfake.MaxVersions(noTxn))
	_, err = New(ctx, Brokers(old.ListenAddrs()...), TransactionalID("x"))
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "no transaction support: its ApiVersions lists no EndTxn") {
		t.Fatalf("New on a broker without EndTxn: %v, want a TxnUnsupportedError", err)
	}
	t.Log(err)
	// Produce outside a transaction.
	p := newProducer(t, newCluster(t, 1), TransactionalID("y"))
	var got error
	p.Produce(ctx, &Message{Topic: "t", Value: []byte("v")}, func(_ *Message, err error) { got = err })
	if !errors.Is(got, ErrNoTransaction) {
		t.Fatalf("Produce outside a transaction: %v, want ErrNoTransaction", got)
	}
	if err := p.CommitTransaction(ctx); err == nil {
		t.Fatal("CommitTransaction with none open: no error")
	}
}

func kfake39() kfake.Opt { return kfake.MaxVersions(kversion.V3_9_0()) }

// TestTxnAddRetryDrains: under TV1, a partition added only on a retry of
// AddPartitionsToTxn (the coordinator answered CONCURRENT_TRANSACTIONS,
// as Kafka does while the previous transaction's markers are written) is
// drained at once, not at the next deadline the core had (here the
// delivery timeout, 30 s): the sender steps again after a transactional
// answer. It failed before: each such transaction waited out a deadline.
func TestTxnAddRetryDrains(t *testing.T) {
	cl := newCluster(t, 2)
	var once sync.Once
	cl.ControlKey(int16(kmsg.AddPartitionsToTxn), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		var resp kmsg.Response
		once.Do(func() {
			req := kreq.(*kmsg.AddPartitionsToTxnRequest)
			r := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
			for _, rt := range req.Topics {
				t := kmsg.NewAddPartitionsToTxnResponseTopic()
				t.Topic = rt.Topic
				for _, p := range rt.Partitions {
					pr := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
					pr.Partition, pr.ErrorCode = p, kerr.ConcurrentTransactions.Code
					t.Partitions = append(t.Partitions, pr)
				}
				r.Topics = append(r.Topics, t)
			}
			resp = r
		})
		return resp, nil, resp != nil
	})
	p := newProducer(t, cl, TransactionalID("retry"), TransactionVersion(1), Linger(time.Millisecond),
		DeliveryTimeout(30*time.Second), RequestTimeout(5*time.Second), RetryBackoff(10*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	p.Produce(ctx, &Message{Topic: "t", Value: []byte("v")}, nil)
	start := time.Now()
	if err := p.CommitTransaction(ctx); err != nil {
		t.Fatalf("commit: %v (after %v)", err, time.Since(start))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the commit took %v: the added partition waited for a deadline", d)
	}
}

// TestTxnCommitUnanswered: a coordinator that answers every EndTxn
// COORDINATOR_NOT_AVAILABLE: the commit is sent again after a backoff
// (even with RetryBackoff 0), CommitTransaction gives up when its context
// ends with an outcome not known, and Close still returns.
func TestTxnCommitUnanswered(t *testing.T) {
	cl := newCluster(t, 1)
	var mu sync.Mutex
	ends := 0
	cl.ControlKey(int16(kmsg.EndTxn), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		cl.KeepControl()
		mu.Lock()
		ends++
		mu.Unlock()
		r := kreq.(*kmsg.EndTxnRequest).ResponseKind().(*kmsg.EndTxnResponse)
		r.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return r, nil, true
	})
	p := newProducer(t, cl, TransactionalID("unanswered"), RetryBackoff(0))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	p.Produce(context.Background(), &Message{Topic: "t", Value: []byte("v")}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := p.CommitTransaction(ctx)
	var te *TxnError
	if !errors.As(err, &te) || !te.Unknown {
		t.Fatalf("commit: %v, want an unknown outcome", err)
	}
	mu.Lock()
	n := ends
	mu.Unlock()
	// 300 ms at a backoff of at least 10 ms: at most about 30 EndTxn.
	if n < 2 || n > 40 {
		t.Errorf("%d EndTxn in 300 ms", n)
	}
	if err := p.BeginTransaction(); err == nil {
		t.Error("BeginTransaction while the commit is still going: no error")
	}
	done := make(chan struct{})
	go func() { p.Close(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
}
