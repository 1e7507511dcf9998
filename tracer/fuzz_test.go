package tracer

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the reader: it must never panic, and
// every failure must be a *SyntaxError naming a line. The seed corpus is in
// testdata/fuzz/FuzzReader; `go test -fuzz FuzzReader ./tracer` explores more.
func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Writer: "fuzz", Topic: "t", Partitions: 1, MaxInFlight: 5,
		Broker: Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"}})
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range sample() {
		w.Emit(e)
	}
	w.Flush()
	f.Add(buf.Bytes())
	f.Add([]byte(`{"kcheck_trace":1}` + "\n"))
	f.Add([]byte(`{"kcheck_trace":1}` + "\n" + `{"i":1,"t":0,"ev":"Disconnect","node":1}` + "\n"))
	// Beyond the limits (FORMAT.md, Limits): partitions, a key twice, a
	// partition outside the header's, a read-back claiming more records
	// than its line holds.
	f.Add([]byte(`{"kcheck_trace":1,"partitions":2147483647}` + "\n"))
	f.Add([]byte(`{"kcheck_trace":1,"partitions":2,"partitions":1}` + "\n"))
	f.Add([]byte(`{"kcheck_trace":1,"partitions":8}` + "\n" + `{"i":1,"t":0,"ev":"Bump","p":2147483647,"pid":1,"ep":0}` + "\n"))
	f.Add([]byte(`{"kcheck_trace":1,"partitions":1}` + "\n" + `{"i":1,"t":0,"ev":"ReadBack","p":0,"log":[[[[[[[[` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "fuzz.jsonl")
		for err == nil {
			_, err = r.Next()
		}
		if errors.Is(err, io.EOF) {
			return
		}
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line < 1 || se.File != "fuzz.jsonl" {
			t.Fatalf("error %v (%T) is not a *SyntaxError with a line", err, err)
		}
	})
}
