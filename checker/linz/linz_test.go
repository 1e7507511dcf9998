package linz

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/tracer"
)

// The hand-built traces in testdata, in ok/bad pairs (testdata/README.md
// tells each story): a bad one's violation names these lines and says this.
func TestTestdata(t *testing.T) {
	for _, tc := range []struct {
		name    string
		verdict Verdict
		batch   int64
		lines   []int
		detail  string
	}{
		{name: "acked-missing-ok", verdict: Ok},
		{name: "acked-missing-bad", verdict: Illegal, batch: 2, lines: []int{4, 6, 7}, detail: "the read-back holds none of its records"},
		{name: "offset-taken-ok", verdict: Ok},
		{name: "offset-taken-bad", verdict: Illegal, batch: 2, lines: []int{4, 5, 6, 7}, detail: "batch 1, acknowledged at offset 0 on line 4 before batch 2 was sent, already holds offset 0"},
		{name: "realtime-order-ok", verdict: Ok},
		{name: "realtime-order-bad", verdict: Illegal, batch: 1, lines: []int{3, 4, 5, 7}, detail: "above batch 2, which was sent on line 5, after batch 1 was acknowledged"},
		{name: "unknown-written-ok", verdict: Ok},
		{name: "unknown-written-bad", verdict: Illegal, batch: 1, lines: []int{3, 4, 5, 8}, detail: "above batch 2, which was sent on line 5, after batch 1 was acknowledged"},
		{name: "unknown-unwritten-ok", verdict: Ok},
		{name: "unknown-unwritten-bad", verdict: Illegal, batch: 2, lines: []int{6, 9, 11}, detail: "the read-back holds it at offset 0 and ends at offset 3"},
		{name: "dup-retry-ok", verdict: Ok},
		{name: "dup-retry-bad", verdict: Illegal, batch: 2, lines: []int{3, 8, 9, 10, 11}, detail: "record 1 of batch 1 is in the log twice, at offsets 0 and 3"},
		{name: "failed-present-ok", verdict: Ok},
		{name: "failed-present-bad", verdict: Illegal, batch: 1, lines: []int{3, 5, 8}, detail: "which failed definitely (INVALID_RECORD) on line 5, so it must not have been written"},
		{name: "told-delivered-ok", verdict: Ok},
		{name: "told-delivered-bad", verdict: Illegal, batch: 1, lines: []int{3, 7, 10}, detail: "acknowledged to the application at offset 3 on line 7, cannot be placed"},
		{name: "told-failed-ok", verdict: Ok},
		{name: "told-failed-bad", verdict: Illegal, batch: 2, lines: []int{3, 5, 6, 7, 10}, detail: "which failed definitely (the application was told INVALID_RECORD) on line 7, so it must not have been written"},
		{name: "foreign-record", verdict: Inconclusive, detail: "were not written by kcheck"},
		{name: "no-readback", verdict: Inconclusive, detail: "no ReadBack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checkFile(t, filepath.Join("testdata", tc.name+".jsonl"), time.Minute)
			if res.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s: %+v", res.Verdict, tc.verdict, res.Partitions)
			}
			pr := res.Partitions[0]
			switch tc.verdict {
			case Ok:
				if len(res.Violations) != 0 || pr.Reason != "" {
					t.Fatalf("an ok trace with violations %v, reason %q", res.Violations, pr.Reason)
				}
			case Inconclusive:
				if !strings.Contains(pr.Reason, tc.detail) {
					t.Fatalf("reason %q, want it to say %q", pr.Reason, tc.detail)
				}
			case Illegal:
				if len(res.Violations) != 1 {
					t.Fatalf("%d violations, want 1", len(res.Violations))
				}
				v := res.Violations[0]
				t.Logf("%s", v.Error())
				if v.Kind != checker.NotLinearizable || v.Partition != 0 || v.Batch != tc.batch || v.ProducerID != 1000 {
					t.Errorf("violation %+v, want kind %s, partition 0, batch %d, producer 1000", v, checker.NotLinearizable, tc.batch)
				}
				if !slices.Equal(v.Lines, tc.lines) {
					t.Errorf("lines %v, want %v", v.Lines, tc.lines)
				}
				if !strings.Contains(v.Detail, tc.detail) {
					t.Errorf("detail %q, want it to say %q", v.Detail, tc.detail)
				}
				if pr.Reason != v.Detail {
					t.Errorf("partition reason %q is not the violation's detail", pr.Reason)
				}
			}
		})
	}
}

// The traces of real runs: our producer under faults is linearizable, and so
// is the Java client's rules' run that loses records (see doc.go: the lost
// batches expired, an unknown outcome, so a log without them is legal;
// the order check finds the gap).
func TestRealTraces(t *testing.T) {
	for _, tc := range []struct {
		name    string
		unknown int // batches with an unknown outcome, over all partitions
	}{
		{"run.jsonl", 0},
		{"first-ack-off.jsonl", 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checkFile(t, filepath.Join("..", "..", "traces", tc.name), time.Minute)
			if res.Verdict != Ok || len(res.Partitions) != 8 {
				t.Fatalf("verdict %s over %d partitions, want ok over 8: %+v", res.Verdict, len(res.Partitions), res.Partitions)
			}
			unknown := 0
			for _, p := range res.Partitions {
				unknown += p.Unknown
				if p.Verdict != Ok || p.Batches == 0 || p.Acked+p.Failed+p.Unknown != p.Batches {
					t.Errorf("partition %+v", p)
				}
			}
			if unknown != tc.unknown {
				t.Errorf("%d batches with an unknown outcome, want %d", unknown, tc.unknown)
			}
		})
	}
}

// A large synthetic history is Ok; the same with one acknowledged record
// taken out of the read-back is Illegal, and blames its batch.
func TestSynthetic(t *testing.T) {
	h, events := synth(20_000, 8, 7)
	if res := feed(h, events).Check(time.Minute); res.Verdict != Ok {
		t.Fatalf("verdict %s: %+v", res.Verdict, res.Partitions)
	}
	// Drop, in partition 3's read-back, a record of a batch acknowledged at
	// a known offset halfway through the run.
	var batch int64
	var at int
	for _, e := range events[len(events)/2:] {
		if e.Kind == tracer.Receive && e.Partition == 3 && e.Err == "NONE" {
			batch, at = e.Batch, int(e.Offset)+2
			break
		}
	}
	rb := events[len(events)-8+3]
	if rb.Kind != tracer.ReadBack || rb.Partition != 3 || batch == 0 {
		t.Fatalf("synthetic trace not as expected: %+v, batch %d", rb, batch)
	}
	rb.Log = slices.Delete(slices.Clone(rb.Log), at, at+1)
	for i := range rb.Log[at:] {
		rb.Log[at+i].Offset--
	}
	res := feed(h, events).Check(time.Minute)
	if res.Verdict != Illegal || len(res.Violations) != 1 {
		t.Fatalf("verdict %s, %d violations: %+v", res.Verdict, len(res.Violations), res.Violations)
	}
	v := res.Violations[0]
	t.Logf("%s (lines %v)", v.Error(), v.Lines)
	if v.Partition != 3 || v.Batch != batch || len(v.Lines) > 8 {
		t.Errorf("violation about partition %d batch %d with %d lines, want partition 3 batch %d, at most 8 lines", v.Partition, v.Batch, len(v.Lines), batch)
	}
}

// A check that runs out of time is Inconclusive, never Ok: when the budget
// is gone before Porcupine starts, and when Porcupine itself times out (on
// one unsegmented partition of 47,000 operations, given a millisecond).
func TestTimeoutIsInconclusive(t *testing.T) {
	h, events := synth(100_000, 1, 1)
	c := feed(h, events)
	c.segmentOps = math.MaxInt
	res := c.Check(time.Nanosecond)
	if res.Verdict != Inconclusive || !strings.Contains(res.Partitions[0].Reason, "spent before Porcupine could start") {
		t.Fatalf("verdict %s (%s), want %s, the budget spent", res.Verdict, res.Partitions[0].Reason, Inconclusive)
	}
	pr := PartitionResult{run: c.history(c.parts[0])}
	pr.check(newModel(), time.Millisecond, time.Now().Add(time.Millisecond))
	if pr.Verdict != Inconclusive || !strings.Contains(pr.Reason, "Porcupine did not finish within the 1ms budget") {
		t.Fatalf("verdict %s (%s), want %s, Porcupine timed out", pr.Verdict, pr.Reason, Inconclusive)
	}
}

// The visualizations: one file per Illegal partition, annotated with the
// broker's events, and one page for the whole check.
func TestVisualize(t *testing.T) {
	res := checkFile(t, filepath.Join("testdata", "dup-retry-bad.jsonl"), time.Minute)
	dir := filepath.Join(t.TempDir(), "html")
	paths, err := res.WriteIllegal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || filepath.Base(paths[0]) != "partition-0.html" {
		t.Fatalf("wrote %v", paths)
	}
	page, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<html", "AppendThenFail", "Disconnect", "p0 faults", "node 0", "REQUEST_TIMED_OUT", "batch 2 seq 3"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("partition-0.html does not show %q", want)
		}
	}
	var all bytes.Buffer
	run := checkFile(t, filepath.Join("..", "..", "traces", "run.jsonl"), time.Minute)
	if err := run.Visualize(&all); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(all.Bytes(), []byte("p7 faults")) {
		t.Error("the whole run's page does not show partition 7's faults")
	}
	if err := res.VisualizePartition(&all, 5); err == nil {
		t.Error("a partition the check never saw was visualized")
	}
}

// Check leaves the Checker as it was: a second Check says the same.
func TestCheckTwice(t *testing.T) {
	h, events := synth(5_000, 4, 3)
	c := feed(h, events)
	a, b := c.Check(0), c.Check(0)
	if a.Verdict != Ok || b.Verdict != Ok || a.Operations != b.Operations || a.Events != len(events) {
		t.Fatalf("%s/%s, %d/%d operations, %d events", a.Verdict, b.Verdict, a.Operations, b.Operations, a.Events)
	}
}

// The state's hashes compose: appending batches one by one gives the state
// of their concatenation, and a different order a different state.
func TestStateHash(t *testing.T) {
	rl := &readLog{ids: []int64{1, 2, 3, 4, 5}}
	a, b := newBatchInput(0, 1, 1, 0, 0, []int64{1, 2}, rl), newBatchInput(0, 2, 1, 0, 2, []int64{3, 4, 5}, rl)
	if got, want := (state{}).append(a).append(b), logState(rl.ids); got != want {
		t.Fatalf("appended %v, want %v", got, want)
	}
	if (state{}).append(b).append(a) == logState(rl.ids) {
		t.Fatal("the hash ignores order")
	}
	m := newModel()
	s := m.Init()
	for _, in := range []*batchInput{a, b} {
		ok, next := m.Step(s, in, outcome{kind: unknown})
		if !ok {
			t.Fatal("an unknown outcome is always legal")
		}
		s = next
	}
	if ok, _ := m.Step(s, readInput{}, readOutput{log: logState(rl.ids)}); !ok {
		t.Fatal("the read cannot see both unknown batches appended")
	}
	if ok, _ := m.Step(m.Init(), a, outcome{kind: acked, offset: 1}); ok {
		t.Fatal("an acknowledged batch was placed at the wrong offset")
	}
}

// Segments change nothing: on synthetic histories, left alone or made wrong
// in one of several ways, checking in segments of four appends gives the
// verdict of one Porcupine search over each whole partition.
func TestSegmentsAgree(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	verdicts := make(map[Verdict]int)
	for i := range 300 {
		h, events := synth(200+rng.IntN(400), 1+rng.IntN(2), rng.Uint64())
		what := mutate(rng, events)
		whole, split := feed(h, events), feed(h, events)
		whole.segmentOps, split.segmentOps = math.MaxInt, 4
		a, b := whole.Check(time.Minute), split.Check(time.Minute)
		if a.Verdict != b.Verdict {
			t.Fatalf("seed %d, case %d (%s): %s in one search, %s in segments: %v / %v", seed, i, what, a.Verdict, b.Verdict, a.Violations, b.Violations)
		}
		if segs := len(split.history(split.parts[0]).segs); segs < 2 {
			t.Fatalf("seed %d, case %d: %d segments", seed, i, segs)
		}
		verdicts[a.Verdict]++
	}
	t.Logf("verdicts: %v", verdicts)
	if verdicts[Ok] == 0 || verdicts[Illegal] == 0 || verdicts[Inconclusive] != 0 {
		t.Fatalf("verdicts %v: want both ok and illegal, and nothing else", verdicts)
	}
}

// mutate makes one random change to a synthetic trace, perhaps none, and
// says which.
func mutate(rng *rand.Rand, events []*tracer.Event) string {
	pick := func(ok func(e *tracer.Event) bool) *tracer.Event {
		var es []*tracer.Event
		for _, e := range events {
			if ok(e) {
				es = append(es, e)
			}
		}
		if len(es) == 0 {
			return nil
		}
		return es[rng.IntN(len(es))]
	}
	readBack := func() []tracer.LogRecord {
		e := pick(func(e *tracer.Event) bool { return e.Kind == tracer.ReadBack && len(e.Log) > 2 })
		if e == nil {
			return nil
		}
		return e.Log
	}
	renumber := func(log []tracer.LogRecord) []tracer.LogRecord {
		for i := range log {
			log[i].Offset = int64(i)
		}
		return log
	}
	switch rng.IntN(8) {
	case 1:
		if e := pick(func(e *tracer.Event) bool { return e.Kind == tracer.ReadBack && len(e.Log) > 0 }); e != nil {
			i := rng.IntN(len(e.Log))
			e.Log = renumber(slices.Delete(e.Log, i, i+1))
			return "a record dropped from the read-back"
		}
	case 2:
		if log := readBack(); log != nil {
			i := rng.IntN(len(log) - 1)
			log[i].ID, log[i+1].ID = log[i+1].ID, log[i].ID
			return "two records swapped in the read-back"
		}
	case 3:
		if e := pick(func(e *tracer.Event) bool { return e.Kind == tracer.Receive && e.Err == "NONE" }); e != nil {
			e.Offset += int64(rng.IntN(21) - 10)
			return "an acknowledged offset moved"
		}
	case 4:
		if e := pick(func(e *tracer.Event) bool { return e.Kind == tracer.ReadBack && len(e.Log) > 0 }); e != nil {
			e.Log = renumber(append(e.Log, e.Log[:1+rng.IntN(min(len(e.Log), 10))]...))
			return "records written again at the end"
		}
	case 5:
		if e := pick(func(e *tracer.Event) bool {
			return e.Kind == tracer.Receive && (e.Err == "NONE" || e.Err == "DUPLICATE_SEQUENCE_NUMBER")
		}); e != nil {
			for _, s := range events {
				if s.Kind == tracer.SendNew && s.Batch == e.Batch {
					s.T = e.T
				}
			}
			return "a batch sent only when it was acknowledged"
		}
	case 6:
		if e := pick(func(e *tracer.Event) bool { return e.Kind == tracer.ExpireBatch }); e != nil {
			e.Kind, e.Reason = tracer.Fail, "INVALID_RECORD"
			return "an expired batch failed definitely instead"
		}
	case 7:
		if e := pick(func(e *tracer.Event) bool { return e.Kind == tracer.Receive && e.Err == "NONE" }); e != nil {
			e.Err, e.Offset = "DUPLICATE_SEQUENCE_NUMBER", -1
			return "an acknowledgement without its offset"
		}
	}
	return "unchanged"
}
