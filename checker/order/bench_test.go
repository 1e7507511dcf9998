package order

import (
	"fmt"
	"testing"

	"github.com/kcheck/kcheck/tracer"
)

// synth makes a trace of about n events from one producer on 16 partitions:
// batches of 4 records, one in ten answered NOT_LEADER_OR_FOLLOWER once and
// retried, then a read-back of every partition. With faulty, about one batch
// in a hundred is missing from the log behind a later sequence (lost) and one
// in a hundred is swapped with the next (reordered), which takes the
// checker's slower paths.
func synth(n int, faulty bool) *trace {
	const parts, size = 16, 4
	tr := newTrace()
	tr.h.Partitions = parts
	var seq [parts]int32
	var logs [parts][]tracer.LogRecord
	id, b := int64(1), int64(1)
	for len(tr.evs) < n-parts {
		p := int32(b % parts)
		ids := make([]int64, size)
		for i := range ids {
			ids[i] = id
			id++
		}
		s := seq[p]
		seq[p] += size
		tr.send(p, b, 0, s, ids...)
		if b%10 == 0 {
			tr.recv(p, b, 0, s, "NOT_LEADER_OR_FOLLOWER", -1)
			tr.resend(p, b, 0, s)
		}
		off := int64(len(logs[p]))
		switch {
		case faulty && b%100 == 7:
			tr.expire(p, b, 0, s) // never written: a later sequence follows it
		case faulty && b%100 == 42 && len(logs[p]) >= size:
			// written before the previous batch of its partition
			prev := append([]tracer.LogRecord(nil), logs[p][len(logs[p])-size:]...)
			mine := batchLog(off-size, 0, s, ids...)
			for i := range prev {
				prev[i].Offset += size
			}
			logs[p] = append(append(logs[p][:len(logs[p])-size], mine...), prev...)
			tr.recv(p, b, 0, s, "NONE", off-size)
		default:
			tr.recv(p, b, 0, s, "NONE", off)
			logs[p] = append(logs[p], batchLog(off, 0, s, ids...)...)
		}
		b++
	}
	for p := range int32(parts) {
		tr.readBack(p, logs[p]...)
	}
	return tr
}

// BenchmarkOrder feeds traces of 10k, 100k and 1M events through a Checker;
// ns/event should stay flat as the trace grows.
func BenchmarkOrder(b *testing.B) {
	for _, faulty := range []bool{false, true} {
		for _, n := range []int{10_000, 100_000, 1_000_000} {
			name := fmt.Sprintf("clean/events=%d", n)
			if faulty {
				name = fmt.Sprintf("faulty/events=%d", n)
			}
			b.Run(name, func(b *testing.B) {
				tr := synth(n, faulty)
				var res Result
				for b.Loop() {
					c := New(tr.h)
					for _, e := range tr.evs {
						c.Add(int(e.I)+1, e)
					}
					res = c.Finish()
				}
				if faulty != (len(res.Violations) > 0) {
					b.Fatalf("faulty=%v but %d violations", faulty, len(res.Violations))
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(tr.evs)), "ns/event")
				b.ReportMetric(float64(res.Stats.Records), "records")
			})
		}
	}
}

// The synthetic traces are what they claim: clean passes, faulty loses and
// reorders, nothing else.
func TestSynth(t *testing.T) {
	if res := synth(5000, false).run(); len(res.Violations) != 0 {
		t.Fatalf("clean synthetic trace: %v", kinds(res.Violations))
	}
	for _, v := range synth(5000, true).run().Violations {
		switch v.Kind {
		case "lost-write", "nonmonotonic-send", "inconsistent-offsets":
		default:
			t.Errorf("faulty synthetic trace: unexpected %s: %s", v.Kind, v.Detail)
		}
	}
}
