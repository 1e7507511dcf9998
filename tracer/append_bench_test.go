package tracer

import (
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkAppendEvent measures the encoding of the lines a traced producer
// writes most: a Told per record, a SendNew per batch (15 record ids,
// consecutive as a sticky partitioner gives them, or 64 apart as
// round-robin over 64 partitions does), and a ToldRun per batch.
//
//	go test ./tracer -run '^$' -bench AppendEvent -benchmem
func BenchmarkAppendEvent(b *testing.B) {
	ids, apart := make([]int64, 15), make([]int64, 15)
	for i := range ids {
		ids[i], apart[i] = int64(1_000_000+i), int64(1_000_000+64*i)
	}
	for _, c := range []struct {
		name string
		e    Event
	}{
		{"Told", Event{I: 123456, T: 987654321, Kind: Told, Partition: 17, RecordID: 1_234_567, Result: Delivered, Offset: 4_567_890}},
		{"SendNew", Event{I: 123456, T: 987654321, Kind: SendNew, Partition: 17, Batch: 81234, PID: 4000, Epoch: 3, Seq: 12345, N: 15, Req: 9876, Node: 1, Records: ids}},
		{"SendNew64", Event{I: 123456, T: 987654321, Kind: SendNew, Partition: 17, Batch: 81234, PID: 4000, Epoch: 3, Seq: 12345, N: 15, Req: 9876, Node: 1, Records: apart}},
		{"ToldRun64", Event{I: 123456, T: 987654321, Kind: ToldRun, Partition: 17, Result: Delivered, Offset: 4_567_890, Records: apart}},
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

// TestAppendIDsAsStrconv checks that appendIDs writes what formatting each
// id with strconv writes: steps of one, of many, at the largest it adds,
// just past it, carries into new digits, zero, negative ids, falls, and
// the largest ids; then random lists (the seed is printed on failure).
func TestAppendIDsAsStrconv(t *testing.T) {
	want := func(ids []int64) string {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = strconv.FormatInt(id, 10)
		}
		return strings.Join(s, ",")
	}
	cases := [][]int64{nil, {0}, {7}, {0, 1, 2}, {9, 10, 99, 100, 101}, {999_999, 1_000_063, 1_000_127},
		{5, 5 + maxStep, 5 + 2*maxStep + 1, 4}, {99, 99 + maxStep}, {-3, -2, 0, 1}, {10, 3, 1 << 40, 1<<40 + 64},
		{math.MaxInt64 - 70, math.MaxInt64 - 6, math.MaxInt64}, {math.MinInt64, 0, math.MaxInt64}, {1, 1, 1}}
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	for k := 0; k < 2000; k++ {
		ids := make([]int64, r.IntN(40))
		id := r.Int64N(1 << uint(r.IntN(63)))
		for i := range ids {
			switch r.IntN(8) {
			case 0:
				id = r.Int64() - r.Int64()
			case 1:
				id -= r.Int64N(100)
			default:
				id += r.Int64N(2 * maxStep)
			}
			ids[i] = id
		}
		cases = append(cases, ids)
	}
	for _, ids := range cases {
		if got, want := string(appendIDs(nil, ids)), want(ids); got != want {
			t.Fatalf("appendIDs(%v) = %s, want %s (seed %d)", ids, got, want, seed)
		}
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
