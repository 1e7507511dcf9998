package order

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/tracer"
)

var fixtures = filepath.Join("..", "..", "traces", "fixtures")

// badKinds are the kinds a bad-<kind>.jsonl fixture must exist for.
var badKinds = []checker.Kind{checker.Lost, checker.Duplicate, checker.Reorder, checker.Gap,
	checker.InconsistentOffset, checker.FailedPresent, checker.Stall}

// Every bad-<kind> fixture (and bad-<kind>.proxy, its form on the wire)
// fails with exactly that kind and no other; every ok fixture passes, and so
// does every inconclusive one, which lacks part of its read-back; each
// violation carries lines of the trace and a detail.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s (%v)", fixtures, err)
	}
	covered := map[checker.Kind]bool{}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			res := checkFile(t, path)
			n := countLines(t, path)
			for _, v := range res.Violations {
				if len(v.Lines) == 0 || !slices.IsSorted(v.Lines) || v.Lines[0] < 2 || v.Lines[len(v.Lines)-1] > n {
					t.Errorf("%s: lines %v not sorted event lines of a %d-line trace", v.Kind, v.Lines, n)
				}
				if v.Detail == "" {
					t.Errorf("%s: no detail", v.Kind)
				}
			}
			switch {
			case strings.HasPrefix(name, "ok-"):
				for _, v := range res.Violations {
					t.Errorf("want no violation, got %s: %s (lines %v)", v.Kind, v.Detail, v.Lines)
				}
			case strings.HasPrefix(name, "bad-"):
				// bad-KIND[.what].jsonl, bad-KIND[.what].proxy.jsonl
				kind := checker.Kind(strings.SplitN(strings.TrimPrefix(name, "bad-"), ".", 2)[0])
				if !slices.Contains(badKinds, kind) {
					t.Fatalf("fixture for unknown kind %q", kind)
				}
				covered[kind] = true
				if len(res.Violations) == 0 {
					t.Errorf("want %s, got no violation", kind)
				}
				for _, v := range res.Violations {
					if v.Kind != kind {
						t.Errorf("want only %s, got %s: %s", kind, v.Kind, v.Detail)
					}
				}
			case strings.HasPrefix(name, "inconclusive-"):
				// A read-back missing in whole or in part: nothing found
				// in what can be checked, and the unread partitions said.
				for _, v := range res.Violations {
					t.Errorf("want no violation, got %s: %s (lines %v)", v.Kind, v.Detail, v.Lines)
				}
				if len(res.Unread) == 0 {
					t.Errorf("no partition unread")
				}
			default:
				t.Fatalf("fixture name %q is neither ok-*, bad-* nor inconclusive-*", name)
			}
			for _, v := range res.Violations {
				t.Logf("%s lines %v: %s", v.Kind, v.Lines, v.Detail)
			}
		})
	}
	for _, k := range badKinds {
		if !covered[k] {
			t.Errorf("no fixture bad-%s.jsonl", k)
		}
	}
}

// The fixtures share one header, as traces/fixtures/README.md says, and
// those named *.proxy.jsonl the proxy's.
func TestFixtureHeaders(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtures, "*.jsonl"))
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := tracer.NewReader(f, path)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		h := r.Header()
		broker := h.Broker == (tracer.Broker{Kind: "kafka", Version: "4.1.0", NoStateRule: "v25to44"}) && h.MaxInFlight == 5
		if strings.HasSuffix(path, ".proxy.jsonl") {
			if h.Writer != tracer.ProxyWriter || !broker || h.FirstAck || h.HoldWhileRetrying || h.DeliveryTimeoutMs != 0 {
				t.Errorf("%s: header %+v differs from the proxy fixtures' common header", path, h)
			}
		} else if h.Writer != "fixture" || !broker || !h.FirstAck || !h.HoldWhileRetrying {
			t.Errorf("%s: header %+v differs from the fixtures' common header", path, h)
		}
	}
}

// Each bad fixture names the batch, records and lines that show it.
func TestFixtureViolations(t *testing.T) {
	type want struct {
		batch   int64
		records []int64
		lines   []int
		detail  string // a phrase the detail contains
	}
	for _, tc := range []struct {
		file string
		want []want
	}{
		{"bad-lost-write", []want{
			{2, []int64{4, 5, 6}, []int{6, 14, 18}, "yet sequence 6 of epoch 0 is (offset 3)"},
			{4, []int64{10, 11, 12}, []int{16, 17, 18}, "acknowledged on the wire at offsets 6-8 but are not in the read-back"},
		}},
		{"bad-duplicate", []want{{2, []int64{4, 5, 6}, []int{5, 11}, "at offsets 3-5 and again at offsets 6-8"}}},
		{"bad-nonmonotonic-send", []want{{2, []int64{4, 5, 6, 7, 8, 9}, []int{6, 7, 19}, "Batch 3 overtook batch 2"}}},
		{"bad-gap", []want{{2, []int64{4, 5, 6}, []int{6, 10, 15}, "definitely failed (INVALID_RECORD)"}}},
		{"bad-inconsistent-offsets", []want{{2, []int64{4, 5, 6}, []int{5, 6, 9}, "offset 3 holds a record kcheck did not write"}}},
		{"bad-failed-but-present", []want{{2, []int64{4, 5, 6}, []int{5, 7, 8, 13}, "INVALID_RECORD, which is not retriable"}}},
		{"bad-failed-but-present.proxy", []want{{4, []int64{4, 5, 6}, []int{5, 7, 10}, "only attempt was answered INVALID_RECORD, which is not retriable, and the client never sent it again"}}},
		{"bad-stall", []want{{3, []int64{7, 8, 9}, []int{6, 9, 23}, "OUT_OF_ORDER_SEQUENCE_NUMBER 4 times over 2.989s"}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res := checkFile(t, filepath.Join(fixtures, tc.file+".jsonl"))
			if len(res.Violations) != len(tc.want) {
				t.Fatalf("got %d violations, want %d: %+v", len(res.Violations), len(tc.want), res.Violations)
			}
			for i, w := range tc.want {
				v := res.Violations[i]
				if v.Batch != w.batch || !slices.Equal(v.Records, w.records) || !slices.Equal(v.Lines, w.lines) ||
					!strings.Contains(v.Detail, w.detail) || v.ProducerID != testPID || v.Partition != 0 {
					t.Errorf("violation %d:\n got batch %d records %v lines %v pid %d: %s\nwant batch %d records %v lines %v, detail with %q",
						i, v.Batch, v.Records, v.Lines, v.ProducerID, v.Detail, w.batch, w.records, w.lines, w.detail)
				}
			}
		})
	}
}

// The OUT_OF_ORDER_SEQUENCE_NUMBER answers of batches acknowledged in the end
// are counted, not reported.
func TestFixtureStats(t *testing.T) {
	res := checkFile(t, filepath.Join(fixtures, "ok-out-of-order-then-acked.jsonl"))
	if s := res.Stats; s.OutOfOrderAnswers != 1 || s.OutOfOrderAcked != 1 || s.Stalls != 0 || s.Acked != 9 || s.Retries != 2 {
		t.Errorf("stats %+v", s)
	}
	res = checkFile(t, filepath.Join(fixtures, "bad-stall.jsonl"))
	if s := res.Stats; s.OutOfOrderAnswers != 4 || s.OutOfOrderAcked != 0 || s.Stalls != 1 || s.StallTime != 2989*time.Millisecond {
		t.Errorf("stats %+v", s)
	}
	// On the wire: a fatal answer to a batch's only attempt fails it, one to
	// a retry leaves it unknown.
	res = checkFile(t, filepath.Join(fixtures, "ok-not-definite.proxy.jsonl"))
	if s := res.Stats; s.Acked != 12 || s.Failed != 3 || s.Unknown != 3 || s.Retries != 2 {
		t.Errorf("stats %+v", s)
	}
	res = checkFile(t, filepath.Join(fixtures, "ok-unknown-not-written.jsonl"))
	if s := res.Stats; s.Batches != 4 || s.Records != 12 || s.Acked != 6 || s.Unknown != 6 || s.Failed != 0 || s.Unsent != 1 || s.ReadBack != 6 {
		t.Errorf("stats %+v", s)
	}
}

// traces/run.jsonl is our producer with the first-ack rule on, under faults:
// everything acknowledged, read back once, in order.
func TestRunTracePasses(t *testing.T) {
	res := checkFile(t, filepath.Join("..", "..", "traces", "run.jsonl"))
	for _, v := range res.Violations {
		t.Errorf("%s: %s (lines %v)", v.Kind, v.Detail, v.Lines)
	}
	s := res.Stats
	if s.Records == 0 || s.Acked != s.Records || s.ReadBack != s.Records || s.Failed+s.Unknown != 0 {
		t.Errorf("stats %+v: want every record acknowledged and read back once", s)
	}
	t.Logf("%+v", s)
}

// traces/first-ack-off.jsonl is the seed's race with the Java client's rules:
// each partition's first batch is lost (and stalled on
// OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout).
func TestFirstAckOffTraceLoses(t *testing.T) {
	path := filepath.Join("..", "..", "traces", "first-ack-off.jsonl")
	res := checkFile(t, path)
	lost := map[int64]bool{}
	for _, v := range res.Violations {
		switch v.Kind {
		case checker.Lost:
			if len(v.Records) == 0 || !strings.Contains(v.Detail, strconv.FormatInt(v.Records[0], 10)+", ") {
				t.Errorf("lost-write does not name its records: %+v", v)
			}
			for _, id := range v.Records {
				lost[id] = true
			}
		case checker.Stall:
		default:
			t.Errorf("unexpected %s: %s", v.Kind, v.Detail)
		}
	}
	// Independently: the records of the batches that expired are the ones
	// missing from the read-back.
	expired := map[int64]bool{}
	recs := map[int64][]int64{}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := tracer.NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]bool{}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e.Kind {
		case tracer.SendNew:
			recs[e.Batch] = e.Records
		case tracer.ExpireBatch:
			expired[e.Batch] = true
			for _, id := range recs[e.Batch] {
				want[id] = true
			}
		}
	}
	if len(lost) == 0 || len(lost) != len(want) {
		t.Fatalf("%d records reported lost, want the %d records of the %d expired batches", len(lost), len(want), len(expired))
	}
	for id := range want {
		if !lost[id] {
			t.Errorf("record %d of an expired batch not reported lost", id)
		}
	}
	if res.Stats.Unknown != len(want) || res.Stats.Acked+res.Stats.Unknown != res.Stats.Records {
		t.Errorf("stats %+v", res.Stats)
	}
	t.Logf("%d records lost in %d batches; %+v", len(lost), len(expired), res.Stats)
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// kinds lists the kinds of vs, in order.
func kinds(vs []checker.Violation) []checker.Kind {
	var ks []checker.Kind
	for _, v := range vs {
		ks = append(ks, v.Kind)
	}
	return ks
}

// Cases built in memory, one rule each.
func TestRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		build  func(*trace)
		want   []checker.Kind
		detail string // a phrase the first violation's detail contains
	}{
		{"retriable error then fail: unknown, lost behind a later sequence", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1, 2)
			tr.send(0, 2, 0, 2, 3)
			tr.recv(0, 1, 0, 0, "REQUEST_TIMED_OUT", -1)
			tr.fail(0, 1, 0, 0, "REQUEST_TIMED_OUT") // retries exhausted: may be written
			tr.recv(0, 2, 0, 2, "NONE", 0)
			tr.readBack(0, batchLog(0, 0, 2, 3)...)
		}, []checker.Kind{checker.Lost}, "was failed (REQUEST_TIMED_OUT) with its outcome unknown"},

		{"retriable error then fail: unknown, and written", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1, 2)
			tr.recv(0, 1, 0, 0, "REQUEST_TIMED_OUT", -1)
			tr.fail(0, 1, 0, 0, "REQUEST_TIMED_OUT")
			tr.readBack(0, batchLog(0, 0, 0, 1, 2)...)
		}, nil, ""},

		{"non-retriable error then fail: definite, a gap", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1, 2)
			tr.send(0, 2, 0, 2, 3)
			tr.recv(0, 1, 0, 0, "MESSAGE_TOO_LARGE", -1)
			tr.fail(0, 1, 0, 0, "MESSAGE_TOO_LARGE")
			tr.recv(0, 2, 0, 2, "NONE", 0)
			tr.readBack(0, batchLog(0, 0, 2, 3)...)
		}, []checker.Kind{checker.Gap}, "Sequences 0-1 of epoch 0 (records 1 and 2 of batch 1)"},

		{"a resend after the error: the fail is not definite", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "MESSAGE_TOO_LARGE", -1)
			tr.resend(0, 1, 0, 0)
			tr.fail(0, 1, 0, 0, "MESSAGE_TOO_LARGE")
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, nil, ""},

		{"fail with sequence -1: definite", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.fail(0, 1, -1, -1, "producer closed")
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, []checker.Kind{checker.FailedPresent}, "failed as never sent (producer closed)"},

		{"a late answer after the delivery timeout does not acknowledge", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
			tr.expire(0, 1, 0, 0)
			tr.recv(0, 1, 0, 0, "NONE", 0)
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, []checker.Kind{checker.Stall}, "ended in a delivery timeout"},

		{"stall with no outcome by the end", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
			tr.resend(0, 1, 0, 0)
			tr.recv(0, 1, 0, 0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
			tr.readBack(0)
		}, []checker.Kind{checker.Stall}, "2 times over 2ms and never acknowledged: it had no outcome by the end of the trace"},

		{"a transaction's end after the answer ends the batch: no stall", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
			tr.add(&tracer.Event{Kind: tracer.EndTxn, PID: testPID, Tx: 1})
			tr.readBack(0)
		}, nil, ""},

		{"a transaction's end before the answer does not", func(tr *trace) {
			tr.add(&tracer.Event{Kind: tracer.EndTxn, PID: testPID, Tx: 1, Commit: true})
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
			tr.readBack(0)
		}, []checker.Kind{checker.Stall}, "had no outcome by the end of the trace"},

		{"stall ended by the producer closing", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
			tr.fail(0, 1, 0, 0, "producer closed")
			tr.readBack(0)
		}, []checker.Kind{checker.Stall}, "once over 1ms"},

		{"out of order then acknowledged: no stall", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
			tr.resend(0, 1, 0, 0)
			tr.recv(0, 1, 0, 0, "NONE", 0)
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, nil, ""},

		{"acknowledged by DUPLICATE_SEQUENCE_NUMBER and missing", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "DUPLICATE_SEQUENCE_NUMBER", -1)
			tr.readBack(0)
		}, []checker.Kind{checker.Lost}, "acknowledged on the wire with no offset (DUPLICATE_SEQUENCE_NUMBER)"},

		{"acknowledged offset holds nothing: lost, not also inconsistent", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1, 2)
			tr.recv(0, 1, 0, 0, "NONE", 5)
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, []checker.Kind{checker.InconsistentOffset, checker.Lost}, "Record 1 (batch 1; epoch 0, sequence 0) was acknowledged at offset 5"},

		{"offsets not dense: looked up by offset", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1, 2)
			tr.recv(0, 1, 0, 0, "NONE", 10)
			tr.readBack(0, logOf(10, [3]int64{0, 0, 1})[0], logOf(12, [3]int64{0, 1, 2})[0])
		}, []checker.Kind{checker.InconsistentOffset}, "offset 11 holds nothing"},

		{"an unknown outcome lost behind a later sequence of an earlier epoch", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.send(0, 2, 0, 1, 2)
			tr.recv(0, 1, 0, 0, "NOT_LEADER_OR_FOLLOWER", -1)
			tr.recv(0, 2, 0, 1, "NONE", 0)
			tr.resend(0, 1, 1, 0) // renumbered by a bump
			tr.recv(0, 1, 1, 0, "NOT_LEADER_OR_FOLLOWER", -1)
			tr.expire(0, 1, 1, 0)
			tr.readBack(0, batchLog(0, 0, 1, 2)...)
		}, []checker.Kind{checker.Lost}, "Record 1 (batch 1; epoch 0, sequence 0) is not in the log, yet sequence 1 of epoch 0 is"},

		{"the producer skipped sequences", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1, 2)
			tr.send(0, 2, 0, 5, 3)
			tr.recv(0, 1, 0, 0, "NONE", 0)
			tr.recv(0, 2, 0, 5, "NONE", 2)
			tr.readBack(0, logOf(0, [3]int64{0, 0, 1}, [3]int64{0, 1, 2}, [3]int64{0, 5, 3})...)
		}, []checker.Kind{checker.Gap}, "Sequences 2-4 of epoch 0 (producer 1000) are missing"},

		{"records out of order within a batch", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1, 2)
			tr.recv(0, 1, 0, 0, "NONE", 0)
			tr.readBack(0, logOf(0, [3]int64{0, 1, 2}, [3]int64{0, 0, 1})...)
		}, []checker.Kind{checker.InconsistentOffset, checker.Reorder}, "offset 0 holds record 2"},

		{"strays: an id never sent, another partition's record, a wrong sequence", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.send(1, 2, 0, 0, 2)
			tr.send(0, 3, 0, 1, 3)
			tr.recv(0, 1, 0, 0, "NONE", 0)
			tr.recv(1, 2, 0, 0, "NONE", 0)
			tr.recv(0, 3, 0, 1, "NONE", 1)
			tr.readBack(0, logOf(0, [3]int64{0, 0, 1}, [3]int64{5, 0, 3}, [3]int64{0, 0, 2}, [3]int64{0, 1, 99})...)
			tr.readBack(1, batchLog(0, 0, 0, 2)...)
		}, []checker.Kind{checker.NonConformance, checker.NonConformance, checker.NonConformance}, ""},

		{"sequences far out of range do not break the sets", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1, 2)
			tr.recv(0, 1, 0, 0, "NONE", 0)
			tr.readBack(0, logOf(0, [3]int64{0, -500, 1}, [3]int64{1, 2_000_000_000, 2})...)
		}, []checker.Kind{checker.NonConformance, checker.Gap}, "epoch 0, sequence -500 (first of them)"},

		{"read back twice", func(tr *trace) {
			tr.readBack(0)
			tr.readBack(0)
		}, []checker.Kind{checker.NonConformance}, "read back twice"},

		{"a batch sent new twice, and a record id reused", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.send(0, 1, 0, 1, 2)
			tr.send(0, 2, 0, 1, 1, 3)
			tr.recv(0, 1, 0, 0, "NONE", 0)
			tr.recv(0, 2, 0, 1, "NONE", 1)
			tr.readBack(0, logOf(0, [3]int64{0, 0, 1})[0], logOf(2, [3]int64{0, 2, 3})[0])
		}, []checker.Kind{checker.NonConformance, checker.NonConformance}, "sent new twice"},

		// What the application was told (Told), against the log.
		{"told delivered, absent, no answer on the wire: lost, acknowledged to the application", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1, 2)
			tr.told(0, 1, "delivered", 0, "")
			tr.told(0, 2, "delivered", 1, "")
			tr.readBack(0)
		}, []checker.Kind{checker.Lost}, "Records 1 and 2 (batch 1; epoch 0, sequences 0-1) were acknowledged to the application (delivered at offsets 0-1, line 3) but are not in the read-back of partition 0; the wire shows no success answer for the batch: it had no outcome by the end of the trace."},
		{"told delivered and acknowledged on the wire, absent: one lost-write naming both", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "NONE", 0)
			tr.told(0, 1, "delivered", 0, "")
			tr.readBack(0)
		}, []checker.Kind{checker.Lost}, "acknowledged on the wire at offset 0 (and to the application: delivered at offset 0, line 4) but is not in the read-back"},
		{"told delivered, wire unknown, present: clean", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "REQUEST_TIMED_OUT", -1)
			tr.told(0, 1, "delivered", 0, "")
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, nil, ""},
		{"told delivered at another offset than the log's", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.told(0, 1, "delivered", 7, "")
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, []checker.Kind{checker.InconsistentOffset}, "was told to the application as delivered (delivered at offset 7, line 3) but is at offset 0 of partition 0 in the read-back"},
		{"told delivered to another partition", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "NONE", 0)
			tr.told(3, 1, "delivered", 0, "")
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, []checker.Kind{checker.InconsistentOffset}, "delivered at offset 0 of partition 3"},
		{"told delivered with no offset, present: clean", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.told(0, 1, "delivered", -1, "")
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, nil, ""},
		{"told failed with a fatal error, present: failed-but-present", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "REQUEST_TIMED_OUT", -1)
			tr.told(0, 1, "failed", -1, "INVALID_RECORD")
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, []checker.Kind{checker.FailedPresent}, "yet the application was told they definitely failed (failed with INVALID_RECORD: client's words, line 4)"},
		{"told failed with a timeout, present: unknown, clean", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.told(0, 1, "failed", -1, "REQUEST_TIMED_OUT")
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, nil, ""},
		{"told failed with no Kafka error, present: unknown, clean", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.told(0, 1, "failed", -1, "")
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, nil, ""},
		{"told no answer, absent: clean", func(tr *trace) {
			tr.send(0, 1, 0, 0, 1)
			tr.told(-1, 1, "none", -1, "")
			tr.readBack(0)
		}, nil, ""},
		{"told of a record never sent, and twice", func(tr *trace) {
			tr.told(0, 9, "delivered", 0, "")
			tr.send(0, 1, 0, 0, 1)
			tr.recv(0, 1, 0, 0, "NONE", 0)
			tr.told(0, 1, "delivered", 0, "")
			tr.told(0, 1, "failed", -1, "INVALID_RECORD")
			tr.readBack(0, batchLog(0, 0, 0, 1)...)
		}, []checker.Kind{checker.NonConformance, checker.NonConformance}, "record 9, which no SendNew before it sent"},

		{"never sent: counted, not checked", func(tr *trace) {
			tr.fail(0, 9, -1, -1, "delivery timeout before the batch was sent")
			tr.readBack(0)
		}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTrace()
			tc.build(tr)
			res := tr.run()
			if got := kinds(res.Violations); !slices.Equal(got, tc.want) {
				for _, v := range res.Violations {
					t.Logf("%s lines %v records %v: %s", v.Kind, v.Lines, v.Records, v.Detail)
				}
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if tc.detail != "" && !strings.Contains(res.Violations[0].Detail, tc.detail) {
				t.Errorf("detail %q does not contain %q", res.Violations[0].Detail, tc.detail)
			}
			s := res.Stats
			if s.Acked+s.Failed+s.Unknown != s.Records {
				t.Errorf("stats %+v: acked + failed + unknown != records", s)
			}
		})
	}
}

// A partition with no ReadBack is Unread, not a violation: its log is not
// matched, but its stalls are still found; a partition read back is checked
// in full beside it.
func TestNoReadBack(t *testing.T) {
	tr := newTrace()
	tr.send(0, 1, 0, 0, 1, 2)
	tr.recv(0, 1, 0, 0, "NONE", 0) // acknowledged, and nothing to find it in
	tr.send(1, 2, 0, 0, 3)
	tr.recv(1, 2, 0, 0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
	tr.expire(1, 2, 0, 0)
	tr.send(2, 3, 0, 0, 4)
	tr.recv(2, 3, 0, 0, "NONE", 0)
	tr.readBack(2) // read back, and batch 3 is not there
	res := tr.run()
	if got := kinds(res.Violations); !slices.Equal(got, []checker.Kind{checker.Stall, checker.Lost}) {
		t.Fatalf("violations %v, want the stall of partition 1 and the loss of partition 2", got)
	}
	if !slices.Equal(res.Unread, []int32{0, 1}) {
		t.Fatalf("unread %v, want [0 1]", res.Unread)
	}
}

// A partition is reported in one place: sorted by partition, then line.
func TestViolationsSorted(t *testing.T) {
	tr := newTrace()
	tr.send(1, 1, 0, 0, 1)
	tr.send(0, 2, 0, 0, 2)
	tr.recv(1, 1, 0, 0, "NONE", 0)
	tr.recv(0, 2, 0, 0, "NONE", 0)
	tr.readBack(1)
	tr.readBack(0)
	res := tr.run()
	var got []int32
	for _, v := range res.Violations {
		got = append(got, v.Partition)
	}
	if !slices.Equal(got, []int32{0, 1}) {
		t.Fatalf("partitions %v, want [0 1]", got)
	}
}

func TestAddAfterFinishPanics(t *testing.T) {
	c := New(newTrace().h)
	c.Finish()
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	c.Add(2, &tracer.Event{Kind: tracer.Disconnect})
}

// What the application was told is counted by result, and the delivered
// records the read-back lacks as LostTold.
func TestToldStats(t *testing.T) {
	tr := newTrace()
	tr.send(0, 1, 0, 0, 1, 2, 3, 4)
	tr.recv(0, 1, 0, 0, "NONE", 0)
	tr.told(0, 1, "delivered", 0, "")
	tr.told(0, 2, "delivered", 1, "")
	tr.told(0, 3, "failed", -1, "REQUEST_TIMED_OUT")
	tr.told(-1, 4, "none", -1, "")
	tr.readBack(0, batchLog(0, 0, 0, 1)...)
	s := tr.run().Stats
	if s.ToldDelivered != 2 || s.ToldFailed != 1 || s.ToldNone != 1 || s.LostTold != 1 {
		t.Errorf("stats %+v: want 2 delivered, 1 failed, 1 none, 1 lost though told delivered", s)
	}
}
