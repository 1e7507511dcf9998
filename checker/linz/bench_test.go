package linz

import (
	"fmt"
	"testing"
)

// BenchmarkCheck feeds and checks synthetic traces (synth: five in flight,
// retries, timeouts, expiries) of 10k, 100k and 1M events over 16
// partitions, and of 1M events on one partition, which only segments keep
// from Porcupine's cache, quadratic in a search's operations. It reports the
// time per event, Add and Check together.
func BenchmarkCheck(b *testing.B) {
	for _, bc := range []struct{ events, parts int }{
		{10_000, 16}, {100_000, 16}, {1_000_000, 16}, {1_000_000, 1},
	} {
		h, events := synth(bc.events, bc.parts, 1)
		b.Run(fmt.Sprintf("events=%d/partitions=%d", bc.events, bc.parts), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := feed(h, events).Check(0); res.Verdict != Ok {
					b.Fatalf("verdict %s", res.Verdict)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
		})
	}
}
