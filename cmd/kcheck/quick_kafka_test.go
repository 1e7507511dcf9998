package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/matrix"
)

// TestQuickOnKafka runs the command of a client's CI, kcheck scenarios run
// --quick, with ours-on as the client, on the real Kafka 4.4.0: the
// Baseline and the scenarios --quick chose (printed on standard error), on
// one broker and shape, their JUnit and HTML written. The model predicts
// that ours-on's rules hold on every one, so the gate passes: exit 0. It
// starts Kafka twice (once with producer-state expiry), so it runs only
// with KCHECK_KAFKA=1 (make kafka-test).
func TestQuickOnKafka(t *testing.T) {
	if os.Getenv("KCHECK_KAFKA") != "1" {
		t.Skip("set KCHECK_KAFKA=1 to fetch and run a real Kafka (make kafka-test)")
	}
	t.Setenv("KCHECK_TEST_AS_KCHECK", "1") // the cells run this binary as kcheck (TestMain)
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	code, _, stderr := runKcheck(t, "scenarios", "run", "--quick", "--dir", "../../spec/scenarios", "--root", "../..", "--clients", "ours-on",
		"--keep", out("traces"), "--json", out("results.json"), "--results", out("results.md"), "--junit", out("junit.xml"), "--html", out("matrix.html"))
	t.Logf("exit %d\n%s", code, stderr)
	if code != exitOK {
		t.Fatalf("exit %d, want 0 (ours-on passes the gate)", code)
	}
	f, err := os.Open(out("results.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := matrix.ReadResults(f, "results.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Brokers) != 1 || res.Brokers[0] != "4.4.0" || len(res.Shapes) != 1 || res.Shapes[0].Name != quickShape {
		t.Errorf("brokers %v, shapes %v; want 4.4.0 and %s", res.Brokers, res.Shapes, quickShape)
	}
	if len(res.Cells) < 2 || res.Cells[0].Scenario != matrix.Baseline {
		t.Fatalf("%d cells, the first %q: want the Baseline and --quick's scenarios", len(res.Cells), res.Cells[0].Scenario)
	}
	for _, c := range res.Cells {
		if c.Scenario != matrix.Baseline && !strings.Contains(stderr, "    "+c.Scenario+": covers ") {
			t.Errorf("cell of %s, a scenario --quick did not print as chosen", c.Scenario)
		}
	}
	b, err := os.ReadFile(out("junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil || doc.Tests != len(res.Cells) || doc.Failures+doc.Errors != 0 {
		t.Errorf("junit.xml: %+v, %v; want %d tests, no failure or error", doc, err, len(res.Cells))
	}
	if page, err := os.ReadFile(out("matrix.html")); err != nil || !strings.Contains(string(page), `<div class="vword">PASS</div>`) {
		t.Errorf("matrix.html: %v, or it does not say PASS", err)
	}
}
