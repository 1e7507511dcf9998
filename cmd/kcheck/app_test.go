package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runKcheck runs kcheck with args and returns its exit status and output.
func runKcheck(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), append([]string{"kcheck"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelp(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{nil, []string{"kcheck <command> [flags]", "tlc", "Exit status"}},
		{[]string{"--help"}, []string{"kcheck <command> [flags]", "tlc", "Exit status"}},
		{[]string{"tlc", "--help"}, []string{
			"kcheck tlc [--jar PATH] [--spec-dir DIR] [--expect FILE] [--run NAME]... [--timeout DURATION] [--parallel N] [--format text|json]",
			"expect.tsv", "invariant:<Name>", "$KCHECK_TLA2TOOLS", "--spec-dir DIR", "Exit status",
		}},
		{[]string{"help", "tlc"}, []string{"kcheck tlc [--jar PATH]"}},
	}
	for _, tt := range tests {
		code, out, errOut := runKcheck(t, tt.args...)
		if code != exitOK || errOut != "" {
			t.Errorf("kcheck %q: exit %d, stderr %q", tt.args, code, errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("kcheck %q: help lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
}

// Usage errors exit 2 and print one line to stderr, nothing to stdout.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "kcheck: flag provided but not defined: -bogus (see kcheck --help)\n"},
		{[]string{"bogus"}, "kcheck: unknown command \"bogus\" (see kcheck --help)\n"},
		{[]string{"tlc", "--bogus"}, "kcheck: flag provided but not defined: -bogus (see kcheck tlc --help)\n"},
		{[]string{"tlc", "--timeout", "soon"}, "kcheck: invalid value \"soon\" for flag -timeout: parse error (see kcheck tlc --help)\n"},
		{[]string{"tlc", "extra"}, "kcheck: tlc: unexpected argument \"extra\" (see kcheck tlc --help)\n"},
		{[]string{"tlc", "--format", "xml"}, "kcheck: tlc: --format \"xml\": want text or json\n"},
		{[]string{"tlc", "--parallel", "0"}, "kcheck: tlc: --parallel 0: want at least 1\n"},
	}
	for _, tt := range tests {
		code, out, errOut := runKcheck(t, tt.args...)
		if code != exitUsage || out != "" || errOut != tt.want {
			t.Errorf("kcheck %q: exit %d, stdout %q, stderr %q; want exit 2, stderr %q", tt.args, code, out, errOut, tt.want)
		}
	}
}
