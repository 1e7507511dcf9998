package builds

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	case "kgo":
		argv, err = buildGo(ctx, env, s, "kgo")
	case "sarama":
		argv, err = buildGo(ctx, env, s, "sarama")
	case "aiokafka":
		argv, err = buildPython(ctx, env, s, pyClient{pkg: "aiokafka", module: "aiokafka", driver: "aiokafka_driver.py"})
	case "kafka-python":
		argv, err = buildPython(ctx, env, s, pyClient{pkg: "kafka-python", module: "kafka", driver: "kafka_python_driver.py"})
	case "librdkafka":
		if s.Version != "" {
			// confluent-kafka's wheels bundle the librdkafka of their own version.
			argv, err = buildPython(ctx, env, s, pyClient{pkg: "confluent-kafka", module: "confluent_kafka", driver: "driver.py"})
			break
		}
		argv, err = buildLibrdkafka(ctx, env, s)
	case "kafkajs":
		argv, err = buildKafkajs(ctx, env, s)
	default:
		err = fmt.Errorf("unknown client %q", s.Client)
	}
	return argv, err
}

// dir is the build's directory in the cache, made if need be.
func (env Env) dir(s Spec) (string, error) {
	d := filepath.Join(env.Cache, "builds", s.Key())
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("the cache: %w (set KCHECK_CACHE)", err)
	}
	return d, nil
}

// lock holds an exclusive lock on dir/.lock until unlock is called, so that
// two kcheck runs do not build into the same directory at once.
func lock(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
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

// copyTree copies the tree at src to dst (which must not exist), leaving
// out every .git as Hash does, so that a build sees what was hashed and
// writes nothing into the user's tree. Symbolic links are copied as links.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.Name() == ".git" && p != src {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil // sockets, pipes, devices: nothing a build reads
	})
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
