package tv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
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

// agreeFiles are the traces both must agree on: every trace in traces/,
// traces/fixtures/ (our producer's, for TraceIdempotentProducer, and the
// proxy's *.proxy.jsonl, for TraceWire), traces/proxy/ and traces/scenarios/
// (the proxy's, for TraceWire), and testdata/: traces outside the
// fixtures' common header (ok-unknown-producer-no-log-start.jsonl, kfake
// 2.4's UNKNOWN_PRODUCER_ID with no log start offset, which TLC rejected
// while the mirror accepted it until the spec had AnswersLogStart).
func agreeFiles(t *testing.T) []string {
	var files []string
	for _, dir := range []string{"", "fixtures", "proxy", "scenarios"} {
		fs, _ := filepath.Glob(filepath.Join("..", "..", "traces", dir, "*.jsonl"))
		files = append(files, fs...)
	}
	own, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	files = append(files, own...)
	if len(files) < 40 {
		t.Fatalf("found %d traces", len(files))
	}
	return files
}

// The Go mirror (checker/replay) and TLC agree on every trace in traces/ and
// its fixtures/, proxy/ and scenarios/, and on a trace that breaks the
// first-ack rule. With -short, traces over 2,000 lines are left out (the
// 6,248-line traces/proxy/java-4.3.1-on-kafka-4.1.0.jsonl takes TLC about
// 25 s).
func TestMirrorAndTLCAgree(t *testing.T) {
	j := tlctest.Jar(t)
	files := agreeFiles(t)
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
		if testing.Short() && bytes.Count(data, []byte("\n")) > 2000 {
			t.Logf("-short: %s left out", f)
			continue
		}
		cases = append(cases, tc{filepath.Base(f), data})
	}
	// The rule-off run, claimed to be a rule-on run: both must reject it.
	off, _ := os.ReadFile(filepath.Join("..", "..", "traces", "first-ack-off.jsonl"))
	cases = append(cases, tc{"first-ack-off claimed on", bytes.Replace(off, []byte(`"first_ack":false`), []byte(`"first_ack":true `), 1)})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			mirror, v, terr := verdicts(t, j, c.name, c.data)
			if terr != nil {
				t.Fatalf("every trace and fixture in the repository must be expressible: %v", terr)
			}
			var re *replay.Error
			if mirror != nil && !errors.As(mirror, &re) {
				t.Fatalf("the mirror could not read it: %v", mirror)
			}
			wire := strings.Contains(c.name, "proxy") || bytes.Contains(c.data[:bytes.IndexByte(c.data, '\n')], []byte(`"writer":"kcheck-proxy"`))
			t.Logf("%s lines, wire %v: mirror %v; TLC accepted=%v, %d states, %v", strconv.Itoa(bytes.Count(c.data, []byte("\n"))), wire, mirror, v.Accepted, v.States, v.Duration.Round(time.Millisecond))
			if (mirror == nil) != v.Accepted {
				t.Fatalf("they disagree: mirror %v; TLC accepted=%v (furthest line %d)", mirror, v.Accepted, v.Furthest)
			}
			if re != nil && v.Furthest != re.Line {
				t.Logf("mirror stops at line %d, TLC's furthest explained line is %d", re.Line, v.Furthest)
			}
		})
	}
}
