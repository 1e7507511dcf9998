package tlc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestWriteTraceLasso(t *testing.T) {
	r := ParseOutput(readOutput(t, "lasso"))
	var b bytes.Buffer
	if err := WriteTrace(&b, r.Trace, "  "); err != nil {
		t.Fatal(err)
	}
	const want = `   1  (initial)  [act |-> "Init"]
        x = 0
        log = <<>>
  *2  Inc        [act |-> "Inc", p |-> p1, seq |-> 0]
        x = 1
        log = <<[p |-> p1, v |-> 1, note |-> "a note long enough to make TLC wrap"]>>
   3  Inc        [act |-> "Inc", p |-> p2, seq |-> 1]
        x = 2
        log = << [p |-> p1, v |-> 1, note |-> "a note long enough to make TLC wrap"],
                 [p |-> p2, v |-> 2, note |-> "a note long enough to make TLC wrap"] >>
   4  Inc        [act |-> "Inc", p |-> p1, seq |-> 2]
        x = 3
        log = << [p |-> p1, v |-> 1, note |-> "a note long enough to make TLC wrap"],
                 [p |-> p2, v |-> 2, note |-> "a note long enough to make TLC wrap"],
                 [p |-> p1, v |-> 3, note |-> "a note long enough to make TLC wrap"] >>
   5  Reset      [act |-> "Reset"]
        x = 0
        log = <<>>
  *2  Inc        [act |-> "Inc", p |-> p1, seq |-> 0]
        x = 1
        log = <<[p |-> p1, v |-> 1, note |-> "a note long enough to make TLC wrap"]>>
  *2: after state 5 the behavior goes back to state 2, and so on forever
`
	if got := b.String(); got != want {
		t.Errorf("WriteTrace:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteTraceChangedOnly(t *testing.T) {
	trace := []Step{
		{State: 1, Action: InitialPredicate, Vars: []Var{{"a", "0"}, {"b", "{}"}}},
		{State: 2, Action: "SetA", Vars: []Var{{"a", "1"}, {"b", "{}"}}},
		{State: 3, Action: "Nop", Vars: []Var{{"a", "1"}, {"b", "{}"}}},
		{State: 4, Stuttering: true},
	}
	var b bytes.Buffer
	if err := WriteTrace(&b, trace, ""); err != nil {
		t.Fatal(err)
	}
	// Without an event variable, a step's row has its number and action.
	const want = "1  (initial)\n" +
		"     a = 0\n" +
		"     b = {}\n" +
		"2  SetA\n" +
		"     a = 1\n" +
		"3  Nop        (no change)\n" +
		"4  (stutter)  state 3 repeats forever\n"
	if got := b.String(); got != want {
		t.Errorf("WriteTrace:\n%s\nwant:\n%s", got, want)
	}
}

func report(t *testing.T, output, expect string) Report {
	t.Helper()
	o, err := ParseOutcome(expect)
	if err != nil {
		t.Fatal(err)
	}
	res := ParseOutput(readOutput(t, output))
	res.Duration = 1500 * time.Millisecond
	res.ExitCode = 12
	return Report{
		Expectation: Expectation{Name: output, Expect: o, Description: "about " + output, Module: "Toy"},
		Result:      res,
	}
}

func TestWriteReport(t *testing.T) {
	tests := []struct {
		output, expect string
		want, notWant  []string
	}{
		{
			// The expected counterexample is printed.
			output: "invariant", expect: "invariant:Small",
			want: []string{
				"=== invariant: expected invariant:Small, got invariant:Small: OK (8 distinct states, depth 4, 1.5s)\n    about invariant\n",
				"Counterexample (invariant Small is violated in the last state):",
				`   4  Inc        [act |-> "Inc", p |-> p1, seq |-> 2]`,
			},
			notWant: []string{"TLC said"},
		},
		{
			output: "pass", expect: "pass",
			want:    []string{"=== pass: expected pass, got pass: OK"},
			notWant: []string{"TLC said", "Counterexample"},
		},
		{
			// A check that should pass but finds a violation.
			output: "invariant", expect: "pass",
			want: []string{
				"got invariant:Small: MISMATCH",
				"TLC said (exit status 12):\n      Error: Invariant Small is violated.\n",
				"Counterexample",
			},
		},
		{
			output: "pass", expect: "invariant:Small",
			want: []string{"MISMATCH", "TLC said (exit status 12):\n      Model checking completed. No error has been found.\n"},
		},
		{
			output: "semantic", expect: "pass",
			want: []string{"got error: MISMATCH", "      Unknown operator: `y'.\n"},
		},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := WriteReport(&b, report(t, tt.output, tt.expect)); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s expecting %s: report lacks %q:\n%s", tt.output, tt.expect, w, got)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(got, w) {
				t.Errorf("%s expecting %s: report has %q:\n%s", tt.output, tt.expect, w, got)
			}
		}
	}
}

func TestWriteSummary(t *testing.T) {
	reports := []Report{report(t, "pass", "pass"), report(t, "invariant", "pass")}
	var b bytes.Buffer
	if err := WriteSummary(&b, reports); err != nil {
		t.Fatal(err)
	}
	const want = `NAME       EXPECTED  GOT              STATES  DEPTH  TIME  RESULT
pass       pass      pass             16      5      1.5s  OK
invariant  pass      invariant:Small  8       4      1.5s  MISMATCH
1 of 2 configurations did not conclude as expected
`
	if got := b.String(); got != want {
		t.Errorf("WriteSummary:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteJSON(t *testing.T) {
	reports := []Report{report(t, "pass", "pass"), report(t, "lasso", "liveness")}
	var b bytes.Buffer
	if err := WriteJSON(&b, reports); err != nil {
		t.Fatal(err)
	}
	var got []JSONReport
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v in %s", err, b.String())
	}
	if len(got) != 2 {
		t.Fatalf("%d reports, want 2", len(got))
	}
	p, l := got[0], got[1]
	if p.Name != "pass" || p.Expected != "pass" || p.Got != "pass" || !p.OK || p.States != 16 ||
		p.Generated != 25 || p.Depth != 5 || p.Seconds != 1.5 || p.Messages == nil || p.Trace == nil {
		t.Errorf("pass report = %+v", p)
	}
	if l.Got != "liveness" || !l.OK || len(l.Trace) != 6 || l.Trace[5].BackTo != 2 || l.Trace[1].Vars[0].Name != "event" {
		t.Errorf("lasso report = %+v", l)
	}
	for _, key := range []string{`"distinct_states": 16`, `"back_to": 2`, `"action": "Reset"`, `"expected": "liveness"`} {
		if !strings.Contains(b.String(), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestFlatten(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<<>>", "<<>>"},
		{"[ ep |-> 0,\n  b |-> 1,\n  err |-> \"NOT_LEADER_OR_FOLLOWER\",\n  act |-> \"RejectBeforeAppend\" ]",
			`[ep |-> 0, b |-> 1, err |-> "NOT_LEADER_OR_FOLLOWER", act |-> "RejectBeforeAppend"]`},
		{"( p1 :>\n      << [ ep |-> -1,\n           st |-> \"unsent\" ],\n         [ep |-> 0] >> )",
			`(p1 :> <<[ep |-> -1, st |-> "unsent"], [ep |-> 0]>>)`},
		{"{ a,\n  b }", "{a, b}"},
		// Strings are kept as they are.
		{"[ s |-> \"[ x ]  \\\" ]\",\n  t |-> 1 ]", `[s |-> "[ x ]  \" ]", t |-> 1]`},
	}
	for _, tt := range tests {
		if got := flatten(tt.in); got != tt.want {
			t.Errorf("flatten(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestLayout(t *testing.T) {
	const batch = `( p1 :>
      << [ ep |-> 0,
           st |-> "sent",
           seq |-> 0,
           reset |-> FALSE ],
         [ ep |-> -1,
           st |-> "unsent",
           seq |-> -1,
           reset |-> FALSE ] >> @@
  p2 :> <<>> )`
	tests := []struct {
		v          string
		col, width int
		want       string
	}{
		{"<<>>", 10, 20, "<<>>"},
		{batch, 0, 200, `(p1 :> <<[ep |-> 0, st |-> "sent", seq |-> 0, reset |-> FALSE], [ep |-> -1, st |-> "unsent", seq |-> -1, reset |-> FALSE]>> @@ p2 :> <<>>)`},
		// One element a line, each on one line if it fits.
		{batch, 8, 80, `( p1 :> << [ep |-> 0, st |-> "sent", seq |-> 0, reset |-> FALSE],
           [ep |-> -1, st |-> "unsent", seq |-> -1, reset |-> FALSE] >>
  @@ p2 :> <<>> )`},
		// Narrower: records broken too.
		{batch, 8, 70, `( p1 :> << [ ep |-> 0,
             st |-> "sent",
             seq |-> 0,
             reset |-> FALSE ],
           [ ep |-> -1,
             st |-> "unsent",
             seq |-> -1,
             reset |-> FALSE ] >>
  @@ p2 :> <<>> )`},
		// Unbalanced: left as it is.
		{"<< [a |-> 1,\n  b |-> 2 >>", 0, 10, "<< [a |-> 1,\n  b |-> 2 >>"},
	}
	for _, tt := range tests {
		if got := layout(tt.v, tt.col, tt.width); got != tt.want {
			t.Errorf("layout(%q, %d, %d):\n%s\nwant:\n%s", tt.v, tt.col, tt.width, got, tt.want)
		}
	}
}
