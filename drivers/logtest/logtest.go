// Package logtest checks a Go driver's run in its tests: it reads the topic
// back with kgo, whichever client the driver uses, and compares where each
// record is with what the driver's report (drivers/OUTCOMES.md) told; and
// it traces a run through kcheck's proxy to check the workload's shape
// (drivers/WORKLOADS.md) from the produce attempts on the wire.
package logtest

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/outcomes"
	"github.com/kcheck/kcheck/tracer/proxy"
)

// Place is where a record is: partition and offset.
type Place struct {
	P   int32
	Off int64
}

// ReadLog reads topic back from seeds until it holds records records and
// returns where each is, by its kcheck-id header. It fails the test on a
// record without the header, one whose value's number is not its header's,
// one twice, or one without a producer id (not idempotent).
func ReadLog(t testing.TB, seeds []string, topic string, records int) map[int]Place {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	at := map[int]Place{}
	for len(at) < records && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if len(r.Headers) != 1 || r.Headers[0].Key != loadgen.SeedIDHeader {
				t.Errorf("%s[%d]@%d: headers %v", r.Topic, r.Partition, r.Offset, r.Headers)
				return
			}
			id, err := strconv.Atoi(string(r.Headers[0].Value))
			if err != nil || loadgen.RecordNumber(r.Value) != int64(id) {
				t.Errorf("%s[%d]@%d: header %q, value %.20q", r.Topic, r.Partition, r.Offset, r.Headers[0].Value, r.Value)
				return
			}
			if r.ProducerID < 0 {
				t.Errorf("record %d: producer id %d, not idempotent", id, r.ProducerID)
			}
			if _, dup := at[id]; dup {
				t.Errorf("record %d twice in the log", id)
			}
			at[id] = Place{r.Partition, r.Offset}
		})
	}
	if len(at) != records {
		t.Fatalf("read %d records back, want %d", len(at), records)
	}
	return at
}

// Replicas returns how many replicas each partition of topic has, by
// partition, as the metadata at seeds shows them: what the driver's
// --replication-factor gave the topic it created.
func Replicas(t testing.TB, seeds []string, topic string) map[int32]int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, mt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("metadata of %s: %v", topic, err)
	}
	n := map[int32]int{}
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			n[p.Partition] = len(p.Replicas)
		}
	}
	return n
}

// Delivered reads a driver's report from r (called name) as kcheck proxy
// does (outcomes.Read) and returns where it says each record was
// delivered; it fails the test unless every one of records records, 0 to
// records-1, was reported delivered at an offset.
func Delivered(t testing.TB, r io.Reader, name string, records int) map[int]Place {
	t.Helper()
	lines, err := outcomes.Read(r, name)
	if err != nil {
		t.Fatal(err)
	}
	told := map[int]Place{}
	for _, l := range lines {
		e := l.Told
		if e.Result != tracer.Delivered || e.Offset < 0 || e.RecordID >= int64(records) {
			t.Errorf("%s:%d: want record 0-%d delivered at an offset, got %+v", name, l.Line, records-1, e)
			continue
		}
		told[int(e.RecordID)] = Place{e.Partition, e.Offset}
	}
	if len(told) != records {
		t.Errorf("%s: %d records reported delivered, want %d", name, len(told), records)
	}
	return told
}

// Same fails the test where told and logged disagree on a record.
func Same(t testing.TB, told, logged map[int]Place) {
	t.Helper()
	for id, at := range logged {
		if told[id] != at {
			t.Errorf("record %d: the report says %+v, the log has it at %+v", id, told[id], at)
		}
	}
}

// Attempt is one produce attempt of a batch in a proxy's trace: a SendNew
// (New) or a Resend.
type Attempt struct {
	T       time.Duration // since the trace began
	New     bool
	P       int32
	N       int     // the batch's records
	Records []int64 // SendNew: their kcheck ids
}

// TraceProxy starts kcheck's proxy (tracer/proxy) in front of upstream, a
// kfake broker emulating Kafka 4.1, tracing topic. It returns the address a
// driver bootstraps from, and finish, which ends the proxy (reading the
// topic back) and returns the produce attempts of its trace.
func TraceProxy(t testing.TB, upstream, topic string) (addr string, finish func() []Attempt) {
	t.Helper()
	var trace bytes.Buffer
	prox, err := proxy.Start(context.Background(), proxy.Config{Listen: "127.0.0.1:0", Upstream: upstream, Topic: topic,
		Broker: tracer.Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"}, Trace: &trace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prox.Close)
	return prox.Addr(), func() []Attempt {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := prox.Finish(ctx); err != nil {
			t.Fatal(err)
		}
		rd, err := tracer.NewReader(&trace, "proxy trace")
		if err != nil {
			t.Fatal(err)
		}
		var att []Attempt
		for {
			e, err := rd.Next()
			if err == io.EOF {
				return att
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Kind == tracer.SendNew || e.Kind == tracer.Resend {
				att = append(att, Attempt{T: time.Duration(e.T), New: e.Kind == tracer.SendNew, P: e.Partition,
					N: int(e.N), Records: slices.Clone(e.Records)})
			}
		}
	}
}

// BatchSizes returns how many batches (SendNew) held how many records.
func BatchSizes(att []Attempt) map[int]int {
	sizes := map[int]int{}
	for _, a := range att {
		if a.New {
			sizes[a.N]++
		}
	}
	return sizes
}

// IdleGap returns the time between the first batch (SendNew) that follows
// the batches of the first after records and the produce attempt before it:
// the idle phase, with the time the last of those records took to be
// answered. ok is false unless there are attempts on both sides.
func IdleGap(att []Attempt, after int) (gap time.Duration, ok bool) {
	n := 0
	for i, a := range att {
		if !a.New {
			continue
		}
		if n >= after && i > 0 {
			return a.T - att[i-1].T, true
		}
		if n += a.N; n > after {
			return 0, false // a batch of records from both sides
		}
	}
	return 0, false
}

// CheckShape fails the test unless the batches (SendNew) of att have the
// shape of --batch-records shape: every one a single record for "one", some
// of more than one for "many"; and, with an idle phase (idleAfter > 0 and
// before the last record), unless no produce attempt came for at least idle
// between the batches of the first idleAfter records and the next batch
// (IdleGap). It returns the batch sizes, for the log.
func CheckShape(t testing.TB, att []Attempt, shape string, idleAfter int, idle time.Duration) map[int]int {
	t.Helper()
	sizes := BatchSizes(att)
	if len(sizes) == 0 {
		t.Fatalf("no batch in the trace")
	}
	switch shape {
	case loadgen.BatchOne:
		if len(sizes) != 1 || sizes[1] == 0 {
			t.Errorf("--batch-records one: batches of (records: batches) %v, want every one of 1 record", sizes)
		}
	case loadgen.BatchMany:
		if len(sizes) == 1 && sizes[1] > 0 {
			t.Errorf("--batch-records many: batches of (records: batches) %v, want some of more than 1 record", sizes)
		}
	}
	if idleAfter >= 0 {
		if gap, ok := IdleGap(att, idleAfter); !ok || gap < idle {
			t.Errorf("idle phase: no produce attempt for %v (found: %v) before the first batch after the first %d records; want at least %v",
				gap, ok, idleAfter, idle)
		}
	}
	return sizes
}

// ShapeCase is one workload shape a Go driver's shape test runs: a
// --batch-records value, the partitions, and --idle-after (-1: no idle phase).
type ShapeCase struct {
	Shape      string
	Partitions int
	IdleAfter  int
}

// ShapeIdle is the idle phase of the shape cases that have one.
const ShapeIdle = time.Second

// ShapeCases are the shapes every Go driver's test runs: one and many
// records a batch on 1 and 16 partitions, with and without an idle phase,
// and the default.
func ShapeCases() []ShapeCase {
	return []ShapeCase{
		{loadgen.BatchOne, 16, -1},
		{loadgen.BatchOne, 1, 100},
		{loadgen.BatchMany, 1, -1},
		{loadgen.BatchMany, 16, 100},
		{loadgen.BatchDefault, 16, -1},
	}
}

// Name names the case for t.Run.
func (c ShapeCase) Name() string {
	return c.Shape + "-" + strconv.Itoa(c.Partitions) + "p-idle" + strconv.Itoa(c.IdleAfter)
}

// Args returns the driver flags that run the case, 200 records of 100
// bytes, against addr.
func (c ShapeCase) Args(addr, topic string) []string {
	a := []string{"--bootstrap", addr, "--topic", topic, "--partitions", strconv.Itoa(c.Partitions),
		"--records", "200", "--value-bytes", "100", "--batch-records", c.Shape, // gzip, the seed's
		"--delivery-timeout-ms", "30000", "--request-timeout-ms", "5000"}
	if c.IdleAfter >= 0 {
		a = append(a, "--idle-after", strconv.Itoa(c.IdleAfter), "--idle-ms", strconv.FormatInt(ShapeIdle.Milliseconds(), 10))
	}
	return a
}

// CheckIdleResult fails the test unless the JSON line's idle phase (idle,
// nil without one) is the case's: there exactly when it has one, at least
// ShapeIdle long, after IdleAfter records, with nothing left unanswered.
func (c ShapeCase) CheckIdleResult(t testing.TB, idle *loadgen.IdleResult, line string) {
	t.Helper()
	if (c.IdleAfter >= 0) != (idle != nil) ||
		idle != nil && (idle.IdleEndMs-idle.IdleStartMs < ShapeIdle.Milliseconds() || idle.IdleUnanswered != 0 || idle.IdleAfter != c.IdleAfter) {
		t.Errorf("idle phase in the result: %s", line)
	}
}
