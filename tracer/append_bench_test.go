package tracer

import (
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

// BenchmarkAppendRun measures a 15-record batch's Told lines, written one
// event at a time (AppendEvent) and as a run (appendRun).
//
//	go test ./tracer -run '^$' -bench AppendRun -benchmem
func BenchmarkAppendRun(b *testing.B) {
	ids := make([]int64, 15)
	for i := range ids {
		ids[i] = int64(1_000_000 + i)
	}
	e := Event{I: 123456, T: 987654321, Kind: Told, Partition: 17, Result: Delivered, Offset: 4_567_890}
	buf := make([]byte, 0, 4096)
	b.Run("each", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for k, id := range ids {
				one := e
				one.RecordID, one.Offset = id, e.Offset+int64(k)
				buf = append(AppendEvent(buf, &one), '\n')
			}
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("run", func(b *testing.B) {
		var segs []byte
		for b.Loop() {
			buf = appendRun(buf[:0], &e, ids, e.I, &segs)
		}
		b.SetBytes(int64(len(buf)))
	})
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
