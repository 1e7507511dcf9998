package tracer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// sample returns one event of every kind with every field it carries set.
func sample() []*Event {
	return []*Event{
		{Kind: InitProducerID, PID: 1000, Epoch: 0, Node: 1, TxnID: "kcheck-txn"},
		{Kind: SendNew, Partition: 3, Batch: 7, PID: 1000, Epoch: 0, Seq: 0, N: 2, Req: 11, Node: 1, Records: []int64{4, 9}},
		{Kind: Fault, Fault: "RejectBeforeAppend", Partition: 3, Epoch: 0, Seq: 0, Node: 1, Err: "NOT_LEADER_OR_FOLLOWER"},
		{Kind: Receive, Partition: 3, Batch: 7, PID: 1000, Epoch: 0, Seq: 0, Req: 11, Node: 1, Err: "NOT_LEADER_OR_FOLLOWER", Offset: -1, LogStart: -1},
		{Kind: Resend, Partition: 3, Batch: 7, PID: 1000, Epoch: 0, Seq: 0, N: 2, Req: 12, Node: 1, BatchTime: -2500000},
		{Kind: Disconnect, Node: 1},
		{Kind: ExpireBatch, Partition: 3, Batch: 7, PID: 1000, Epoch: 0, Seq: 0},
		{Kind: ResolveSequences, Partition: 3, Bumped: true},
		{Kind: Bump, Partition: 3, PID: 1000, Epoch: 1},
		{Kind: Fail, Partition: 3, Batch: 8, PID: 1000, Epoch: 1, Seq: 0, Reason: "producer closed"},
		{Kind: Told, Partition: 3, RecordID: 4, Result: Delivered, Offset: 0},
		{Kind: ToldRun, Partition: 2, Result: Failed, Err: "NOT_ENOUGH_REPLICAS", Reason: "broker said no", Offset: -1, Records: []int64{5, 6}},
		{Kind: ToldBatch, Partition: 3, Batch: 7, Result: Delivered, Offset: 0, Records: []int64{4, 9}}, // SendNew's records
		{Kind: ReadBackShort, Partition: 3, Node: 2, Offset: 1, HWM: 1, WaitedMs: 60000},
		{Kind: ReadBack, Partition: 3, Log: []LogRecord{{Offset: 0, PID: 1000, Epoch: 1, Seq: 0, ID: 4}, {Offset: 1, PID: -1, Epoch: -1, Seq: -1, ID: -1}},
			Ctl: []Marker{{Offset: 2, PID: 1000, Epoch: 1, Commit: true}, {Offset: 4, PID: 1000, Epoch: 2}}},
		// Format version 5 (after the read-back here only so that the
		// limits' tests keep their line numbers).
		{Kind: AddPartitionsToTxn, Partition: 3, PID: 1000, Epoch: 0, Node: 2, Err: "NONE", Tx: 1},
		{Kind: EndTxn, PID: 1000, Epoch: 1, Node: 2, Commit: true, Tx: 1},
		{Kind: EndTxnReceive, PID: 1000, Epoch: 1, Node: 2, Err: "NONE", Commit: true, NewEpoch: 2, Tx: 1},
		{Kind: TxnTold, Err: "", Reason: "", Result: Committed, Commit: true, Tx: 1},
		// Format version 6.
		{Kind: ReadCommitted, Partition: 3, Log: []LogRecord{{Offset: 0, PID: 1000, Epoch: 1, Seq: 0, ID: 4}}},
		// Format version 7.
		{Kind: Poll, Poller: 1, Partition: 3, Offset: 0, Log: []LogRecord{{Offset: 0, PID: 1000, Epoch: 1, Seq: -1, ID: 4}}},
		{Kind: PollEnd, Poller: 1, Partition: 3, Offset: 3, Err: "NONE", Reason: ""},
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

// expandRuns returns evs as a reader returns them: each ToldRun and
// ToldBatch as its Told events, numbered in turn.
func expandRuns(evs []*Event) []*Event {
	var out []*Event
	for _, e := range evs {
		if e.Kind != ToldRun && e.Kind != ToldBatch {
			out = append(out, e)
			continue
		}
		for k, id := range e.Records {
			t := told(e, k, id)
			out = append(out, &t)
		}
	}
	return out
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
	if in := expandRuns(in); !reflect.DeepEqual(in, out) {
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
	in := sample()
	data := writeTrace(t, in)
	header := bytes.IndexByte(data, '\n') + 1
	for cut := header; cut <= len(data); cut++ {
		evs, err := readAll(data[:cut])
		full := len(expandRuns(in[:bytes.Count(data[header:cut], []byte("\n"))]))
		if len(evs) != full {
			t.Fatalf("cut at %d: read %d events, want the %d of the full lines", cut, len(evs), full)
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
	version := fmt.Sprintf(`"kcheck_trace":%d`, Version) // the header's, as written
	toldLine := func(res string) string {
		return `{"i":1,"t":0,"ev":"Told","p":1,"err":"","off":5,"reason":"","id":3,"res":"` + res + `"}` + "\n"
	}
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
		{"told result", header + toldLine("bogus"), `trace.jsonl:2: field "res": "bogus" is not a result: delivered, failed, none, committed or aborted`},
		{"EndTxn in version 4", strings.Replace(header, version, `"kcheck_trace":4`, 1) + `{"i":1,"t":1,"ev":"EndTxn","pid":1,"ep":0,"node":1,"commit":true,"tx":1}` + "\n",
			`trace.jsonl:2: field "ev": EndTxn is an event of format version 5; this trace's header says version 4`},
		{"txn in version 4", strings.Replace(header, version, `"kcheck_trace":4`, 1) + `{"i":1,"t":1,"ev":"InitProducerId","pid":1,"ep":0,"node":1,"txn":"x"}` + "\n",
			`trace.jsonl:2: field "txn": a field of InitProducerId from format version 5; this trace's header says version 4`},
		{"bts in version 7", strings.Replace(header, version, `"kcheck_trace":7`, 1) + `{"i":1,"t":1,"ev":"Resend","p":0,"b":1,"pid":1,"ep":0,"seq":0,"n":1,"req":1,"node":1,"bts":-5}` + "\n",
			`trace.jsonl:2: field "bts": a field of Resend from format version 8; this trace's header says version 7`},
		{"txn on SendNew", header + `{"i":1,"t":1,"ev":"Disconnect","node":1,"txn":"x"}` + "\n",
			`trace.jsonl:2: field "txn": not a field of Disconnect`},
		{"transaction 0", header + `{"i":1,"t":1,"ev":"EndTxn","pid":1,"ep":0,"node":1,"commit":true,"tx":0}` + "\n",
			`trace.jsonl:2: field "tx": 0: transactions are numbered from 1`},
		{"a transaction delivered", header + `{"i":1,"t":1,"ev":"TxnTold","err":"","reason":"","res":"delivered","commit":true,"tx":1}` + "\n",
			`trace.jsonl:2: field "res": "delivered" is a record's result`},
		{"a record committed", header + toldLine("committed"), `trace.jsonl:2: field "res": "committed" is a transaction's result (TxnTold), not a record's`},
		{"marker type", header + `{"i":1,"t":1,"ev":"ReadBack","p":0,"log":[],"ctl":[[0,1,0,2]]}` + "\n",
			`trace.jsonl:2: field "ctl": a control record's epoch is out of range or its type is not 0 (abort) or 1 (commit)`},
		{"told in version 1", strings.Replace(header, version, `"kcheck_trace":1`, 1) + toldLine("delivered"),
			`trace.jsonl:2: field "ev": Told is an event of format version 2; this trace's header says version 1`},
		{"version 0", strings.Replace(header, version, `"kcheck_trace":0`, 1), fmt.Sprintf(`version 0 is not supported (want 1 to %d)`, Version)},
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
	w, err := NewWriter(&buf, Header{Writer: "test", Partitions: 4})
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

// TestLimits: a trace beyond the limits of FORMAT.md, or claiming what it
// does not hold, is refused with the line and the key, and its reading
// allocates no more than the line can hold.
func TestLimits(t *testing.T) {
	good := string(writeTrace(t, sample()))
	lines := strings.SplitAfter(good, "\n")
	header, init, send := lines[0], lines[1], lines[2]
	body := strings.Join(lines[1:], "")
	recs := func(n int) string { // a SendNew of n records, as n at most MaxBatchRecords
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprint(i + 1)
		}
		return fmt.Sprintf(`{"i":2,"t":1000000000000,"ev":"SendNew","p":3,"b":7,"pid":1000,"ep":0,"seq":0,"n":%d,"req":11,"node":1,"recs":[%s]}`+"\n",
			min(n, MaxBatchRecords), strings.Join(ids, ","))
	}
	for _, tc := range []struct {
		name, trace, want string
	}{
		{"partitions 2^31-1", strings.Replace(header, `"partitions":4`, `"partitions":2147483647`, 1) + body,
			`trace.jsonl:1: field "partitions": 2147483647 is not a partition count kcheck reads: 1 to 1000000`},
		{"partitions 100000000", strings.Replace(header, `"partitions":4`, `"partitions":100000000`, 1) + body, `trace.jsonl:1: field "partitions": 100000000`},
		{"no partitions", strings.Replace(header, `"partitions":4`, `"partitions":0`, 1) + body, `trace.jsonl:1: field "partitions": 0`},
		{"negative partitions", strings.Replace(header, `"partitions":4`, `"partitions":-1`, 1) + body, `trace.jsonl:1: field "partitions": -1`},
		{"header key twice", strings.Replace(header, `"partitions":4`, `"partitions":4,"partitions":8`, 1) + body, `trace.jsonl:1: field "partitions": appears twice`},
		{"header key twice, another case", strings.Replace(header, `"partitions":4`, `"partitions":4,"Partitions":8`, 1) + body, `trace.jsonl:1: field "Partitions": appears twice`},
		{"broker key twice", strings.Replace(header, `"kind":"kfake"`, `"kind":"kfake","kind":"kafka"`, 1) + body, `trace.jsonl:1: field "broker.kind": appears twice`},
		{"event partition 2^31-1", header + init + strings.Replace(send, `"p":3`, `"p":2147483647`, 1),
			`trace.jsonl:3: field "p": partition 2147483647 is not one of the header's 4 partitions (0 to 3)`},
		{"event partition 4 of 4", header + init + strings.Replace(send, `"p":3`, `"p":4`, 1), `trace.jsonl:3: field "p": partition 4`},
		{"event partition -1", header + init + strings.Replace(send, `"p":3`, `"p":-1`, 1), `trace.jsonl:3: field "p": partition -1`},
		{"read-back-short partition", strings.Replace(good, `"ev":"ReadBackShort","p":3`, `"ev":"ReadBackShort","p":9`, 1), `trace.jsonl:15: field "p": partition 9`},
		{"read-back partition", strings.Replace(good, `"ev":"ReadBack","p":3`, `"ev":"ReadBack","p":9`, 1), `trace.jsonl:16: field "p": partition 9`},
		{"told-batch partition", strings.Replace(good, `"ev":"ToldBatch","p":3`, `"ev":"ToldBatch","p":4`, 1), `trace.jsonl:14: field "p": partition 4`},
		{"told-run partition", strings.Replace(good, `"ev":"ToldRun","p":2`, `"ev":"ToldRun","p":4`, 1), `trace.jsonl:13: field "p": partition 4`},
		{"told partition", strings.Replace(good, `"ev":"Told","p":3`, `"ev":"Told","p":4`, 1), `trace.jsonl:12: field "p": partition 4`},
		{"too many records", header + init + recs(MaxBatchRecords+1), `trace.jsonl:3: field "recs": more than 1000000 records, the limit on a batch`},
		{"n too large", header + init + strings.Replace(send, `"n":2`, `"n":1000001`, 1), `trace.jsonl:3: field "n": more than 1000000 records`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll([]byte(tc.trace))
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a *SyntaxError containing %q", err, tc.want)
			}
		})
	}

	// At the limits: a batch of MaxBatchRecords records, a Fault on no
	// partition, the last partition, the config map's own keys.
	ok := header + init + recs(MaxBatchRecords)
	ok += `{"i":3,"t":1000000000001,"ev":"Fault","fault":"DropConnection","p":-1,"ep":-1,"seq":-1,"node":1,"err":""}` + "\n"
	ok += `{"i":4,"t":1000000000002,"ev":"Bump","p":3,"pid":1000,"ep":1}` + "\n"
	ok = strings.Replace(ok, `"seed":0`, `"seed":0,"config":{"a":"1","A":"2"}`, 1)
	evs, err := readAll([]byte(ok))
	if err != nil || len(evs) != 4 || len(evs[1].Records) != MaxBatchRecords {
		t.Fatalf("a trace at the limits: %d events, %v", len(evs), err)
	}

	// A line over the limit is named, with its number.
	long := header + init + `{"i":2,"t":1,"ev":"Disconnect","node":1` + strings.Repeat(" ", 2000) + "}\n"
	r, err := newReader(strings.NewReader(long), "trace.jsonl", 1024)
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = r.Next()
	}
	if !strings.Contains(err.Error(), "trace.jsonl:3: line longer than 1024 bytes") {
		t.Fatalf("a long line: %v", err)
	}
}

// TestLogAllocation: a read-back that claims more records than its line can
// hold (an opening bracket for each) allocates what the line holds, not
// what it claims.
func TestLogAllocation(t *testing.T) {
	lines := strings.SplitAfter(string(writeTrace(t, sample()[:1])), "\n")
	const n = 4 << 20
	data := []byte(lines[0] + lines[1] + `{"i":2,"t":1,"ev":"ReadBack","p":3,"log":` + strings.Repeat("[", n) + "\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readAll(data)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a read-back of brackets was accepted")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*uint64(len(data)) {
		t.Fatalf("reading a %d-byte trace allocated %d bytes, more than 8 times its size", len(data), alloc)
	} else {
		t.Logf("reading a %d-byte trace allocated %d bytes", len(data), alloc)
	}
}

// Text is the line read last, byte for byte, and Offset where it starts:
// the header's, then each event's.
func TestText(t *testing.T) {
	data, err := os.ReadFile("../traces/run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfterN(string(data), "\n", 4)[:3]
	r, err := NewReader(strings.NewReader(strings.Join(lines, "")), "run")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(r.Text()), strings.TrimSuffix(lines[0], "\n"); got != want || r.Offset() != 0 {
		t.Errorf("Text() after the header = %q, want %q", got, want)
	}
	off := int64(len(lines[0]))
	for _, want := range lines[1:] {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if got := string(r.Text()); got != strings.TrimSuffix(want, "\n") {
			t.Errorf("line %d: Text() = %q, want %q", r.Line(), got, want)
		}
		if r.Offset() != off {
			t.Errorf("line %d: Offset() = %d, want %d", r.Line(), r.Offset(), off)
		}
		off += int64(len(want))
	}
	if r.Name() != "run" {
		t.Errorf("Name() = %q", r.Name())
	}
}

func TestFates(t *testing.T) {
	log := []LogRecord{{Offset: 0, PID: 1}, {Offset: 1, PID: 2}, {Offset: 2, PID: 1}, {Offset: 4, PID: 1}, {Offset: 5, PID: 2}, {Offset: 7, PID: 1}}
	ctl := []Marker{{Offset: 3, PID: 1, Commit: true}, {Offset: 6, PID: 2}, {Offset: 8, PID: 3, Commit: true}}
	got := fmt.Sprint(Fates(log, ctl))
	// pid 1: offsets 0, 2 before its commit at 3; 4 and 7 after it, with no
	// later marker of pid 1 (pid 3's commit is not its). pid 2: 1 and 5
	// before its abort at 6.
	if want := "[committed aborted committed open aborted open]"; got != want {
		t.Fatalf("fates %s, want %s", got, want)
	}
	// The markers that close them: pid 1's commit (index 0) for 0 and 2, pid
	// 2's abort (index 1) for 1 and 5, none for 4 and 7.
	if got, want := fmt.Sprint(Closers(log, ctl)), "[0 1 0 -1 1 -1]"; got != want {
		t.Fatalf("closers %s, want %s", got, want)
	}
}
