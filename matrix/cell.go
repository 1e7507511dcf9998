package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	bk "github.com/kcheck/kcheck/brokers"
	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/tracer"
)

// Cell is one run of one client through one scenario on one broker.
type Cell struct {
	Scenario  string    `json:"scenario"`
	Broker    string    `json:"broker"`
	Client    string    `json:"client"`
	Family    string    `json:"family"`
	Shape     string    `json:"shape"`
	Run       int       `json:"run"`
	Reach     Reach     `json:"reach"`
	Happened  Happened  `json:"happened"`
	What      string    `json:"what"` // Happened in words
	Predicted string    `json:"predicted"`
	Verdict   string    `json:"verdict"`   // kcheck verify's: valid, violations, inconclusive
	Kinds     []string  `json:"kinds"`     // the kinds of violation it reported
	Agreement Agreement `json:"agreement"` // verify against the read-back
	Worse     bool      `json:"worse"`     // worse than the model predicts for the client's rules
	ExitCode  int       `json:"exit_code"` // the proxy's (the client's 0 or 1)
	Seconds   float64   `json:"seconds"`   // wall time of the run, verify included
	Trace     string    `json:"trace"`     // where the trace was kept
	Err       string    `json:"error"`     // the cell could not run: why
	// BrokerFinding is an answer of the broker that the spec's broker
	// (checker/replay on the wire, Apache Kafka's rules) cannot explain:
	// the line, the answer and the rule, from verify's nonconformance.
	// It is the broker's, kept apart from the client's anomalies.
	BrokerFinding string `json:"broker_finding,omitempty"`

	// Predictions, for a client of Unknown family, are every family's
	// prediction (family → prediction), Predicted their summary; Like are
	// the families whose prediction matches what it did (like.go), empty
	// when none does. Both are absent for every other client.
	Predictions map[string]string `json:"predictions,omitempty"`
	Like        []string          `json:"like,omitempty"`
}

// cellSpec is what one cell runs.
type cellSpec struct {
	scenario *Scenario
	schedule string // the schedule file
	client   Client
	argv     []string // the prepared client command
	shape    Shape
	broker   string // its version
	// topicPrefix, when set, starts the topic's name instead of "sc"
	// (a cluster kcheck did not start: the run's id).
	topicPrefix string
	addr        string // a broker of the cluster
	control     string // the cluster's control (kcheck proxy --cluster), or ""
	opts        clientOpts
	run         int
	dir         string // where the cell's files go
	kcheck      string
	timeout     time.Duration
}

var topicUnsafe = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// cancelGrace is how long an interrupted cell's proxy has to stop its
// client and end its faults on the cluster (proxy.DefaultHealBound, and a
// little more).
const cancelGrace = 2*time.Minute + 30*time.Second

// cell is c's Cell before it runs: what it is and what the model predicts.
func (c cellSpec) cell() Cell {
	fam := c.client.fam
	if fam == "" {
		fam = c.scenario.Family(c.client.family())
	}
	cell := Cell{Scenario: c.scenario.Name, Broker: c.broker, Client: c.client.Name, Family: fam, Shape: c.shape.Name, Run: c.run}
	cell.predict(c.scenario.PredictionsFor(c.broker), len(c.scenario.Schedule) > 0)
	return cell
}

// cantRun is c's Cell when it could not run, for err.
func (c cellSpec) cantRun(err error) Cell {
	cell := c.cell()
	cell.Err = err.Error()
	return cell
}

// base names c's files.
func (c cellSpec) base() string {
	return topicUnsafe.ReplaceAllString(fmt.Sprintf("%s.%s.%s.%s.%d", c.scenario.Name, c.broker, c.client.fileName(), c.shape.Name, c.run), "-")
}

// topic is the topic c produces to.
func (c cellSpec) topic() string {
	if c.topicPrefix != "" {
		return c.topicPrefix + "-" + c.base()
	}
	return "sc-" + c.base()
}

// kafkaVersion is the Kafka version a broker runs or emulates, for our
// producer's own trace: "" (unknown) for one that is not Kafka.
func kafkaVersion(s bk.Spec) string {
	if s.Kind == bk.Tansu {
		return ""
	}
	return s.Version
}

// runCell runs c: the client through kcheck proxy with the scenario's
// schedule, then kcheck verify and the reached check on its trace.
func runCell(ctx context.Context, c cellSpec) Cell {
	start := time.Now()
	cell := c.cell()
	base, topic := c.base(), c.topic()
	trace := filepath.Join(c.dir, base+".jsonl")
	cell.Trace = trace
	fail := func(format string, args ...any) Cell {
		cell.Err = fmt.Sprintf(format, args...)
		cell.Seconds = time.Since(start).Seconds()
		return cell
	}
	spec, _ := bk.Parse(c.broker)
	argv := []string{"proxy", "--bootstrap", c.addr, "--broker-kind", string(spec.Kind), "--broker-version", spec.Version, "--topic", topic,
		"--client", c.client.Name, "--trace", trace}
	if len(c.scenario.Schedule) > 0 {
		argv = append(argv, "--schedule", c.schedule)
	}
	if c.control != "" {
		argv = append(argv, "--cluster", c.control)
	}
	argv = append(argv, "--")
	argv = append(argv, c.client.command(c.argv, c.shape, topic, kafkaVersion(spec), filepath.Join(c.dir, base+".own.jsonl"), c.opts)...)
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, c.kcheck, argv...)
	// Interrupted or out of time: the proxy is asked to stop (its client
	// first, then its faults, a paused node resumed), not killed, and given
	// the time to heal the cluster; then it, and whatever still holds its
	// output, is killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = cancelGrace
	var stdout bytes.Buffer
	cmd.Stdout = &limited{w: &stdout, n: 1 << 20}
	errPath := filepath.Join(c.dir, base+".err")
	errFile, err := os.Create(errPath)
	if err != nil {
		return fail("%v", err)
	}
	cmd.Stderr = errFile
	err = cmd.Run()
	errFile.Close()
	var ee *exec.ExitError
	switch {
	case rctx.Err() != nil && ctx.Err() == nil:
		return fail("timed out after %v (stderr: %s)", c.timeout, errPath)
	case ctx.Err() != nil:
		return fail("interrupted")
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		cell.ExitCode = 1
	case err != nil:
		if l := lastLine(errPath); l != "" {
			return fail("kcheck proxy: %v: %s (stderr: %s)", err, l, errPath)
		}
		return fail("kcheck proxy: %v (stderr: %s)", err, errPath)
	}
	os.WriteFile(filepath.Join(c.dir, base+".out"), stdout.Bytes(), 0o644)
	var sum Summary
	if c.client.Ours {
		sum, err = ParseRunSummary(stdout.Bytes())
	} else {
		sum, err = ParseSummary(stdout.Bytes())
	}
	if err != nil {
		return fail("%s: %v (stderr: %s)", c.client.Name, err, errPath)
	}
	rep, err := verify.File(ctx, trace, verify.Options{})
	if err != nil {
		return fail("kcheck verify %s: %v", trace, err)
	}
	cell.Verdict = string(rep.Verdict)
	seen := map[string]bool{}
	flagged := rep.Verdict == verify.Inconclusive // the client's: a broker's nonconformance is not
	for _, v := range rep.Violations {
		if k := string(v.Kind); !seen[k] {
			seen[k] = true
			cell.Kinds = append(cell.Kinds, k)
		}
		if v.Kind == checker.NonConformance && cell.BrokerFinding == "" {
			// The trace is the proxy's: the client's attempts are taken
			// as given, so what the spec cannot explain is an answer.
			cell.BrokerFinding = fmt.Sprintf("%s:%d: %s", trace, firstLine(v.Lines), v.Detail)
			continue
		}
		if v.Kind != checker.NonConformance {
			flagged = true
		}
	}
	cell.Happened = Happen(sum, rep.Order)
	if c.shape.TxnRecords > 0 {
		v, err := readTxnView(trace)
		if err != nil {
			return fail("reading %s: %v", trace, err)
		}
		cell.Happened.txnView = v
	}
	cell.What = cell.Happened.String()
	cell.Agreement = Agree(flagged, cell.Happened)
	cell.judge()
	reach, err := reachOf(trace, c.scenario.Steps)
	if err != nil {
		return fail("reading %s: %v", trace, err)
	}
	cell.Reach = reach
	cell.Seconds = time.Since(start).Seconds()
	return cell
}

func firstLine(lines []int) int {
	if len(lines) == 0 {
		return 0
	}
	return lines[0]
}

// reachOf runs the reached check over the trace at path.
func reachOf(path string, steps []Step) (Reach, error) {
	f, err := tracer.Open(path)
	if err != nil {
		return Reach{}, err
	}
	defer f.Close()
	r := NewReacher(steps)
	if err := f.Each(func(_ int, e *tracer.Event) error { r.Add(e); return nil }); err != nil {
		return Reach{}, err
	}
	return r.Result(), nil
}

// lastLine is the last line of the file at path that is not blank, cut to
// 300 bytes: why the proxy gave up, in its own words; "" if none.
func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 4096 {
		f.Seek(-4096, io.SeekEnd)
	}
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	lines := strings.Split(strings.TrimRight(string(b), "\n\r\t "), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 300 {
		l = strings.ToValidUTF8(l[:300], "") + "…"
	}
	return l
}

// limited writes at most n bytes to w and drops the rest: a client's
// standard output is its summary, not its log.
type limited struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if len(p) <= l.n {
		l.n -= len(p)
		return l.w.Write(p)
	}
	if l.n > 0 {
		l.w.Write(p[:l.n])
		l.n = 0
	}
	return len(p), nil
}
