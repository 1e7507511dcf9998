package tracer

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// sample returns one event of every kind with every field it carries set.
func sample() []*Event {
	return []*Event{
		{Kind: InitProducerID, PID: 1000, Epoch: 0, Node: 1},
		{Kind: SendNew, Partition: 3, Batch: 7, PID: 1000, Epoch: 0, Seq: 0, N: 2, Req: 11, Node: 1, Records: []int64{4, 9}},
		{Kind: Fault, Fault: "RejectBeforeAppend", Partition: 3, Epoch: 0, Seq: 0, Node: 1, Err: "NOT_LEADER_OR_FOLLOWER"},
		{Kind: Receive, Partition: 3, Batch: 7, PID: 1000, Epoch: 0, Seq: 0, Req: 11, Node: 1, Err: "NOT_LEADER_OR_FOLLOWER", Offset: -1, LogStart: -1},
		{Kind: Resend, Partition: 3, Batch: 7, PID: 1000, Epoch: 0, Seq: 0, N: 2, Req: 12, Node: 1},
		{Kind: Disconnect, Node: 1},
		{Kind: ExpireBatch, Partition: 3, Batch: 7, PID: 1000, Epoch: 0, Seq: 0},
		{Kind: ResolveSequences, Partition: 3, Bumped: true},
		{Kind: Bump, Partition: 3, PID: 1000, Epoch: 1},
		{Kind: Fail, Partition: 3, Batch: 8, PID: 1000, Epoch: 1, Seq: 0, Reason: "producer closed"},
		{Kind: ReadBackShort, Partition: 3, Node: 2, Offset: 1, HWM: 1, WaitedMs: 60000},
		{Kind: ReadBack, Partition: 3, Log: []LogRecord{{Offset: 0, PID: 1000, Epoch: 1, Seq: 0, ID: 4}, {Offset: 1, PID: -1, Epoch: -1, Seq: -1, ID: -1}}},
	}
}

func writeTrace(t *testing.T, evs []*Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Writer: "test", Topic: "t", Partitions: 4, FirstAck: true, MaxInFlight: 5,
		Broker: Broker{Kind: "kfake", Version: "4.1.0", NoStateRule: "v25to44"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		w.Emit(e)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readAll(data []byte) ([]*Event, error) {
	r, err := NewReader(bytes.NewReader(data), "trace.jsonl")
	if err != nil {
		return nil, err
	}
	var out []*Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
}

func TestRoundTripEveryKind(t *testing.T) {
	in := sample()
	if len(in) != len(Kinds()) {
		t.Fatalf("sample has %d events, want one of each of %d kinds", len(in), len(Kinds()))
	}
	data := writeTrace(t, in)
	out, err := readAll(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip differs:\n in %+v\nout %+v", in, out)
	}
	for i, e := range out {
		if e.I != int64(i+1) {
			t.Errorf("event %d numbered %d", i, e.I)
		}
	}
}

// TestKilledMidWrite cuts a trace at every byte: what is left must read back as
// a prefix of the events, ending either cleanly or with the truncation error.
func TestKilledMidWrite(t *testing.T) {
	data := writeTrace(t, sample())
	header := bytes.IndexByte(data, '\n') + 1
	for cut := header; cut <= len(data); cut++ {
		evs, err := readAll(data[:cut])
		full := bytes.Count(data[header:cut], []byte("\n"))
		if len(evs) != full {
			t.Fatalf("cut at %d: read %d events, want the %d full lines", cut, len(evs), full)
		}
		truncated := cut > 0 && data[cut-1] != '\n'
		if truncated != (err != nil) || (err != nil && !errors.Is(err, errTruncated)) {
			t.Fatalf("cut at %d: err %v, truncated %v", cut, err, truncated)
		}
	}
}

func TestBadInput(t *testing.T) {
	good := string(writeTrace(t, sample()[:2]))
	lines := strings.SplitAfter(good, "\n")
	header, ev1, ev2 := lines[0], lines[1], lines[2]
	for _, tc := range []struct {
		name, trace, want string
	}{
		{"empty", "", "trace.jsonl:1: empty trace"},
		{"no header", ev1, `trace.jsonl:1: field "kcheck_trace": missing`},
		{"newer", `{"kcheck_trace":99}` + "\n", "version 99 is newer"},
		{"malformed", header + "{\"i\":1,\n", "trace.jsonl:2: not a valid event"},
		{"unknown event", header + `{"i":1,"t":0,"ev":"Teleport"}` + "\n", `trace.jsonl:2: field "ev": unknown event "Teleport"`},
		{"missing field", header + strings.Replace(ev1, `,"node":1`, "", 1), `trace.jsonl:2: field "node": missing`},
		{"extra field", header + strings.Replace(ev1, `"node":1`, `"node":1,"err":"NONE"`, 1), `field "err": not a field of InitProducerId`},
		{"unknown field", header + strings.Replace(ev1, `"node":1`, `"node":1,"zzz":1`, 1), `unknown field "zzz"`},
		{"out of order", header + ev2, `trace.jsonl:2: field "i": event 2 out of order: expected 1`},
		{"truncated", header + ev1 + strings.TrimSuffix(ev2, "\n"), "trace.jsonl:3: truncated last line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll([]byte(tc.trace))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("%v is not a *SyntaxError", err)
			}
		})
	}
}

// TestConcurrentEmit checks that events from many goroutines are numbered
// densely and every line is whole.
func TestConcurrentEmit(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	n := 200 + rng.IntN(800)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < n; i++ {
				w.Emit(&Event{Kind: Bump, Partition: int32(g), PID: 1, Epoch: int16(i % 100)})
			}
			done <- struct{}{}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	evs, err := readAll(buf.Bytes())
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	if len(evs) != 4*n {
		t.Fatalf("seed %d: read %d events, want %d", seed, len(evs), 4*n)
	}
}
