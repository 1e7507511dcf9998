package poll

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
)

// sink keeps the events a poller writes.
type sink struct {
	mu  sync.Mutex
	evs []tracer.Event
}

func (s *sink) Emit(e *tracer.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evs = append(s.evs, *e)
}

// produceTxns writes, with kgo's transactional producer, one transaction of
// ids 1-4 committed, one of 5-8 aborted, one of 9-12 committed, over two
// partitions (the records' ids alternate between them).
func produceTxns(t *testing.T, addrs []string, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.TransactionalID("poll-test"), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	id := int64(1)
	for _, commit := range []bool{true, false, true} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			r := &kgo.Record{Partition: int32(id % 2), Value: []byte("v"),
				Headers: []kgo.RecordHeader{{Key: recordbatch.IDHeader, Value: []byte(strconv.FormatInt(id, 10))}}}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
			id++
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
}

// A poller started before the records are written returns, by the end of
// its final polls, the committed records of both partitions and none of
// the aborted ones, in increasing offsets, each poll asked from where the
// one before left off; and ends each partition at its end offset.
func TestPollsCommittedOnly(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := &sink{}
	p, err := Start(Config{Brokers: c.ListenAddrs(), Topic: "t", Partitions: 2, Sink: s, Bound: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	produceTxns(t, c.ListenAddrs(), "t")
	st := p.Finish(context.Background())
	t.Logf("%+v", st)
	var got []int64
	ends := map[int32]tracer.Event{}
	pos := map[int32]int64{}
	for _, e := range s.evs {
		switch e.Kind {
		case tracer.Poll:
			if _, ended := ends[e.Partition]; ended {
				t.Fatalf("a poll of partition %d after its PollEnd", e.Partition)
			}
			if e.Offset < pos[e.Partition] {
				t.Errorf("partition %d: asked from %d, after returning up to %d", e.Partition, e.Offset, pos[e.Partition]-1)
			}
			for _, r := range e.Log {
				if r.Offset < e.Offset {
					t.Errorf("partition %d: offset %d below the poll's start %d", e.Partition, r.Offset, e.Offset)
				}
				pos[e.Partition] = r.Offset + 1
				got = append(got, r.ID)
			}
		case tracer.PollEnd:
			ends[e.Partition] = e
		}
	}
	slices.Sort(got)
	if want := []int64{1, 2, 3, 4, 9, 10, 11, 12}; !slices.Equal(got, want) {
		t.Errorf("polls returned %v, want %v", got, want)
	}
	// Each partition: 2+2+2 records and 3 markers.
	for part := range int32(2) {
		if e := ends[part]; e.Err != "NONE" || e.Offset != 9 {
			t.Errorf("partition %d's PollEnd: %+v, want NONE at offset 9", part, e)
		}
	}
	if st.GaveUp != 0 || st.Records != 8 {
		t.Errorf("stats %+v", st)
	}
}

// A partition whose every fetch fails is polled again, Retries times in
// all, and then given up: a PollEnd naming the error, and no Poll of it.
func TestGivesUp(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A record on each partition, so that the poller has an end to reach.
	pr, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	for part := range int32(2) {
		if err := pr.ProduceSync(context.Background(), &kgo.Record{Partition: part, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	pr.Close()
	var mu sync.Mutex
	fetches := 0
	c.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.FetchRequest)
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = 43 // UNSUPPORTED_FOR_MESSAGE_FORMAT: not retriable
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		mu.Lock()
		fetches++
		mu.Unlock()
		return resp, nil, true
	})
	s := &sink{}
	p, err := Start(Config{Brokers: c.ListenAddrs(), Topic: "t", Partitions: 2, Sink: s, Retries: 3, Bound: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Finish(context.Background())
	mu.Lock()
	t.Logf("%+v, %d fetches", st, fetches)
	mu.Unlock()
	if st.GaveUp != 2 || st.Polls != 0 {
		t.Fatalf("stats %+v, want both partitions given up and no poll", st)
	}
	for _, e := range s.evs {
		if e.Kind != tracer.PollEnd || e.Err != "UNSUPPORTED_FOR_MESSAGE_FORMAT" || e.Reason == "" {
			t.Errorf("event %+v, want a PollEnd naming the error", e)
		}
	}
}
