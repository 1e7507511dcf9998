package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/checker/upstream"
	"github.com/kcheck/kcheck/tracer"
)

const reportDescription = `Writes, for a trace in which kcheck verify finds an anomaly, an issue body
in Markdown to paste into the client's own issue tracker:

   the client and its version (a stock client of the scenario matrix: the
   version kcheck's driver pins), the broker, and the faults injected (the
   trace header's schedule, each step in words);
   each anomaly kcheck verify found, with the property of
   spec/IdempotentProducer.tla it breaks (duplicate: NoDuplicate;
   nonmonotonic-send: NoReorder; gap, or a record lost behind a later
   sequence: NoGap; a record acknowledged and not in the log, or at another
   offset: AckedInLog; stall: EventuallyAcked);
   for each record the anomalies name, what the application was told (the
   trace's Told events, from the driver's outcomes) against where the log
   read back after the run holds it;
   the trace cut to those records: the events of their batches and the
   read-back, cut to them;
   the one command that reproduces the run: --repro as given, else the one
   the header's config.excerpt names, else, for a cell of kcheck scenarios
   run (its topic names it), the command that runs that cell again (a cluster
   scenario's --cluster is the --cluster-dir holding its schedule).

The anomalies are kcheck verify's (checker/verify): report finds none of its
own, and "kcheck verify TRACE" lists the same. TRACE is a file: its lines are
read again for the excerpt.

Output goes to standard output, or with -o FILE to FILE, written whole or not
at all. traces/scenarios/issues holds the bodies for the matrix's anomalies
(make issues writes them again, make issues-check compares).

Exit status: 0 an issue body was written; 1 no anomaly to report (the trace is
valid, or inconclusive: nothing is written, and a message on stderr says
which); 2 bad input (a missing file, not a trace, a malformed or truncated
line: the message names FILE:LINE) or bad usage.`

// reportCommand returns the "kcheck report" command.
func reportCommand() *cli.Command {
	return &cli.Command{
		Name:        "report",
		Usage:       "write an anomaly kcheck verify finds in a trace as an issue body for the client's tracker",
		UsageText:   "kcheck report [-o FILE] [--repro CMD] [--cluster-dir DIR]... TRACE.jsonl",
		Description: reportDescription,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Usage: "write the issue body to `FILE` instead of standard output", TakesFile: true},
			&cli.StringFlag{Name: "repro", Usage: "the `CMD` that reproduces the run, instead of the one the trace's header gives"},
			&cli.StringSliceFlag{Name: "cluster-dir", Value: cli.NewStringSlice("traces/scenarios/cluster", "traces/scenarios/reports"),
				Usage: "a `DIR` of cluster schedules (kcheck scenarios run --cluster): the reproduction of a cluster scenario's run names the one holding its schedule"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("report takes one trace file, got %d arguments (see kcheck report --help)", c.NArg())
			}
			return doReport(c, c.Args().First())
		},
	}
}

func doReport(c *cli.Context, path string) error {
	is, err := upstream.File(c.Context, path, upstream.Options{Repro: c.String("repro"), ClusterDirs: listFlag(c, "cluster-dir")})
	if err != nil {
		var se *tracer.SyntaxError
		if errors.As(err, &se) || errors.Is(err, os.ErrNotExist) {
			return usageErrorf("%v", err)
		}
		return usageErrorf("report %s: %v", path, err)
	}
	if is.Anomalies() == 0 {
		return &exitError{code: exitMismatch, err: fmt.Errorf("report %s: no anomaly to report: kcheck verify's verdict is %s", path, is.Verdict())}
	}
	if out := c.String("o"); out != "" {
		if err := writeFileAtomic(out, is.Write); err != nil {
			return usageErrorf("-o: %v", err)
		}
		return nil
	}
	var buf bytes.Buffer
	if err := is.Write(&buf); err != nil {
		return err
	}
	_, err = io.Copy(c.App.Writer, &buf)
	return err
}
