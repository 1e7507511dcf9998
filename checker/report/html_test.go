package report

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/checker/verify/synth"
	"github.com/kcheck/kcheck/tracer"
)

// renderHTML verifies the trace at path and writes its HTML report into a
// temporary directory, returning the report, the directory and index.html.
func renderHTML(t *testing.T, path string) (*verify.Report, string, string) {
	t.Helper()
	rep, col := verifyCollect(t, path)
	dir := filepath.Join(t.TempDir(), "html")
	if err := HTML(dir, rep, col); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	return rep, dir, string(b)
}

// verifyCollect verifies the trace at path, collecting for the HTML report.
func verifyCollect(t *testing.T, path string) (*verify.Report, *Collector) {
	t.Helper()
	col := NewCollector()
	rep, err := verify.File(context.Background(), path, verify.Options{Observers: []verify.Observer{col}})
	if err != nil {
		t.Fatal(err)
	}
	return rep, col
}

var (
	hrefRE = regexp.MustCompile(`href="([^"]*)"`)
	idRE   = regexp.MustCompile(` id="([^"]*)"`)
)

// checkPage holds what every page must be: self-contained, one timeline per
// partition, every violation listed, every link to an anchor or a file that
// is there.
func checkPage(t *testing.T, rep *verify.Report, dir, page string) {
	t.Helper()
	for _, bad := range []string{"http:", "https:", "//cdn", "src=", "<link", "@import", "@font-face"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: not self-contained", bad)
		}
	}
	if n, want := strings.Count(page, `<svg class="timeline"`), min(len(namedPartitions(t, rep.File)), maxParts); n != want {
		t.Errorf("%d timelines, want one per partition the trace names (%d)", n, want)
	}
	if !strings.Contains(page, ">"+strings.ToUpper(string(rep.Verdict))+"<") {
		t.Errorf("verdict %s not shown", rep.Verdict)
	}
	if v := strings.Index(page, strings.ToUpper(string(rep.Verdict))); v < 0 || v > strings.Index(page, `id="timelines"`) {
		t.Error("the verdict does not come first")
	}
	for i, v := range rep.Violations {
		id := `id="v` + strconv.Itoa(i+1) + `"`
		j := strings.Index(page, id)
		if j < 0 {
			t.Errorf("violation %d (%s) not listed", i+1, v.Kind)
			continue
		}
		if !strings.Contains(page[j:], `class="kind">`+string(v.Kind)+`<`) {
			t.Errorf("violation %d: kind %s not shown", i+1, v.Kind)
		}
		for _, l := range v.Lines {
			if !strings.Contains(page[j:], "line "+strconv.Itoa(l)+"<") {
				t.Errorf("violation %d: trace line %d not shown", i+1, l)
			}
		}
	}
	ids := map[string]bool{}
	for _, m := range idRE.FindAllStringSubmatch(page, -1) {
		if ids[m[1]] {
			t.Errorf("id %q used twice", m[1])
		}
		ids[m[1]] = true
	}
	for _, m := range hrefRE.FindAllStringSubmatch(page, -1) {
		h := m[1]
		if a, ok := strings.CutPrefix(h, "#"); ok {
			if !ids[a] {
				t.Errorf("link to #%s, which is not on the page", a)
			}
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, h)); err != nil {
			t.Errorf("link to %s: %v", h, err)
		}
	}
}

func TestHTMLFirstAckOff(t *testing.T) {
	rep, dir, page := renderHTML(t, "../../traces/first-ack-off.jsonl")
	if rep.Verdict != verify.Violations {
		t.Fatalf("verdict %s", rep.Verdict)
	}
	checkPage(t, rep, dir, page)
	for _, want := range []string{
		`lost-write`, `stall`,
		`<g class="batch hit" id="p0-b3">`, // the lost batch, highlighted in its timeline
		`<a href="#p0-b3">batch 3</a>`,     // and linked from its violations
		`seq 0–6 of epoch 0 missing (b3)`,  // the sequences the broker never took
		`(batch 3): not in the log; named by <a href="#v1">#1 lost-write</a>`,
		`<a href="#p0-log" title="show it in the timeline">line 2877</a>`, // the read-back line
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	t.Logf("index.html: %d bytes", len(page))
	chromiumCheck(t, dir, "")
	chromiumCheck(t, dir, "?t=0-80000000")
}

func TestHTMLRun(t *testing.T) {
	rep, dir, page := renderHTML(t, "../../traces/run.jsonl")
	if rep.Verdict != verify.Valid {
		t.Fatalf("verdict %s", rep.Verdict)
	}
	checkPage(t, rep, dir, page)
	if strings.Contains(page, `class="batch hit"`) || strings.Contains(page, `id="violations"`) {
		t.Error("a valid trace's page highlights something")
	}
	for _, want := range []string{"every check passed", `class="mk disc"`, `class="mk fault"`, `class="a oos"`, `class="a err"`, `class="a none"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	t.Logf("index.html: %d bytes", len(page))
	chromiumCheck(t, dir, "")
}

// TestHTMLFixtures renders every hand-built trace: each page is whole, and
// a partition Porcupine found illegal links its view.
func TestHTMLFixtures(t *testing.T) {
	var paths []string
	for _, g := range []string{"../../traces/fixtures/*.jsonl", "../linz/testdata/*.jsonl"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 20 {
		t.Fatalf("found %d fixtures", len(paths))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rep, dir, page := renderHTML(t, path)
			checkPage(t, rep, dir, page)
			for _, pr := range rep.LinzResult().Partitions {
				if pr.Verdict != "illegal" {
					continue
				}
				view := "partition-" + strconv.Itoa(int(pr.Partition)) + ".html"
				if !strings.Contains(page, `href="`+view+`"`) {
					t.Errorf("Porcupine's view %s not linked", view)
				}
			}
			for _, v := range rep.Violations {
				if v.Partition >= 0 && v.Batch != 0 && v.Kind != checker.NonConformance &&
					!strings.Contains(page, `id="p`+strconv.Itoa(int(v.Partition))+`-b`+strconv.FormatInt(v.Batch, 10)+`"`) {
					t.Errorf("%s names batch %d, not drawn", v.Kind, v.Batch)
				}
			}
		})
	}
}

// TestHTMLLarge holds the drawing caps: a long trace gives a page of a
// bounded size that says what it left out.
func TestHTMLLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "synth.jsonl")
	if err := synth.Write(path, 100_000); err != nil {
		t.Fatal(err)
	}
	rep, dir, page := renderHTML(t, path)
	checkPage(t, rep, dir, page)
	bars := strings.Count(page, `<rect class="a `)
	if max := int(rep.Header.Partitions) * maxAttempts; bars == 0 || bars > max {
		t.Errorf("%d attempts drawn, want 1 to %d", bars, max)
	}
	for _, want := range []string{"left out", "… ", "more records"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if len(page) > 8<<20 {
		t.Errorf("index.html is %d bytes for %d events", len(page), rep.Events)
	}
	t.Logf("%d events: index.html %d bytes, %d attempts drawn", rep.Events, len(page), bars)
}

// namedPartitions are the partitions the trace at path names.
func namedPartitions(t *testing.T, path string) map[int32]bool {
	t.Helper()
	f, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	named := map[int32]bool{}
	err = f.Each(func(_ int, e *tracer.Event) error {
		switch e.Kind {
		case tracer.InitProducerID, tracer.Disconnect:
		default:
			if e.Partition >= 0 {
				named[e.Partition] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return named
}

// TestHTMLManyPartitions: a header of a million partitions, of which the
// trace names 250 (read back, nothing sent), draws maxParts of them and
// says so, and which partitions no event names, without a line for each.
func TestHTMLManyPartitions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "many.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tracer.NewWriter(f, tracer.Header{Writer: "test", Client: "test", Topic: "t", Partitions: tracer.MaxPartitions,
		FirstAck: true, HoldWhileRetrying: true, MaxInFlight: 5, Broker: tracer.Broker{Kind: "kafka", Version: "4.1.0", NoStateRule: "v25to44"}})
	if err != nil {
		t.Fatal(err)
	}
	w.Emit(&tracer.Event{Kind: tracer.InitProducerID, PID: 1000, Node: -1})
	for p := range int32(250) {
		w.Emit(&tracer.Event{Kind: tracer.ReadBack, Partition: p * 4000})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rep, dir, page := renderHTML(t, path)
	checkPage(t, rep, dir, page)
	for _, want := range []string{"Drawn: 200 of the 250 partitions", "No event names partitions 1-3999, 4001-7999,", "and 230 more runs of the header&#39;s 1000000"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if len(page) > 2<<20 {
		t.Errorf("index.html is %d bytes for %d events", len(page), rep.Events)
	}
	t.Logf("index.html: %d bytes", len(page))
}

// TestHTMLErrors: a directory that cannot be written is an error naming it,
// and a failure leaves no file behind.
func TestHTMLErrors(t *testing.T) {
	rep, col := verifyCollect(t, "../../traces/fixtures/bad-duplicate.jsonl")
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := HTML(filepath.Join(tmp, "nil"), rep, nil); err == nil || !strings.Contains(err.Error(), "no Collector") {
		t.Errorf("HTML with no Collector = %v, want an error saying so", err)
	}
	dir := filepath.Join(file, "html")
	if err := HTML(dir, rep, col); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("HTML(%s) = %v, want an error naming it", dir, err)
	}

	// index.html cannot replace a directory: nothing may be left, not even
	// Porcupine's view.
	dir = filepath.Join(tmp, "blocked")
	if err := os.MkdirAll(filepath.Join(dir, "index.html", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := HTML(dir, rep, col); err == nil {
		t.Error("HTML over a directory named index.html succeeded")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "index.html" && e.Name() != "partition-0.html" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// consoleRE matches Chromium's log lines for console messages and uncaught
// exceptions (the page logs nothing of its own).
var consoleRE = regexp.MustCompile(`(?m)^.*(CONSOLE[:(]|Uncaught).*$`)

// chromiumCheck loads dir/index.html (with query) in headless Chromium and
// checks that its script ran without errors and the timelines are in the
// DOM. Without Chromium it skips, unless KCHECK_REQUIRE_CHROMIUM=1.
func chromiumCheck(t *testing.T, dir, query string) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("KCHECK_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("KCHECK_REQUIRE_CHROMIUM=1 but %v (apt-get install chromium)", err)
		}
		t.Skipf("no chromium (%v): the page is not checked in a browser", err)
	}
	abs, err := filepath.Abs(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+abs+query)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("chromium timed out\n%s", stderr.String())
		}
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	if m := consoleRE.FindAllString(stderr.String(), -1); len(m) > 0 {
		t.Errorf("script errors:\n%s", strings.Join(m, "\n"))
	}
	dom := stdout.String()
	if !strings.Contains(dom, `data-script="ok"`) {
		t.Errorf("the page's script did not run to its end (body %q)", lineWith(dom, "<body"))
	}
	if n := strings.Count(dom, `<svg class="timeline"`); n == 0 || !strings.Contains(dom, `<g class="plot"`) {
		t.Errorf("the DOM has %d timelines", n)
	}
	if ab, ok := strings.CutPrefix(query, "?t="); ok {
		if !strings.Contains(dom, `data-zoom="`+ab+`"`) {
			t.Errorf("not zoomed to %s: %q", ab, lineWith(dom, "<body"))
		}
	}
}

// lineWith returns the line of s holding sub, for error messages.
func lineWith(s, sub string) string {
	i := strings.Index(s, sub)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.IndexByte(s, '\n'); j >= 0 {
		s = s[:j]
	}
	return s
}

// The page carries its CSS and script, the embedded files html/page.css and
// html/page.js, byte for byte.
func TestHTMLEmbedsAssets(t *testing.T) {
	_, _, page := renderHTML(t, "../../traces/fixtures/bad-gap.jsonl")
	for _, f := range []string{"html/page.css", "html/page.js"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 1000 || !strings.Contains(page, string(b)) {
			t.Errorf("the page lacks %s (%d bytes)", f, len(b))
		}
	}
}
