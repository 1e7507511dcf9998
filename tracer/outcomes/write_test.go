package outcomes

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestOutcomeLines pins drivers/OUTCOMES.md's lines byte for byte: each
// kind, the code present (positive) and absent (0; -1, UNKNOWN_SERVER_ERROR),
// a text that needs escaping.
func TestOutcomeLines(t *testing.T) {
	var b bytes.Buffer
	o := New(&b)
	o.Delivered(7, 3, 41)
	o.Delivered(8, 0, -1)
	o.Failed(9, 2, "INVALID_RECORD: x", 87)
	o.Failed(10, -1, `kgo: "quoted" <text> é`+"\n", 0)
	o.Failed(11, 5, "UNKNOWN_SERVER_ERROR", -1)
	o.None(12)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"id":7,"p":3,"off":41}
{"id":8,"p":0,"off":-1}
{"id":9,"p":2,"err":"INVALID_RECORD: x","code":87}
{"id":10,"p":-1,"err":"kgo: \"quoted\" <text> é\n"}
{"id":11,"p":5,"err":"UNKNOWN_SERVER_ERROR"}
{"id":12,"none":true}
`
	if b.String() != want {
		t.Errorf("lines:\n%s\nwant\n%s", b.String(), want)
	}
	// Every line is JSON with exactly the keys of its kind.
	kinds := [][]string{{"id", "off", "p"}, {"id", "off", "p"}, {"code", "err", "id", "p"}, {"err", "id", "p"}, {"err", "id", "p"}, {"id", "none"}}
	for i, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !reflect.DeepEqual(keys, kinds[i]) {
			t.Errorf("line %d: keys %v, want %v", i+1, keys, kinds[i])
		}
	}
	var none *Writer // no --outcomes: nothing to write, no panic
	none.Delivered(1, 1, 1)
	none.Failed(1, 1, "x", 1)
	none.None(1)
	if err := none.Close(); err != nil {
		t.Error(err)
	}
}

// TestOutcomesPath: --outcomes wins; without it $KCHECK_OUTCOMES, if set
// and not empty; else none.
func TestPath(t *testing.T) {
	t.Setenv(Env, "")
	if p := Path(""); p != "" {
		t.Errorf("neither: %q", p)
	}
	if p := Path("f"); p != "f" {
		t.Errorf("flag: %q", p)
	}
	t.Setenv(Env, "/env/file")
	if p := Path(""); p != "/env/file" {
		t.Errorf("env: %q", p)
	}
	if p := Path("f"); p != "f" {
		t.Errorf("flag and env: %q", p)
	}
}

func TestCreate(t *testing.T) {
	if o, err := Create(""); o != nil || err != nil {
		t.Errorf(`Create(""): %v, %v`, o, err)
	}
	path := filepath.Join(t.TempDir(), "o.jsonl")
	o, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	o.None(0)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"id":0,"none":true}`+"\n" {
		t.Errorf("file: %q", data)
	}
	if _, err := Create(filepath.Join(t.TempDir(), "no", "such")); err == nil {
		t.Error("a file in no directory: no error")
	}
}

// TestTxnLines pins a transactional report's lines byte for byte: a
// transaction committed, aborted, a commit failed with a code and then the
// abort, an abort failed without one, among the records' lines.
func TestTxnLines(t *testing.T) {
	var b bytes.Buffer
	o := New(&b)
	o.Delivered(0, 1, 5)
	o.Committed(1)
	o.Delivered(1, 0, 7)
	o.Aborted(2)
	o.Failed(2, 3, "INVALID_RECORD: x", 87)
	o.TxnFailed(3, true, `kgo: "must abort" <x>`, 48)
	o.Aborted(3)
	o.None(3)
	o.TxnFailed(4, false, "UNKNOWN_SERVER_ERROR", -1)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"id":0,"p":1,"off":5}
{"tx":1,"commit":true,"res":"committed"}
{"id":1,"p":0,"off":7}
{"tx":2,"commit":false,"res":"aborted"}
{"id":2,"p":3,"err":"INVALID_RECORD: x","code":87}
{"tx":3,"commit":true,"res":"failed","err":"kgo: \"must abort\" <x>","code":48}
{"tx":3,"commit":false,"res":"aborted"}
{"id":3,"none":true}
{"tx":4,"commit":false,"res":"failed","err":"UNKNOWN_SERVER_ERROR"}
`
	if b.String() != want {
		t.Errorf("lines:\n%s\nwant\n%s", b.String(), want)
	}
	var none *Writer
	none.Committed(1)
	none.Aborted(1)
	none.TxnFailed(1, true, "x", 1)
}
