package matrix

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Shard
		err  string
	}{
		{"1/1", Shard{K: 1, N: 1}, ""},
		{"2/3", Shard{K: 2, N: 3}, ""},
		{"3/3", Shard{K: 3, N: 3}, ""},
		{"0/3", Shard{}, "K is 0: shards are counted from 1"},
		{"4/3", Shard{}, "K is 4: there are only 3 shards"},
		{"1/0", Shard{}, "N is 0: want 1 or more shards"},
		{"-1/3", Shard{}, "K is -1"},
		{"a/b", Shard{}, "want K/N"},
		{"3", Shard{}, "want K/N"},
		{"", Shard{}, "want K/N"},
		{"1/2/3", Shard{}, "want K/N"},
		{" 1/2", Shard{}, "want K/N"},
	} {
		got, err := ParseShard(c.in)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("ParseShard(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("ParseShard(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
		}
	}
}

// testConfig is a matrix of every kind of broker group: scenarios on one
// node, one waiting out the producer-state expiry between them (its group
// runs after theirs), and one on a cluster.
func testConfig() Config {
	fam := func(string) string { return "ours" }
	return Config{
		Scenarios: []*Scenario{
			{Name: Baseline, Family: fam},
			{Name: "Expiry.NoGap", Schedule: []string{"expire-producer-state:after=1"}, Expiry: 2 * time.Second, Family: fam},
			{Name: "SeedGap.NoGap", Schedule: []string{"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=0"}, Family: fam},
			{Name: "kill-leader", Schedule: []string{"kill:leader=0,after=100"}, Nodes: ClusterNodes, Family: fam},
		},
		Clients: []Client{{Name: "ours-off", Ours: true}, {Name: "ours-on", Ours: true, FirstAck: true}, {Name: "kgo"}},
		Brokers: []string{"4.1.0", "4.4.0"},
		Shapes:  Shapes(),
		Runs:    2,
	}
}

// Plan's order is Run's: by broker, then by broker need in the order the
// scenarios first need it, then scenario, client, shape, run.
func TestPlanOrder(t *testing.T) {
	cfg := testConfig()
	cfg.Shapes, cfg.Runs, cfg.Clients = cfg.Shapes[:1], 1, cfg.Clients[:1]
	var got []string
	for _, k := range Plan(cfg) {
		got = append(got, k.Broker+" "+k.Scenario)
	}
	want := []string{
		"4.1.0 Baseline", "4.1.0 SeedGap.NoGap", "4.1.0 Expiry.NoGap", "4.1.0 kill-leader",
		"4.4.0 Baseline", "4.4.0 SeedGap.NoGap", "4.4.0 Expiry.NoGap", "4.4.0 kill-leader",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A transactional scenario runs on the transactional shapes only, and the
// idempotent ones on the rest; the Baseline on every shape. The
// transactional scenarios group by what they set on the brokers
// (verification on or off), after the idempotent ones; a scenario its
// broker cannot run (verification on 3.5) has no cell.
func TestPlanTransactional(t *testing.T) {
	cfg := Config{
		Scenarios: []*Scenario{{Name: Baseline}, {Name: "SeedGap.NoGap", Schedule: []string{"reject:seq=0"}},
			{Name: "TxnTV1Verify", Schedule: []string{"late-txn:api=end-txn,until=send:produce"}, TxnVersion: 1, TxnVerification: true},
			{Name: "TxnTV1", Schedule: []string{"late-produce:seq=0,until=answer:init-pid"}, TxnVersion: 1}},
		Clients: Clients()[:1],
		Brokers: []string{"3.5.2", "4.4.0"},
		Shapes:  slices.Concat(Shapes()[:1], TxnShapes()),
		Runs:    1,
	}
	var got []string
	for _, p := range plan(cfg) {
		got = append(got, fmt.Sprintf("%s %s %s txn=%d verify=%v", p.broker, p.scenario.Name, p.shape.Name, p.need.txn, p.need.verify))
	}
	want := []string{
		"3.5.2 Baseline 1p-one txn=0 verify=false", "3.5.2 Baseline 1p-txn txn=0 verify=false", "3.5.2 SeedGap.NoGap 1p-one txn=0 verify=false",
		"3.5.2 TxnTV1 1p-txn txn=1 verify=false",
		"4.4.0 Baseline 1p-one txn=0 verify=false", "4.4.0 Baseline 1p-txn txn=0 verify=false", "4.4.0 SeedGap.NoGap 1p-one txn=0 verify=false",
		"4.4.0 TxnTV1Verify 1p-txn txn=1 verify=true", "4.4.0 TxnTV1 1p-txn txn=1 verify=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A transactional shape gives every client its transactional flags.
	args := strings.Join(Clients()[5].args(TxnShapes()[0], "t", "4.4.0", "", clientOpts{}), " ")
	if !strings.HasSuffix(args, "--transactional --txn-records 2 --txn-abort-every 3") {
		t.Errorf("kgo's flags on 1p-txn: %s", args)
	}
}

// Every cell is in exactly one shard, the shards in K order are the whole
// matrix in its order, their sizes differ by at most one, and the N shards
// start at most N-1 broker groups more than the whole matrix.
func TestShardSplit(t *testing.T) {
	cfg := testConfig()
	all := plan(cfg)
	m := len(all) // 2 brokers × 4 scenarios × 3 clients × 2 shapes × 2 runs
	if m != 96 {
		t.Fatalf("%d cells, want 96", m)
	}
	groups := func(ps []planned) int {
		n := 0
		for i, p := range ps {
			if i == 0 || p.broker != ps[i-1].broker || p.need != ps[i-1].need {
				n++
			}
		}
		return n
	}
	g := groups(all) // 2 brokers × 3 needs
	for _, n := range []int{1, 2, 3, 5, 7, 16, 95, 96, 97, 200} {
		var joined []CellKey
		sizes := map[int]bool{}
		starts := 0
		for k := 1; k <= n; k++ {
			from, to := Shard{K: k, N: n}.Bounds(m)
			for _, p := range all[from:to] {
				joined = append(joined, p.key())
			}
			sizes[to-from] = true
			starts += groups(all[from:to])
		}
		if !slices.Equal(joined, Plan(cfg)) {
			t.Errorf("N=%d: the shards joined are not the matrix in its order", n)
		}
		var ss []int
		for s := range sizes {
			ss = append(ss, s)
		}
		if slices.Max(ss)-slices.Min(ss) > 1 {
			t.Errorf("N=%d: shard sizes %v differ by more than one", n, ss)
		}
		if starts > g+n-1 {
			t.Errorf("N=%d: the shards start %d broker groups, the whole matrix %d", n, starts, g)
		}
	}
	// Deterministic from the definition alone: a copy made apart splits
	// the same, and has the same identity.
	again := testConfig()
	again.Dir, again.CellTimeout = "/elsewhere", time.Minute
	if !slices.Equal(Plan(again), Plan(cfg)) || Identity(again) != Identity(cfg) {
		t.Error("the same matrix made again plans or names itself differently")
	}
}

// The identity changes with anything that changes the cells.
func TestIdentity(t *testing.T) {
	base := Identity(testConfig())
	for what, change := range map[string]func(*Config){
		"runs":     func(c *Config) { c.Runs = 3 },
		"brokers":  func(c *Config) { c.Brokers = c.Brokers[:1] },
		"clients":  func(c *Config) { c.Clients[0], c.Clients[1] = c.Clients[1], c.Clients[0] },
		"a rule":   func(c *Config) { c.Clients[1].NoRearm = true },
		"shape":    func(c *Config) { c.Shapes[0].Records++ },
		"schedule": func(c *Config) { c.Scenarios[2].Schedule = []string{"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=0,seq=1"} },
		"expiry":   func(c *Config) { c.Scenarios[1].Expiry = time.Second },
		"nodes":    func(c *Config) { c.Scenarios[3].Nodes = 1 },
		"scenario": func(c *Config) { c.Scenarios = c.Scenarios[1:] },
	} {
		c := testConfig()
		change(&c)
		if Identity(c) == base {
			t.Errorf("changing the %s keeps the identity", what)
		}
	}
}

// fakeRun is what Run returns for cfg's shard, without running anything:
// each cell's outcome made up from its place in the plan, started at
// started.
func fakeRun(cfg Config, s Shard, started time.Time) *Results {
	all := plan(cfg)
	from, to := s.Bounds(len(all))
	r := &Results{Started: started, Load: fmt.Sprintf("load %s", s), Seconds: map[string]float64{}, Brokers: cfg.Brokers,
		Shapes: cfg.Shapes, Schedule: map[string][]string{}, Notes: map[string][]string{}, Matrix: Identity(cfg)}
	if s.N > 0 {
		s.From, s.To, s.Of = from, to, len(all)
		r.Shard = &s
	}
	for _, c := range cfg.Clients {
		r.Clients = append(r.Clients, c.Name)
	}
	for _, sc := range cfg.Scenarios {
		r.Schedule[sc.Name] = sc.Schedule
		if sc.Expiry > 0 {
			r.Notes[sc.Name] = []string{"A note."}
		}
	}
	for i, p := range all[from:to] {
		i += from
		spec := cellSpec{scenario: p.scenario, client: p.client, shape: p.shape, broker: p.broker, run: p.run}
		c := spec.cell()
		c.Reach = Reach{Status: []string{Reached, HeldBack, NotReached}[i%3]}
		c.Happened = Happened{Reordered: i % 5 / 4, Failed: i % 7}
		c.What, c.Verdict, c.Agreement = c.Happened.String(), "valid", Agree(false, c.Happened)
		c.Seconds = float64(i%4) + 0.5
		c.Trace = fmt.Sprintf("traces-%d/cell-%d.jsonl", s.K, i)
		if i%11 == 0 {
			c.Err = "timed out"
		}
		r.Cells = append(r.Cells, c)
		r.Seconds[c.Scenario] += c.Seconds
	}
	r.Total = 100
	return r
}

// untimed is c without what differs from one run to another of the same
// cell: its wall time and where its trace was kept.
func untimed(cs []Cell) []Cell {
	out := slices.Clone(cs)
	for i := range out {
		out[i].Seconds, out[i].Trace = 0, ""
	}
	return out
}

// timing matches the Markdown's lines that say when and how long, and the
// merge's line naming its shards.
var timing = regexp.MustCompile(`(?m)^(Run .* UTC, load average .*\n|Wall time .*\n|Merged from .*\n\n)`)

// A matrix split 3 ways, each shard through its JSON, merges into what the
// whole matrix's run gives: the same cells in the same order, the same
// Markdown but for its times.
func TestMergeRoundTrip(t *testing.T) {
	cfg := testConfig()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	whole := fakeRun(cfg, Shard{}, t0)
	var shards []*Results
	var names []string
	for _, k := range []int{2, 3, 1} { // in any order
		s := fakeRun(cfg, Shard{K: k, N: 3}, t0.Add(time.Duration(k)*time.Minute))
		var b bytes.Buffer
		if err := s.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("shard-%d.json", k)
		back, err := ReadResults(&b, name)
		if err != nil {
			t.Fatal(err)
		}
		shards, names = append(shards, back), append(names, name)
	}
	m, err := Merge(shards, names)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Cells) != len(whole.Cells) {
		t.Fatalf("merged %d cells, the whole matrix has %d", len(m.Cells), len(whole.Cells))
	}
	for i, c := range untimed(m.Cells) {
		if w := untimed(whole.Cells)[i]; !reflect.DeepEqual(c, w) {
			t.Errorf("cell %d: merged %+v\nwhole %+v", i+1, c, w)
		}
	}
	if m.Matrix != whole.Matrix || m.Shard != nil || !slices.Equal(m.Brokers, whole.Brokers) || !slices.Equal(m.Clients, whole.Clients) ||
		!reflect.DeepEqual(m.Shapes, whole.Shapes) || !reflect.DeepEqual(m.Schedule, whole.Schedule) || !reflect.DeepEqual(m.Notes, whole.Notes) {
		t.Errorf("merged matrix differs from the whole: %+v", m)
	}
	for s, secs := range whole.Seconds {
		if d := m.Seconds[s] - secs; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: merged %.1f s, whole %.1f s", s, m.Seconds[s], secs)
		}
	}
	if !m.Started.Equal(t0.Add(time.Minute)) || m.Load != "load 1/3" || m.Total != 220 || len(m.Shards) != 3 || m.Shards[2].K != 3 {
		t.Errorf("merged timing: started %v, load %q, total %v, shards %+v", m.Started, m.Load, m.Total, m.Shards)
	}
	if m.Tally() != whole.Tally() {
		t.Errorf("tally: merged %+v, whole %+v", m.Tally(), whole.Tally())
	}
	var mb, wb bytes.Buffer
	if err := m.WriteMarkdown(&mb); err != nil {
		t.Fatal(err)
	}
	if err := whole.WriteMarkdown(&wb); err != nil {
		t.Fatal(err)
	}
	got, want := strings.Split(timing.ReplaceAllString(mb.String(), ""), "\n"), strings.Split(timing.ReplaceAllString(wb.String(), ""), "\n")
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			t.Errorf("the merged Markdown, times left out, differs from the whole's at line %d:\n%s", i+1,
				strings.Join(got[i:min(i+3, len(got))], "\n")+"\nwhole:\n"+strings.Join(want[i:min(i+3, len(want))], "\n"))
			break
		}
	}
	if !strings.Contains(mb.String(), "Merged from 3 shards of the matrix "+short(whole.Matrix)+", each run on its own machine (`kcheck scenarios merge`): shard 1 started 12:01, load average load 1/3, 32 cells in 100 s;") {
		t.Errorf("the merged Markdown does not name its shards:\n%s", mb.String())
	}
	var sb bytes.Buffer
	if err := shards[0].WriteMarkdown(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "Shard 2 of 3 of the matrix "+short(whole.Matrix)+" (`kcheck scenarios run --shard 2/3`): its cells 33-64 of 96;") {
		t.Errorf("a shard's Markdown does not say it is one:\n%s", sb.String())
	}
}

// More shards than cells: the shards past the cells are empty, and still
// read back and merge.
func TestMergeEmptyShards(t *testing.T) {
	cfg := testConfig()
	cfg.Scenarios, cfg.Clients, cfg.Brokers, cfg.Shapes, cfg.Runs = cfg.Scenarios[:1], cfg.Clients[:1], cfg.Brokers[:1], cfg.Shapes[:1], 2
	var shards []*Results
	var names []string
	for k := 1; k <= 3; k++ {
		var b bytes.Buffer
		if err := fakeRun(cfg, Shard{K: k, N: 3}, time.Unix(0, 0)).WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		r, err := ReadResults(&b, "s")
		if err != nil {
			t.Fatalf("shard %d/3: %v", k, err)
		}
		shards, names = append(shards, r), append(names, fmt.Sprintf("s%d", k))
	}
	if len(shards[0].Cells) != 0 {
		t.Errorf("shard 1/3 of 2 cells has %d", len(shards[0].Cells))
	}
	m, err := Merge(shards, names)
	if err != nil || len(m.Cells) != 2 {
		t.Fatalf("Merge: %v, %d cells", err, len(m.Cells))
	}
	if _, err := ReadResults(strings.NewReader(`{"cells":[]}`), "x.json"); err == nil {
		t.Error("ReadResults reads a matrix with no cells that is not a shard")
	}
}

// Merge refuses shards that do not make one matrix, naming the file.
func TestMergeRefuses(t *testing.T) {
	cfg := testConfig()
	other := testConfig()
	other.Runs = 1
	t0 := time.Unix(0, 0)
	shard := func(cfg Config, k, n int) *Results { return fakeRun(cfg, Shard{K: k, N: n}, t0) }
	cut := shard(cfg, 2, 3)
	cut.Cells = cut.Cells[1:]
	moved := shard(cfg, 2, 3)
	moved.Shard.From++
	noID := shard(cfg, 2, 3)
	noID.Matrix = ""
	for _, c := range []struct {
		shards []*Results
		want   string
	}{
		{[]*Results{shard(cfg, 1, 3), fakeRun(cfg, Shard{}, t0)}, `b.json: not a shard: it has no "shard"`},
		{[]*Results{shard(cfg, 1, 3), noID}, "b.json: shard 2/3 names no matrix"},
		{[]*Results{shard(cfg, 1, 3), shard(other, 2, 3)}, "b.json: a shard of another matrix than a.json (matrix " + short(Identity(other)) + ", not " + short(Identity(cfg)) + ")"},
		{[]*Results{shard(cfg, 1, 3), shard(cfg, 2, 4)}, "b.json: shard 2/4, but a.json is shard 1/3: the matrix split 4 ways and 3 ways"},
		{[]*Results{shard(cfg, 1, 3), shard(cfg, 1, 3)}, "b.json: shard 1/3 again (a.json is shard 1/3 too)"},
		{[]*Results{shard(cfg, 1, 3), shard(cfg, 3, 3)}, "shard 2/3 is missing: given 1/3 (a.json), 3/3 (b.json)"},
		{[]*Results{shard(cfg, 3, 5), shard(cfg, 1, 5)}, "shards 2/5, 4/5, 5/5 are missing: given 1/5 (b.json), 3/5 (a.json)"},
		{[]*Results{shard(cfg, 1, 3), cut, shard(cfg, 3, 3)}, "b.json: shard 2/3 has 31 cells, but its part of the matrix has 32"},
		{[]*Results{shard(cfg, 1, 3), moved}, "b.json: shard 2/3 holds cells 34-64 of 96, but its part of the matrix is 33-64"},
	} {
		names := []string{"a.json", "b.json", "c.json"}[:len(c.shards)]
		if _, err := Merge(c.shards, names); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Merge: %v; want %q", err, c.want)
		}
	}
	// An interrupted shard has fewer cells: the merge is interrupted too.
	cut.Interrupted = "interrupted during SeedGap.NoGap, kgo, 1p-one, run 1, on Kafka 4.1.0"
	m, err := Merge([]*Results{shard(cfg, 1, 3), cut, shard(cfg, 3, 3)}, []string{"a", "b", "c"})
	if err != nil || len(m.Cells) != 95 || m.Interrupted != "shard 2/3 interrupted during SeedGap.NoGap, kgo, 1p-one, run 1, on Kafka 4.1.0" {
		t.Errorf("Merge of an interrupted shard: %v, %d cells, interrupted %q", err, len(m.Cells), m.Interrupted)
	}
}
