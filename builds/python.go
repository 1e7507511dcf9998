package builds

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// pyClient is a Python client: its PyPI package, the module it imports as,
// and its driver in drivers/python.
type pyClient struct {
	pkg, module, driver string
}

// python is the interpreter that makes the virtualenvs, as
// drivers/python/setup.sh picks it: $PYTHON, or python3.
func python() string {
	if p := os.Getenv("PYTHON"); p != "" {
		return p
	}
	return "python3"
}

// venv is a build's virtualenv in the cache, made once: stamp records what
// was installed in it, with which interpreter, and is written last, so that
// a virtualenv without it (an install that failed or was cut short) is made
// again.
type venv struct {
	dir   string // the build's directory; the virtualenv is dir/venv
	want  string // the stamp's content
	py    string // the virtualenv's python
	stamp string
}

// openVenv locks the build's directory and returns its virtualenv, ready
// (done) or to be made.
func openVenv(ctx context.Context, env Env, s Spec, what string) (v *venv, done bool, unlock func(), err error) {
	dir, err := env.dir(s)
	if err != nil {
		return nil, false, nil, err
	}
	if unlock, err = lock(dir); err != nil {
		return nil, false, nil, err
	}
	base := python()
	ver, err := exec.CommandContext(ctx, base, "-c", "import sys; print(sys.version)").Output()
	if err != nil {
		unlock()
		return nil, false, nil, fmt.Errorf("%s not found or not working (%v): install Python 3 with its venv module, or set PYTHON to a python3", base, err)
	}
	v = &venv{dir: dir, py: filepath.Join(dir, "venv", "bin", "python"), stamp: filepath.Join(dir, "venv", ".kcheck-build"),
		want: s.Name() + "\n" + what + "\n" + strings.TrimSpace(string(ver)) + "\n"}
	if b, err := os.ReadFile(v.stamp); err == nil && string(b) == v.want {
		return v, true, unlock, nil
	}
	if err := os.RemoveAll(filepath.Join(dir, "venv")); err != nil {
		unlock()
		return nil, false, nil, err
	}
	cmd := exec.CommandContext(ctx, base, "-m", "venv", filepath.Join(dir, "venv"))
	if err := run(cmd, env.Log, base+" -m venv "+filepath.Join(dir, "venv")); err != nil {
		unlock()
		return nil, false, nil, fmt.Errorf("%w (Debian, Ubuntu: apt-get install python3-venv)", err)
	}
	return v, false, unlock, nil
}

// pip runs the virtualenv's pip install with args; shown replaces the
// last of them in the error (the path given, not its temporary copy).
func (v *venv) pip(ctx context.Context, env Env, extraEnv []string, shown string, args ...string) error {
	a := append([]string{"-m", "pip", "install", "--disable-pip-version-check", "--no-input"}, args...)
	cmd := exec.CommandContext(ctx, v.py, a...)
	cmd.Env = withEnv(extraEnv...)
	show := append([]string{}, args...)
	show[len(show)-1] = shown
	return run(cmd, env.Log, "pip install "+joinArgs(show))
}

// done checks that module imports and writes the stamp.
func (v *venv) done(ctx context.Context, env Env, module string) error {
	cmd := exec.CommandContext(ctx, v.py, "-c", "import "+module)
	if err := run(cmd, env.Log, v.py+" -c 'import "+module+"'"); err != nil {
		return fmt.Errorf("installed, but does not import: %w", err)
	}
	return os.WriteFile(v.stamp, []byte(v.want), 0o644)
}

// source copies the tree at path to a temporary directory for pip to build
// from (pip builds a source tree in place, writing build/ and *.egg-info
// into it), or returns path itself for a file (an sdist or a wheel).
func source(path string) (src string, cleanup func(), err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", nil, err
	}
	if !fi.IsDir() {
		return path, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "kcheck-build-src-")
	if err != nil {
		return "", nil, err
	}
	src = filepath.Join(tmp, filepath.Base(path))
	if err := copyTree(path, src); err != nil {
		os.RemoveAll(tmp)
		return "", nil, fmt.Errorf("copying %s: %w", path, err)
	}
	return src, func() { os.RemoveAll(tmp) }, nil
}

// buildPython installs a Python client (PKG==VERSION from PyPI, or the
// source tree, sdist or wheel at Path) with its dependencies into a
// virtualenv of its own in the cache, once.
func buildPython(ctx context.Context, env Env, s Spec, c pyClient) ([]string, error) {
	req := c.pkg + "==" + s.Version
	if s.Path != "" {
		req = s.Path
	}
	v, done, unlock, err := openVenv(ctx, env, s, req)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !done {
		fmt.Fprintf(env.Log, "builds: installing %s into %s\n", req, v.dir)
		arg, cleanup := req, func() {}
		if s.Path != "" {
			if arg, cleanup, err = source(s.Path); err != nil {
				return nil, err
			}
		}
		args := []string{arg}
		if s.Path != "" {
			// A wheel built from a temporary copy is of no use again.
			args = []string{"--no-cache-dir", arg}
		}
		err := v.pip(ctx, env, nil, req, args...)
		cleanup()
		if err != nil {
			if s.Version != "" {
				return nil, fmt.Errorf("PyPI (or PIP_INDEX_URL) did not give %s: %w", req, err)
			}
			return nil, err
		}
		if err := v.done(ctx, env, c.module); err != nil {
			return nil, err
		}
	}
	return []string{v.py, filepath.Join(env.Root, "drivers", "python", c.driver)}, nil
}
