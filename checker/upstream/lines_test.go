package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadLines reads again the lines an excerpt quotes, across a line
// longer than the reader's buffer and a last line without its newline.
func TestReadLines(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte("one\n"+long+"\nthree\r\n"+long+"\nfive"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readLines(path, []int{2, 3, 5})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{2: long[:maxLine] + " …", 3: "three", 5: "five"}
	if len(got) != len(want) {
		t.Fatalf("got lines %v, want %v", keys(got), keys(want))
	}
	for l, w := range want {
		if got[l] != w {
			t.Errorf("line %d: got %.40q (%d bytes), want %.40q", l, got[l], len(got[l]), w)
		}
	}
	if _, err := readLines(path, []int{6}); err == nil {
		t.Errorf("line 6 of 5: no error")
	}
}

func keys(m map[int]string) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
