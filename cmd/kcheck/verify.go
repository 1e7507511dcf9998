package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/checker/report"
	"github.com/kcheck/kcheck/checker/tlc"
	"github.com/kcheck/kcheck/checker/tv"
	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/tracer"
)

const verifyDescription = `Checks a trace (written by kcheck run, or later by kcheck proxy) in one pass:

   spec replay      every event is explained by an action of
                    spec/IdempotentProducer.tla mirrored in Go (the client's
                    rules, the first-ack rule if the header says it is on, and
                    the broker's answers for the broker version it names)
   order            exactly-once ordering per producer and partition against
                    the read-back: lost-write, duplicate, nonmonotonic-send,
                    gap, inconsistent-offsets, failed-but-present, stall
   linearizability  each partition's history checked by Porcupine (a check
                    that runs out of time is inconclusive, never a pass)
   --tlc            TLC itself validates the trace against the spec
                    (spec/TraceIdempotentProducer.tla); a trace of the wire
                    (kcheck proxy) against the broker side of the spec
                    (spec/TraceWire.tla), the client's attempts taken as
                    given; needs java and the tla2tools jar (--jar,
                    KCHECK_TLA2TOOLS, or the one make tlc fetched into the
                    cache). Partitions that share nothing are
                    checked apart, in --tlc-runs parallel runs: in our
                    producer's traces, no crossing answers on a connection
                    and no lost connection whose handled prefix matters to
                    both; in a trace of the wire, no answer out of its
                    connection's order and no request a connection ties
                    to another partition's (spec/README.md); a run
                    that cannot decide (--tlc-timeout) leaves the verdict
                    inconclusive, never a pass

The report starts with the verdict, then each violation with the trace lines
that show it. --format json prints the same as JSON; --junit FILE writes JUnit
XML for CI; --html DIR writes a self-contained page: the verdict, each
violation linked to a per-partition timeline of batches, attempts, faults and
the log as read back, and Porcupine's view of each partition it found illegal.

TRACE - reads the trace from standard input, as does no TRACE when standard
input is a pipe or a file (kcheck verify < trace.jsonl); reports and errors
name it <stdin>. verify reads the trace once, whatever it is asked for: the
checks, --html's timelines and --tlc's translation all come from that one
pass, so a pipe is never spooled to a file (TLC reads the translation,
which verify writes to a temporary directory of its own). The lines the
report quotes are kept as they are read from a pipe; from a regular file,
only where each starts, and the few quoted are read again. A trace on
standard input cut short is an error naming <stdin>:LINE, as for a file.

A trace without its read-back (a run cut off before it) is incomplete: the
report says so first, names the partitions without a ReadBack, checks what
needs no log (the spec replay, stalls) and gives the command that completes
it (kcheck readback --bootstrap ADDR TRACE); the verdict is inconclusive.

Exit status: 0 valid; 1 violations, or inconclusive (a check that could not
finish, or an incomplete trace); 2 bad input (a malformed or truncated trace,
an unknown event, a newer format, a trace beyond the limits of
tracer/FORMAT.md), bad usage, or --tlc without TLC.`

// verifyCommand returns the "kcheck verify" command.
func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:        "verify",
		Usage:       "check a trace against the spec, for linearizability and for exactly-once ordering",
		UsageText:   "kcheck verify [--format text|json] [--junit FILE] [--html DIR] [--tlc] TRACE.jsonl|-",
		Description: verifyDescription,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "text", Usage: "report format: text or json"},
			&cli.StringFlag{Name: "junit", Usage: "also write JUnit XML to `FILE`", TakesFile: true},
			&cli.StringFlag{Name: "html", Usage: "also write an HTML report into `DIR`", TakesFile: true},
			&cli.DurationFlag{Name: "linz-timeout", Value: 30 * time.Second, Usage: "time limit for Porcupine"},
			&cli.BoolFlag{Name: "timing", Usage: "with --format json: say how long the checks took (duration_ms; TLC's Duration); without it the same trace gives the same JSON"},
			&cli.BoolFlag{Name: "tlc", Usage: "also validate the trace with TLC"},
			&cli.StringFlag{Name: "jar", Usage: "`PATH` of tla2tools.jar (for --tlc)", EnvVars: []string{"KCHECK_TLA2TOOLS"}, TakesFile: true},
			&cli.StringFlag{Name: "spec-dir", Value: "spec", Usage: "`DIR` holding IdempotentProducer.tla (for --tlc)"},
			&cli.DurationFlag{Name: "tlc-timeout", Value: 5 * time.Minute, Usage: "time limit for each TLC run; a run that reaches it leaves the verdict inconclusive"},
			&cli.IntFlag{Name: "tlc-runs", Usage: "at most `N` TLC runs in parallel: partitions that share nothing are checked apart (spec/README.md, \"Trace validation, one partition at a time\"); 0: one per CPU; 1: the whole trace in one run"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageErrorf("verify takes one trace file, got %d arguments (see kcheck verify --help)", c.NArg())
			}
			format := c.String("format")
			if format != "text" && format != "json" {
				return usageErrorf("--format %q: want text or json", format)
			}
			r, source, closeTrace, err := openTrace(c)
			if err != nil {
				return err
			}
			defer closeTrace()
			opts := verify.Options{LinzTimeout: c.Duration("linz-timeout"), TLC: c.Bool("tlc"), Jar: c.String("jar"),
				SpecDir: c.String("spec-dir"), TLCTimeout: c.Duration("tlc-timeout"), TLCRuns: c.Int("tlc-runs"), Progress: c.App.ErrWriter, Source: source}
			if n := c.Int("tlc-runs"); n < 0 {
				return usageErrorf("--tlc-runs %d: want 0 (one per CPU) or more", n)
			}
			if opts.TLC {
				spec := tv.SpecFor(r.Header())
				if opts.Jar == "" { // the jar make tlc fetched, as kcheck tlc finds it
					if opts.Jar, err = tlcJar("verify --tlc", ""); err != nil {
						return err
					}
				}
				if err := tlc.CheckSetup(tlc.Options{Jar: opts.Jar}); err != nil {
					return usageErrorf("--tlc: %v (without TLC kcheck verify still runs every Go check: drop --tlc)", err)
				}
				if _, err := os.Stat(filepath.Join(opts.SpecDir, spec+".tla")); err != nil {
					return usageErrorf("--tlc: --spec-dir %s: %v", opts.SpecDir, err)
				}
			}
			return doVerify(c, r, format, opts)
		},
	}
}

// openTrace opens the trace the command line names, and reads its header: a
// path, or standard input for "-" or for no argument when standard input is
// not a terminal (a pipe or a file). source is the trace again when it is a
// regular file (verify.Options.Source), nil otherwise; the function returned
// closes the trace.
func openTrace(c *cli.Context) (r *tracer.Reader, source io.ReaderAt, closeTrace func() error, err error) {
	path := c.Args().First()
	if path == "-" || path == "" && readable(c.App.Reader) {
		r, err := tracer.NewReader(c.App.Reader, verify.StdinName)
		if err != nil {
			return nil, nil, nil, usageErrorf("%v", err)
		}
		return r, nil, func() error { return nil }, nil
	}
	if path == "" {
		return nil, nil, nil, usageErrorf("verify takes one trace file, got 0 arguments (or - for standard input; see kcheck verify --help)")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, usageErrorf("%v", err)
	}
	if r, err = tracer.NewReader(f, path); err != nil {
		f.Close()
		return nil, nil, nil, usageErrorf("%v", err)
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		source = f
	}
	return r, source, f.Close, nil
}

// readable reports whether in is an input to read a trace from when no
// argument names one: a pipe or a file, not a terminal or a device such as
// /dev/null, and not no input at all.
func readable(in io.Reader) bool {
	switch in := in.(type) {
	case noInput:
		return false
	case *os.File:
		st, err := in.Stat()
		return err == nil && st.Mode()&os.ModeCharDevice == 0
	}
	return in != nil
}

func doVerify(c *cli.Context, r *tracer.Reader, format string, opts verify.Options) error {
	path := r.Name()
	var col *report.Collector
	if c.String("html") != "" {
		col = report.NewCollector()
		opts.Observers = append(opts.Observers, col)
	}
	rep, err := verify.Trace(c.Context, r, opts)
	if err != nil {
		var se *tracer.SyntaxError
		if errors.As(err, &se) || errors.Is(err, os.ErrNotExist) {
			return usageErrorf("%v", err)
		}
		return usageErrorf("verify %s: %v", path, err)
	}
	w := c.App.Writer
	if format == "json" {
		err = report.JSON(w, rep, c.Bool("timing"))
	} else {
		err = report.Text(w, rep)
	}
	if err != nil {
		return err
	}
	if f := c.String("junit"); f != "" {
		if err := writeFileAtomic(f, func(w io.Writer) error { return report.JUnit(w, rep) }); err != nil {
			return usageErrorf("--junit: %v", err)
		}
	}
	if dir := c.String("html"); dir != "" {
		if err := report.HTML(dir, rep, col); err != nil {
			return usageErrorf("--html: %v", err)
		}
	}
	if rep.Verdict != verify.Valid {
		return &exitError{code: exitMismatch}
	}
	return nil
}

// writeFileAtomic writes a file through a temporary one, so a failure leaves
// no half-written output.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kcheck-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil { // CreateTemp's 0600 is for secrets
		return err
	}
	return os.Rename(tmp.Name(), path)
}
