package tracer

import (
	"io"
	"strconv"
	"testing"
)

// BenchmarkAppendEvent measures the encoding of the lines a traced producer
// writes most: a Told per record, a SendNew per batch (15 record ids).
//
//	go test ./tracer -run '^$' -bench AppendEvent -benchmem
func BenchmarkAppendEvent(b *testing.B) {
	ids := make([]int64, 15)
	for i := range ids {
		ids[i] = int64(1_000_000 + i)
	}
	for _, c := range []struct {
		name string
		e    Event
	}{
		{"Told", Event{I: 123456, T: 987654321, Kind: Told, Partition: 17, RecordID: 1_234_567, Result: Delivered, Offset: 4_567_890}},
		{"SendNew", Event{I: 123456, T: 987654321, Kind: SendNew, Partition: 17, Batch: 81234, PID: 4000, Epoch: 3, Seq: 12345, N: 15, Req: 9876, Node: 1, Records: ids}},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 512)
			for b.Loop() {
				buf = AppendEvent(buf[:0], &c.e)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

// BenchmarkEmitTold measures a 15-record batch's Told events written one
// event at a time (Emit) and as one ToldRun line (EmitRun).
//
//	go test ./tracer -run '^$' -bench EmitTold -benchmem
func BenchmarkEmitTold(b *testing.B) {
	ids := make([]int64, 15)
	for i := range ids {
		ids[i] = int64(1_000_000 + i)
	}
	e := Event{Kind: Told, Partition: 17, Result: Delivered, Offset: 4_567_890}
	for _, c := range []struct {
		name string
		emit func(w *Writer)
	}{
		{"each", func(w *Writer) {
			for k, id := range ids {
				one := e
				one.RecordID, one.Offset = id, e.Offset+int64(k)
				w.Emit(&one)
			}
		}},
		{"run", func(w *Writer) { w.EmitRun(&e, ids) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			w, err := NewWriter(io.Discard, Header{Writer: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				c.emit(w)
			}
		})
	}
}

// TestAppendQuoteAsStrconv checks that the fast path writes what
// strconv.AppendQuote writes, for plain strings and for each kind of
// character that takes strconv's path.
func TestAppendQuoteAsStrconv(t *testing.T) {
	for _, s := range []string{"", "Told", "delivered", "NOT_LEADER_OR_FOLLOWER", "a b~", `say "x"`, `back\slash`, "tab\there", "line\n", "\x7f", "é", "\xff", "日本"} {
		if got, want := string(appendQuote(nil, s)), strconv.Quote(s); got != want {
			t.Errorf("appendQuote(%q) = %s, want %s", s, got, want)
		}
	}
}
