package replay

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kcheck/kcheck/tracer"
)

func replayFile(t *testing.T, path string) error {
	t.Helper()
	f, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Trace(f.Reader)
}

// The traces of real runs in traces/ conform to the spec: our producer with
// the rule on, and the Java client's rules with it off (the loss is allowed
// by the spec with FirstAckRule off: that is the point).
func TestRealTracesConform(t *testing.T) {
	for _, name := range []string{"run.jsonl", "first-ack-off.jsonl"} {
		t.Run(name, func(t *testing.T) {
			if err := replayFile(t, filepath.Join("..", "..", "traces", name)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A trace that says the rule was on but shows the producer pipelining past an
// unacknowledged first batch is caught.
func TestRuleOnHeaderCatchesPipelining(t *testing.T) {
	path := filepath.Join("..", "..", "traces", "first-ack-off.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flipped := []byte(string(data))
	i := indexOf(flipped, `"first_ack":false`)
	if i < 0 {
		t.Fatal("first-ack-off.jsonl header does not say first_ack false")
	}
	copy(flipped[i:], `"first_ack":true `)
	tmp := filepath.Join(t.TempDir(), "flipped.jsonl")
	if err := os.WriteFile(tmp, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	err = replayFile(t, tmp)
	var re *Error
	if !errors.As(err, &re) || re.Action != "SendNew" {
		t.Fatalf("got %v, want SendNew not enabled by the first-ack rule", err)
	}
	t.Log(err)
}

func indexOf(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}
