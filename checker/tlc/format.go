package tlc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// EventVar is the variable that describes each step of the spec, such as
// [act |-> "HandleProduce", p |-> p1, seq |-> 0]. WriteTrace prints it on
// every step, right after the action.
const EventVar = "event"

// WriteTrace writes trace readably, one row per step: the state number, the
// action and the value of EventVar, followed by what changed since the
// previous state, one a line: the first state's variables whole, then only
// the parts of a variable that changed, such as batch[p1][2].st = "acked"
// (see diff). Each line starts with indent. The state a lasso goes back to is marked with a "*".
func WriteTrace(w io.Writer, trace []Step, indent string) error {
	loop := make(map[int]bool)
	for _, s := range trace {
		if s.BackTo > 0 {
			loop[s.BackTo] = true
		}
	}
	labels := make([]string, len(trace))
	actions := make([]string, len(trace))
	lw, aw := 0, 0
	for i, s := range trace {
		switch {
		case s.BackTo > 0:
			labels[i] = "*" + strconv.Itoa(s.BackTo)
		case loop[s.State]:
			labels[i] = "*" + strconv.Itoa(s.State)
		default:
			labels[i] = strconv.Itoa(s.State)
		}
		switch {
		case s.Stuttering:
			actions[i] = "(stutter)"
		case s.Action == InitialPredicate:
			actions[i] = "(initial)"
		default:
			actions[i] = s.Action
		}
		lw, aw = max(lw, len(labels[i])), max(aw, len(actions[i]))
	}
	// Changed variables go under the action, indented.
	varIndent := indent + strings.Repeat(" ", lw+4)

	bw := bufio.NewWriter(w)
	byState := make(map[int]Step)
	var prev []Var
	for i, s := range trace {
		head := fmt.Sprintf("%s%*s  %-*s", indent, lw, labels[i], aw, actions[i])
		if s.Stuttering {
			fmt.Fprintf(bw, "%s  state %d repeats forever\n", head, s.State-1)
			continue
		}
		vars := s.Vars
		if s.BackTo > 0 {
			vars = byState[s.BackTo].Vars
		} else {
			byState[s.State] = s
		}
		var changes []string
		event := ""
		for _, v := range vars {
			if v.Name == EventVar {
				event = "  " + flatten(v.Value)
			} else if old, ok := lookup(prev, v.Name); !ok {
				changes = append(changes, assignment(v.Name, v.Value, len(varIndent)))
			} else {
				for _, c := range diff(old, v.Value) {
					changes = append(changes, assignment(v.Name+c.path, c.value, len(varIndent)))
				}
			}
		}
		prev = vars
		if event == "" && len(changes) == 0 {
			event = "  (no change)"
		}
		bw.WriteString(strings.TrimRight(head+event, " ") + "\n")
		for _, c := range changes {
			bw.WriteString(varIndent + c + "\n")
		}
	}
	for i, s := range trace {
		if s.BackTo > 0 && i > 0 {
			fmt.Fprintf(bw, "%s*%d: after state %d the behavior goes back to state %d, and so on forever\n",
				indent, s.BackTo, trace[i-1].State, s.BackTo)
		}
	}
	return bw.Flush()
}

// assignment writes "lhs = value", value laid out for a line that starts in
// column col.
func assignment(lhs, value string, col int) string {
	n := col + len(lhs) + 3
	return lhs + " = " + indentValue(layout(value, n, lineWidth), n)
}

// lineWidth is the width WriteTrace lays values out for (see layout). The
// event is always printed on one line.
const lineWidth = 140

// indentValue indents the continuation lines of a multi-line value, which TLC
// lays out as if it started in column 0, by n spaces.
func indentValue(v string, n int) string {
	if !strings.Contains(v, "\n") {
		return v
	}
	return strings.ReplaceAll(v, "\n", "\n"+strings.Repeat(" ", n))
}

func lookup(vars []Var, name string) (string, bool) {
	for _, v := range vars {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

// WriteReport writes the outcome of one check: a header line with the
// expectation, the outcome and the verdict, the description, what TLC said
// if the outcome is a mismatch, and the counterexample if TLC printed one
// and either a violation was expected or the outcome is a mismatch.
func WriteReport(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	res := r.Result
	verdict := "OK"
	if !r.OK() {
		verdict = "MISMATCH"
	}
	fmt.Fprintf(bw, "=== %s: expected %s, got %s: %s (%s)\n", r.Name, r.Expect, res.Outcome, verdict, stats(res))
	if r.Description != "" {
		fmt.Fprintf(bw, "    %s\n", r.Description)
	}
	if !r.OK() {
		fmt.Fprintf(bw, "    TLC said (exit status %d):\n", res.ExitCode)
		msgs := res.Messages
		if res.Outcome.Kind == Pass {
			msgs = []string{"Model checking completed. No error has been found."}
		}
		for _, m := range msgs {
			fmt.Fprintf(bw, "      %s\n", m)
		}
	}
	if len(res.Trace) > 0 && (r.Expect.Kind != Pass || !r.OK()) {
		fmt.Fprintf(bw, "    Counterexample (%s):\n", describe(res.Outcome))
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := WriteTrace(bw, res.Trace, "      "); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func describe(o Outcome) string {
	switch o.Kind {
	case Invariant:
		return "invariant " + o.Name + " is violated in the last state"
	case Liveness:
		return "temporal properties are violated by this behavior"
	case Deadlock:
		return "the last state has no successor"
	}
	return "the behavior up to the error"
}

func stats(res *Result) string {
	return fmt.Sprintf("%d distinct states, depth %d, %s", res.States, res.Depth, formatDuration(res.Duration))
}

func formatDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// WriteSummary writes a table of reports, one row each: name, expected and
// actual outcome, distinct states, depth, time and OK or MISMATCH, followed
// by a count of mismatches.
func WriteSummary(w io.Writer, reports []Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tEXPECTED\tGOT\tSTATES\tDEPTH\tTIME\tRESULT")
	bad := 0
	for _, r := range reports {
		verdict := "OK"
		if !r.OK() {
			verdict = "MISMATCH"
			bad++
		}
		res := r.Result
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n",
			r.Name, r.Expect, res.Outcome, res.States, res.Depth, formatDuration(res.Duration), verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var err error
	switch {
	case bad == 0 && len(reports) == 1:
		_, err = fmt.Fprintln(w, "the configuration concluded as expected")
	case bad == 0:
		_, err = fmt.Fprintf(w, "all %d configurations concluded as expected\n", len(reports))
	default:
		_, err = fmt.Fprintf(w, "%d of %d configurations did not conclude as expected\n", bad, len(reports))
	}
	return err
}

// JSONReport is the form of a Report written by WriteJSON.
type JSONReport struct {
	Name        string   `json:"name"`
	Module      string   `json:"module"`
	Description string   `json:"description"`
	Expected    string   `json:"expected"`
	Got         string   `json:"got"`
	OK          bool     `json:"ok"`
	States      int64    `json:"distinct_states"`
	Generated   int64    `json:"states_generated"`
	Depth       int      `json:"depth"`
	Seconds     float64  `json:"seconds"`
	ExitCode    int      `json:"exit_code"`
	Messages    []string `json:"messages"`
	Trace       []Step   `json:"trace"`
}

// WriteJSON writes reports as a JSON array of JSONReport.
func WriteJSON(w io.Writer, reports []Report) error {
	out := make([]JSONReport, 0, len(reports))
	for _, r := range reports {
		res := r.Result
		j := JSONReport{
			Name:        r.Name,
			Module:      r.Module,
			Description: r.Description,
			Expected:    r.Expect.String(),
			Got:         res.Outcome.String(),
			OK:          r.OK(),
			States:      res.States,
			Generated:   res.Generated,
			Depth:       res.Depth,
			Seconds:     res.Duration.Seconds(),
			ExitCode:    res.ExitCode,
			Messages:    res.Messages,
			Trace:       res.Trace,
		}
		if j.Messages == nil {
			j.Messages = []string{}
		}
		if j.Trace == nil {
			j.Trace = []Step{}
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
