package tracer

import (
	"bytes"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestDeferredWriterAmend checks that a deferred header can be amended
// until the first flush writes it, and not after.
func TestDeferredWriterAmend(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewDeferredWriter(&buf, Header{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatalf("wrote %q before the first flush", buf.String())
	}
	w.Emit(&Event{Kind: InitProducerID})
	if err := w.Amend(func(h *Header) { h.IdleRearmMs = 7 }); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	if !strings.Contains(first, `"idle_rearm_ms":7`) || !strings.Contains(first, `"kcheck_trace"`) {
		t.Errorf("header line %q lacks the amendment or the version", first)
	}
	if err := w.Amend(func(h *Header) {}); err == nil {
		t.Error("Amend after the header was written: no error")
	}
}

// TestEmitRunReadsAsTold checks that a ToldRun line, and a ToldBatch line
// after its batch's SendNew, read back as the Told events Emit would have
// written one by one, numbered in turn, and that the events after it go on
// from there.
func TestEmitRunReadsAsTold(t *testing.T) {
	ids := []int64{4, 8, 9, 1_000_000_007}
	for _, e := range []Event{
		{Kind: Told, Partition: 3, Offset: 0, Result: Delivered},
		{Kind: Told, Partition: 7, Offset: 9998, Result: Delivered},
		{Kind: Told, Partition: -1, Offset: -1, Result: Failed, Err: "NOT_ENOUGH_REPLICAS", Reason: `broker said "no"` + "\n"},
		{Kind: Told, Partition: 0, Offset: -1, Result: Failed, Reason: "delivery timeout"},
	} {
		for _, c := range []struct {
			n     int
			batch int64
		}{{0, 0}, {1, 0}, {len(ids), 0}, {1, 12}, {len(ids), 12}} {
			n, before := c.n, 1 // before: the events before the run
			if c.batch != 0 && e.Partition < 0 {
				continue // a ToldBatch's partition is its batch's
			}
			e.Batch = c.batch
			var each, run bytes.Buffer
			h := Header{Writer: "test", Topic: "t", Partitions: 8, MaxInFlight: 5, Broker: Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"}}
			we, err := NewWriter(&each, h)
			if err != nil {
				t.Fatal(err)
			}
			wr, _ := NewWriter(&run, h)
			for _, w := range []*Writer{we, wr} {
				w.Emit(&Event{Kind: InitProducerID, PID: 1, Node: -1})
				if c.batch != 0 {
					w.Emit(&Event{Kind: SendNew, Partition: e.Partition, Batch: c.batch, PID: 1, N: int32(n), Req: 1, Node: 1, Records: ids[:n]})
				}
			}
			if c.batch != 0 {
				before++
			}
			for k, id := range ids[:n] {
				one := e
				one.Batch, one.RecordID = 0, id
				if e.Offset >= 0 {
					one.Offset = e.Offset + int64(k)
				}
				we.Emit(&one)
			}
			in := e
			wr.EmitRun(&in, ids[:n])
			var plain collectSink // a Sink that is no RunSink: one Emit each
			in = e
			EmitRun(&plain, &in, ids[:n])
			for _, w := range []*Writer{we, wr} {
				w.Emit(&Event{Kind: Disconnect, Node: 1})
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := wr.Events(), int64(n+before+1); got != want {
				t.Errorf("Events() after a run of %d = %d, want %d", n, got, want)
			}
			if n > 1 && strings.Count(run.String(), "\n") != before+3 {
				t.Errorf("a run of %d took more than one line:\n%s", n, run.String())
			}
			if kind := `"ev":"ToldBatch"`; n > 0 && strings.Contains(run.String(), kind) != (c.batch != 0) {
				t.Errorf("a run of %d of batch %d: %s written %v, want %v:\n%s", n, c.batch, kind, c.batch == 0, c.batch != 0, run.String())
			}
			want, err := readAll(each.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(run.Bytes())
			if err != nil {
				t.Fatalf("run of %d: %v", n, err)
			}
			if len(got) != len(want) {
				t.Fatalf("run of %d: read %d events, want %d", n, len(got), len(want))
			}
			for i := range want {
				want[i].T, got[i].T = 0, 0
				if !reflect.DeepEqual(*got[i], *want[i]) {
					t.Errorf("run of %d, event %d:\n got %+v\nwant %+v", n, i+1, got[i], want[i])
				}
			}
			if len(plain) != n {
				t.Fatalf("EmitRun to a plain Sink, run of %d: %d events", n, len(plain))
			}
			for k, p := range plain {
				w := *want[k+before]
				p.I, w.I, w.T = 0, 0, 0
				if !reflect.DeepEqual(p, w) {
					t.Errorf("EmitRun to a plain Sink, run of %d, event %d:\n got %+v\nwant %+v", n, k+1, p, w)
				}
			}
		}
	}
}

// collectSink keeps a copy of every event.
type collectSink []Event

func (c *collectSink) Emit(e *Event) { *c = append(*c, *e) }

// TestToldRunRefused checks what a reader says of a ToldRun or ToldBatch
// it must refuse.
func TestToldRunRefused(t *testing.T) {
	head := func(v int) string {
		return `{"kcheck_trace":` + strconv.Itoa(v) + `,"writer":"w","client":"c","topic":"t","partitions":2,"first_ack":true,"hold_while_retrying":true,"max_in_flight":5,"delivery_timeout_ms":0,"broker":{"kind":"kfake","version":"4.1","no_state_rule":"v25to44"},"seed":0}` + "\n"
	}
	run := func(i, off, recs string) string {
		return `{"i":` + i + `,"t":0,"ev":"ToldRun","p":1,"err":"","off":` + off + `,"reason":"","recs":[` + recs + `],"res":"delivered"}` + "\n"
	}
	sendNew := func(i string, b int64, recs string) string {
		n := 0
		if recs != "" {
			n = strings.Count(recs, ",") + 1
		}
		return `{"i":` + i + `,"t":0,"ev":"SendNew","p":1,"b":` + strconv.FormatInt(b, 10) + `,"pid":1,"ep":0,"seq":0,"n":` + strconv.Itoa(n) + `,"req":1,"node":1,"recs":[` + recs + `]}` + "\n"
	}
	batch := func(i string, p int, b int64) string {
		return `{"i":` + i + `,"t":0,"ev":"ToldBatch","p":` + strconv.Itoa(p) + `,"b":` + strconv.FormatInt(b, 10) + `,"err":"","off":0,"reason":"","res":"delivered"}` + "\n"
	}
	for _, c := range []struct{ name, trace, want string }{
		{"version 2", head(2) + run("1", "0", "1,2"), `trace.jsonl:2: field "ev": ToldRun is an event of format version 3; this trace's header says version 2`},
		{"no records", head(3) + run("1", "0", ""), `trace.jsonl:2: field "recs": empty`},
		{"offset overflow", head(3) + run("1", "9223372036854775807", "1,2"), `trace.jsonl:2: field "off": 9223372036854775807: the run's last record would be past the largest offset`},
		{"number after the run", head(3) + run("1", "0", "1,2") + `{"i":2,"t":0,"ev":"Disconnect","node":1}` + "\n", `trace.jsonl:3: field "i": event 2 out of order: expected 3`},
		{"batch in version 3", head(3) + sendNew("1", 7, "1,2") + batch("2", 1, 7), `trace.jsonl:3: field "ev": ToldBatch is an event of format version 4; this trace's header says version 3`},
		{"batch never sent", head(4) + sendNew("1", 7, "1,2") + batch("2", 1, 8), `trace.jsonl:3: field "b": batch 8 has no SendNew before this line, or its records were told already`},
		{"batch told twice", head(4) + sendNew("1", 7, "1,2") + batch("2", 1, 7) + batch("4", 1, 7), `trace.jsonl:4: field "b": batch 7 has no SendNew before this line, or its records were told already`},
		{"batch of another partition", head(4) + sendNew("1", 7, "1,2") + batch("2", 0, 7), `trace.jsonl:3: field "p": partition 0, but batch 7 was sent to partition 1`},
		{"batch of no records", head(4) + sendNew("1", 7, "") + batch("2", 1, 7), `trace.jsonl:3: field "b": batch 7's SendNew has no records`},
		{"batch in a proxy trace", strings.Replace(head(4), `"writer":"w"`, `"writer":"kcheck-proxy"`, 1) + sendNew("1", 7, "1,2") + batch("2", 1, 7), `trace.jsonl:3: field "ev": ToldBatch is written by kcheck's producer, never by kcheck-proxy`},
		{"number after the batch", head(4) + sendNew("1", 7, "1,2") + batch("2", 1, 7) + `{"i":3,"t":0,"ev":"Disconnect","node":1}` + "\n", `trace.jsonl:4: field "i": event 3 out of order: expected 4`},
	} {
		r, err := NewReader(strings.NewReader(c.trace), "trace.jsonl")
		for err == nil {
			_, err = r.Next()
		}
		if err == io.EOF || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %s...", c.name, err, c.want)
		}
	}
}
