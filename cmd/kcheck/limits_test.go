package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/tracer"
)

// runTrace is traces/run.jsonl: its header line and its event lines.
func runTrace(t *testing.T) (header string, events []string) {
	t.Helper()
	data, err := os.ReadFile("../../traces/run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	return lines[0], lines[1 : len(lines)-1]
}

// verifyBad runs kcheck verify, with a JUnit and an HTML report asked for, on
// a trace that is bad input: it must exit 2 naming file:line and the key,
// print nothing on stdout and write no report.
func verifyBad(t *testing.T, path, want string) {
	t.Helper()
	dir := t.TempDir()
	junit, html := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "html")
	code, stdout, stderr := runKcheck(t, "verify", "--junit", junit, "--html", html, path)
	if code != exitUsage || !strings.Contains(stderr, want) || strings.Contains(stderr, "panic") {
		t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
	if stdout != "" {
		t.Errorf("bad input printed a report:\n%s", stdout)
	}
	for _, f := range []string{junit, html} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("bad input wrote %s", f)
		}
	}
}

// The cases: each is bad input, exit 2 with the line and the key,
// never a panic, an exhausted memory or a verdict.
func TestVerifyLimits(t *testing.T) {
	header, events := runTrace(t)
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	body := strings.Join(events, "")
	claim := func(n string) string { return strings.Replace(header, `"partitions":8`, `"partitions":`+n, 1) }
	// The first SendNew, moved to partition 2147483647.
	far := slices2(events)
	for i, l := range far {
		if strings.Contains(l, `"ev":"SendNew"`) {
			far[i] = regexp.MustCompile(`"p":\d+`).ReplaceAllString(l, `"p":2147483647`)
			break
		}
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"partitions 2^31-1", write("p2g.jsonl", claim("2147483647"), body),
			`p2g.jsonl:1: field "partitions": 2147483647 is not a partition count kcheck reads: 1 to 1000000`},
		{"partitions 100000000", write("p100m.jsonl", claim("100000000"), body), `p100m.jsonl:1: field "partitions": 100000000 is not`},
		{"event partition 2^31-1", write("far.jsonl", header, strings.Join(far, "")),
			`far.jsonl:3: field "p": partition 2147483647 is not one of the header's 8 partitions (0 to 7)`},
		{"header key twice", write("dup.jsonl", strings.Replace(header, `"partitions":8`, `"partitions":8,"partitions":9`, 1), body),
			`dup.jsonl:1: field "partitions": appears twice`},
		{"event key twice", write("dupev.jsonl", header, strings.Replace(events[0], `"node"`, `"ep":0,"node"`, 1), strings.Join(events[1:], "")),
			`dupev.jsonl:2: field "ep": appears twice`},
	} {
		t.Run(tc.name, func(t *testing.T) { verifyBad(t, tc.path, tc.want) })
	}
}

func slices2(s []string) []string { return append([]string(nil), s...) }

// totalAlloc returns how many bytes fn allocated.
func totalAlloc(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// sendNewLine writes a trace whose second event is one SendNew of n records
// in a line of about size bytes (ids padded with digits), and returns its path.
func sendNewLine(t *testing.T, name string, n, size int) string {
	t.Helper()
	header, events := runTrace(t)
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(header)
	w.WriteString(events[0])
	digits := max(size/n-1, 1)
	fmt.Fprintf(w, `{"i":2,"t":3781203,"ev":"SendNew","p":0,"b":1,"pid":2380454008151246389,"ep":0,"seq":0,"n":%d,"req":1,"node":0,"recs":[`, min(n, tracer.MaxBatchRecords))
	base := 1
	for range digits - 1 {
		base *= 10
	}
	for i := range n {
		if i > 0 {
			w.WriteByte(',')
		}
		fmt.Fprint(w, base+i)
	}
	w.WriteString("]}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// emptyReadBacks writes a trace of n partitions, each read back empty, and
// returns its path.
func emptyReadBacks(t *testing.T, name string, n int) string {
	t.Helper()
	header, events := runTrace(t)
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(strings.Replace(header, `"partitions":8`, fmt.Sprintf(`"partitions":%d`, n), 1))
	w.WriteString(events[0])
	for p := range n {
		fmt.Fprintf(w, `{"i":%d,"t":400000000,"ev":"ReadBack","p":%d,"log":[]}`+"\n", p+2, p)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// What verify allocates (runtime.MemStats.TotalAlloc, all of it, garbage
// included) follows the trace's size, never a number it only claims: a
// header of 100,000,000 partitions, a header of the most partitions a trace
// may have (1,000,000) with events on eight, a 100 MB SendNew line of too
// many records, one of the most records a batch may have (ids of seven
// digits, which go in a map), and 100,000 partitions each read back, each
// allocate a small multiple of the file's size, and the 1,000,000
// partitions claimed cost nothing.
func TestVerifyMemoryBounded(t *testing.T) {
	header, events := runTrace(t)
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	body := strings.Join(events, "")
	claim := func(n string) string { return strings.Replace(header, `"partitions":8`, `"partitions":`+n, 1) }
	const fixed = 4 << 20 // what any run allocates: read buffers, event batches, the CLI
	allocs := map[string]uint64{}
	for _, tc := range []struct {
		name     string
		path     string
		exit     int
		multiple uint64 // allowed bytes per byte of the file, above fixed
		want     string // for bad input, what stderr says
	}{
		{"claims 100000000 partitions", write("p100m.jsonl", claim("100000000"), body), exitUsage, 2, `p100m.jsonl:1: field "partitions": 100000000`},
		{"claims 1000000 partitions", write("p1m.jsonl", claim("1000000"), body), -1, 40, ""},
		{"the same, claiming 8", write("p8.jsonl", header, body), exitOK, 40, ""},
		{"a 100 MB SendNew line", sendNewLine(t, "big.jsonl", 10_000_000, 100<<20), exitUsage, 4,
			`big.jsonl:3: field "recs": more than 1000000 records, the limit on a batch`},
		{"a SendNew of 1000000 records", sendNewLine(t, "max.jsonl", tracer.MaxBatchRecords, 8<<20), -1, 40, ""},
		{"100000 partitions read back", emptyReadBacks(t, "rb.jsonl", 100_000), exitOK, 40, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := os.Stat(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			var code int
			var stderr string
			alloc := totalAlloc(func() { code, _, stderr = runKcheck(t, "verify", "--format", "json", tc.path) })
			if tc.exit >= 0 && code != tc.exit || tc.exit < 0 && code == exitUsage {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if code == exitUsage && !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", stderr, tc.want)
			}
			allocs[tc.name] = alloc
			limit := fixed + tc.multiple*uint64(st.Size())
			t.Logf("%d-byte trace: exit %d, %d bytes allocated (%.1f times its size; limit %d)", st.Size(), code, alloc, float64(alloc)/float64(st.Size()), limit)
			if alloc > limit {
				t.Errorf("verify allocated %d bytes for a %d-byte trace, more than %d", alloc, st.Size(), limit)
			}
		})
	}
	// The claim costs nothing: the same events under a header of 1,000,000
	// partitions allocate what they do under one of 8, give or take 1 MiB.
	// verify's pool of event batches (up to 8 of 256 events, about 0.6 MB)
	// grows as far as its checks lag behind the reader, which differs from
	// run to run (256 KiB failed now and then on a loaded machine); a cost
	// per claimed partition, even 8 bytes, would be 8 MB.
	if a, b := allocs["claims 1000000 partitions"], allocs["the same, claiming 8"]; a > b+1<<20 {
		t.Errorf("claiming 1000000 partitions allocated %d bytes, claiming 8 %d", a, b)
	}
}
