package verify

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/checker"
)

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		n    int32
		have []int32
		want []Span
	}{
		{8, nil, []Span{{0, 7}}},
		{8, []int32{0, 1, 2, 3, 4, 5, 6, 7}, nil},
		{8, []int32{0, 2, 3, 7}, []Span{{1, 1}, {4, 6}}},
		{1_000_000, []int32{5}, []Span{{0, 4}, {6, 999_999}}},
	} {
		if got := Missing(tc.n, tc.have); !slices.Equal(got, tc.want) {
			t.Errorf("Missing(%d, %v) = %v, want %v", tc.n, tc.have, got, tc.want)
		}
		c := Coverage{Unread: tc.want}
		for p := range min(tc.n, 16) {
			if c.unread(p) == slices.Contains(tc.have, p) {
				t.Errorf("unread(%d) = %v with %v read", p, c.unread(p), tc.have)
			}
		}
	}
}

// A trace cut off before its read-back is still checked for what needs no
// log: bad-stall without its ReadBack still has its stall, and says it is
// incomplete.
func TestCutTraceChecked(t *testing.T) {
	data, err := os.ReadFile("../../traces/fixtures/bad-stall.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.Contains(l, `"ev":"ReadBack"`) {
			keep = append(keep, l)
		}
	}
	path := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(keep, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := File(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != Violations || len(rep.Violations) == 0 {
		t.Fatalf("verdict %s, violations %+v: want the stall", rep.Verdict, rep.Violations)
	}
	for _, v := range rep.Violations {
		if v.Kind != checker.Stall {
			t.Errorf("found %s: %s", v.Kind, v.Detail)
		}
	}
	if summary, _ := rep.Incomplete(); !strings.HasPrefix(summary, "incomplete trace: no read-back") || rep.ReadBack.Complete() {
		t.Errorf("incomplete: %q, coverage %+v", summary, rep.ReadBack)
	}
}
