package tlc

import "testing"

func TestOutcomeMatches(t *testing.T) {
	var (
		pass     = Outcome{Kind: Pass}
		dup      = Outcome{Kind: Invariant, Name: "NoDuplicates"}
		order    = Outcome{Kind: Invariant, Name: "InOrder"}
		liveness = Outcome{Kind: Liveness}
		deadlock = Outcome{Kind: Deadlock}
		failed   = Outcome{Kind: Error}
	)
	tests := []struct {
		got, want Outcome
		ok        bool
	}{
		{pass, pass, true},
		{dup, dup, true},
		{liveness, liveness, true},
		{deadlock, deadlock, true},
		{dup, order, false}, // another invariant is violated
		{dup, pass, false},
		{pass, dup, false},
		{liveness, pass, false},
		{deadlock, liveness, false},
		{failed, pass, false},
		{failed, failed, false}, // an error never matches
	}
	for _, tt := range tests {
		if ok := tt.got.Matches(tt.want); ok != tt.ok {
			t.Errorf("%s.Matches(%s) = %v, want %v", tt.got, tt.want, ok, tt.ok)
		}
	}
}

func TestReportOK(t *testing.T) {
	e := Expectation{Name: "dup", Expect: Outcome{Kind: Invariant, Name: "NoDuplicates"}}
	if (Report{Expectation: e}).OK() {
		t.Error("a report without a result is OK")
	}
	r := Report{Expectation: e, Result: ParseOutput(readOutput(t, "invariant"))}
	if r.OK() {
		t.Error("Small violated, NoDuplicates expected: OK")
	}
	r.Expect.Name = "Small"
	if !r.OK() {
		t.Error("Small violated, Small expected: not OK")
	}
}
