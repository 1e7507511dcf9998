package tlc

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// maxMessages bounds Result.Messages: parse errors come with long stack
// traces, and the full output is in Result.Output anyway.
const maxMessages = 40

var (
	reInvariant = regexp.MustCompile(`^Error: Invariant (\S+) is violated( by the initial state)?[.:]`)
	reStats     = regexp.MustCompile(`^(\d[\d,]*) states generated, (\d[\d,]*) distinct states? found, (\d[\d,]*) states? left on queue\.`)
	reDepth     = regexp.MustCompile(`^The depth of the complete state graph search is (\d+)\.`)
	reProgress  = regexp.MustCompile(`^Progress\((\d+)\)`)
	reState     = regexp.MustCompile(`^State (\d+): *(.*)$`)
	reBackTo    = regexp.MustCompile(`^Back to state (\d+)[:.]? *(.*)$`)
	reAction    = regexp.MustCompile(`^<(\S+) (line \d+, col \d+ to line \d+, col \d+ of module \S+)>$`)
	reVar       = regexp.MustCompile(`^(?:/\\ )?([A-Za-z_][A-Za-z0-9_]*) = (.*)$`)
	reNoise     = regexp.MustCompile(`^(Starting\.\.\.|Computing initial states|Finished computing initial states|Progress\(|` +
		`Checking temporal properties|Finished checking temporal properties|Implied-temporal checking|Checking \d+ branches|` +
		`The average outdegree|Finished in |Model checking completed|\s+Estimates of the probability|` +
		`\s+because two distinct states|\s+calculated \(optimistic\)|\s+based on the actual fingerprints)`)
)

// Lines of TLC's output that mean it failed, besides lines starting "Error:".
var failureMarkers = []string{
	"***Parse Error***",
	"Semantic errors:",
	"Fatal errors while parsing",
	"Exception in thread",
}

// Lines that start an error trace; they are not messages.
var traceHeaders = []string{
	"Error: The behavior up to this point is:",
	"Error: The following behavior constitutes a counter-example:",
}

// ParseOutput parses the standard output of a TLC run: its conclusion, the
// state counts, the search depth (or, if TLC did not print it, the depth of
// its last progress report), the error trace and the error messages. Output
// with no conclusion gives an Error outcome. It does not set Duration,
// ExitCode or Output.
func ParseOutput(out string) *Result {
	p := parser{r: &Result{}, cur: -1}
	for line := range strings.Lines(out) {
		p.line(strings.TrimRight(line, "\r\n"))
	}
	return p.finish()
}

type parser struct {
	r          *Result
	conclusion Outcome // pass or a violation, if TLC printed one
	failed     bool    // TLC printed an error other than a violation
	collect    bool    // collecting messages: TLC has printed an error
	cur        int     // index in r.Trace of the state whose variables are being read, or -1
	progress   int     // depth of the last progress report
	dropped    int     // messages beyond maxMessages
}

func (p *parser) line(line string) {
	if p.cur >= 0 && p.stateLine(line) {
		return
	}
	p.cur = -1
	r := p.r
	switch {
	case line == "Model checking completed. No error has been found.":
		p.conclusion = Outcome{Kind: Pass}
	case reInvariant.MatchString(line):
		m := reInvariant.FindStringSubmatch(line)
		p.conclusion = Outcome{Kind: Invariant, Name: m[1]}
		p.message(line)
		if m[2] != "" { // the violating initial state follows, without a header
			p.startState(1, "<"+InitialPredicate+">")
		}
	case line == "Error: Temporal properties were violated.":
		p.conclusion = Outcome{Kind: Liveness}
		p.message(line)
	case line == "Error: Deadlock reached.":
		p.conclusion = Outcome{Kind: Deadlock}
		p.message(line)
	case hasAnyPrefix(line, traceHeaders):
		p.collect = true
	case reState.MatchString(line):
		m := reState.FindStringSubmatch(line)
		n, _ := strconv.Atoi(m[1])
		if m[2] == "Stuttering" {
			r.Trace = append(r.Trace, Step{State: n, Stuttering: true})
			return
		}
		p.startState(n, m[2])
	case reBackTo.MatchString(line):
		m := reBackTo.FindStringSubmatch(line)
		n, _ := strconv.Atoi(m[1])
		s := Step{BackTo: n}
		s.Action, s.Location = parseAction(m[2])
		r.Trace = append(r.Trace, s)
	case strings.HasPrefix(line, "Error:") || hasAnyPrefix(line, failureMarkers):
		p.failed = true
		p.message(line)
	case reStats.MatchString(line):
		m := reStats.FindStringSubmatch(line)
		r.Generated = parseCount(m[1])
		r.States = parseCount(m[2])
	case reDepth.MatchString(line):
		r.Depth, _ = strconv.Atoi(reDepth.FindStringSubmatch(line)[1])
	case reProgress.MatchString(line):
		p.progress, _ = strconv.Atoi(reProgress.FindStringSubmatch(line)[1])
	case p.collect && strings.TrimSpace(line) != "" && !reNoise.MatchString(line):
		p.message(line)
	}
}

// stateLine reads line as part of the state being read and reports whether
// it was one: a variable ("/\ x = 1", or "x = 1" when there is only one) or
// the continuation of a multi-line value.
func (p *parser) stateLine(line string) bool {
	s := &p.r.Trace[p.cur]
	switch {
	case line == "":
		return false
	case strings.HasPrefix(line, "/\\ ") || len(s.Vars) == 0:
		m := reVar.FindStringSubmatch(line)
		if m == nil {
			return false
		}
		s.Vars = append(s.Vars, Var{Name: m[1], Value: m[2]})
		return true
	case line[0] == ' ' || line[0] == '\t':
		v := &s.Vars[len(s.Vars)-1]
		v.Value += "\n" + line
		return true
	}
	return false
}

func (p *parser) startState(n int, action string) {
	s := Step{State: n}
	s.Action, s.Location = parseAction(action)
	p.r.Trace = append(p.r.Trace, s)
	p.cur = len(p.r.Trace) - 1
}

func (p *parser) message(line string) {
	p.collect = true
	if len(p.r.Messages) >= maxMessages {
		p.dropped++
		return
	}
	p.r.Messages = append(p.r.Messages, line)
}

func (p *parser) finish() *Result {
	r := p.r
	if p.dropped > 0 {
		r.Messages = append(r.Messages, fmt.Sprintf("... (%d more lines)", p.dropped))
	}
	if r.Depth == 0 {
		r.Depth = p.progress
	}
	switch {
	case p.failed:
		r.Outcome = Outcome{Kind: Error}
	case p.conclusion.Kind == "":
		r.Outcome = Outcome{Kind: Error}
		r.Messages = append(r.Messages, "TLC printed no result")
	default:
		r.Outcome = p.conclusion
	}
	return r
}

// parseAction splits TLC's description of the step into a state, such as
// "<SendNew line 80, col 3 to line 92, col 40 of module IdempotentProducer>",
// into the action's name and its location. TLC 2.18 names the innermost
// operator whose definition is the action, without its arguments.
func parseAction(s string) (name, location string) {
	if s == "<"+InitialPredicate+">" {
		return InitialPredicate, ""
	}
	if m := reAction.FindStringSubmatch(s); m != nil {
		name, _, _ = strings.Cut(m[1], "(")
		return name, m[2]
	}
	return strings.Trim(s, "<>"), ""
}

func parseCount(s string) int64 {
	n, _ := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	return n
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// nonBlankLines returns the non-blank lines of s, at most max of them.
func nonBlankLines(s string, max int) []string {
	var lines []string
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(lines) == max {
			lines = append(lines, "...")
			break
		}
		lines = append(lines, line)
	}
	return lines
}
