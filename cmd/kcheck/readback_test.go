package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/tracer"
)

// readBacks returns the ReadBack events of the trace at path.
func readBacks(t *testing.T, path string) []tracer.Event {
	t.Helper()
	f, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []tracer.Event
	if err := f.Each(func(_ int, e *tracer.Event) error {
		if e.Kind == tracer.ReadBack {
			out = append(out, *e)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// kcheck readback gives a trace without a read-back the same read-back the
// run itself took, after which it verifies; it refuses a trace that has one,
// a malformed trace and a cluster that does not answer, writing nothing.
func TestReadback(t *testing.T) {
	up := kfakeUpstream(t)
	dir := t.TempDir()
	full := filepath.Join(dir, "full.jsonl")
	if code, stdout, stderr := runKcheck(t, "run", "--brokers", up, "--broker-version", "4.1.0", "--topic", "t",
		"--partitions", "3", "--records", "200", "--value-bytes", "20", "--trace", full); code != exitOK {
		t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := readBacks(t, full)
	if len(want) != 3 {
		t.Fatalf("the run's trace has %d ReadBack events, want 3", len(want))
	}

	// The trace without its read-back.
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.Contains(l, `"ev":"ReadBack"`) {
			kept = append(kept, l)
		}
	}
	trace := filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(trace, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}

	code, _, stderr := runKcheck(t, "readback", "--brokers", up, trace)
	if code != exitOK || !strings.Contains(stderr, "3 partitions read back") {
		t.Fatalf("readback: exit %d, stderr %q", code, stderr)
	}
	got := readBacks(t, trace)
	if len(got) != len(want) {
		t.Fatalf("%d ReadBack events, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].I != want[i].I || got[i].Partition != want[i].Partition || !reflect.DeepEqual(got[i].Log, want[i].Log) {
			t.Errorf("ReadBack %d: i %d partition %d, %d records; want i %d partition %d, %d records",
				i, got[i].I, got[i].Partition, len(got[i].Log), want[i].I, want[i].Partition, len(want[i].Log))
		}
	}
	if code, stdout, _ := runKcheck(t, "verify", trace); code != exitOK || !strings.Contains(stdout, "VALID") {
		t.Fatalf("verify after readback: exit %d\n%s", code, stdout)
	}

	before, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.jsonl")
	if err := os.WriteFile(broken, []byte(strings.Join(kept[:3], "")+`{"i":3,"t":5,"ev":"Bump"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.jsonl")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"readback", "--brokers", up, trace}, "already has a read-back"},
		{[]string{"readback", "--brokers", up, "--out", out, broken}, "broken.jsonl:4"},
		{[]string{"readback", "--brokers", "127.0.0.1:1", "--out", out, filepath.Join(dir, "full.jsonl")}, "already has a read-back"},
		{[]string{"readback", "--out", out, trace}, "--bootstrap HOST:PORT is required"},
		{[]string{"readback", "--brokers", up}, "want one TRACE"},
		{[]string{"readback", "--brokers", up, filepath.Join(dir, "none.jsonl")}, "no such file"},
	} {
		code, stdout, stderr := runKcheck(t, tc.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, stdout, stderr, exitUsage, tc.want)
		}
	}
	// The cluster down: the trace has no read-back, nothing is written.
	if err := os.WriteFile(broken, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runKcheck(t, "readback", "--brokers", "127.0.0.1:1", "--out", out, broken); code != exitUsage || !strings.Contains(stderr, "no broker reachable") {
		t.Errorf("cluster down: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was written after failures: %v", out, err)
	}
	if after, err := os.ReadFile(trace); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the refused trace changed (%v)", err)
	}
}
