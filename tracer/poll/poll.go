// Package poll is a read_committed consumer for a transactional run: it
// polls every partition of the run's topic while the run goes on and, once
// it has ended (Finish), until it reaches each partition's end offset,
// writing each poll as a Poll event and each partition's end as a PollEnd
// (tracer/FORMAT.md, format version 7), for checker/txn's poll checks. The
// consumer is franz-go's (kgo) in read_committed isolation, with the
// transaction markers kept so that it knows it has passed them.
package poll

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
)

// Config is one poller.
type Config struct {
	Brokers    []string
	Topic      string
	Partitions int32
	Poller     int32       // the poller's number in the trace; 1 when 0
	Sink       tracer.Sink // where its Poll and PollEnd events go
	// Retries is how many polls of a partition in a row may fail before
	// the poller gives up on it (DefaultRetries when 0).
	Retries int
	// Bound bounds the final polls, after the run (DefaultBound when 0):
	// a partition not at its end offset by then is given up.
	Bound time.Duration
}

// Defaults for Config's bounds.
const (
	DefaultRetries = 5
	DefaultBound   = 60 * time.Second
)

// Stats is what a poller did.
type Stats struct {
	Polls   int           // Poll events written
	Records int           // records they returned
	GaveUp  int           // partitions given up (a PollEnd with an error)
	Final   time.Duration // how long the final polls took
}

// Poller is a running poller.
type Poller struct {
	cfg    Config
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	// Touched by the polling goroutine, then by Finish once it has ended.
	pos    map[int32]int64 // the offset after the last record (or marker) returned
	fails  map[int32]int   // polls in a row that failed
	gaveUp map[int32]bool
	st     Stats
}

// Start starts polling cfg.Topic's partitions from their start.
func Start(cfg Config) (*Poller, error) {
	if cfg.Poller == 0 {
		cfg.Poller = 1
	}
	if cfg.Retries <= 0 {
		cfg.Retries = DefaultRetries
	}
	if cfg.Bound <= 0 {
		cfg.Bound = DefaultBound
	}
	start := map[int32]kgo.Offset{}
	for p := range cfg.Partitions {
		start[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(fmt.Sprintf("kcheck-poller-%d", cfg.Poller)),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: start}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(), // the markers: passed, so the poller knows it reached the end
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.DisableClientMetrics(),
	)
	if err != nil {
		return nil, fmt.Errorf("poll: starting the read_committed consumer: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Poller{cfg: cfg, cl: cl, cancel: cancel, done: make(chan struct{}),
		pos: map[int32]int64{}, fails: map[int32]int{}, gaveUp: map[int32]bool{}}
	go func() {
		defer close(p.done)
		for ctx.Err() == nil {
			p.poll(ctx)
		}
	}()
	return p, nil
}

// poll polls once and writes what it returned.
func (p *Poller) poll(ctx context.Context) {
	fs := p.cl.PollFetches(ctx)
	fs.EachPartition(func(fp kgo.FetchTopicPartition) {
		if fp.Topic != p.cfg.Topic || p.gaveUp[fp.Partition] {
			return
		}
		if len(fp.Records) > 0 {
			p.emit(fp.Partition, fp.Records)
		}
		if fp.Err != nil && !errors.Is(fp.Err, context.Canceled) && !errors.Is(fp.Err, context.DeadlineExceeded) {
			p.fail(fp.Partition, fp.Err)
		}
	})
}

// emit writes one poll of partition part: its data records, asked from the
// offset after what the poller returned before.
func (p *Poller) emit(part int32, recs []*kgo.Record) {
	e := tracer.Event{Kind: tracer.Poll, Poller: p.cfg.Poller, Partition: part, Offset: p.pos[part]}
	for _, r := range recs {
		if !r.Attrs.IsControl() {
			e.Log = append(e.Log, tracer.LogRecord{Offset: r.Offset, PID: r.ProducerID, Epoch: r.ProducerEpoch,
				Seq: -1, ID: recordID(r)})
		}
	}
	p.pos[part] = recs[len(recs)-1].Offset + 1
	p.fails[part] = 0
	p.st.Polls++
	p.st.Records += len(e.Log)
	p.cfg.Sink.Emit(&e)
}

// recordID is r's kcheck-id header, -1 without one.
func recordID(r *kgo.Record) int64 {
	for _, h := range r.Headers {
		if h.Key == recordbatch.IDHeader {
			return recordbatch.RecordID([]kmsg.Header{{Key: h.Key, Value: h.Value}})
		}
	}
	return -1
}

// fail counts a failed poll of part: the consumer polls it again (from
// where it was, when kgo has stopped fetching it) until Retries polls in a
// row have failed, and then the poller gives up on it.
func (p *Poller) fail(part int32, err error) {
	p.fails[part]++
	if p.fails[part] >= p.cfg.Retries {
		p.giveUp(part, fmt.Sprintf("%d failed polls in a row: %v", p.fails[part], err), err)
		return
	}
	if !kerr.IsRetriable(err) {
		// kgo stops fetching a partition after a fatal error: from where
		// it was, once more.
		p.cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{p.cfg.Topic: {part: {Epoch: -1, Offset: p.pos[part]}}})
	}
}

// giveUp writes part's PollEnd with the error (a Kafka error's name, ""
// for another) and why, and stops polling it.
func (p *Poller) giveUp(part int32, why string, err error) {
	name := ""
	if ke := (*kerr.Error)(nil); errors.As(err, &ke) {
		name = tracer.ErrorName(ke.Code)
	}
	p.gaveUp[part] = true
	p.st.GaveUp++
	p.cl.PauseFetchPartitions(map[string][]int32{p.cfg.Topic: {part}})
	p.cfg.Sink.Emit(&tracer.Event{Kind: tracer.PollEnd, Poller: p.cfg.Poller, Partition: part, Offset: p.pos[part],
		Err: name, Reason: "gave up: " + why})
}

// Finish stops polling as the run goes on and polls until every partition
// is at its end offset (the high watermark, which the markers of a run
// whose transactions all ended reach), within Config.Bound, then writes
// each partition's PollEnd: reached, or given up. It closes the consumer.
func (p *Poller) Finish(ctx context.Context) Stats {
	p.cancel()
	<-p.done
	defer CloseWithin(p.cl, 5*time.Second)
	start := time.Now()
	fctx, cancel := context.WithTimeout(ctx, p.cfg.Bound)
	defer cancel()
	var end map[int32]int64
	var err error
	for backoff := 20 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		if end, err = EndOffsets(fctx, p.cl, p.cfg.Topic, int(p.cfg.Partitions)); err == nil || fctx.Err() != nil {
			break
		}
		select { // the cluster's recovery, which nothing signals
		case <-time.After(backoff):
		case <-fctx.Done():
		}
	}
	parts := make([]int32, 0, p.cfg.Partitions)
	for part := range p.cfg.Partitions {
		parts = append(parts, part)
	}
	if err != nil {
		for _, part := range parts {
			if !p.gaveUp[part] {
				p.giveUp(part, fmt.Sprintf("the end offsets: %v", err), err)
			}
		}
		p.st.Final = time.Since(start)
		return p.st
	}
	left := func() bool {
		return slices.ContainsFunc(parts, func(part int32) bool { return !p.gaveUp[part] && p.pos[part] < end[part] })
	}
	for left() && fctx.Err() == nil {
		p.poll(fctx)
	}
	for _, part := range parts {
		switch {
		case p.gaveUp[part]:
		case p.pos[part] >= end[part]:
			p.cfg.Sink.Emit(&tracer.Event{Kind: tracer.PollEnd, Poller: p.cfg.Poller, Partition: part, Offset: p.pos[part], Err: "NONE"})
		default:
			p.giveUp(part, fmt.Sprintf("at offset %d, not at the end offset %d within %v", p.pos[part], end[part], p.cfg.Bound), nil)
		}
	}
	p.st.Final = time.Since(start)
	return p.st
}

// Close stops the poller without its final polls (a run that failed).
func (p *Poller) Close() {
	p.cancel()
	<-p.done
	CloseWithin(p.cl, 5*time.Second)
}

// EndOffsets returns the end offset (the high watermark) of every partition,
// asked of their leaders within 30 s.
func EndOffsets(ctx context.Context, cl *kgo.Client, topic string, partitions int) (map[int32]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range int32(partitions) {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = p
		rp.Timestamp = -1 // latest
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	end := map[int32]int64{}
	for _, sh := range cl.RequestSharded(lctx, req) {
		if sh.Err != nil {
			return nil, sh.Err
		}
		for _, t := range sh.Resp.(*kmsg.ListOffsetsResponse).Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return nil, fmt.Errorf("partition %d: %w", p.Partition, err)
				}
				end[p.Partition] = p.Offset
			}
		}
	}
	if len(end) != partitions {
		return nil, fmt.Errorf("end offsets of %d partitions, want %d", len(end), partitions)
	}
	return end, nil
}

// CloseWithin closes cl, waiting at most d (Java's producer.close(5 s)).
func CloseWithin(cl *kgo.Client, d time.Duration) {
	closed := make(chan struct{})
	go func() {
		cl.Close()
		close(closed)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-closed:
	case <-t.C:
	}
}
