package matrix

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The JUnit XML of a matrix, as CI systems (Jenkins, GitLab, GitHub
// actions' test reporters) read it: a testsuite per scenario, a testcase
// per cell.
type (
	junitSuites struct {
		XMLName xml.Name `xml:"testsuites"`
		Name    string   `xml:"name,attr"`
		junitCounts
		Suites []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name string `xml:"name,attr"`
		junitCounts
		Timestamp string      `xml:"timestamp,attr,omitempty"`
		Cases     []junitCase `xml:"testcase"`
		Out       *junitText  `xml:"system-out"`
	}
	// junitCounts are a suite's (or all suites') counts of test cases.
	junitCounts struct {
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Time     string `xml:"time,attr"`
	}
	junitCase struct {
		Classname string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure"`
		Error     *junitProblem `xml:"error"`
		Skipped   *junitProblem `xml:"skipped"`
		Out       *junitText    `xml:"system-out"`
	}
	// junitText is a system-out, as CDATA so that its lines stay lines.
	junitText struct {
		Text string `xml:",cdata"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes r as JUnit XML: a testsuite per scenario (its schedule
// and notes in its system-out), a testcase per cell, its classname the
// scenario and its name client/shape/broker (and run, when there are
// several). A cell that fails Cell.Gate has a failure, one that could not
// run an error (no verdict is no pass), one that passes the gate but did
// not reach the scenario's state is skipped (the scenario did not test the
// client); each has its summary, prediction, gate, trace and stderr in its
// system-out. The output depends on r alone.
func (r *Results) WriteJUnit(w io.Writer) error {
	runs := 1
	for _, c := range r.Cells {
		runs = max(runs, c.Run)
	}
	doc := junitSuites{Name: "kcheck scenarios run"}
	var total float64
	index := map[string]int{}
	for _, c := range r.Cells {
		i, ok := index[c.Scenario]
		if !ok {
			i = len(doc.Suites)
			index[c.Scenario] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: c.Scenario, Out: cdata(r.scenarioText(c.Scenario))})
			if !r.Started.IsZero() {
				doc.Suites[i].Timestamp = r.Started.Format("2006-01-02T15:04:05")
			}
		}
		s := &doc.Suites[i]
		tc := junitCase{Classname: c.Scenario, Name: c.Client + "/" + c.Shape + "/" + c.Broker, Time: seconds(c.Seconds), Out: cdata(c.junitOut())}
		if runs > 1 {
			tc.Name += fmt.Sprintf("/run %d", c.Run)
		}
		g, why := c.Gate()
		switch {
		case g == GateError:
			tc.Error = &junitProblem{Message: why, Type: "could not run"}
			s.Errors++
		case g == GateFail:
			tc.Failure = &junitProblem{Message: why, Type: failureType(c), Text: plain(c.short())}
			s.Failures++
		case c.Reach.Status == NotReached:
			tc.Skipped = &junitProblem{Message: "not reached: " + c.Reach.Why}
			s.Skipped++
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
		total += c.Seconds
	}
	for i := range doc.Suites {
		s := &doc.Suites[i]
		var t float64
		for _, c := range r.Cells {
			if c.Scenario == s.Name {
				t += c.Seconds
			}
		}
		s.Time = seconds(t)
		doc.Tests, doc.Failures, doc.Errors, doc.Skipped = doc.Tests+s.Tests, doc.Failures+s.Failures, doc.Errors+s.Errors, doc.Skipped+s.Skipped
	}
	doc.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// cdata is s as a system-out, nil when empty; a character XML does not
// allow (a control character of a client's stderr) becomes U+FFFD.
func cdata(s string) *junitText {
	if s == "" {
		return nil
	}
	return &junitText{Text: strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r != 0xFFFE && r != 0xFFFF && (r < 0xD800 || r > 0xDFFF) {
			return r
		}
		return '\uFFFD'
	}, s)}
}

// plain is Cell.short's Markdown without its emphasis.
func plain(s string) string { return strings.ReplaceAll(s, "**", "") }

// failureType names why a cell fails the gate, for a failure's type.
func failureType(c Cell) string {
	if c.Happened.LostAcknowledged() {
		return "lost though acknowledged"
	}
	return "anomaly the model does not predict"
}

// scenarioText is a scenario's schedule and notes, a line each.
func (r *Results) scenarioText(name string) string {
	var b strings.Builder
	for _, l := range r.Schedule[name] {
		fmt.Fprintf(&b, "fault %s\n", l)
	}
	for _, l := range r.Notes[name] {
		fmt.Fprintf(&b, "note %s\n", l)
	}
	if r.Interrupted != "" {
		fmt.Fprintf(&b, "This run was stopped before its end (%s): the cells here are those that finished.\n", r.Interrupted)
	}
	return b.String()
}

// junitOut is a cell's system-out: what it did, and where its files are.
func (c Cell) junitOut() string {
	var b strings.Builder
	if c.Err == "" {
		fmt.Fprintf(&b, "%s\n", plain(c.short()))
		if c.Reach.Why != "" {
			fmt.Fprintf(&b, "%s: %s\n", c.Reach.Status, c.Reach.Why)
		}
	}
	g, why := c.Gate()
	fmt.Fprintf(&b, "model: family %s, predicted %s\ngate: %s: %s\n", c.familyName(), c.Predicted, g, why)
	if c.Trace != "" {
		fmt.Fprintf(&b, "trace: %s\nstderr: %s\n", c.Trace, strings.TrimSuffix(c.Trace, ".jsonl")+".err")
	}
	return b.String()
}
