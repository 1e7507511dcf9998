package linz

import (
	"math/rand/v2"
	"testing"
	"time"
)

// certify says Ok only where Porcupine, searching the same history, says Ok:
// on synthetic histories, left alone or made wrong in one of several ways,
// in one search per partition and in segments of four appends.
func TestCertifyAgreesWithPorcupine(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	certified, searched := 0, map[Verdict]int{}
	for i := range 300 {
		h, events := synth(200+rng.IntN(400), 1+rng.IntN(3), rng.Uint64())
		what := mutate(rng, events)
		c := feed(h, events)
		if i%2 == 1 {
			c.segmentOps = 4
		}
		for _, id := range c.partitionIDs() {
			p := c.parts[id]
			if c.uncheckable(p) != "" {
				continue
			}
			run := c.history(p)
			pr := PartitionResult{run: run}
			pr.check(newModel(), 0, time.Time{})
			if run.linearized {
				certified++
				if pr.Verdict != Ok {
					t.Fatalf("seed %d, case %d (%s), partition %d: certified, but Porcupine says %s: %s", seed, i, what, id, pr.Verdict, pr.Reason)
				}
			} else {
				searched[pr.Verdict]++
			}
		}
	}
	t.Logf("certified %d partitions; Porcupine alone: %v", certified, searched)
	if certified == 0 || searched[Illegal] == 0 {
		t.Fatalf("certified %d, Porcupine alone %v: want both", certified, searched)
	}
}

// An Ok partition that certify spared Porcupine's search is still shown with
// Porcupine's linearization.
func TestVisualizeCertified(t *testing.T) {
	h, events := synth(2_000, 2, 5)
	res := feed(h, events).Check(time.Minute)
	if res.Verdict != Ok {
		t.Fatalf("verdict %s", res.Verdict)
	}
	for _, pr := range res.Partitions {
		if !pr.run.linearized {
			t.Fatalf("partition %d was searched, not certified", pr.Partition)
		}
		var b countWriter
		if err := res.VisualizePartition(&b, pr.Partition); err != nil {
			t.Fatal(err)
		}
		if pr.run.info.PartialLinearizations() == nil || b.n == 0 {
			t.Fatalf("partition %d: no linearization shown", pr.Partition)
		}
	}
}

// countWriter counts what is written to it.
type countWriter struct{ n int }

func (b *countWriter) Write(p []byte) (int, error) { b.n += len(p); return len(p), nil }

// The set of ids answers as a map would, across its table's growth and the
// map it keeps for far ids.
func TestIDSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var s idSet
	want := map[int64]bool{}
	for i := range 200_000 {
		id := int64(rng.IntN(4 * (i + 1)))
		switch rng.IntN(20) {
		case 0:
			id = -id
		case 1:
			id += 1 << 40
		}
		if got := s.add(id); got == want[id] {
			t.Fatalf("add(%d) = %v, but it was in the set: %v", id, got, want[id])
		}
		want[id] = true
	}
	for id := range want {
		if !s.has(id) {
			t.Fatalf("%d lost", id)
		}
	}
}
