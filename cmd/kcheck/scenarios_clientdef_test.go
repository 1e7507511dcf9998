package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/matrix"
	"github.com/kcheck/kcheck/scenario"
)

// The help says what a client definition holds: every family it may claim,
// every placeholder, and where the contract is.
func TestScenariosRunClientDefHelp(t *testing.T) {
	code, stdout, _ := runKcheck(t, "scenarios", "run", "--help")
	want := []string{"--client-def FILE", "{bootstrap}", "{topic}", "{workload}", "{outcomes}", "drivers/DRIVERS.md", "behaves like"}
	var fams []string
	for _, f := range scenario.Families {
		fams = append(fams, f.Name)
	}
	// The help's list of families wraps: compare it unwrapped.
	flat := strings.Join(strings.Fields(stdout), " ")
	want = append(want, strings.Join(fams, ", ")+"; or unknown")
	for _, w := range want {
		if code != exitOK || !strings.Contains(flat, w) {
			t.Errorf("scenarios run --help: exit %d, no %q", code, w)
		}
	}
}

// TestClientDefOnKafka runs a client defined only by a file, the kgo
// driver under the name franz with family unknown, through the Baseline
// and SeedGap.NoGap on Kafka 4.1.0: without --clients only it runs, and
// its cells show every family's prediction and which it behaved like. It
// fetches and starts Kafka, so it runs only with KCHECK_KAFKA=1.
func TestClientDefOnKafka(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
	t.Setenv("KCHECK_TEST_AS_KCHECK", "1") // the cells run this binary as kcheck (TestMain)
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "kgo-driver"), "./drivers/kgo")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./drivers/kgo: %v\n%s", err, out)
	}
	def := filepath.Join(dir, "franz.client")
	if err := os.WriteFile(def, []byte("name franz\nfamily unknown\ncommand ./kgo-driver --bootstrap {bootstrap} --topic {topic} {workload}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results.json")
	code, _, stderr := runKcheck(t, "scenarios", "run", "--dir", "../../spec/scenarios", "--root", "../..", "--scenario", "Baseline,SeedGap.NoGap",
		"--brokers", "4.1.0", "--shapes", "1p-one", "--client-def", def, "--keep", filepath.Join(dir, "keep"), "--json", out,
		"--results", filepath.Join(dir, "results.md"))
	t.Logf("exit %d\n%s", code, stderr)
	if code != exitOK && code != exitMismatch {
		t.Fatalf("exit %d", code)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := matrix.ReadResults(f, out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Clients, []string{"franz"}) || len(res.Cells) != 2 {
		t.Fatalf("clients %v, %d cells; want franz alone, 2 cells", res.Clients, len(res.Cells))
	}
	for _, c := range res.Cells {
		if c.Err != "" || c.Family != matrix.Unknown {
			t.Errorf("%s: family %q, error %q", c.Scenario, c.Family, c.Err)
		}
	}
	if c := res.Cells[1]; len(c.Predictions) != len(scenario.Families) || c.Like == nil && !c.Happened.Anomaly() {
		t.Errorf("SeedGap.NoGap: predictions %v, like %v (%s)", c.Predictions, c.Like, c.What)
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil || !strings.Contains(string(md), "### Clients of unknown family") {
		t.Errorf("results.md: %v\n%s", err, md)
	}
}
