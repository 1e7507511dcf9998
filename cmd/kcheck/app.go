package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit statuses of kcheck.
const (
	exitOK       = 0 // the command did what was asked, and found nothing wrong
	exitMismatch = 1 // the command ran, and found something wrong
	exitUsage    = 2 // bad usage, bad input, or a tool the command needs could not run
)

// commands returns kcheck's subcommands, one per file of this package.
func commands() []*cli.Command {
	return []*cli.Command{
		runCommand(),
		verifyCommand(),
		tlcCommand(),
		kafkaCommand(),
		brokerCommand(),
		proxyCommand(),
		readbackCommand(),
		scenariosCommand(),
		reportCommand(),
	}
}

// newApp returns the kcheck application, reading stdin (nil: none) and
// writing to stdout and stderr. It prints no error: run does.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	if stdin == nil {
		stdin = noInput{}
	}
	app := &cli.App{
		Reader: stdin,
		Name:   "kcheck",
		Usage:  "check the Kafka idempotent producer against its TLA+ specification",
		Description: "kcheck proves, for Kafka's idempotent producer, that records are never lost,\n" +
			"duplicated or reordered, in two ways that check each other:\n\n" +
			"   kcheck tlc      model-checks spec/IdempotentProducer.tla with TLC, every\n" +
			"                   configuration against the outcome spec/expect.tsv expects\n" +
			"   kcheck run      runs a producer under faults and writes a trace of every step\n" +
			"   kcheck verify   checks a trace against the same spec, for linearizability\n" +
			"                   (Porcupine) and for exactly-once ordering\n" +
			"   kcheck kafka    runs real Apache Kafka (from Maven Central) to run against\n" +
			"   kcheck proxy    traces any client on the wire, injecting the same faults\n" +
			"   kcheck scenarios  derives fault schedules from TLC's counterexamples\n\n" +
			"Exit status: 0 when everything is as expected, 1 when a check failed,\n" +
			"2 on bad usage or input, or when a tool such as TLC or java could not run.\n\n" +
			"Run kcheck <command> --help for the flags of a command.",
		UsageText:      "kcheck <command> [flags]",
		HideVersion:    true,
		Writer:         stdout,
		ErrWriter:      stderr,
		ExitErrHandler: func(*cli.Context, error) {},
		// --fault values hold commas; list flags split themselves (listFlag).
		DisableSliceFlagSeparator: true,
		OnUsageError:              onUsageError,
		Commands:                  commands(),
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("unknown command %q (see kcheck --help)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
	}
	var setUsage func([]*cli.Command)
	setUsage = func(cs []*cli.Command) {
		for _, c := range cs {
			c.OnUsageError = onUsageError
			setUsage(c.Subcommands)
		}
	}
	setUsage(app.Commands)
	return app
}

// run runs kcheck with the command line args and no standard input, and
// returns its exit status. Errors are printed once, to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWithStdin(ctx, args, nil, stdout, stderr)
}

// runWithStdin is run with standard input stdin (nil: none).
func runWithStdin(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := newApp(stdin, stdout, stderr).RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(stderr, "kcheck: %s\n", msg)
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return exitUsage
}

// exitError is an error with an exit status. Its message may be empty when
// the command already reported the failure.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// ExitCode implements cli.ExitCoder.
func (e *exitError) ExitCode() int { return e.code }

// noInput is the standard input of a run given none: a terminal, for
// commands that would read it.
type noInput struct{}

func (noInput) Read([]byte) (int, error) { return 0, io.EOF }

func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func onUsageError(c *cli.Context, err error, _ bool) error {
	name := "kcheck"
	if c.Command != nil && c.Command.HelpName != "" {
		name = c.Command.HelpName
	}
	return usageErrorf("%w (see %s --help)", err, name)
}

// listFlag returns the values of a repeatable flag, each also split on commas,
// so that "--run a,b" and "--run a --run b" mean the same.
func listFlag(c *cli.Context, name string) []string {
	var out []string
	for _, v := range c.StringSlice(name) {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
