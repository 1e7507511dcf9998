package matrix

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kcheck/kcheck/scenario"
)

// goBuild builds the package pkg (relative to the repository) into dir and
// returns the executable's path.
func goBuild(t *testing.T, dir, pkg, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// defClientCell runs one cell of the client defined by def (written to
// dir/NAME.client) under sc, through kcheck proxy, against kfake emulating
// Kafka 4.1 (the proxy is told Kafka 4.1.0, which has the same no-state
// rule).
func defClientCell(t *testing.T, dir, kcheck, def string, sc *Scenario, sh Shape, opts ...kfake.Opt) Cell {
	t.Helper()
	path := filepath.Join(dir, "client.def")
	if err := os.WriteFile(path, []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := ReadClientDefs([]string{path}, familyNames())
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0]
	argv, err := c.Prepare(context.Background(), &Env{})
	if err != nil {
		t.Fatal(err)
	}
	kf, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.MaxVersions(kversion.V4_1_0())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	keep := filepath.Join(dir, "keep")
	if err := os.MkdirAll(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	schedule := filepath.Join(keep, "schedule")
	if err := os.WriteFile(schedule, []byte(strings.Join(sc.Schedule, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return runCell(context.Background(), cellSpec{scenario: sc, schedule: schedule, client: c, argv: argv, shape: sh,
		broker: "4.1.0", addr: kf.ListenAddrs()[0], run: 1, dir: keep, kcheck: kcheck, timeout: 2 * time.Minute,
		opts: clientOpts{replication: 1}})
}

func familyNames() []string {
	var ns []string
	for _, f := range scenario.Families {
		ns = append(ns, f.Name)
	}
	return ns
}

// seedGap is spec/scenarios' SeedGap.NoGap as the matrix runs it.
func seedGap(t *testing.T) *Scenario {
	t.Helper()
	s, err := scenario.ReadFile(filepath.Join("..", "spec", "scenarios", "SeedGap.NoGap.scenario"))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := s.Faults()
	if err != nil {
		t.Fatal(err)
	}
	return &Scenario{Name: s.Name, Schedule: s.Schedule, Steps: StepsOf(fs), Predictions: s.Predictions, Family: scenario.FamilyOf}
}

// A client defined only by a file: the kgo driver, under a name kcheck has
// never seen and of family unknown, runs a cell of SeedGap.NoGap through
// kcheck proxy on kfake. The cell names it, shows every family's
// prediction, and says which families behaved as it did: kgo's rules keep
// nothing in flight behind a failed first batch, so it is clean and
// behaves like every family predicted to pass (kgo among them), and like
// none predicted to lose (java). It builds kcheck and the kgo driver;
// -short skips it.
func TestDefinedClientRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kcheck and the kgo driver")
	}
	dir := t.TempDir()
	kcheck := goBuild(t, dir, "./cmd/kcheck", "kcheck")
	goBuild(t, dir, "./drivers/kgo", "some-driver")
	sc := seedGap(t)
	def := "# the kgo driver under another name\nname    franz\nfamily  unknown\n" +
		"command ./some-driver --bootstrap {bootstrap} --topic {topic} {workload} --outcomes {outcomes}\n"
	cell := defClientCell(t, dir, kcheck, def, sc, Shape{Name: "1p-one", Partitions: 1, Records: 40, ValueBytes: 100, BatchRecords: "one"})
	if cell.Err != "" {
		t.Fatalf("the cell could not run: %s", cell.Err)
	}
	t.Logf("%s", cell.line())
	if cell.Client != "franz" || cell.Family != Unknown || !strings.Contains(cell.Trace, ".franz.") {
		t.Errorf("client %q, family %q, trace %s; want franz, unknown, a trace named for franz", cell.Client, cell.Family, cell.Trace)
	}
	if len(cell.Predictions) != len(scenario.Families) || cell.Predictions["java"] != "invariant:NoGap" || cell.Predictions["kgo"] != "pass" {
		t.Errorf("predictions %v; want every family's, as SeedGap.NoGap has them", cell.Predictions)
	}
	if want := "pass (aiokafka, kgo, one-in-flight, ours, ours-norearm, sarama); invariant:NoGap (java, librdkafka, ours-off); invariant:NoReorder (kafkajs)"; cell.Predicted != want {
		t.Errorf("predicted %q, want %q", cell.Predicted, want)
	}
	if cell.Reach.Status == "" || cell.Verdict == "" || cell.Agreement != Agrees {
		t.Errorf("reach %q, verdict %q, agreement %q: want the cell judged, verify agreeing", cell.Reach.Status, cell.Verdict, cell.Agreement)
	}
	if !slices.Contains(cell.Like, "kgo") || slices.Contains(cell.Like, "java") || cell.Worse {
		t.Errorf("%s: like %v, worse %v; want kgo among them, not java, and not worse (no family claimed)", cell.What, cell.Like, cell.Worse)
	}
	if !strings.Contains(cell.short(), "behaves like ") {
		t.Errorf("the cell in the matrix, %q, does not say what it behaves like", cell.short())
	}
}

// A defined client that crashes mid-cell (exit 3, after a line on its
// stderr, its topic made) is "could not run" in that cell, with why, and
// its stderr is kept beside the trace.
func TestDefinedClientCrashes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kcheck")
	}
	dir := t.TempDir()
	kcheck := goBuild(t, dir, "./cmd/kcheck", "kcheck")
	script := "#!/bin/sh\necho \"crashing with $# arguments\" >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, "crash.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	def := "name crasher\nfamily kgo\ncommand ./crash.sh --bootstrap {bootstrap} --topic {topic} {workload}\n"
	// The topic is there (else the proxy's read-back waits a minute for it).
	topic := kfake.SeedTopics(1, "sc-SeedGap.NoGap.4.1.0.crasher.1p-one.1")
	cell := defClientCell(t, dir, kcheck, def, seedGap(t), Shapes()[0], topic)
	t.Logf("%s", cell.line())
	if !strings.Contains(cell.Err, "exited with status 3") || !strings.Contains(cell.Err, "(stderr: ") {
		t.Fatalf("cell error %q; want the client's exit status 3 and where its stderr is", cell.Err)
	}
	if cell.Family != "kgo" || cell.Predicted != "pass" || cell.Worse || cell.Like != nil {
		t.Errorf("family %q, predicted %q, worse %v, like %v; want kgo's pass, nothing judged", cell.Family, cell.Predicted, cell.Worse, cell.Like)
	}
	if s := cell.short(); !strings.HasPrefix(s, "could not run: ") {
		t.Errorf("the cell in the matrix: %q", s)
	}
	errPath := cell.Err[strings.LastIndex(cell.Err, "(stderr: ")+len("(stderr: ") : len(cell.Err)-1]
	b, err := os.ReadFile(errPath)
	if err != nil {
		t.Fatal(err)
	}
	// --bootstrap, --topic and the 1p-one workload's 16 flags.
	if !strings.Contains(string(b), "crashing with 20 arguments") {
		t.Errorf("the kept stderr %s:\n%s\nwant the client's own line", errPath, b)
	}
}
