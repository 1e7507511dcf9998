// Package logtest checks a Go driver's run in its tests: it reads the topic
// back with kgo, whichever client the driver uses, and compares where each
// record is with what the driver's report (drivers/OUTCOMES.md) told.
package logtest

import (
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/outcomes"
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
