package builds

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Env is what a build needs: the kcheck repository (its drivers/), the
// cache builds go to, and where their progress is logged.
type Env struct {
	Root  string    // the kcheck repository
	Cache string    // the download cache ($KCHECK_CACHE, ~/.cache/kcheck); builds go under builds/
	Log   io.Writer // the tools' output as they build; nil: discarded
}

// Build builds or installs s (resolved) into the cache, unless it is there
// already, and returns the command that runs its driver, before the
// driver's flags. Its error (the caller names s) says which tool failed
// and ends with the last lines that tool wrote to standard error: the
// registry's answer when it serves no such version, the compiler's when
// the path does not build.
func Build(ctx context.Context, env Env, s Spec) ([]string, error) {
	if s.Path != "" && s.Hash == "" {
		return nil, fmt.Errorf("%s: not resolved", s.given())
	}
	if env.Log == nil {
		env.Log = io.Discard
	}
	var argv []string
	var err error
	switch s.Client {
	case "java":
		argv, err = buildJava(ctx, env, s)
	default:
		err = fmt.Errorf("unknown client %q", s.Client)
	}
	return argv, err
}

// tailLines is how many of a failing tool's last lines of standard error
// an error carries.
const tailLines = 12

// cmdError is a tool that failed: its command and its last lines of
// standard error.
type cmdError struct {
	cmd  string
	err  error
	tail string
}

func (e *cmdError) Error() string {
	if e.tail == "" {
		return fmt.Sprintf("%s: %v", e.cmd, e.err)
	}
	return fmt.Sprintf("%s: %v; its last lines of standard error:\n%s", e.cmd, e.err, e.tail)
}

func (e *cmdError) Unwrap() error { return e.err }

// run runs cmd with its standard error (and output, unless cmd.Stdout is
// set) going to log, and on failure returns a *cmdError with the last
// lines of its standard error. shown is the command as the error names it.
func run(cmd *exec.Cmd, log io.Writer, shown string) error {
	var tail bytes.Buffer
	cmd.Stderr = io.MultiWriter(log, &tail)
	if cmd.Stdout == nil {
		cmd.Stdout = log
	}
	if err := cmd.Run(); err != nil {
		return &cmdError{cmd: shown, err: err, tail: lastLines(tail.String(), tailLines)}
	}
	return nil
}

// output runs cmd as run does and returns its standard output, trimmed.
func output(cmd *exec.Cmd, log io.Writer, shown string) (string, error) {
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := run(cmd, log, shown); err != nil {
		return "", err
	}
	return strings.TrimSpace(out.String()), nil
}

// lastLines returns s's last n non-empty lines, each indented with "  | ".
func lastLines(s string, n int) string {
	var ls []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, "\r "); l != "" {
			ls = append(ls, "  | "+l)
		}
	}
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// joinArgs is args as a shell would read them back, roughly: quoted when
// they hold a space.
func joinArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t'\"") {
			a = fmt.Sprintf("%q", a)
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// withEnv is os.Environ with kv set over it.
func withEnv(kv ...string) []string {
	env := os.Environ()
	for _, s := range kv {
		k, _, _ := strings.Cut(s, "=")
		env = dropEnv(env, k)
		env = append(env, s)
	}
	return env
}

func dropEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, e := range env {
		if k, _, _ := strings.Cut(e, "="); k != key {
			out = append(out, e)
		}
	}
	return out
}
