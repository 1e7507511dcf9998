package linz

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/kcheck/kcheck/tracer"
)

// checkFile reads the trace at path into a Checker and checks it.
func checkFile(t testing.TB, path string, timeout time.Duration) Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := tracer.NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	c := New(r.Header())
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Add(r.Line(), e)
	}
	return c.Check(timeout)
}
