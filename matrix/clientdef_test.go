package matrix

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/scenario"
)

// A definition's command is its template: the program found (relative to
// the definition, or on $PATH) and made absolute, a quoted field kept
// whole, {topic} filled in and {workload} replaced by the shape's flags
// for each cell, {bootstrap} and {outcomes} left to the proxy.
func TestReadClientDefs(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "drv"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(dir, "a.client")
	os.WriteFile(a, []byte("# mine\n\nname\tmine-1.0\nfamily  sarama\ncommand  bin/drv  --bootstrap={bootstrap} --topic {topic} {workload} \"--label=a \\\"b\\\"\" --out {outcomes}/{topic}\n"), 0o644)
	b := filepath.Join(dir, "b.client")
	os.WriteFile(b, []byte("name other\nfamily unknown\ncommand sh -c x --bootstrap {bootstrap} --topic {topic} {workload}\n"), 0o644)
	cs, err := ReadClientDefs([]string{a, b}, familyNames())
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Name != "mine-1.0" || cs[0].fam != "sarama" || cs[0].Def != a || cs[1].fam != Unknown {
		t.Fatalf("clients %+v", cs)
	}
	argv, err := cs[0].Prepare(context.Background(), &Env{})
	if err != nil {
		t.Fatal(err)
	}
	sh := Shape{Name: "x", Partitions: 2, Records: 10, ValueBytes: 5, BatchRecords: "many", IdleAfter: 4, Idle: 3 * time.Second}
	got := cs[0].command(argv, sh, "T", "4.1.0", "own", clientOpts{replication: 3})
	want := []string{filepath.Join(dir, "bin", "drv"), "--bootstrap={bootstrap}", "--topic", "T",
		"--partitions", "2", "--records", "10", "--value-bytes", "5", "--keys", "1024", "--compression", "gzip", "--batch-records", "many",
		"--delivery-timeout-ms", "5000", "--request-timeout-ms", "2000", "--idle-after", "4", "--idle-ms", "3000", "--replication-factor", "3",
		`--label=a "b"`, "--out", "{outcomes}/T"}
	if !slices.Equal(got, want) {
		t.Errorf("command\n%q\nwant\n%q", got, want)
	}
	// The stock drivers' flags are the same as {workload}'s.
	stock := Client{Name: "kgo"}.args(sh, "T", "4.1.0", "own", clientOpts{replication: 3})
	if !slices.Equal(stock[4:], want[4:len(want)-3]) {
		t.Errorf("a stock driver's flags %q differ from {workload}'s", stock)
	}
	if p, _ := cs[1].Prepare(context.Background(), &Env{}); !filepath.IsAbs(p[0]) || filepath.Base(p[0]) != "sh" {
		t.Errorf("a program on $PATH: %q, want its absolute path", p[0])
	}
}

// What a run shows, and which predictions match it.
func TestShownMatches(t *testing.T) {
	for _, c := range []struct {
		h     Happened
		kinds []string
		shown []string
	}{
		{Happened{}, nil, nil},
		{Happened{Lost: 3, Failed: 3}, nil, nil}, // failed honestly: no property broken
		{Happened{Lost: 3, Failed: 3}, []string{"lost-write"}, []string{"NoGap", "NoOutOfOrderLoss"}},
		{Happened{Lost: 2, LostAcked: 2}, []string{"lost-write"}, []string{"AckedInLog"}},
		{Happened{Duplicated: 1}, []string{"duplicate"}, []string{"NoDuplicate"}},
		{Happened{Reordered: 1, Stalls: 1}, nil, []string{"NoReorder", "liveness"}},
		{Happened{}, []string{"failed-but-present", "gap"}, []string{"NoGap", "NoOutOfOrderLoss", "NoFalseOutOfOrder"}},
	} {
		if got := Shown(c.h, c.kinds); !slices.Equal(got, c.shown) {
			t.Errorf("Shown(%+v, %v) = %v, want %v", c.h, c.kinds, got, c.shown)
		}
	}
	for _, c := range []struct {
		pred  string
		shown []string
		want  bool
	}{
		{"pass", nil, true},
		{"pass", []string{"NoGap"}, false},
		{"invariant:NoGap", []string{"NoGap", "NoOutOfOrderLoss"}, true},
		{"invariant:NoGap", nil, false},
		{"invariant:NoReorder", []string{"NoGap"}, false},
		{"liveness", []string{"liveness"}, true},
		{"not modelled", nil, false},
		{"deadlock", nil, false},
	} {
		if got := Matches(c.pred, c.shown); got != c.want {
			t.Errorf("Matches(%q, %v) = %v", c.pred, c.shown, got)
		}
	}
}

// A cell of a client of unknown family shows every family's prediction and
// which it behaved like, in the cell, its line, the Markdown (with a count
// per family) and the JSON; --from (Repredict) works them out again from
// the scenario files as they are now. A client claiming a family is
// judged by it alone, as a stock client is.
func TestUnknownFamilyCells(t *testing.T) {
	sc := &Scenario{Name: "SeedGap.NoGap", Schedule: []string{"x"}, Family: scenario.FamilyOf,
		Predictions: map[string]string{"java": "invariant:NoGap", "kgo": "pass", "sarama": "pass", "kafkajs": "not modelled"}}
	unknown := Client{Name: "mine", Def: "mine.client", fam: Unknown}
	claims := Client{Name: "theirs", Def: "theirs.client", fam: "java"}
	var cells []Cell
	for i, h := range []Happened{{}, {Lost: 2, Failed: 2}} {
		for _, c := range []Client{unknown, claims} {
			cell := cellSpec{scenario: sc, client: c, shape: Shape{Name: []string{"clean", "gap"}[i]}}.cell()
			cell.Verdict, cell.Happened, cell.What, cell.Agreement = "valid", h, h.String(), Agrees
			if i == 1 {
				cell.Verdict, cell.Kinds = "violations", []string{"lost-write"}
			}
			cell.judge()
			cells = append(cells, cell)
		}
	}
	base := cellSpec{scenario: &Scenario{Name: Baseline, Family: scenario.FamilyOf}, client: unknown}.cell()
	if base.Predicted != "no faults" || base.Predictions != nil || base.likeWords() != "" {
		t.Errorf("the Baseline: %+v", base)
	}
	clean, gap := cells[0], cells[2]
	if clean.Family != Unknown || clean.Predicted != "pass (kgo, sarama); invariant:NoGap (java); not modelled (kafkajs)" || len(clean.Predictions) != 4 {
		t.Errorf("unknown: family %q, predicted %q, predictions %v", clean.Family, clean.Predicted, clean.Predictions)
	}
	if !slices.Equal(clean.Like, []string{"kgo", "sarama"}) || !slices.Equal(gap.Like, []string{"java"}) || clean.Worse || gap.Worse {
		t.Errorf("like %v when clean, %v with a gap (worse %v, %v); want kgo, sarama and java, never worse", clean.Like, gap.Like, clean.Worse, gap.Worse)
	}
	if c := cells[1]; c.Family != "java" || c.Predicted != "invariant:NoGap" || c.Predictions != nil || c.Like != nil {
		t.Errorf("a client claiming java: %+v", c)
	}
	if !strings.Contains(gap.line(), "| behaves like java |") || !strings.HasSuffix(clean.short(), "; behaves like kgo, sarama") {
		t.Errorf("line %q, short %q", gap.line(), clean.short())
	}
	r := &Results{Brokers: []string{""}, Cells: cells, Seconds: map[string]float64{}}
	var md strings.Builder
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| mine | unknown: pass (kgo, sarama); invariant:NoGap (java); not modelled (kafkajs) | clean |",
		"| theirs | java: invariant:NoGap | clean |",
		"### Clients of unknown family",
		"- mine, 2 cells: java 1, kgo 1, sarama 1, kafkajs 0\n",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown has no %q:\n%s", want, md.String())
		}
	}
	var js strings.Builder
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(strings.NewReader(js.String()), "r.json")
	if err != nil || !slices.Equal(back.Cells[2].Like, []string{"java"}) || back.Cells[2].Predictions["kgo"] != "pass" {
		t.Fatalf("the JSON read back: %v, %+v", err, back)
	}
	// The model changes: now sarama loses too, and java is not modelled.
	now := map[string]string{"java": "not modelled", "kgo": "pass", "sarama": "invariant:NoGap", "ours": "pass"}
	if err := back.Repredict(func(string, string) (map[string]string, bool) { return now, true }, "now"); err != nil {
		t.Fatal(err)
	}
	if c := back.Cells[2]; !slices.Equal(c.Like, []string{"sarama"}) || len(c.Predictions) != 4 || !strings.HasPrefix(c.Predicted, "pass (kgo, ours); invariant:NoGap (sarama)") {
		t.Errorf("repredicted: %+v", c)
	}
	if c := back.Cells[3]; c.Predicted != "not modelled" || c.Worse {
		t.Errorf("repredicted, the client claiming java: %+v", c)
	}
}

// A defined client's family is part of the matrix's identity: shards run
// with another family are another matrix.
func TestIdentityDefinedFamily(t *testing.T) {
	cfg := Config{Scenarios: []*Scenario{{Name: "S"}}, Brokers: []string{"4.1.0"}, Shapes: Shapes()[:1],
		Clients: []Client{{Name: "mine", Def: "mine.client", fam: Unknown}}}
	id := Identity(cfg)
	cfg.Clients[0].fam = "kgo"
	if Identity(cfg) == id {
		t.Error("the same identity with family unknown and kgo")
	}
}
