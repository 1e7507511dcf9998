package producer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// encodeTestBatch builds a batch of n random messages for partition part,
// with ids when traced.
func encodeTestBatch(rng *rand.Rand, part *partition, n int, traced bool) *batch {
	base := time.UnixMilli(1_700_000_000_000 + rng.Int64N(1000))
	b := &batch{part: part, baseTs: base.UnixMilli(), maxTs: base.UnixMilli(), seq: rng.Int32N(1 << 30), epoch: int16(rng.IntN(100)),
		size: recordbatch.HeaderSize}
	for i := 0; i < n; i++ {
		m := &Message{Topic: part.topic, Timestamp: base.Add(time.Duration(rng.IntN(2000)-500) * time.Millisecond)}
		if i == 0 {
			m.Timestamp = base
		}
		if rng.IntN(3) > 0 {
			m.Key = make([]byte, rng.IntN(20))
		}
		if rng.IntN(5) > 0 {
			m.Value = bytes.Repeat([]byte{byte('a' + i%26)}, rng.IntN(300))
		}
		for range rng.IntN(3) {
			h := kmsg.Header{Key: fmt.Sprintf("h%d", rng.IntN(1000))}
			if rng.IntN(2) == 0 {
				h.Value = []byte("v")
			}
			m.Headers = append(m.Headers, h)
		}
		b.recs = append(b.recs, pendingRecord{msg: m})
		b.maxTs = max(b.maxTs, m.Timestamp.UnixMilli())
		var id int64
		if traced {
			id = rng.Int64N(int64(1)<<rng.IntN(63)) + 1 // every digit count
			b.ids = append(b.ids, id)
		}
		// What Produce adds up (batch.size).
		body := messageBodySize(m, m.Timestamp.UnixMilli()-b.baseTs, int32(i), traced, id)
		b.size += recordbatch.VarintLen(int64(body)) + body
	}
	return b
}

// builderBatch encodes b with BatchBuilder, the reference encoding.
func builderBatch(t *testing.T, b *batch, pid int64, codec recordbatch.Codec, traced bool) []byte {
	t.Helper()
	bb := recordbatch.NewBuilder(recordbatch.Params{ProducerID: pid, ProducerEpoch: b.epoch, BaseSequence: b.seq, Codec: codec, BaseTimestamp: b.baseTs})
	size := recordbatch.HeaderSize
	for i, r := range b.recs {
		rec := recordbatch.Record{Key: r.msg.Key, Value: r.msg.Value, Headers: r.msg.Headers, TimestampDelta: r.msg.Timestamp.UnixMilli() - b.baseTs}
		var id int64
		if traced {
			id = b.ids[i]
			rec.Headers = append(append([]kmsg.Header(nil), rec.Headers...), kmsg.Header{Key: recordbatch.IDHeader, Value: strconv.AppendInt(nil, id, 10)})
		}
		body := messageBodySize(r.msg, rec.TimestampDelta, int32(i), traced, id)
		size += recordbatch.VarintLen(int64(body)) + body
		if got := bb.Append(rec); got != size {
			t.Fatalf("record %d: messageBodySize says the batch is %d bytes, BatchBuilder %d", i, size, got)
		}
	}
	out, err := bb.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEncoderMatchesBatchBuilder: the batches encoded at send time are byte
// for byte what BatchBuilder encodes, for every codec, traced or not.
func TestEncoderMatchesBatchBuilder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	part := newPartition("t", 3)
	for _, codec := range []recordbatch.Codec{recordbatch.CodecNone, recordbatch.CodecGzip, recordbatch.CodecSnappy, recordbatch.CodecLZ4, recordbatch.CodecZstd} {
		for _, traced := range []bool{false, true} {
			for _, n := range []int{1, 2, 17, 130} {
				b := encodeTestBatch(rng, part, n, traced)
				e := &encoder{pid: 12345, codec: codec, traced: traced}
				bufs := newBufPool(1024)
				if codec != recordbatch.CodecNone {
					if err := e.compress(b, bufs); err != nil {
						t.Fatal(err)
					}
				}
				size := e.batchSize(b)
				got := e.appendBatch([]byte("prefix"), b)
				if string(got[:6]) != "prefix" || len(got)-6 != size {
					t.Fatalf("%v traced=%v n=%d: appended %d bytes after the prefix, batchSize said %d", codec, traced, n, len(got)-6, size)
				}
				want := builderBatch(t, b, 12345, codec, traced)
				if !bytes.Equal(got[6:], want) {
					t.Fatalf("%v traced=%v n=%d: encoded batch differs from BatchBuilder's", codec, traced, n)
				}
				// Renumbered by a bump: the next encoding has the new numbers.
				b.epoch, b.seq = b.epoch+1, 0
				if got, want := e.appendBatch(nil, b), builderBatch(t, b, 12345, codec, traced); e.batchSize(b) != len(got) || !bytes.Equal(got, want) {
					t.Fatalf("%v traced=%v n=%d: after renumbering, encoded batch differs from BatchBuilder's", codec, traced, n)
				}
			}
		}
	}
}

// TestProduceRequestMatchesKmsg: produceRequest encodes as kmsg encodes the
// same request, in every version it speaks, with batches of two topics
// interleaved (they are grouped by topic, in order of first appearance).
func TestProduceRequestMatchesKmsg(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	e := &encoder{pid: 7, codec: recordbatch.CodecNone}
	a0, b0, a1, a2 := newPartition("a", 0), newPartition("bb", 0), newPartition("a", 1), newPartition("a", 2)
	var batches []*batch
	for _, part := range []*partition{a1, b0, a0, a2} {
		batches = append(batches, encodeTestBatch(rng, part, 1+rng.IntN(5), false))
	}
	for v := int16(3); v <= 12; v++ {
		r := &produceRequest{timeout: 30000, batches: batches, enc: e}
		r.SetVersion(v)
		want := kmsg.NewPtrProduceRequest()
		want.SetVersion(v)
		want.Acks, want.TimeoutMillis = -1, 30000
		for _, topic := range []string{"a", "bb"} {
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = topic
			for _, b := range batches {
				if b.part.topic == topic {
					rp := kmsg.NewProduceRequestTopicPartition()
					rp.Partition = b.part.id
					e.batchSize(b)
					rp.Records = e.appendBatch(nil, b)
					rt.Partitions = append(rt.Partitions, rp)
				}
			}
			want.Topics = append(want.Topics, rt)
		}
		if got, want := r.AppendTo(nil), want.AppendTo(nil); !bytes.Equal(got, want) {
			t.Fatalf("v%d: produceRequest encodes differently from kmsg.ProduceRequest", v)
		}
		if r.IsFlexible() != want.IsFlexible() {
			t.Fatalf("v%d: IsFlexible %v, kmsg says %v", v, r.IsFlexible(), want.IsFlexible())
		}
	}
}

// TestProduceSizesAsEncoded: the size Produce adds up for a batch
// (batch.size, which batchSize gives for an uncompressed batch) is the size
// the batch encodes to, for batches Produce fills and seals itself: random
// keys, values, headers and timestamps, traced or not, one partition, no
// sender.
func TestProduceSizesAsEncoded(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, traced := range []bool{false, true} {
		c := defaults()
		c.batchBytes = 2048
		part := newPartition("t", 0)
		p := &Producer{cfg: c, ids: traced, gate: newGate(1 << 20), batches: newBatchStore(1 << 20), wake: make(chan struct{}, 1)}
		p.meta.Store(&snapshot{topics: map[string]*topicInfo{"t": {parts: []*partition{part}, leaders: []int32{0}}}})
		base := time.UnixMilli(1_700_000_000_000)
		ctx := t.Context()
		for i := range 500 {
			m := &Message{Topic: "t", Value: bytes.Repeat([]byte{'v'}, rng.IntN(700))}
			if i%7 != 0 {
				m.Timestamp = base.Add(time.Duration(rng.IntN(300_000)-1000) * time.Millisecond)
			}
			if rng.IntN(2) == 0 {
				m.Key = []byte(strconv.Itoa(rng.IntN(1000)))
			}
			for range rng.IntN(3) {
				m.Headers = append(m.Headers, kmsg.Header{Key: "h", Value: []byte(strconv.Itoa(rng.IntN(1 << 20)))})
			}
			p.Produce(ctx, m, nil)
		}
		batches := append(part.sealed, part.open)
		if len(batches) < 10 {
			t.Fatalf("traced=%v: only %d batches", traced, len(batches))
		}
		e := &encoder{pid: 1, codec: recordbatch.CodecNone, traced: traced}
		for i, b := range batches {
			if got := len(e.appendBatch(nil, b)); got != e.batchSize(b) {
				t.Fatalf("traced=%v, batch %d of %d records: Produce sized it %d bytes, it encodes to %d", traced, i, len(b.recs), e.batchSize(b), got)
			}
		}
	}
}

// TestProduceRequestResizes: a batch whose Message changed after Produce
// sized it (which Produce's documentation forbids) still makes a
// well-formed request, its batch written after its true size.
func TestProduceRequestResizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	e := &encoder{pid: 7, codec: recordbatch.CodecNone}
	b := encodeTestBatch(rng, newPartition("a", 0), 3, false)
	b.recs[1].msg.Value = append(b.recs[1].msg.Value, bytes.Repeat([]byte{'x'}, 200)...)
	for _, v := range []int16{8, 9} { // fixed-width and varint sizes
		r := &produceRequest{timeout: 30000, batches: []*batch{b}, enc: e}
		r.SetVersion(v)
		want := kmsg.NewPtrProduceRequest()
		want.SetVersion(v)
		want.Acks, want.TimeoutMillis = -1, 30000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "a"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = e.appendBatch(nil, b)
		rt.Partitions = append(rt.Partitions, rp)
		want.Topics = append(want.Topics, rt)
		if got, want := r.AppendTo(nil), want.AppendTo(nil); !bytes.Equal(got, want) {
			t.Fatalf("v%d: a resized batch encodes differently from kmsg.ProduceRequest", v)
		}
	}
}

// BenchmarkAppendRecords measures the records section of a 16-record batch
// of 1 KiB values, untraced and traced (each record with its kcheck-id
// header; ids 64 apart, as round-robin over 64 partitions gives them): the
// header's share of tracing's cost.
//
//	go test ./producer -run '^$' -bench AppendRecords
func BenchmarkAppendRecords(b *testing.B) {
	value := bytes.Repeat([]byte{'v'}, 1024)
	ts := time.UnixMilli(1_700_000_000_000)
	for _, traced := range []bool{false, true} {
		b.Run(map[bool]string{false: "untraced", true: "traced"}[traced], func(b *testing.B) {
			bt := &batch{baseTs: ts.UnixMilli()}
			for i := range 16 {
				bt.recs = append(bt.recs, pendingRecord{msg: &Message{Value: value, Timestamp: ts}})
				bt.ids = append(bt.ids, int64(1_234_567+64*i))
			}
			e := &encoder{traced: traced}
			dst := make([]byte, 0, 32<<10)
			for b.Loop() {
				dst = e.appendRecords(dst[:0], bt)
			}
			b.SetBytes(int64(len(dst)))
		})
	}
}
