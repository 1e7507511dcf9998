package tlc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker/tlc/tlctest"
)

const toyDir = "testdata/toy"

func TestRun(t *testing.T) {
	jar := tlctest.Jar(t)
	tests := []struct {
		module, config string
		checkDeadlock  bool
		outcome        string
		exitCode       int
		states         int64
		depth          int
		actions        []string
		message        string
	}{
		{module: "Toy.tla", config: "pass.cfg", outcome: "pass", states: 16, depth: 5},
		{
			module: "Toy.tla", config: "invariant.cfg", outcome: "invariant:Small", exitCode: 12, states: 8, depth: 4,
			actions: []string{InitialPredicate, "Inc", "Inc", "Inc"},
		},
		{
			module: "Toy.tla", config: "lasso.cfg", outcome: "liveness", exitCode: 13, states: 16, depth: 5,
			actions: []string{InitialPredicate, "Inc", "Inc", "Inc", "Reset", "back:Inc"},
		},
		// Terminal states are not deadlocks, unless deadlock checking is asked for.
		{module: "Toy.tla", config: "terminal.cfg", outcome: "pass", states: 7, depth: 3},
		{
			module: "Toy.tla", config: "terminal.cfg", checkDeadlock: true, outcome: "deadlock", exitCode: 11, states: 7, depth: 3,
			actions: []string{InitialPredicate, "Inc", "Inc"},
		},
		{module: "Toy.tla", config: "undefined.cfg", outcome: "error", exitCode: 151, message: "Undefined"},
		{module: "Parse.tla", config: "init_next.cfg", outcome: "error", exitCode: 150, message: "***Parse Error***"},
		{module: "Toy.tla", config: "missing.cfg", outcome: "error", exitCode: 255, message: "File not found."},
	}
	for _, tt := range tests {
		name := strings.TrimSuffix(tt.module, ".tla") + "/" + strings.TrimSuffix(tt.config, ".cfg")
		if tt.checkDeadlock {
			name += "/check_deadlock"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, err := Run(context.Background(), Options{
				Jar:           jar,
				Dir:           toyDir,
				Module:        tt.module,
				Config:        tt.config,
				CheckDeadlock: tt.checkDeadlock,
				Timeout:       2 * time.Minute,
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Outcome.String(); got != tt.outcome {
				t.Fatalf("outcome = %s, want %s; output:\n%s", got, tt.outcome, r.Output)
			}
			if r.ExitCode != tt.exitCode || r.States != tt.states || r.Depth != tt.depth {
				t.Errorf("exit code, states, depth = %d, %d, %d, want %d, %d, %d",
					r.ExitCode, r.States, r.Depth, tt.exitCode, tt.states, tt.depth)
			}
			if got := actions(r.Trace); !slices.Equal(got, tt.actions) {
				t.Errorf("trace actions = %q, want %q", got, tt.actions)
			}
			if !strings.Contains(strings.Join(r.Messages, "\n"), tt.message) {
				t.Errorf("messages %q lack %q", r.Messages, tt.message)
			}
			if r.Duration <= 0 || !strings.Contains(r.Output, "TLC2 Version") {
				t.Errorf("duration %v, output %q", r.Duration, r.Output)
			}
		})
	}
}

func TestRunTimeout(t *testing.T) {
	jar := tlctest.Jar(t)
	r, err := Run(context.Background(), Options{
		Jar: jar, Dir: toyDir, Module: "Slow.tla", Config: "init_next.cfg",
		Timeout: time.Second, // Slow has infinitely many states
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome.Kind != Error || len(r.Messages) == 0 || r.Messages[0] != "TLC timed out after 1s" {
		t.Errorf("outcome %s, messages %q; want an error, timed out", r.Outcome, r.Messages)
	}
}

// JVMArgs reach the java executable and Args TLC: a flag either does not
// know fails the run.
func TestRunArgs(t *testing.T) {
	jar := tlctest.Jar(t)
	for _, tt := range []struct {
		jvm, tlc []string
		outcome  Kind
		output   string
	}{
		{jvm: []string{"-XX:TieredStopAtLevel=1"}, tlc: []string{"-fp", "7"}, outcome: Pass, output: "with fp 7 "},
		{jvm: []string{"-XX:+NoSuchFlagForKcheck"}, outcome: Error},
		{tlc: []string{"-noSuchOptionForKcheck"}, outcome: Error},
	} {
		r, err := Run(context.Background(), Options{Jar: jar, Dir: toyDir, Module: "Toy.tla", Config: "pass.cfg", JVMArgs: tt.jvm, Args: tt.tlc})
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome.Kind != tt.outcome || !strings.Contains(r.Output, tt.output) {
			t.Errorf("JVMArgs %q, Args %q: outcome %s, want %s with %q in the output:\n%s", tt.jvm, tt.tlc, r.Outcome, tt.outcome, tt.output, r.Output)
		}
	}
}

func TestRunCanceled(t *testing.T) {
	jar := tlctest.Jar(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Options{Jar: jar, Dir: toyDir, Module: "Slow.tla", Config: "init_next.cfg"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

func TestCheck(t *testing.T) {
	jar := tlctest.Jar(t)
	exps, err := ParseExpectations(strings.NewReader(
		"invariant\tinvariant:Small\tx reaches Max\tToy\n"+
			"terminal\tdeadlock\tno step once x = Max\tToy\n"+
			// A check can fail: no invariant is violated here.
			"pass\tinvariant:TypeOK\twrongly expected to fail\tToy\n",
	), "expect.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for i, wantOK := range []bool{true, true, false} {
		rep, err := Check(context.Background(), toyDir, exps[i], Options{Jar: jar})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() != wantOK {
			t.Errorf("%s: expected %s, got %s: OK() = %v", rep.Name, rep.Expect, rep.Result.Outcome, rep.OK())
		}
	}
}

func TestCheckMissingFiles(t *testing.T) {
	jar := filepath.Join(toyDir, "Toy.tla") // any file: TLC does not run
	for _, e := range []Expectation{
		{Name: "nope", Module: "Toy", File: "expect.tsv", Line: 3},
		{Name: "pass", Module: "Nope", File: "expect.tsv", Line: 4},
	} {
		_, err := Check(context.Background(), toyDir, e, Options{Jar: jar})
		if err == nil || !strings.HasPrefix(err.Error(), e.Pos()+": ") || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Check(%s, %s): error = %v, want one at %s, not found", e.Name, e.Module, err, e.Pos())
		}
	}
}

func TestRunSetupErrors(t *testing.T) {
	file := filepath.Join(toyDir, "Toy.tla") // exists, stands for the jar
	tests := []struct {
		name string
		opts Options
		want error
	}{
		{"no jar", Options{}, ErrNoJar},
		{"missing jar", Options{Jar: "testdata/no-such.jar"}, ErrNoJar},
		{"jar is a directory", Options{Jar: toyDir}, ErrNoJar},
		{"no java", Options{Jar: file, Java: "kcheck-test-no-such-java"}, ErrNoJava},
	}
	for _, tt := range tests {
		tt.opts.Dir, tt.opts.Module, tt.opts.Config = toyDir, "Toy.tla", "pass.cfg"
		_, err := Run(context.Background(), tt.opts)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: error = %v, want %v", tt.name, err, tt.want)
		}
		if err2 := CheckSetup(tt.opts); !errors.Is(err2, tt.want) {
			t.Errorf("%s: CheckSetup error = %v, want %v", tt.name, err2, tt.want)
		}
	}
}

// fakeJava writes a script that stands for java: it prints out and exits
// with status code.
func fakeJava(t *testing.T, out string, code int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "java")
	script := "#!/bin/sh\ncat <<'EOF'\n" + out + "EOF\nexit " + strconv.Itoa(code) + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// A run is a pass only if TLC says so and exits with status 0.
func TestRunNeverPassesWithoutTLC(t *testing.T) {
	const done = "Model checking completed. No error has been found.\n"
	tests := []struct {
		name, out string
		code      int
		message   string
	}{
		{"silent", "", 0, "TLC printed no result"},
		{"crash after success line", done, 1, "TLC reported no error but exited with status 1"},
		{"violation with status 0", "Error: Deadlock reached.\n", 0, "TLC reported deadlock but exited with status 0"},
	}
	jar := filepath.Join(toyDir, "Toy.tla")
	for _, tt := range tests {
		java := fakeJava(t, tt.out, tt.code)
		r, err := Run(context.Background(), Options{Jar: jar, Java: java, Dir: toyDir, Module: "Toy.tla", Config: "pass.cfg"})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if r.Outcome.Kind != Error || !slices.Contains(r.Messages, tt.message) {
			t.Errorf("%s: outcome %s, messages %q; want error with %q", tt.name, r.Outcome, r.Messages, tt.message)
		}
	}
}
