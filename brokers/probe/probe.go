// Package probe asks a broker, on the wire, what it does with the
// producer-state cases the seed and Kafka's rules turn on: the first
// batch after one lost before the append (the seed's race), a retry of a
// batch within and beyond the five the broker remembers, a gap, an unknown
// producer, a fenced epoch and a new epoch that does not start at 0. Each
// case runs on a topic of its own, one request at a time, and is written as
// a trace the proxy would write (writer kcheck-proxy), read back at the
// end, so that kcheck verify holds the broker's answers to the spec's
// broker: what it cannot explain is the broker's nonconformance.
package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/topics"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/readback"
	"github.com/kcheck/kcheck/wire"
)

// step is one request of a case: a batch of one record at (epoch, seq),
// where epoch counts from the producer's first (0) and seq is the batch's;
// or, with bump, InitProducerId with the producer's id and epoch (KIP-360),
// which gives the next epoch.
type step struct {
	epoch  int16
	seq    int32
	resend bool // the same batch as an earlier step's (same sequence), sent again
	bump   bool
}

// Case is one thing asked of the broker.
type Case struct {
	Name  string // a short name, for a trace's file name
	What  string // what it asks, in words
	Shown int    // how many of its last answers decide it (a table shows them)
	steps []step
	// stranger: the batches carry a producer id the broker never gave
	// (the one it gave, plus 1,000,000).
	stranger bool
}

// Cases are the cases the probe runs, in order.
var Cases = []Case{
	{Name: "race", Shown: 2, What: "a new producer's first batch is sequence 1 (sequence 0 failed before the append), then sequence 0 is retried",
		steps: []step{{seq: 1}, {seq: 0}}},
	{Name: "dup-within", Shown: 1, What: "sequences 0 to 4, then sequence 2 again (within the last five batches)",
		steps: []step{{seq: 0}, {seq: 1}, {seq: 2}, {seq: 3}, {seq: 4}, {seq: 2, resend: true}}},
	{Name: "dup-beyond", Shown: 1, What: "sequences 0 to 6, then sequence 0 again (beyond the last five batches)",
		steps: []step{{seq: 0}, {seq: 1}, {seq: 2}, {seq: 3}, {seq: 4}, {seq: 5}, {seq: 6}, {seq: 0, resend: true}}},
	{Name: "gap", Shown: 1, What: "sequence 0, then sequence 2",
		steps: []step{{seq: 0}, {seq: 2}}},
	{Name: "unknown-producer", Shown: 1, What: "sequence 0 of a producer id the broker never gave",
		steps: []step{{seq: 0}}, stranger: true},
	{Name: "fenced-epoch", Shown: 2, What: "sequence 0, a bump to the next epoch and its sequence 0, then sequence 1 of the old epoch",
		steps: []step{{seq: 0}, {bump: true}, {epoch: 1, seq: 0}, {epoch: 0, seq: 1}}},
	{Name: "new-epoch-nonzero", Shown: 1, What: "sequence 0, a bump to the next epoch, then that epoch's sequence 3",
		steps: []step{{seq: 0}, {bump: true}, {epoch: 1, seq: 3}}},
}

// Unverifiable says why kcheck verify cannot judge the case's trace, or ""
// when it can: the spec has one producer, the one InitProducerId gave.
func (c Case) Unverifiable() string {
	if c.stranger {
		return "the spec has no producer but the one InitProducerId gave: its answer is compared with Apache Kafka's, measured the same way"
	}
	return ""
}

// Answer is what the broker answered one request of a case.
type Answer struct {
	Epoch  int16
	Seq    int32 // -1 for the bump
	Err    string
	Offset int64
}

func (a Answer) String() string {
	if a.Seq < 0 {
		return fmt.Sprintf("bump: %s", a.Err)
	}
	if a.Err == "NONE" {
		return fmt.Sprintf("e%d s%d: NONE at %d", a.Epoch, a.Seq, a.Offset)
	}
	return fmt.Sprintf("e%d s%d: %s", a.Epoch, a.Seq, a.Err)
}

// Result is one case run on one broker.
type Result struct {
	Case    Case
	Answers []Answer
	Trace   string // the case's trace
	Err     error  // the case could not run
}

// Config is a probe to run.
type Config struct {
	Bootstrap string
	Broker    tracer.Broker // for the traces' header
	Dir       string        // where the traces go
	Prefix    string        // the topics' prefix; each case's topic is Prefix-NAME
	Timeout   time.Duration // one request's bound; 0: 10 s
}

// Run runs every case against the broker at cfg.Bootstrap, each on a new
// topic (deleted at the end), and writes each case's trace in cfg.Dir.
func Run(ctx context.Context, cfg Config) []Result {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	out := make([]Result, 0, len(Cases))
	for _, c := range Cases {
		r := Result{Case: c, Trace: filepath.Join(cfg.Dir, c.Name+".jsonl")}
		r.Answers, r.Err = runCase(ctx, cfg, c, r.Trace)
		out = append(out, r)
	}
	return out
}

func runCase(ctx context.Context, cfg Config, c Case, path string) ([]Answer, error) {
	conn, err := wire.Dial(ctx, cfg.Bootstrap, "kcheck-probe")
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", c.Name, err)
	}
	defer conn.Close()
	topic := cfg.Prefix + "-" + c.Name
	if err := topics.Create(ctx, conn, 1, 1, topic); err != nil {
		return nil, fmt.Errorf("probe %s: %w", c.Name, err)
	}
	defer topics.Delete(context.WithoutCancel(ctx), conn, topic)
	if err := awaitLeader(ctx, conn, topic); err != nil {
		return nil, fmt.Errorf("probe %s: %w", c.Name, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", c.Name, err)
	}
	defer f.Close()
	w, err := tracer.NewWriter(f, tracer.Header{Writer: tracer.ProxyWriter, Client: "kcheck-probe", Topic: topic, Partitions: 1,
		MaxInFlight: 1, Broker: cfg.Broker, Config: map[string]string{"probe": c.Name, "asks": c.What}})
	if err != nil {
		return nil, err
	}
	node := int32(-1) // the node InitProducerId was answered by is not known on one connection
	pid, ep, err := initProducerID(ctx, conn, -1, -1, cfg.Timeout)
	if err != nil {
		return nil, fmt.Errorf("probe %s: InitProducerId: %w", c.Name, err)
	}
	w.Emit(&tracer.Event{Kind: tracer.InitProducerID, PID: pid, Epoch: ep, Node: node})
	first := ep
	if c.stranger {
		pid += 1_000_000
	}
	var answers []Answer
	var corr int32
	batchOf := map[[2]int32]int64{} // (epoch, seq) -> batch id
	acked := map[int32]int64{}
	nextID := int64(1)
	for _, s := range c.steps {
		if s.bump {
			np, ne, err := initProducerID(ctx, conn, pid, ep, cfg.Timeout)
			a := Answer{Epoch: ep, Seq: -1, Err: "NONE"}
			if err != nil {
				a.Err = errName(err)
			} else {
				pid, ep = np, ne
				w.Emit(&tracer.Event{Kind: tracer.InitProducerID, PID: pid, Epoch: ep, Node: node})
			}
			answers = append(answers, a)
			continue
		}
		e := first + s.epoch
		key := [2]int32{int32(e), s.seq}
		b, seen := batchOf[key]
		if !seen {
			b = nextID
			batchOf[key] = b
		}
		id := b // one record a batch: its id is the batch's
		if !seen {
			nextID++
		}
		corr++
		ev := tracer.Event{Partition: 0, Batch: b, PID: pid, Epoch: e, Seq: s.seq, N: 1, Req: corr, Node: node}
		if s.resend && seen {
			ev.Kind = tracer.Resend
		} else {
			ev.Kind, ev.Records = tracer.SendNew, []int64{id}
		}
		w.Emit(&ev)
		errName, off, err := produce(ctx, conn, topic, pid, e, s.seq, id, cfg.Timeout)
		if err != nil {
			return answers, fmt.Errorf("probe %s: produce: %w", c.Name, err)
		}
		w.Emit(&tracer.Event{Kind: tracer.Receive, Partition: 0, Batch: b, PID: pid, Epoch: e, Seq: s.seq, Req: corr, Node: node,
			Err: errName, Offset: off, LogStart: -1})
		if errName == "NONE" {
			acked[0] = max(acked[0], off)
		}
		answers = append(answers, Answer{Epoch: s.epoch, Seq: s.seq, Err: errName, Offset: off})
	}
	parts, err := readback.Topic(ctx, readback.Config{Bootstrap: []string{cfg.Bootstrap}, Topic: topic, Acked: acked, Settle: 30 * time.Second, CatchUp: 30 * time.Second})
	if err != nil {
		return answers, fmt.Errorf("probe %s: read-back: %w", c.Name, err)
	}
	for i := range parts {
		for _, e := range parts[i].Events() {
			w.Emit(&e)
		}
	}
	return answers, w.Flush()
}

// awaitLeader waits, at most 30 s, until the broker answers as the leader
// of topic's partition 0 (ListOffsets, which only a leader answers): a
// topic's metadata can show its leader a moment before the leader takes
// produce requests, and a case's first answer must not be that moment's
// NOT_LEADER_OR_FOLLOWER.
func awaitLeader(ctx context.Context, conn *wire.Conn, topic string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp = 0, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	for backoff := 20 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		resp, err := conn.Request(ctx, req)
		if err == nil {
			for _, t := range resp.(*kmsg.ListOffsetsResponse).Topics {
				for _, p := range t.Partitions {
					if err = kerr.ErrorForCode(p.ErrorCode); err == nil {
						return nil
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s[0] has no leader that answers (last: %v)", topic, err)
		case <-time.After(backoff):
		}
	}
}

// initProducerID asks for a producer id (pid -1) or, with the producer's
// id and epoch, the next epoch (KIP-360).
func initProducerID(ctx context.Context, conn *wire.Conn, pid int64, ep int16, timeout time.Duration) (int64, int16, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.ProducerID, req.ProducerEpoch, req.TransactionTimeoutMillis = pid, ep, 60000
	resp, err := conn.Request(ctx, req)
	if err != nil {
		return 0, 0, err
	}
	r := resp.(*kmsg.InitProducerIDResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return 0, 0, err
	}
	return r.ProducerID, r.ProducerEpoch, nil
}

// produce sends one batch of one record, acks=all, and returns the
// partition's error name and base offset.
func produce(ctx context.Context, conn *wire.Conn, topic string, pid int64, ep int16, seq int32, id int64, timeout time.Duration) (string, int64, error) {
	b := recordbatch.NewBuilder(recordbatch.Params{ProducerID: pid, ProducerEpoch: ep, BaseSequence: seq, BaseTimestamp: time.Now().UnixMilli()})
	b.Start(nil)
	b.Append(recordbatch.Record{Value: []byte("probe " + strconv.FormatInt(id, 10)),
		Headers: []kmsg.Header{{Key: recordbatch.IDHeader, Value: []byte(strconv.FormatInt(id, 10))}}})
	batch, err := b.Finish()
	if err != nil {
		return "", 0, err
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, int32(timeout.Milliseconds())
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = 0, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := conn.Request(ctx, req)
	if err != nil {
		return "", 0, err
	}
	for _, t := range resp.(*kmsg.ProduceResponse).Topics {
		for _, p := range t.Partitions {
			return errName(kerr.ErrorForCode(p.ErrorCode)), p.BaseOffset, nil
		}
	}
	return "", 0, errors.New("no partition in the answer")
}

// errName is a Kafka error's name, NONE for nil.
func errName(err error) string {
	if err == nil {
		return "NONE"
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}
