package verify

import (
	"strings"
	"testing"
)

// The store gives back each line as bufio.ScanLines would read it, cut at
// maxSlice, across chunks.
func TestLineStore(t *testing.T) {
	var s lineStore
	long := strings.Repeat("x", maxSlice+50)
	exact := strings.Repeat("y", maxSlice)
	var want []string
	for n := 1; n <= 3*chunkSize/maxSlice; n++ {
		var line, shown string
		switch n % 4 {
		case 0:
			line, shown = long, long[:maxSlice]+" ..."
		case 1:
			line, shown = exact, exact
		case 2:
			line, shown = `{"i":`+strings.Repeat("7", n%40)+"}\r", `{"i":`+strings.Repeat("7", n%40)+"}"
		case 3:
			line, shown = "", ""
		}
		s.add([]byte(line))
		want = append(want, shown)
	}
	if len(s.chunks) < 2 {
		t.Fatalf("%d chunks: the test does not cross one", len(s.chunks))
	}
	for i, w := range want {
		got, ok := s.text(i + 1)
		if !ok || got != w {
			t.Fatalf("line %d: %q, %v; want %q", i+1, got, ok, w)
		}
	}
	if _, ok := s.text(0); ok {
		t.Error("line 0 exists")
	}
	if _, ok := s.text(len(want) + 1); ok {
		t.Error("a line past the end exists")
	}
}
