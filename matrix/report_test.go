package matrix

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// subset reads testdata/results-subset.json: the cells of Kafka 4.4.0 of
// traces/scenarios/results.json for three scenarios and three clients,
// with one cell made one that could not run.
func subset(t *testing.T) *Results {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "results-subset.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ReadResults(f, "results-subset.json")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range r.Cells {
		if c.Scenario == "SeedGap.NoGap" && c.Client == "kgo" && c.Shape == "16p-many" {
			r.Cells[i] = Cell{Scenario: c.Scenario, Broker: c.Broker, Client: c.Client, Family: c.Family, Shape: c.Shape, Run: 1,
				Predicted: c.Predicted, Trace: c.Trace, Seconds: 180, Err: "timed out after 3m0s (stderr: " + strings.TrimSuffix(c.Trace, ".jsonl") + ".err)"}
		}
	}
	return r
}

// golden compares got with testdata/name, which KCHECK_UPDATE=1 rewrites.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("KCHECK_UPDATE") == "1" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what was rendered (KCHECK_UPDATE=1 rewrites it, to review in the diff):\n%s", path, got)
	}
}

func TestWriteJUnit(t *testing.T) {
	r := subset(t)
	var b bytes.Buffer
	if err := r.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "results-subset.junit.xml", b.Bytes())

	// It reads back as XML, and counts what the gate says.
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Classname string    `xml:"classname,attr"`
				Name      string    `xml:"name,attr"`
				Failure   *struct{} `xml:"failure"`
				Error     *struct{} `xml:"error"`
				Skipped   *struct{} `xml:"skipped"`
				Out       string    `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("the JUnit XML does not parse: %v", err)
	}
	gt := r.GateTally()
	if doc.Tests != len(r.Cells) || doc.Failures != gt.Fail || doc.Errors != gt.Error || gt.Fail == 0 || gt.Error != 1 {
		t.Errorf("testsuites: %d tests, %d failures, %d errors; want %d, %d (> 0), %d (1)", doc.Tests, doc.Failures, doc.Errors, len(r.Cells), gt.Fail, gt.Error)
	}
	names := map[string]bool{}
	i := 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			cell := r.Cells[i]
			i++
			id := c.Classname + " " + c.Name
			if names[id] {
				t.Errorf("testcase %s twice", id)
			}
			names[id] = true
			if c.Classname != s.Name || c.Name != cell.Client+"/"+cell.Shape+"/"+cell.Broker {
				t.Errorf("testcase %s in suite %s, for the cell %s %s/%s/%s", id, s.Name, cell.Scenario, cell.Client, cell.Shape, cell.Broker)
			}
			g, _ := cell.Gate()
			if (c.Failure != nil) != (g == GateFail) || (c.Error != nil) != (g == GateError) ||
				(c.Skipped != nil) != (g == GatePass && cell.Reach.Status == NotReached) {
				t.Errorf("testcase %s: failure %v, error %v, skipped %v for a cell whose gate is %s, %s", id, c.Failure != nil, c.Error != nil, c.Skipped != nil, g, cell.Reach.Status)
			}
			if cell.Trace != "" && !strings.Contains(c.Out, "trace: "+cell.Trace+"\n") {
				t.Errorf("testcase %s: its system-out lacks its trace:\n%s", id, c.Out)
			}
		}
	}
	if i != len(r.Cells) {
		t.Errorf("%d testcases for %d cells", i, len(r.Cells))
	}
}

func TestWriteHTML(t *testing.T) {
	r := subset(t)
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "results-subset.html", b.Bytes())
	page := b.String()
	for _, s := range []string{
		`<header class="verdict violations">`, `<div class="vword">FAIL</div>`,
		`<section id="SeedGap.NoGap">`, `<th>Kafka 4.4.0</th>`, `<div class="cell error">`, `<div class="cell fail">`, `<div class="cell skip">`,
		"lost though acknowledged to the application 1",
	} {
		if !strings.Contains(page, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	// Self-contained: nothing fetched.
	for _, s := range []string{"<link", "<script", "src=", "@import", "url("} {
		if strings.Contains(page, s) {
			t.Errorf("the page has %q: it must fetch nothing", s)
		}
	}

	// Every cell passes: PASS; one could not run: NO VERDICT.
	r.Cells = []Cell{{Scenario: Baseline, Broker: "4.4.0", Client: "kgo", Shape: "1p-one", Predicted: "no faults", What: "clean", Reach: Reach{Status: NoFaults}}}
	b.Reset()
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<div class="vword">PASS</div>`) {
		t.Error("one clean cell: the page does not say PASS")
	}
	r.Cells = append(r.Cells, Cell{Scenario: Baseline, Broker: "4.4.0", Client: "kafkajs", Shape: "1p-one", Err: "timed out"})
	b.Reset()
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<div class="vword">NO VERDICT</div>`) {
		t.Error("a clean cell and one that could not run: the page does not say NO VERDICT")
	}
}
