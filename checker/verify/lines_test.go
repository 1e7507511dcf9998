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
		want = append(want, quoted)
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
