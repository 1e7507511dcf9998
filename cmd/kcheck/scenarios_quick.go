package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/matrix"
)

// scenarioBrokers are the Kafka versions scenarios run runs by default,
// oldest first; --quick runs the last, the newest.
var scenarioBrokers = []string{"4.1.0", "4.3.1", "4.4.0"}

// quickShape is the shape --quick runs without --shapes: the
// counterexamples' one partition, a record a batch.
const quickShape = "1p-one"

// checkQuick refuses, before anything runs, what --quick cannot go with:
// --cluster, --scenario, --from, or more than one broker.
func checkQuick(c *cli.Context) error {
	if !c.Bool("quick") {
		return nil
	}
	for _, f := range []struct{ flag, why string }{
		{"cluster", "the cluster scenarios have no predictions to choose by"},
		{"scenario", "--quick chooses the scenarios (give --scenario and --gate without --quick to choose them yourself)"},
		{"from", "--from runs nothing (give --gate to judge its cells)"},
	} {
		if c.IsSet(f.flag) {
			return usageErrorf("scenarios run: --quick with --%s: %s", f.flag, f.why)
		}
	}
	if brokers := quickBrokers(c); len(brokers) != 1 {
		return usageErrorf("scenarios run: --quick with --brokers %s: --quick runs one broker; give one version, or drop --quick", strings.Join(brokers, ","))
	}
	return nil
}

// quickGroups returns the scenarios --quick runs: the Baseline (unless
// --baseline=false) and matrix.Quick's picks of groups, printed with what
// each covers on standard error.
func quickGroups(c *cli.Context, groups []*matrix.Scenario) ([]*matrix.Scenario, error) {
	brokers := quickBrokers(c)
	// The transactional scenarios are not among them yet: each client's
	// transactional cells run with --scenario (or the whole matrix).
	picks := matrix.Quick(slices.DeleteFunc(slices.Clone(groups), func(g *matrix.Scenario) bool { return g.TxnVersion > 0 }))
	if len(picks) == 0 {
		return nil, usageErrorf("scenarios run: --quick: no scenario in %s violates an invariant the brokers here can show", c.String("dir"))
	}
	var out []*matrix.Scenario
	if i := slices.IndexFunc(groups, func(g *matrix.Scenario) bool { return g.Name == matrix.Baseline }); i >= 0 {
		out = append(out, groups[i])
	}
	shapes := splitList(c.StringSlice("shapes"))
	if len(shapes) == 0 {
		shapes = []string{quickShape}
	}
	w := c.App.ErrWriter
	fmt.Fprintf(w, "kcheck scenarios run --quick: on Kafka %s, shape %s, ", brokers[0], strings.Join(shapes, ","))
	if len(out) > 0 {
		fmt.Fprint(w, "the Baseline and ")
	}
	fmt.Fprintf(w, "%d scenarios that between them cover every invariant the brokers here can show (see --help):\n", len(picks))
	for _, p := range picks {
		out = append(out, p.Scenario)
		fmt.Fprintf(w, "    %s: covers %s; TLC predicts a violation for %d families (%s)\n", p.Name, strings.Join(p.Covers, ", "), len(p.Failing), strings.Join(p.Failing, ", "))
	}
	return out, nil
}

// quickBrokers are the brokers of a --quick run: --brokers if given, else
// the newest of scenarioBrokers.
func quickBrokers(c *cli.Context) []string {
	if c.IsSet("brokers") {
		return splitList(c.StringSlice("brokers"))
	}
	return scenarioBrokers[len(scenarioBrokers)-1:]
}

// checkReportPaths refuses, before anything runs, a --junit or --html
// whose directory does not exist: the matrix's hours are not lost to a
// typo at the end.
func checkReportPaths(c *cli.Context, cmd string) error {
	for _, f := range []string{"junit", "html"} {
		p := c.String(f)
		if p == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
			return usageErrorf("%s: --%s %s: no directory %s to write it in", cmd, f, p, filepath.Dir(p))
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return usageErrorf("%s: --%s %s: a directory, not a file", cmd, f, p)
		}
	}
	return nil
}

// writeReports writes --junit and --html, each whole or not at all.
func writeReports(c *cli.Context, cmd string, res *matrix.Results) error {
	for _, f := range []struct {
		flag  string
		write func(io.Writer) error
	}{{"junit", res.WriteJUnit}, {"html", res.WriteHTML}} {
		if p := c.String(f.flag); p != "" {
			if err := writeFileAtomic(p, f.write); err != nil {
				return usageErrorf("%s: --%s: %w", cmd, f.flag, err)
			}
		}
	}
	return nil
}

// gated reports whether the exit status is the gate's (--gate, --quick).
func gated(c *cli.Context) bool {
	return c.Bool("gate") || c.Bool("quick")
}

// gateExit is the exit status of a gated matrix (matrix.Cell.Gate): 1 when
// a cell fails the gate, else 2 when a cell could not run, else 0; each
// such cell is listed on standard error. With --under-test (scenarios
// merge), only the cells of the clients it names are judged.
func gateExit(c *cli.Context, cmd string, res *matrix.Results) error {
	judged := *res
	if under := splitList(c.StringSlice("under-test")); len(under) > 0 {
		judged.Cells = slices.DeleteFunc(slices.Clone(res.Cells), func(cell matrix.Cell) bool { return !slices.Contains(under, cell.Client) })
	}
	gt := judged.GateTally()
	for _, cell := range judged.Cells {
		g, why := cell.Gate()
		if g == matrix.GatePass {
			continue
		}
		fmt.Fprintf(c.App.ErrWriter, "kcheck %s: gate: %s: %s, %s, Kafka %s, %s, run %d: %s", cmd, g, cell.Client, cell.Scenario, cell.Broker, cell.Shape, cell.Run, why)
		if cell.Trace != "" {
			fmt.Fprintf(c.App.ErrWriter, " (trace %s)", cell.Trace)
		}
		fmt.Fprintln(c.App.ErrWriter)
	}
	switch {
	case gt.Fail > 0:
		return &exitError{code: exitMismatch, err: fmt.Errorf("%s: %d of the %d cells fail the gate: a record acknowledged to the application lost, or an anomaly the model does not predict for the client's family", cmd, gt.Fail, gt.Cells)}
	case gt.Error > 0:
		return usageErrorf("%s: %d of the %d cells could not run, and no other cell fails the gate: no verdict", cmd, gt.Error, gt.Cells)
	}
	fmt.Fprintf(c.App.ErrWriter, "kcheck %s: gate: %d cells, every one ran: no record acknowledged to the application lost, no anomaly the model does not predict\n", cmd, gt.Cells)
	return nil
}
