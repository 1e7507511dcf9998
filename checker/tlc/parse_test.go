package tlc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readOutput returns a captured TLC output from testdata/output (see
// testdata/capture.sh).
func readOutput(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "output", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func actions(trace []Step) []string {
	var a []string
	for _, s := range trace {
		switch {
		case s.Stuttering:
			a = append(a, "stutter")
		case s.BackTo > 0:
			a = append(a, "back:"+s.Action)
		default:
			a = append(a, s.Action)
		}
	}
	return a
}

func TestParseOutput(t *testing.T) {
	const ip = InitialPredicate
	tests := []struct {
		file      string
		outcome   string
		states    int64
		generated int64
		depth     int
		actions   []string
		messages  []string // substrings, each of some message
	}{
		{file: "pass", outcome: "pass", states: 16, generated: 25, depth: 5},
		{file: "terminal", outcome: "pass", states: 7, generated: 7, depth: 3},
		{
			file: "invariant", outcome: "invariant:Small", states: 8, generated: 8, depth: 4,
			actions:  []string{ip, "Inc", "Inc", "Inc"},
			messages: []string{"Error: Invariant Small is violated."},
		},
		{
			file: "initial", outcome: "invariant:Started",
			actions: []string{ip},
		},
		{
			// No depth line: the depth is that of the last progress report.
			file: "lasso", outcome: "liveness", states: 16, generated: 25, depth: 5,
			actions:  []string{ip, "Inc", "Inc", "Inc", "Reset", "back:Inc"},
			messages: []string{"Temporal properties were violated"},
		},
		{
			file: "stutter", outcome: "liveness", states: 7, generated: 7, depth: 3,
			actions: []string{ip, "Inc", "Inc", "stutter"},
		},
		{
			file: "deadlock", outcome: "deadlock", states: 7, generated: 7, depth: 3,
			actions: []string{ip, "Inc", "Inc"},
		},
		{
			// An evaluation error is an error, even with a trace.
			file: "eval", outcome: "error", states: 3, generated: 3, depth: 3,
			actions:  []string{ip, "Next", "Next"},
			messages: []string{"Evaluating invariant Inv failed", `The second argument of \div is 0.`},
		},
		{
			file: "parse", outcome: "error",
			messages: []string{"***Parse Error***", "at line 5, column 1", "Parsing or semantic analysis failed"},
		},
		{
			file: "semantic", outcome: "error",
			messages: []string{"line 5, col 14 to line 5, col 14 of module Semantic", "Unknown operator: `y'."},
		},
		{
			file: "undefined", outcome: "error",
			messages: []string{"The invariant Undefined specified in the configuration file"},
		},
		{
			// TLC 2.18 knows no POSTCONDITION.
			file: "postcondition", outcome: "error",
			messages: []string{"ConfigFileException", "error in the configuration file at line 4"},
		},
		{
			file: "missing_config", outcome: "error",
			messages: []string{"missing.cfg", "File not found."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := ParseOutput(readOutput(t, tt.file))
			if got := r.Outcome.String(); got != tt.outcome {
				t.Errorf("outcome = %s, want %s; messages: %q", got, tt.outcome, r.Messages)
			}
			if r.States != tt.states || r.Generated != tt.generated || r.Depth != tt.depth {
				t.Errorf("states, generated, depth = %d, %d, %d, want %d, %d, %d",
					r.States, r.Generated, r.Depth, tt.states, tt.generated, tt.depth)
			}
			if got := actions(r.Trace); !slices.Equal(got, tt.actions) {
				t.Errorf("trace actions = %q, want %q", got, tt.actions)
			}
			all := strings.Join(r.Messages, "\n")
			for _, m := range tt.messages {
				if !strings.Contains(all, m) {
					t.Errorf("messages %q lack %q", r.Messages, m)
				}
			}
			if tt.outcome == "pass" && len(r.Messages) > 0 {
				t.Errorf("pass with messages %q", r.Messages)
			}
		})
	}
}

func TestParseOutputTrace(t *testing.T) {
	r := ParseOutput(readOutput(t, "lasso"))
	if len(r.Trace) != 6 {
		t.Fatalf("trace has %d steps, want 6", len(r.Trace))
	}
	s := r.Trace[3]
	want := Step{
		State:    4,
		Action:   "Inc",
		Location: "line 19, col 11 to line 23, col 57 of module Toy",
		Vars: []Var{
			{"event", `[act |-> "Inc", p |-> p1, seq |-> 2]`},
			{"x", "3"},
			{"log", `<< [p |-> p1, v |-> 1, note |-> "a note long enough to make TLC wrap"],
   [p |-> p2, v |-> 2, note |-> "a note long enough to make TLC wrap"],
   [p |-> p1, v |-> 3, note |-> "a note long enough to make TLC wrap"] >>`},
		},
	}
	if !equalStep(s, want) {
		t.Errorf("state 4 = %+v\nwant %+v", s, want)
	}
	back := r.Trace[5]
	if back.BackTo != 2 || back.Action != "Inc" || back.State != 0 || len(back.Vars) != 0 {
		t.Errorf("last step = %+v, want back to state 2 by Inc", back)
	}

	r = ParseOutput(readOutput(t, "stutter"))
	if last := r.Trace[len(r.Trace)-1]; !last.Stuttering || last.State != 4 {
		t.Errorf("last step = %+v, want state 4 stuttering", last)
	}

	// With a single variable, TLC leaves out the "/\".
	r = ParseOutput(readOutput(t, "eval"))
	if got := r.Trace[2].Vars; len(got) != 1 || got[0] != (Var{"x", "2"}) {
		t.Errorf("eval state 3 vars = %q, want x = 2", got)
	}
}

func equalStep(a, b Step) bool {
	return a.State == b.State && a.Action == b.Action && a.Location == b.Location &&
		slices.Equal(a.Vars, b.Vars) && a.Stuttering == b.Stuttering && a.BackTo == b.BackTo
}

func TestParseOutputEdges(t *testing.T) {
	tests := []struct {
		name, out string
		outcome   string
		states    int64
		message   string
	}{
		{
			name:    "empty",
			outcome: "error",
			message: "TLC printed no result",
		},
		{
			name: "big counts",
			out: "Model checking completed. No error has been found.\n" +
				"12,345,678 states generated, 1,234,567 distinct states found, 0 states left on queue.\n",
			outcome: "pass",
			states:  1234567,
		},
		{
			name: "progress lines are not the final count",
			out: "Progress(3) at 2026-11-30 05:08:38: 7 states generated, 7 distinct states found, 4 states left on queue.\n" +
				"Model checking completed. No error has been found.\n" +
				"9 states generated, 8 distinct states found, 0 states left on queue.\n",
			outcome: "pass",
			states:  8,
		},
		{
			name: "exception after a violation",
			out: "Error: Invariant Inv is violated.\n" +
				"Error: TLC threw an unexpected exception.\n",
			outcome: "error",
			message: "unexpected exception",
		},
		{
			name:    "windows line ends",
			out:     "Error: Deadlock reached.\r\nError: The behavior up to this point is:\r\nState 1: <Initial predicate>\r\nx = 1\r\n\r\n",
			outcome: "deadlock",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ParseOutput(tt.out)
			if got := r.Outcome.String(); got != tt.outcome {
				t.Errorf("outcome = %s, want %s", got, tt.outcome)
			}
			if r.States != tt.states {
				t.Errorf("states = %d, want %d", r.States, tt.states)
			}
			if tt.message != "" && !strings.Contains(strings.Join(r.Messages, "\n"), tt.message) {
				t.Errorf("messages %q lack %q", r.Messages, tt.message)
			}
		})
	}
}

func TestParseOutputLimitsMessages(t *testing.T) {
	out := "***Parse Error***\n" + strings.Repeat("ExtendableExpr starting at line 4, column 13.\n", 100)
	r := ParseOutput(out)
	if len(r.Messages) != maxMessages+1 {
		t.Fatalf("%d messages, want %d", len(r.Messages), maxMessages+1)
	}
	if last := r.Messages[maxMessages]; last != "... (61 more lines)" {
		t.Errorf("last message = %q", last)
	}
}

func TestParseAction(t *testing.T) {
	tests := []struct{ in, name, loc string }{
		{"<Initial predicate>", InitialPredicate, ""},
		{"<SendNew line 80, col 3 to line 92, col 40 of module IdempotentProducer>",
			"SendNew", "line 80, col 3 to line 92, col 40 of module IdempotentProducer"},
		{"<Inc(p1) line 1, col 1 to line 2, col 2 of module Toy>", "Inc", "line 1, col 1 to line 2, col 2 of module Toy"},
		{"<Action>", "Action", ""},
	}
	for _, tt := range tests {
		name, loc := parseAction(tt.in)
		if name != tt.name || loc != tt.loc {
			t.Errorf("parseAction(%q) = %q, %q, want %q, %q", tt.in, name, loc, tt.name, tt.loc)
		}
	}
}
