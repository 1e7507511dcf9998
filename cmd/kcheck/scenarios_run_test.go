package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input to kcheck scenarios run: exit 2 and a message naming what,
// before any broker starts.
func TestScenariosRunBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "X.Y.scenario"), []byte("scenario X.Y\nbogus line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	specs := filepath.Join("..", "..", "spec", "scenarios")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dir", specs, "--scenario", "NoSuch.Thing"}, "--scenario NoSuch.Thing: no such scenario"},
		{[]string{"--dir", specs, "--clients", "ours-on,nope"}, `unknown client "nope"`},
		{[]string{"--dir", specs, "--shapes", "huge"}, `unknown shape "huge"`},
		{[]string{"--dir", specs, "--runs", "0"}, "--runs 0"},
		{[]string{"--dir", specs, "--brokers", ""}, "--brokers"},
		{[]string{"--dir", specs, "--root", dir}, "no drivers/ there"},
		{[]string{"--dir", bad}, "X.Y.scenario:2"},
		{[]string{"--dir", filepath.Join(dir, "none")}, "none"},
		{[]string{"--dir", specs, "extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := runKcheck(t, append([]string{"scenarios", "run"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
