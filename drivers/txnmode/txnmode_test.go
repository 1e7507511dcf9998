package txnmode

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/bench/loadgen"
)

func TestSplit(t *testing.T) {
	cfg, rest, err := Split([]string{"--topic", "t", "--records", "5"}, "d: ")
	if cfg != nil || err != nil || !slices.Equal(rest, []string{"--topic", "t", "--records", "5"}) {
		t.Errorf("no --transactional: %+v, %q, %v", cfg, rest, err)
	}
	cfg, rest, err = Split([]string{"--topic", "t", "--transactional", "--records", "5", "--txn-records", "7", "--txn-abort-every", "2"}, "d: ")
	if err != nil || *cfg != (Config{Records: 7, AbortEvery: 2}) || !slices.Equal(rest, []string{"--topic", "t", "--records", "5"}) {
		t.Errorf("--transactional: %+v, %q, %v", cfg, rest, err)
	}
	seed := &loadgen.SeedConfig{Topic: "t", IdleAfter: -1}
	if err := cfg.Check(seed, "d: "); err != nil || cfg.ID != "kcheck-t" {
		t.Errorf("Check: %+v, %v", cfg, err)
	}
	cfg, _, _ = Split([]string{"--transactional", "--transactional-id", "x"}, "d: ")
	if cfg.Check(seed, "d: "); cfg.ID != "x" || cfg.Records != DefaultRecords || cfg.AbortEvery != 0 {
		t.Errorf("defaults and --transactional-id: %+v", cfg)
	}
	if cfg.Abort(1) || cfg.Abort(3) {
		t.Error("--txn-abort-every 0 aborts")
	}
	cfg.AbortEvery = 3
	if cfg.Abort(1) || cfg.Abort(2) || !cfg.Abort(3) || !cfg.Abort(6) {
		t.Error("--txn-abort-every 3: not every third")
	}
	seed.IdleAfter = 4
	if err := cfg.Check(seed, "d: "); err == nil || !strings.Contains(err.Error(), "d: --idle-after with --transactional") {
		t.Errorf("an idle phase: %v", err)
	}
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"--txn-records", "5"}, "d: --txn-records needs --transactional"},
		{[]string{"--transactional-id", "x"}, "d: --transactional-id needs --transactional"},
		{[]string{"--transactional", "--txn-records", "0"}, "d: --txn-records wants a number of at least 1, not 0"},
		{[]string{"--transactional", "--txn-records", "x"}, "d: --txn-records wants a number"},
		{[]string{"--transactional", "--txn-abort-every", "-1"}, "d: --txn-abort-every wants a number of at least 0 (0: none aborted), not -1"},
		{[]string{"--transactional", "--transactional-id", ""}, "d: --transactional-id is empty"},
		{[]string{"--transactional", "--txn-records"}, "d: --txn-records needs a value"},
	} {
		_, _, err := Split(tc.argv, "d: ")
		var ue *loadgen.UsageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error %q", tc.argv, err, tc.want)
		}
	}
}

func TestCannotRun(t *testing.T) {
	for code, want := range map[int16]bool{35: true, 53: true, 31: true, 0: false, 48: false, 6: false, -1: false} {
		if CannotRun(code) != want {
			t.Errorf("CannotRun(%d) = %v", code, !want)
		}
	}
}
