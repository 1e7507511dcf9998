package scenario

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker/tlc/tlctest"
)

func writeScenario(t *testing.T, dir string, s *Scenario) {
	t.Helper()
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, s.Name+Ext), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	a, b := sample(), sample()
	b.Name, b.Invariant = "Cfg.NoDuplicate", "NoDuplicate"
	writeScenario(t, dir, a)
	writeScenario(t, dir, b)
	if problems, err := CheckDir(dir, []*Scenario{a, b}); err != nil || len(problems) != 0 {
		t.Fatalf("CheckDir of an up-to-date directory: %q, %v", problems, err)
	}

	// The spec now gives another step 3, and another prediction; c is new,
	// and Old.NoGap derives from nothing.
	a2, b2 := sample(), sample()
	a2.Steps[1].Fields[1].Value = "NOT_ENOUGH_REPLICAS"
	b2.Name, b2.Invariant = "Cfg.NoDuplicate", "NoDuplicate"
	b2.Predictions["kgo"] = "pass"
	c := sample()
	c.Name, c.Config = "New.NoGap", "New"
	old := sample()
	old.Name, old.Config = "Old.NoGap", "Old"
	writeScenario(t, dir, old)
	problems, err := CheckDir(dir, []*Scenario{a2, b2, c})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"stale: Cfg.NoGap: a scenario whose counterexample no longer matches the spec: step 3 is now RejectBeforeAppend p=p1 err=NOT_ENOUGH_REPLICAS odd=\"a b=c\" (the file has step 3 RejectBeforeAppend p=p1 err=NOT_LEADER_OR_FOLLOWER odd=\"a b=c\")",
		"stale: Cfg.NoDuplicate: " + filepath.Join(dir, "Cfg.NoDuplicate.scenario") + `:31: the file has "predict one-in-flight liveness", derive now writes "predict kgo pass"`,
		"missing: New.NoGap: no " + filepath.Join(dir, "New.NoGap.scenario"),
		"extra: Old.NoGap: " + filepath.Join(dir, "Old.NoGap.scenario") + " derives from no counterexample now",
	}
	if !slices.Equal(problems, want) {
		t.Errorf("CheckDir:\n  %s\nwant:\n  %s", strings.Join(problems, "\n  "), strings.Join(want, "\n  "))
	}

	// A counterexample one step longer or shorter.
	a3 := sample()
	a3.Steps = append(a3.Steps, Step{State: 4, Action: "Receive"})
	problems, _ = CheckDir(dir, []*Scenario{a3})
	if len(problems) == 0 || !strings.HasPrefix(problems[0], "stale: Cfg.NoGap: a scenario whose counterexample no longer matches the spec: step 4 Receive is new (the file ends at step 3)") {
		t.Errorf("CheckDir, a step more: %q", problems)
	}
	a3.Steps = a3.Steps[:1]
	a3.Loop = 0
	problems, _ = CheckDir(dir, []*Scenario{a3})
	if len(problems) == 0 || !strings.HasPrefix(problems[0], "stale: Cfg.NoGap: a scenario whose counterexample no longer matches the spec: the counterexample now ends at step 2; the file goes on with step 3") {
		t.Errorf("CheckDir, a step less: %q", problems)
	}
}

// DeriveSpec on SeedGap: two counterexamples (NoGap, and NoOutOfOrderLoss
// with the delivery timeout), identical to the files committed in
// spec/scenarios.
func TestDeriveSpecSeedGap(t *testing.T) {
	jar := tlctest.Jar(t)
	var progress bytes.Buffer
	ss, err := DeriveSpec(context.Background(), Options{SpecDir: "../spec", Configs: []string{"SeedGap"}, Jar: jar, Timeout: 5 * time.Minute, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	if want := []string{"SeedGap.NoGap", "SeedGap.NoOutOfOrderLoss"}; !slices.Equal(names, want) {
		t.Fatalf("scenarios %q, want %q", names, want)
	}
	gap := ss[0]
	if want := []string{"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=0,until=next,delay=1500ms,partitions=0"}; !slices.Equal(gap.Schedule, want) {
		t.Errorf("SeedGap.NoGap schedule %q, want %q", gap.Schedule, want)
	}
	if gap.Predictions["java"] != "invariant:NoGap" || gap.Predictions["ours"] != "pass" || gap.Predictions["kgo"] != "pass" {
		t.Errorf("SeedGap.NoGap predictions %v", gap.Predictions)
	}
	if !ss[1].Needs.DeliveryTimeout || ss[1].Needs.NoStateRule != "v25to44" {
		t.Errorf("SeedGap.NoOutOfOrderLoss needs %+v", ss[1].Needs)
	}
	// 6 invariants alone, and a prediction per modelled family.
	if n := strings.Count(progress.String(), "\n"); n < 6+3 {
		t.Errorf("progress: %d lines:\n%s", n, progress.String())
	}
	problems, err := CheckDir("../spec/scenarios", ss)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if !strings.HasPrefix(p, "extra: ") { // the other configurations' scenarios
			t.Errorf("spec/scenarios: %s (make scenarios-derive)", p)
		}
	}
}

func TestDeriveSpecErrors(t *testing.T) {
	jar := filepath.Join("..", "spec", "IdempotentProducer.tla") // any file: TLC does not run
	for _, tt := range []struct {
		configs []string
		want    string
	}{
		{[]string{"Nope"}, "lists no configuration Nope"},
		{[]string{"RuleOn"}, "RuleOn expects pass: no counterexample to derive"},
		{[]string{"TansuKafkajs"}, "TansuKafkajs derives no scenario: they model a broker variant"},
	} {
		_, err := DeriveSpec(context.Background(), Options{SpecDir: "../spec", Configs: tt.configs, Jar: jar})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DeriveSpec(%q): %v, want %q", tt.configs, err, tt.want)
		}
	}
}

// Skipped lists the configurations that expect a violation and derive no
// scenario, in the order of spec/expect.tsv: those that model the tansu
// broker variant (the transactional configurations derive too).
func TestSkipped(t *testing.T) {
	skips, err := Skipped(Options{SpecDir: "../spec"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range skips {
		if s.Exp.Module != "IdempotentProducer" || !strings.HasPrefix(s.Exp.Name, "Tansu") || s.Why != variantWhy {
			t.Errorf("%s: module %s, why %q", s.Exp.Name, s.Exp.Module, s.Why)
		}
		names = append(names, s.Exp.Name)
	}
	if want := []string{"TansuLibrdkafkaLive", "TansuKafkajs"}; !slices.Equal(names, want) {
		t.Errorf("skipped %q, want %q", names, want)
	}
}
