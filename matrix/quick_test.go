package matrix

import (
	"math/rand"
	"slices"
	"testing"
)

func TestQuick(t *testing.T) {
	fail, pass := "invariant:NoGap", "pass"
	sc := func(name string, faults int, violates []string, failing int) *Scenario {
		s := &Scenario{Name: name, Violates: violates, Predictions: map[string]string{}}
		for i := range faults {
			s.Schedule = append(s.Schedule, "reject:err=NOT_LEADER_OR_FOLLOWER,seq="+string(rune('0'+i)))
		}
		for i, f := range []string{"a", "b", "c", "d", "e"} {
			s.Predictions[f] = pass
			if i < failing {
				s.Predictions[f] = fail
			}
		}
		return s
	}
	scs := []*Scenario{
		{Name: Baseline, Predictions: map[string]string{}},
		sc("Wide", 2, []string{"NoGap", "NoDuplicate", "NoReorder"}, 2),
		// As wide as Wide, but a violation for more families: first.
		sc("Hurts", 3, []string{"NoGap", "NoOutOfOrderLoss", "NoReorder"}, 4),
		// Cover what is left (NoDuplicate), as Wide does, for as many families:
		// the fewest faults wins.
		sc("Long", 3, []string{"NoDuplicate"}, 2),
		sc("Short", 1, []string{"NoDuplicate"}, 2),
		// The same as Short but for its name.
		sc("Shorter", 1, []string{"NoDuplicate"}, 2),
		// A caveat's scenario: nothing the brokers here can show.
		sc("Caveat", 1, nil, 5),
		sc("Liveness", 2, []string{"EventuallyAcked", "NoGap"}, 0),
	}
	want := []string{"Hurts", "Short", "Liveness"}
	covers := [][]string{{"NoGap", "NoOutOfOrderLoss", "NoReorder"}, {"NoDuplicate"}, {"EventuallyAcked"}}
	rng := rand.New(rand.NewSource(28))
	for i := range 20 {
		in := slices.Clone(scs)
		if i > 0 {
			rng.Shuffle(len(in), func(a, b int) { in[a], in[b] = in[b], in[a] })
		}
		picks := Quick(in)
		var got []string
		for _, p := range picks {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("order %d (seed 28): Quick picked %v, want %v", i, got, want)
		}
		for j, p := range picks {
			if !slices.Equal(p.Covers, covers[j]) {
				t.Errorf("%s covers %v, want %v", p.Name, p.Covers, covers[j])
			}
		}
		if f := picks[0].Failing; !slices.Equal(f, []string{"a", "b", "c", "d"}) {
			t.Errorf("Hurts: Failing %v, want a b c d", f)
		}
	}
	if picks := Quick([]*Scenario{scs[0], scs[6]}); len(picks) != 0 {
		t.Errorf("Quick chose %v from the Baseline and a scenario with a caveat", picks)
	}
}
