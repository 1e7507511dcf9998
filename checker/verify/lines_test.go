package verify

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/tracer"
)

// The store, and the offsets read again, give back each line as
// bufio.ScanLines would read it, cut at maxSlice, across chunks.
func TestLineStore(t *testing.T) {
	var s lineStore
	var trace []byte
	var o lineOffsets
	long := strings.Repeat("x", maxSlice+50)
	exact := strings.Repeat("y", maxSlice)
	var want []string
	for n := 1; n <= 3*chunkSize/maxSlice; n++ {
		var line, quoted string
		switch n % 4 {
		case 0:
			line, quoted = long, long[:maxSlice]+" ..."
		case 1:
			line, quoted = exact, exact
		case 2:
			line, quoted = `{"i":`+strings.Repeat("7", n%40)+"}\r", `{"i":`+strings.Repeat("7", n%40)+"}"
		case 3:
			line, quoted = "", ""
		}
		s.add(shown([]byte(line)))
		o.add(int64(len(trace)))
		trace = append(append(trace, line...), '\n')
		want = append(want, quoted)
	}
	if len(s.chunks) < 2 {
		t.Fatalf("%d chunks: the test does not cross one", len(s.chunks))
	}
	o.src = bytes.NewReader(trace)
	for i, w := range want {
		got, ok := s.text(i + 1)
		if !ok || got != w {
			t.Fatalf("line %d: %q, %v; want %q", i+1, got, ok, w)
		}
		got, ok, err := o.text(i + 1)
		if err != nil || !ok || got != w {
			t.Fatalf("line %d read again: %q, %v, %v; want %q", i+1, got, ok, err, w)
		}
	}
	if _, ok, _ := o.text(len(want) + 1); ok {
		t.Error("a line past the end exists, read again")
	}
	if _, ok := s.text(0); ok {
		t.Error("line 0 exists")
	}
	if _, ok := s.text(len(want) + 1); ok {
		t.Error("a line past the end exists")
	}
}

// The lines a report quotes, kept in the one pass, are the trace's own, cut
// at maxSlice, for every violation of every fixture and real trace.
func TestSlicesAreTheLines(t *testing.T) {
	var paths []string
	for _, g := range []string{"../../traces/*.jsonl", "../../traces/proxy/*.jsonl", "../../traces/fixtures/*.jsonl"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	quoted := 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		file, err := File(context.Background(), path, Options{}) // read again
		if err != nil {
			t.Fatal(err)
		}
		r, err := tracer.NewReader(strings.NewReader(string(data)), path) // kept, as from a pipe
		if err != nil {
			t.Fatal(err)
		}
		piped, err := Trace(context.Background(), r, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, rep := range []*Report{file, piped} {
			for _, v := range rep.Violations {
				for _, l := range v.Lines {
					want := lines[l-1]
					if len(want) > maxSlice {
						want = want[:maxSlice] + " ..."
					}
					if got, ok := rep.Slices[l]; !ok || got != want {
						t.Errorf("%s:%d: quoted %q, want %q", path, l, got, want)
					}
					quoted++
				}
			}
		}
	}
	if quoted < 50 {
		t.Errorf("only %d lines quoted", quoted)
	}
}

// Trace reads a trace from its first event: a reader past it is refused,
// naming the trace, rather than verified without the events it skipped.
func TestTraceWantsAFreshReader(t *testing.T) {
	f, err := tracer.Open("../../traces/run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := Trace(context.Background(), f.Reader, Options{}); err == nil || !strings.Contains(err.Error(), "run.jsonl") {
		t.Errorf("Trace past the header: %v, want an error naming the trace", err)
	}
}
