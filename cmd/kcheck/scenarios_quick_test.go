package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/kcheck/kcheck/matrix"
	"github.com/kcheck/kcheck/scenario"
)

// --quick on the scenario files as they are: its picks cover every
// invariant whose counterexample Kafka 4.x can give, each pick covers one
// no earlier pick did, no pick has a caveat, and a second reading picks
// the same.
func TestQuickOnSpecScenarios(t *testing.T) {
	scs, err := scenario.ReadDir(filepath.Join("..", "..", "spec", "scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	groups, err := scenarioGroups(scs, true)
	if err != nil {
		t.Fatal(err)
	}
	var coverable []string
	for _, s := range scs {
		if len(caveats(s)) == 0 && !slices.Contains(coverable, s.Invariant) {
			coverable = append(coverable, s.Invariant)
		}
	}
	picks := matrix.Quick(groups)
	var covered []string
	for _, p := range picks {
		if p.Name == matrix.Baseline || len(p.Caveats) > 0 || len(p.Covers) == 0 {
			t.Errorf("picked %s: Baseline, a caveat (%v) or nothing new covered (%v)", p.Name, p.Caveats, p.Covers)
		}
		for _, inv := range p.Covers {
			if slices.Contains(covered, inv) {
				t.Errorf("%s covers %s again", p.Name, inv)
			}
			covered = append(covered, inv)
		}
	}
	slices.Sort(covered)
	slices.Sort(coverable)
	if !slices.Equal(covered, coverable) {
		t.Errorf("the picks cover %v; the invariants Kafka 4.x can show are %v", covered, coverable)
	}
	if len(picks) >= len(groups)-1 {
		t.Errorf("%d picks of %d scenarios: no quicker than the whole matrix", len(picks), len(groups)-1)
	}
	again, _ := scenarioGroups(scs, true)
	slices.Reverse(again)
	var names, names2 []string
	for _, p := range picks {
		names = append(names, p.Name)
	}
	for _, p := range matrix.Quick(again) {
		names2 = append(names2, p.Name)
	}
	if !slices.Equal(names, names2) {
		t.Errorf("Quick picked %v, then %v from the same scenarios in another order", names, names2)
	}
	t.Logf("quick: %v of %d scenarios, covering %v", names, len(groups)-1, covered)
}
