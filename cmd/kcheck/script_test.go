package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the CLI's golden scripts, testdata/script/*.txtar: each
// runs kcheck (this test binary, TestMain) and compares its standard
// output, standard error and exit status with the files of the script.
// KCHECK_UPDATE=1 rewrites the golden files from what kcheck printed, to be
// reviewed in the diff. Every script starts with the trace fixtures of
// traces/fixtures and traces/run.jsonl copied into its work directory as
// fixtures/ and run.jsonl, so the reports name short relative paths.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		UpdateScripts:       os.Getenv("KCHECK_UPDATE") == "1",
		RequireExplicitExec: true,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"exits": exits},
		Setup: func(env *testscript.Env) error {
			fixtures, err := filepath.Glob(filepath.Join("..", "..", "traces", "fixtures", "*.jsonl"))
			if err != nil {
				return err
			}
			dir := filepath.Join(env.WorkDir, "fixtures")
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
			copyFile := func(src, dst string) error {
				data, err := os.ReadFile(src)
				if err != nil {
					return err
				}
				return os.WriteFile(dst, data, 0o644)
			}
			for _, f := range fixtures {
				if err := copyFile(f, filepath.Join(dir, filepath.Base(f))); err != nil {
					return err
				}
			}
			return copyFile(filepath.Join("..", "..", "traces", "run.jsonl"), filepath.Join(env.WorkDir, "run.jsonl"))
		},
	})
}

// exits is the scripts' command "exits CODE PROGRAM [ARGS...]": it runs
// PROGRAM as exec does (its output then goes to cmp stdout and cmp stderr)
// and fails unless it exits with status CODE.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: status %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
