package matrix

import (
	"slices"
	"sort"
	"strings"
)

// QuickPick is a scenario Quick chose, and why.
type QuickPick struct {
	*Scenario
	// Covers are the invariants of Violates no scenario chosen before it
	// covered, sorted.
	Covers []string
	// Failing are the families TLC predicts a violation for on it
	// (PredictsViolation), sorted.
	Failing []string
}

// Quick chooses the scenarios of a quick run (kcheck scenarios run
// --quick) from scs, by a rule on the data alone, with no scenario named:
// a few scenarios that between them cover every invariant of their
// Violates (the invariants whose TLC counterexample the brokers here can
// give), chosen greedily (set cover's greedy rule: not always the fewest
// possible, but within a small factor of it, and deterministic). Each pick is the scenario covering the most
// invariants not covered yet; of those, the one TLC predicts a violation
// for in the most client families (the most likely to hurt), then the one
// with the fewest faults in its schedule, then the first by name. A
// scenario with no faults (the Baseline) or no Violates is never chosen.
// The picks are in the order chosen; the same scs give the same picks.
func Quick(scs []*Scenario) []QuickPick {
	covered := map[string]bool{}
	var picks []QuickPick
	for {
		var best *QuickPick
		for _, s := range scs {
			if len(s.Schedule) == 0 || slices.ContainsFunc(picks, func(p QuickPick) bool { return p.Scenario == s }) {
				continue
			}
			p := QuickPick{Scenario: s, Failing: failing(s)}
			for _, inv := range s.Violates {
				if !covered[inv] && !slices.Contains(p.Covers, inv) {
					p.Covers = append(p.Covers, inv)
				}
			}
			if len(p.Covers) > 0 && (best == nil || better(p, *best)) {
				best = &p
			}
		}
		if best == nil {
			return picks
		}
		sort.Strings(best.Covers)
		for _, inv := range best.Covers {
			covered[inv] = true
		}
		picks = append(picks, *best)
	}
}

// better reports whether p is a better pick than q (Quick's order).
func better(p, q QuickPick) bool {
	if len(p.Covers) != len(q.Covers) {
		return len(p.Covers) > len(q.Covers)
	}
	if len(p.Failing) != len(q.Failing) {
		return len(p.Failing) > len(q.Failing)
	}
	if len(p.Schedule) != len(q.Schedule) {
		return len(p.Schedule) < len(q.Schedule)
	}
	return strings.Compare(p.Name, q.Name) < 0
}

// failing returns the families TLC predicts a violation for on s, sorted.
func failing(s *Scenario) []string {
	var fs []string
	for f, p := range s.Predictions {
		if PredictsViolation(p) {
			fs = append(fs, f)
		}
	}
	sort.Strings(fs)
	return fs
}
