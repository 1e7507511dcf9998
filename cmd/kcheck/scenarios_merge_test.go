package main

import (
	"strings"
	"testing"
)

// The help of scenarios run and merge says how to shard a matrix and
// merge it, and what --under-test decides.
func TestShardHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"scenarios", "--help"}, []string{"merge", "join the shards of one matrix"}},
		{[]string{"scenarios", "run", "--help"}, []string{"[--shard K/N]", "--shard K/N", "With --shard K/N it runs only the Kth of N parts", "kcheck scenarios merge"}},
		{[]string{"scenarios", "merge", "--help"}, []string{"kcheck scenarios merge [--results FILE] [--json FILE] [--junit FILE] [--html FILE] [--under-test CLIENTS] [--gate] SHARD.json...",
			"--under-test CLIENTS", "a shard missing (it names each K missing)", "Exit status"}},
	} {
		code, out, errOut := runKcheck(t, c.args...)
		if code != exitOK || errOut != "" {
			t.Errorf("kcheck %q: exit %d, stderr %q", c.args, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(strings.Join(strings.Fields(out), " "), w) {
				t.Errorf("kcheck %q: help lacks %q:\n%s", c.args, w, out)
			}
		}
	}
}
