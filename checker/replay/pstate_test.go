package replay

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveExpire is the shape of the pre-KAFKA-16229 code: collect the expired
// ids in a list, then remove each key found in the list by searching it.
func naiveExpire(entries map[int64]producerEntry, now, expiration int64) {
	var expired []int64
	for pid, e := range entries {
		if now-e.lastTs >= expiration {
			expired = append(expired, pid)
		}
	}
	for pid := range entries {
		if slices.Contains(expired, pid) {
			delete(entries, pid)
		}
	}
}

func TestRemoveExpiredMatchesNaive(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	for round := 0; round < 50; round++ {
		s := NewProducerStates()
		naive := map[int64]producerEntry{}
		for i := 0; i < rng.IntN(500); i++ {
			pid, ts := rng.Int64N(1000), rng.Int64N(10000)
			s.Update(pid, int16(i%5), ts)
			naive[pid] = producerEntry{epoch: int16(i % 5), lastTs: ts}
		}
		now, exp := int64(10000), rng.Int64N(10000)
		before := len(naive)
		removed := s.RemoveExpired(now, exp)
		naiveExpire(naive, now, exp)
		if removed != before-len(naive) || s.Len() != len(naive) {
			t.Fatalf("seed %d round %d: removed %d (left %d), naive left %d of %d", seed, round, removed, s.Len(), len(naive), before)
		}
		for pid, e := range naive {
			if ep, ok := s.Has(pid); !ok || ep != e.epoch {
				t.Fatalf("seed %d round %d: producer %d: %v %v, want epoch %d", seed, round, pid, ep, ok, e.epoch)
			}
		}
	}
}

// BenchmarkRemoveExpired expires every producer of a partition with n of
// them, the case KAFKA-16229 measured (100,000 ids: 7.7 ms after the fix).
// Per-id time should be flat across n:
//
//	go test ./checker/replay -run '^$' -bench BenchmarkRemoveExpired
func BenchmarkRemoveExpired(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("ids=%d", n), func(b *testing.B) {
			states := make([]*ProducerStates, b.N)
			for i := range states {
				s := NewProducerStates()
				for pid := int64(0); pid < int64(n); pid++ {
					s.Update(pid, 0, 0)
				}
				states[i] = s
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if got := states[i].RemoveExpired(1000, 1000); got != n {
					b.Fatalf("removed %d of %d", got, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/id")
		})
	}
}
