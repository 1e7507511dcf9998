package tlc

import (
	"strings"
	"testing"
)

func TestParseExpectations(t *testing.T) {
	const in = "# name\texpect\tdescription\n" +
		"\n" +
		"happy\tpass\tno fault: every record is appended once\n" +
		"dup\tinvariant:NoDuplicates\tretry without idempotence duplicates a record\r\n" +
		"  \n" +
		"live\tliveness\tthe producer may retry forever\n" +
		"stuck\tdeadlock\tno step after the fence\tOtherSpec.tla\n" +
		"trace_1\tpass\ta trace\tTrace_1\n"
	exps, err := ParseExpectations(strings.NewReader(in), "expect.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Expectation{
		{Name: "happy", Expect: Outcome{Kind: Pass}, Description: "no fault: every record is appended once", Module: DefaultModule, Line: 3},
		{Name: "dup", Expect: Outcome{Kind: Invariant, Name: "NoDuplicates"}, Description: "retry without idempotence duplicates a record", Module: DefaultModule, Line: 4},
		{Name: "live", Expect: Outcome{Kind: Liveness}, Description: "the producer may retry forever", Module: DefaultModule, Line: 6},
		{Name: "stuck", Expect: Outcome{Kind: Deadlock}, Description: "no step after the fence", Module: "OtherSpec", Line: 7},
		{Name: "trace_1", Expect: Outcome{Kind: Pass}, Description: "a trace", Module: "Trace_1", Line: 8},
	}
	if len(exps) != len(want) {
		t.Fatalf("got %d expectations, want %d: %+v", len(exps), len(want), exps)
	}
	for i, w := range want {
		w.File = "expect.tsv"
		if exps[i] != w {
			t.Errorf("expectation %d = %+v, want %+v", i, exps[i], w)
		}
	}
	if got := exps[3].Config(); got != "stuck.cfg" {
		t.Errorf("Config() = %q", got)
	}
	if got := exps[3].ModuleFile(); got != "OtherSpec.tla" {
		t.Errorf("ModuleFile() = %q", got)
	}
	if got := exps[1].Pos(); got != "expect.tsv:4" {
		t.Errorf("Pos() = %q", got)
	}
}

func TestParseExpectationsMalformed(t *testing.T) {
	tests := []struct{ in, err string }{
		{"# ok\nhappy pass spaces not tabs\n", "expect.tsv:2: want 3 or 4 tab-separated fields (name, expect, description[, module]), got 1"},
		{"happy\tpass\n", "expect.tsv:1: want 3 or 4 tab-separated fields"},
		{"happy\tpass\tdesc\tMod\textra\n", "expect.tsv:1: want 3 or 4 tab-separated fields (name, expect, description[, module]), got 5"},
		{"happy\tok\tdesc\n", `expect.tsv:1: expect "ok": want pass, invariant:<Name>, liveness or deadlock`},
		{"happy\terror\tdesc\n", `expect.tsv:1: expect "error": want pass`},
		{"happy\tinvariant\tdesc\n", `expect.tsv:1: expect "invariant": want`},
		{"happy\tinvariant:\tdesc\n", `expect.tsv:1: expect "invariant:": want`},
		{"happy\tinvariant:No Dup\tdesc\n", `expect.tsv:1: expect "invariant:No Dup": want`},
		{"happy\tPass\tdesc\n", `expect.tsv:1: expect "Pass": want`},
		{"\tpass\tdesc\n", `expect.tsv:1: name "": want a configuration name`},
		{"../etc/passwd\tpass\tdesc\n", `expect.tsv:1: name "../etc/passwd": want a configuration name`},
		{"happy\tpass\t \n", `expect.tsv:1: empty description for "happy"`},
		{"happy\tpass\tdesc\tsub/Mod\n", `expect.tsv:1: module "sub/Mod": want a module name`},
		{"happy\tpass\tdesc\t\n", `expect.tsv:1: module "": want a module name`},
		{"a\tpass\tone\n\nb\tpass\ttwo\na\tdeadlock\tthree\n", `expect.tsv:4: "a" is already listed on line 1`},
	}
	for _, tt := range tests {
		_, err := ParseExpectations(strings.NewReader(tt.in), "expect.tsv")
		if err == nil {
			t.Errorf("ParseExpectations(%q): no error, want %q", tt.in, tt.err)
			continue
		}
		if !strings.HasPrefix(err.Error(), tt.err) {
			t.Errorf("ParseExpectations(%q) error:\n got %q\nwant %q...", tt.in, err, tt.err)
		}
	}
}

func TestReadExpectationsMissing(t *testing.T) {
	_, err := ReadExpectations("testdata/no-such-file.tsv")
	if err == nil || !strings.Contains(err.Error(), "no-such-file.tsv") {
		t.Errorf("error = %v, want one naming the file", err)
	}
}

func TestParseOutcomeRoundTrip(t *testing.T) {
	for _, s := range []string{"pass", "liveness", "deadlock", "invariant:NoDuplicates", "invariant:Inv_2"} {
		o, err := ParseOutcome(s)
		if err != nil {
			t.Errorf("ParseOutcome(%q): %v", s, err)
			continue
		}
		if got := o.String(); got != s {
			t.Errorf("ParseOutcome(%q).String() = %q", s, got)
		}
	}
}
