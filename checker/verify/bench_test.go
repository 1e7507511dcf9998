package verify

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kcheck/kcheck/checker/verify/synth"
	"github.com/kcheck/kcheck/tracer"
)

// synthTrace writes a conformant trace of about n events (synth.Write) into
// a temporary directory and returns its path.
func synthTrace(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), fmt.Sprintf("synth-%d.jsonl", n))
	if err := synth.Write(path, n); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestSynthTraceValid(t *testing.T) {
	rep, err := File(context.Background(), synthTrace(t, 5000), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != Valid {
		t.Fatalf("verdict %s: %+v %s", rep.Verdict, rep.Violations, rep.Conformance)
	}
}

// BenchmarkVerify reports events/s and ns per event at 10k, 100k and 1M
// events (flat per-event time means nothing quadratic):
//
//	go test ./checker/verify -run '^$' -bench BenchmarkVerify -benchtime 3x
func BenchmarkVerify(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			path := synthTrace(b, n)
			b.ResetTimer()
			var rep *Report
			for i := 0; i < b.N; i++ {
				var err error
				if rep, err = File(context.Background(), path, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if rep.Verdict != Valid {
				b.Fatalf("verdict %s", rep.Verdict)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(rep.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rep.Events), "ns/event")
		})
	}
}

// BenchmarkPipedVerify is BenchmarkVerify's 1M-event trace read as from a
// pipe (kcheck verify - < trace): the lines a report may quote are kept as
// they are read, there being no file to read them from again.
//
//	go test ./checker/verify -run '^$' -bench BenchmarkPipedVerify -benchtime 2x -benchmem
func BenchmarkPipedVerify(b *testing.B) {
	path := synthTrace(b, 1_000_000)
	b.ResetTimer()
	var rep *Report
	for i := 0; i < b.N; i++ {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := tracer.NewReader(struct{ io.Reader }{f}, StdinName) // no ReaderAt, no Source
		if err != nil {
			b.Fatal(err)
		}
		if rep, err = Trace(context.Background(), r, Options{}); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	b.StopTimer()
	if rep.Verdict != Valid {
		b.Fatalf("verdict %s", rep.Verdict)
	}
	b.ReportMetric(float64(rep.Events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
