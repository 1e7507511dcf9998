package tv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker/tlc/tlctest"

	"github.com/kcheck/kcheck/checker/replay"
	"github.com/kcheck/kcheck/tracer"
)

// verdicts runs both the Go mirror and TLC on a trace.
func verdicts(t *testing.T, jar, name string, data []byte) (mirror error, tlcv *Verdict, translateErr error) {
	t.Helper()
	r, err := tracer.NewReader(bytes.NewReader(data), name)
	if err != nil {
		t.Fatal(err)
	}
	mirror = replay.Trace(r)
	r, _ = tracer.NewReader(bytes.NewReader(data), name)
	m, err := Translate(r)
	if err != nil {
		return mirror, nil, err
	}
	v, err := Check(context.Background(), m, filepath.Join("..", "..", "spec"), jar, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return mirror, v, nil
}

// The Go mirror (checker/replay) and TLC agree on every trace in traces/ and
// traces/fixtures/, and on a trace that breaks the first-ack rule. Fixtures
// written as the proxy writes (*.proxy.jsonl) are left out: TLC validates a
// client's steps, which a trace of the wire does not show (Translate refuses
// it).
func TestMirrorAndTLCAgree(t *testing.T) {
	j := tlctest.Jar(t)
	files, _ := filepath.Glob(filepath.Join("..", "..", "traces", "*.jsonl"))
	fixtures, _ := filepath.Glob(filepath.Join("..", "..", "traces", "fixtures", "*.jsonl"))
	for _, f := range fixtures {
		if !strings.HasSuffix(f, ".proxy.jsonl") {
			files = append(files, f)
		}
	}
	if len(files) < 2 {
		t.Fatalf("found %d traces", len(files))
	}
	type tc struct {
		name string
		data []byte
	}
	var cases []tc
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tc{filepath.Base(f), data})
	}
	// The rule-off run, claimed to be a rule-on run: both must reject it.
	off, _ := os.ReadFile(filepath.Join("..", "..", "traces", "first-ack-off.jsonl"))
	cases = append(cases, tc{"first-ack-off claimed on", bytes.Replace(off, []byte(`"first_ack":false`), []byte(`"first_ack":true `), 1)})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mirror, v, terr := verdicts(t, j, c.name, c.data)
			if terr != nil {
				t.Fatalf("every trace and fixture in the repository must be expressible: %v", terr)
			}
			var re *replay.Error
			if mirror != nil && !errors.As(mirror, &re) {
				t.Fatalf("the mirror could not read it: %v", mirror)
			}
			if (mirror == nil) != v.Accepted {
				t.Fatalf("they disagree: mirror %v; TLC accepted=%v (furthest line %d)", mirror, v.Accepted, v.Furthest)
			}
			if re != nil && v.Furthest != re.Line {
				t.Logf("mirror stops at line %d, TLC's furthest explained line is %d", re.Line, v.Furthest)
			}
		})
	}
}
