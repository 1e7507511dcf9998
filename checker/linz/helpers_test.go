package linz

import (
	"testing"
	"time"

	"github.com/kcheck/kcheck/tracer"
)

// checkFile reads the trace at path into a Checker and checks it.
func checkFile(t testing.TB, path string, timeout time.Duration) Result {
	t.Helper()
	f, err := tracer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := New(f.Header())
	if err := f.Each(func(line int, e *tracer.Event) error { c.Add(line, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return c.Check(timeout)
}
