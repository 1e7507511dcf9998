package tv

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker/tlc/tlctest"
	"github.com/kcheck/kcheck/tracer"
)

func translate(t *testing.T, path string) *Module {
	t.Helper()
	f, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Translate(f.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRealTracesAccepted(t *testing.T) {
	j := tlctest.Jar(t)
	for _, name := range []string{"run.jsonl", "first-ack-off.jsonl"} {
		t.Run(name, func(t *testing.T) {
			m := translate(t, filepath.Join("..", "..", "traces", name))
			v, err := Check(context.Background(), m, filepath.Join("..", "..", "spec"), j, 2*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if !v.Accepted {
				t.Fatalf("TLC rejected %s: explained up to line %d\n%s", name, v.Furthest, v.TLC.Output)
			}
			t.Logf("%s: %d TraceLog lines, %d states, %v", name, len(m.Lines), v.States, v.Duration)
		})
	}
}

// A Disconnect whose lost batches are next answered with success lets TLC
// take the one prefix "nothing handled"; one followed by another answer on
// a lost batch's partition lets it try every prefix.
func TestDisconnectPrefix(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    string
	}{
		{"ok-disconnect-retry.jsonl", `[ev |-> "Disconnect", c |-> 1, anyHandled |-> FALSE, matters |-> {}]`},
		{"bad-nonmonotonic-send.jsonl", `[ev |-> "Disconnect", c |-> 1, anyHandled |-> TRUE, matters |-> {0}]`}, // answered OUT_OF_ORDER_SEQUENCE_NUMBER
	} {
		m := translate(t, filepath.Join("..", "..", "traces", "fixtures", tc.fixture))
		if !strings.Contains(m.Data, tc.want) {
			t.Errorf("%s: TraceData has no %s:\n%s", tc.fixture, tc.want, m.Data)
		}
	}
}

// The proxy's fixtures translate for the wire spec (TraceWire), not the
// client's.
func TestProxyFixturesGoToTheWireSpec(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "traces", "fixtures", "*.proxy.jsonl"))
	if len(files) == 0 {
		t.Fatal("no proxy fixtures")
	}
	for _, path := range files {
		f, err := tracer.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Translate(f.Reader)
		f.Close()
		if err != nil || m.Spec != WireSpec {
			t.Errorf("%s: got %v, %v; want a module for %s", path, m, err, WireSpec)
		}
	}
}

// A Translator fed one reused Event at a time, as verify's one pass feeds
// it, translates every fixture as Translate does.
func TestTranslatorReusedEvents(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "traces", "fixtures", "*.jsonl"))
	files = append(files, filepath.Join("..", "..", "traces", "run.jsonl"))
	translated := 0
	for _, path := range files {
		f, err := tracer.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := Translate(f.Reader)
		f.Close()
		f, err = tracer.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		tr := NewTranslator(f.Header())
		var e tracer.Event
		for {
			line, err := f.ReadInto(&e)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			tr.Add(line, &e)
		}
		f.Close()
		got, gotErr := tr.Module()
		switch {
		case (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error():
			t.Errorf("%s: Translate: %v, Translator: %v", path, wantErr, gotErr)
		case wantErr == nil && (got.Data != want.Data || got.Config != want.Config || !slices.Equal(got.Lines, want.Lines)):
			t.Errorf("%s: the Translator's module differs from Translate's", path)
		case wantErr == nil:
			translated++
		}
	}
	if translated < 5 {
		t.Errorf("only %d traces translated", translated)
	}
}
