package tv_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/tlc/tlctest"
	"github.com/kcheck/kcheck/checker/tv"
	"github.com/kcheck/kcheck/checker/txn"
	"github.com/kcheck/kcheck/tracer"
)

// txnVerdicts runs the Go transactional check (checker/txn) and TLC
// (spec/TraceTransactional.tla) on a trace: the kinds the Go check found,
// and TLC's verdict.
func txnVerdicts(t *testing.T, jar, name string, data []byte) (goKinds []checker.Kind, v *tv.Verdict) {
	t.Helper()
	r, err := tracer.NewReader(bytes.NewReader(data), name)
	if err != nil {
		t.Fatal(err)
	}
	c := txn.New(r.Header())
	tr := tv.NewTranslator(r.Header())
	if err := r.Each(func(line int, e *tracer.Event) error {
		tr.Add(line, e)
		return c.Add(line, e)
	}); err != nil {
		t.Fatal(err)
	}
	vs, _ := c.Finish()
	seen := map[checker.Kind]bool{}
	for _, x := range vs {
		if !seen[x.Kind] {
			seen[x.Kind] = true
			goKinds = append(goKinds, x.Kind)
		}
	}
	m, err := tr.Module()
	if err != nil {
		t.Fatalf("every transactional fixture must be expressible: %v", err)
	}
	if m.Spec != tv.TxnSpec {
		t.Fatalf("translated for %s, want %s", m.Spec, tv.TxnSpec)
	}
	v, err = tv.Check(context.Background(), m, filepath.Join("..", "..", "spec"), jar, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return goKinds, v
}

// pollKinds are checker/txn's poll checks' kinds, which TLC's translation
// leaves to the Go checks.
var pollKinds = []checker.Kind{checker.PollAbortedRead, checker.NonMonotonicPoll, checker.PollSkip, checker.Unseen}

// finding says what TLC concluded, for the log and failures.
func finding(v *tv.Verdict) string {
	switch {
	case v.Inconclusive != "":
		return "inconclusive: " + v.Inconclusive
	case !v.Accepted:
		return "rejected at line " + strconv.Itoa(v.At) + " (" + v.AtEvent + ")"
	case len(v.Violated) > 0:
		return "accepted, violates " + strings.Join(v.Violated, ", ")
	}
	return "accepted"
}

// The Go transactional check and TLC agree on every transactional fixture
// (traces/fixtures/txn: bad-KIND[.what].jsonl judged with KIND and no other,
// ok-* valid) and on the real runs in testdata/txn-*.jsonl (valid): TLC's
// finding, named by tv.TxnKind (spec/README.md, "Transactional trace
// validation", has the table), is the fixture's kind.
func TestTxnFixturesAgree(t *testing.T) {
	j := tlctest.Jar(t)
	files, _ := filepath.Glob(filepath.Join("..", "..", "traces", "fixtures", "txn", "*.jsonl"))
	if len(files) < 9 {
		t.Fatalf("found %d transactional fixtures", len(files))
	}
	own, _ := filepath.Glob(filepath.Join("testdata", "txn-*.jsonl"))
	if len(own) < 2 {
		t.Fatalf("found %d transactional runs in testdata", len(own))
	}
	for _, f := range append(files, own...) {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		want := checker.Kind("")
		if k, ok := strings.CutPrefix(name, "bad-"); ok {
			want = checker.Kind(strings.SplitN(k, ".", 2)[0])
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			goKinds, v := txnVerdicts(t, j, name, data)
			got, ok := tv.TxnKind(v)
			tlcWant := want
			if slices.Contains(pollKinds, want) {
				// TraceTransactional leaves a consumer's polls out (txn.go):
				// TLC finds nothing in a trace that only its polls condemn.
				tlcWant = ""
			}
			t.Logf("%s: Go %v; TLC %s (%s), %d states, %v", name, goKinds, got, finding(v), v.States, v.Duration.Round(time.Millisecond))
			if !ok {
				t.Fatalf("TLC did not conclude: %s", v.Inconclusive)
			}
			switch {
			case want == "" && len(goKinds) > 0:
				t.Errorf("the Go check found %v in a valid trace", goKinds)
			case want != "" && (len(goKinds) != 1 || goKinds[0] != want):
				t.Errorf("the Go check found %v, want %s alone", goKinds, want)
			}
			if got != tlcWant {
				t.Errorf("TLC's finding (%s) is %q, want %q", finding(v), got, tlcWant)
			}
		})
	}
}

// TLC rejects, at the line, a coordinator's answer no rule explains: an EndTxn
// answered with an epoch other than the bump (TV2), an AddPartitionsToTxn
// answered NONE for a fenced epoch (TV1), a marker read back that no
// decision wrote.
func TestTxnRejects(t *testing.T) {
	j := tlctest.Jar(t)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "traces", "fixtures", "txn", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name, fixture, old, new, ev string
	}{
		{"EndTxn's epoch not the bump", "ok-tv2.jsonl", `"tx":2,"commit":false,"nep":2}`, `"tx":2,"commit":false,"nep":5}`, "EndTxnReceive"},
		{"AddPartitionsToTxn of a fenced epoch", "ok-tv1.proxy.jsonl", `"ev":"AddPartitionsToTxn","p":0,"pid":1000,"ep":0`, `"ev":"AddPartitionsToTxn","p":0,"pid":1000,"ep":7`, "AddPartitions"},
		{"a marker no decision wrote", "ok-tv2.jsonl", `[7,1000,3,1]]}`, `[7,1000,3,1],[8,1000,3,0]]}`, "Segment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := read(tc.fixture)
			if !bytes.Contains(data, []byte(tc.old)) {
				t.Fatalf("%s has no %s", tc.fixture, tc.old)
			}
			data = bytes.Replace(data, []byte(tc.old), []byte(tc.new), 1)
			line := 1 + bytes.Count(data[:bytes.Index(data, []byte(tc.new))], []byte("\n"))
			_, v := txnVerdicts(t, j, tc.name, data)
			t.Logf("%s", finding(v))
			if v.Accepted || v.Inconclusive != "" {
				t.Fatalf("want rejected at line %d, got %s", line, finding(v))
			}
			if v.At != line || v.AtEvent != tc.ev {
				t.Errorf("rejected at line %d (%s), want line %d (%s)", v.At, v.AtEvent, line, tc.ev)
			}
			if k, _ := tv.TxnKind(v); k != checker.NonConformance {
				t.Errorf("named %s, want %s", k, checker.NonConformance)
			}
		})
	}
}

// A transactional trace with a second producer id is beyond the spec (one
// transactional id, one producer id): ErrUnsupported, not a verdict.
func TestTxnUnsupported(t *testing.T) {
	tr := tv.NewTranslator(tracer.Header{Version: 6, TransactionalID: "x", TxnVersion: 2, Partitions: 1})
	tr.Add(2, &tracer.Event{Kind: tracer.InitProducerID, PID: 1, TxnID: "x"})
	tr.Add(3, &tracer.Event{Kind: tracer.InitProducerID, PID: 2, TxnID: "x"})
	if _, err := tr.Module(); !errors.Is(err, tv.ErrUnsupported) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("want ErrUnsupported at line 3, got %v", err)
	}
}

// TLC accepts our producer's TV1 abort after a batch failed (INVALID_TXN_STATE
// injected on kfake), then the KIP-360 bump (InitProducerId with the same
// producer id and the next epoch) and the transactions after it. (checker/txn
// refuses this trace for now: it takes the failed commit's TxnTold as the
// transaction's end, where tracer/FORMAT.md has the abort's TxnTold follow it.)
func TestTxnKIP360Bump(t *testing.T) {
	j := tlctest.Jar(t)
	f, err := tracer.Open(filepath.Join("testdata", "txnbump-kfake-tv1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := tv.Translate(f.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(m.Lines, 16) { // the second InitProducerId
		t.Fatalf("TraceLog has no line for the bump's InitProducerId (line 16): %v", m.Lines)
	}
	v, err := tv.Check(context.Background(), m, filepath.Join("..", "..", "spec"), j, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := tv.TxnKind(v); !ok || k != "" {
		t.Fatalf("TLC: %s, want accepted with no property violated", finding(v))
	}
}
