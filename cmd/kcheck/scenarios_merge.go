package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/matrix"
)

const scenariosMergeDescription = `Joins the results of the N shards of one matrix (each machine's
"kcheck scenarios run --shard K/N --json FILE") into what one run of the whole
matrix writes: the same RESULTS.md (--results; on standard output without it)
and results.json (--json), the cells in the whole matrix's order. Only the
times differ: each scenario's wall time is the sum of the shards', the run
starts when the first shard started, with that shard's load average, and
lasts until the last one ended; a line names the shards' runs.

It refuses, with exit status 2 and the file named, a file that is not a
shard's results JSON (or one of a run without --shard), shards of different
matrices (their scenarios, clients, shapes, brokers or runs differ: the
"matrix" identity each shard records) or of different splits (another N), a
shard given twice, a shard missing (it names each K missing), and a shard
that holds other cells than its part. The shards may be given in any order. A
shard that was interrupted (Ctrl-C) merges into an interrupted matrix,
written and then exit 2, as scenarios run does.

--under-test CLIENTS names the clients a CI job gates on (comma-separated or
repeated, each a client of the matrix): the exit status is then 1 only when
a cell of one of them showed an anomaly (an acknowledged record lost, a
duplicate or a reorder, by its read-back or by what it told its
application) or could not run (no verdict is no pass), each such cell listed
on standard error; what the other clients did, and whether kcheck verify
agreed, is in the matrix and the tally but does not decide it.

--gate, --junit FILE and --html FILE are scenarios run's (see its --help):
the exit status the gate's, judged on the cells of the clients under test
if --under-test names them, else on every cell; the JUnit XML and the HTML
page of the whole matrix.

Exit status: without --under-test or --gate as scenarios run's: 0 if every cell ran,
kcheck verify agreed with every read-back and our producer with the rule on
(ours-on) was clean, 1 otherwise; with it, 1 only for the clients under
test as above; 2 on bad usage or shards that do not make one matrix.`

func scenariosMergeCommand() *cli.Command {
	return &cli.Command{
		Name:        "merge",
		Usage:       "join the shards of one matrix (scenarios run --shard K/N --json) into the whole matrix's results",
		UsageText:   "kcheck scenarios merge [--results FILE] [--json FILE] [--junit FILE] [--html FILE] [--under-test CLIENTS] [--gate] SHARD.json...",
		Description: scenariosMergeDescription,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "results", Usage: "write the matrix in Markdown to `FILE` (default: standard output)", TakesFile: true},
			&cli.StringFlag{Name: "json", Usage: "write the cells as JSON to `FILE`", TakesFile: true},
			&cli.StringSliceFlag{Name: "under-test", Usage: "exit 1 only for an anomaly, or a cell that could not run, of the clients `CLIENTS` (comma-separated or repeated)"},
			&cli.BoolFlag{Name: "gate", Usage: "exit 1 only for a record acknowledged to the application lost, or an anomaly the model does not predict for the client's family (see scenarios run --help)"},
			&cli.StringFlag{Name: "junit", Usage: "write the cells as JUnit XML to `FILE`", TakesFile: true},
			&cli.StringFlag{Name: "html", Usage: "write the matrix as one self-contained HTML page to `FILE`", TakesFile: true},
		},
		Action: runScenariosMerge,
	}
}

func runScenariosMerge(c *cli.Context) error {
	files := c.Args().Slice()
	if len(files) == 0 {
		return usageErrorf("scenarios merge: no shard given: kcheck scenarios merge SHARD.json... (each from kcheck scenarios run --shard K/N --json)")
	}
	for _, f := range files {
		if strings.HasPrefix(f, "-") {
			return usageErrorf("scenarios merge: %s after the shards' files: flags go first (see kcheck scenarios merge --help)", f)
		}
	}
	if err := checkReportPaths(c, "scenarios merge"); err != nil {
		return err
	}
	shards := make([]*matrix.Results, len(files))
	for i, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return usageErrorf("scenarios merge: %w", err)
		}
		shards[i], err = matrix.ReadResults(f, name)
		f.Close()
		if err != nil {
			return usageErrorf("scenarios merge: %w (not the results JSON of kcheck scenarios run --shard K/N --json)", err)
		}
	}
	res, err := matrix.Merge(shards, files)
	if err != nil {
		return usageErrorf("scenarios merge: %w", err)
	}
	for _, n := range splitList(c.StringSlice("under-test")) {
		if !slices.Contains(res.Clients, n) {
			return usageErrorf("scenarios merge: --under-test: client %q is not in the matrix (its clients: %s)", n, strings.Join(res.Clients, ", "))
		}
	}
	if res.Interrupted != "" {
		// As scenarios run does: the finished cells are written, and the
		// matrix is no result.
		var ee *exitError
		if err := writeResults(c, res); err != nil && (!errors.As(err, &ee) || ee.code != exitMismatch) {
			return err
		}
		return usageErrorf("scenarios merge: %s; the finished cells are written", res.Interrupted)
	}
	return writeResults(c, res)
}

// underTest is the exit status of a matrix that gates on the clients
// under: 1 when a cell of one of them showed an anomaly or could not run,
// each such cell listed on standard error.
func underTest(c *cli.Context, res *matrix.Results, under []string) error {
	cmd := "scenarios " + c.Command.Name
	cells, bad := 0, 0
	for _, cell := range res.Cells {
		if !slices.Contains(under, cell.Client) {
			continue
		}
		cells++
		what := ""
		switch {
		case cell.Err != "":
			what = "could not run: " + cell.Err
		case cell.Happened.Anomaly():
			what = cell.What
		default:
			continue
		}
		bad++
		fmt.Fprintf(c.App.ErrWriter, "kcheck %s: under test: %s, %s, Kafka %s, %s, run %d: %s (trace %s)\n",
			cmd, cell.Client, cell.Scenario, cell.Broker, cell.Shape, cell.Run, what, cell.Trace)
	}
	names := strings.Join(under, ", ")
	if bad > 0 {
		return &exitError{code: exitMismatch, err: fmt.Errorf("%s: %d of the %d cells of the clients under test (%s) showed an anomaly or could not run", cmd, bad, cells, names)}
	}
	fmt.Fprintf(c.App.ErrWriter, "kcheck %s: the clients under test (%s): %d cells, every one ran, no anomaly\n", cmd, names, cells)
	return nil
}

// shardFlag reads scenarios run's --shard: the zero Shard when not given.
func shardFlag(c *cli.Context) (matrix.Shard, error) {
	v := c.String("shard")
	if !c.IsSet("shard") {
		return matrix.Shard{}, nil
	}
	s, err := matrix.ParseShard(v)
	if err != nil {
		return s, usageErrorf("scenarios run: --shard %q: %w", v, err)
	}
	switch {
	case c.String("from") != "":
		return s, usageErrorf("scenarios run: --shard with --from: --from runs nothing (merge the shards' JSON with kcheck scenarios merge, then --from the merged one)")
	case c.Bool("list"):
		return s, usageErrorf("scenarios run: --shard with --list: --list runs nothing")
	}
	return s, nil
}
