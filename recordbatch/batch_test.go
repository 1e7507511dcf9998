package recordbatch_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/kcheck/kcheck/wire"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/recordbatch"
)

var batchTestCRC = crc32.MakeTable(crc32.Castagnoli)

// TestBatchHandGolden checks one small uncompressed batch against bytes
// written out field by field from the v2 record batch layout. The CRC-32C
// was computed separately with a bitwise CRC-32C (poly 0x82F63B78).
func TestBatchHandGolden(t *testing.T) {
	b := recordbatch.NewBuilder(recordbatch.Params{
		ProducerID: 1, ProducerEpoch: 2, BaseSequence: 3, BaseTimestamp: 1000,
	})
	b.Append(recordbatch.Record{
		Key:     []byte("k"),
		Value:   []byte("v"),
		Headers: []kmsg.Header{{Key: "h", Value: []byte("1")}},
	})
	got, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0, 0, 0, 0, 0, 0, 0, 0, // base offset
		0, 0, 0, 62, // length: everything after this field
		0xff, 0xff, 0xff, 0xff, // partition leader epoch -1
		2,                      // magic
		0xb2, 0xfc, 0xd8, 0xca, // CRC-32C of attributes..end
		0, 0, // attributes: no compression, create time
		0, 0, 0, 0, // last offset delta
		0, 0, 0, 0, 0, 0, 0x03, 0xe8, // first timestamp 1000
		0, 0, 0, 0, 0, 0, 0x03, 0xe8, // max timestamp 1000
		0, 0, 0, 0, 0, 0, 0, 1, // producer ID
		0, 2, // producer epoch
		0, 0, 0, 3, // base sequence
		0, 0, 0, 1, // record count
		// The record; varints are zigzag encoded.
		0x18,   // length 12
		0,      // attributes
		0,      // timestamp delta 0
		0,      // offset delta 0
		2, 'k', // key
		2, 'v', // value
		2,      // one header
		2, 'h', // header key
		2, '1', // header value
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("batch\n% x\nwant\n% x", got, want)
	}
	if b.Size() != len(want) {
		t.Errorf("Size() = %d, want %d", b.Size(), len(want))
	}
}

// javaFixture returns the batch parameters and records that
// testdata/java-*.batch hold (see testdata/README.md).
func javaFixture() (recordbatch.Params, []recordbatch.Record) {
	p := recordbatch.Params{ProducerID: 4242, ProducerEpoch: 7, BaseSequence: 100, BaseTimestamp: 1700000000000}
	deltas := []int64{0, 5, 3, 10, 7}
	var recs []recordbatch.Record
	for i := range 5 {
		r := recordbatch.Record{
			Key:            []byte(fmt.Sprintf("key-%d", i)),
			Value:          []byte(fmt.Sprintf("value-%d-%s", i, bytes.Repeat([]byte("abcdefgh"), 40))),
			Headers:        []kmsg.Header{{Key: "kcheck-id", Value: []byte(fmt.Sprintf("id-%d", i))}},
			TimestampDelta: deltas[i],
		}
		switch i {
		case 2:
			r.Key = nil
		case 3:
			r.Headers = append(r.Headers, kmsg.Header{Key: "nullhdr"})
		case 4:
			r.Value = []byte{}
		}
		recs = append(recs, r)
	}
	return p, recs
}

func readJavaFixture(t *testing.T, c recordbatch.Codec) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "java-"+c.String()+".batch"))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestBatchMatchesJava builds the fixture's records and compares with what
// the Java client wrote: byte for byte without compression, and header
// plus decompressed records with it (codec libraries differ in output).
func TestBatchMatchesJava(t *testing.T) {
	p, recs := javaFixture()
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			java := readJavaFixture(t, c)
			p.Codec = c
			b := recordbatch.NewBuilder(p)
			for _, r := range recs {
				b.Append(r)
			}
			ours, err := b.AppendTo(nil)
			if err != nil {
				t.Fatal(err)
			}
			if c == recordbatch.CodecNone {
				if !bytes.Equal(ours, java) {
					t.Fatalf("batch\n% x\njava\n% x", ours, java)
				}
				return
			}
			// Everything but the length and CRC precedes the records.
			const lengthAt, crcAt = 8, 17
			mask := func(h []byte) []byte {
				h = bytes.Clone(h[:recordbatch.HeaderSize])
				clear(h[lengthAt : lengthAt+4])
				clear(h[crcAt : crcAt+4])
				return h
			}
			if !bytes.Equal(mask(ours), mask(java)) {
				t.Fatalf("header\n% x\njava\n% x", ours[:recordbatch.HeaderSize], java[:recordbatch.HeaderSize])
			}
			ourRecs, err := c.Decompress(nil, ours[recordbatch.HeaderSize:])
			if err != nil {
				t.Fatal(err)
			}
			javaRecs, err := c.Decompress(nil, java[recordbatch.HeaderSize:])
			if err != nil {
				t.Fatalf("decompress java's records: %v", err)
			}
			if !bytes.Equal(ourRecs, javaRecs) {
				t.Fatalf("records\n% x\njava\n% x", ourRecs, javaRecs)
			}
		})
	}
}

func TestDecodeJavaBatches(t *testing.T) {
	p, recs := javaFixture()
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			batches, err := recordbatch.Decode(readJavaFixture(t, c))
			if err != nil {
				t.Fatal(err)
			}
			if len(batches) != 1 {
				t.Fatalf("%d batches, want 1", len(batches))
			}
			b := batches[0]
			if b.Codec() != c || b.ProducerID != p.ProducerID || b.ProducerEpoch != p.ProducerEpoch ||
				b.BaseSequence != p.BaseSequence || b.FirstTimestamp != p.BaseTimestamp ||
				b.MaxTimestamp != p.BaseTimestamp+10 || b.LastOffsetDelta != 4 || b.PartitionLeaderEpoch != -1 ||
				b.Transactional() || b.Control() {
				t.Fatalf("batch header %+v", b)
			}
			batchTestCheckDecoded(t, b, p, recs, 0)
		})
	}
}

// batchTestCheckDecoded checks that b holds recs, encoded with p, at
// offsets from base on.
func batchTestCheckDecoded(t *testing.T, b recordbatch.Batch, p recordbatch.Params, recs []recordbatch.Record, base int64) {
	t.Helper()
	if len(b.Records) != len(recs) {
		t.Fatalf("%d records, want %d", len(b.Records), len(recs))
	}
	for i, r := range b.Records {
		w := recs[i]
		want := recordbatch.DecodedRecord{
			Offset:        base + int64(i),
			Timestamp:     p.BaseTimestamp + w.TimestampDelta,
			Key:           w.Key,
			Value:         w.Value,
			Headers:       w.Headers,
			ProducerID:    p.ProducerID,
			ProducerEpoch: p.ProducerEpoch,
			Sequence:      recordbatch.NextSequence(p.BaseSequence, int32(i)),
		}
		if want.Headers == nil {
			want.Headers = []kmsg.Header{}
		}
		if r.Headers == nil {
			r.Headers = []kmsg.Header{}
		}
		if !reflect.DeepEqual(r, want) {
			t.Fatalf("record %d:\n%+v\nwant\n%+v", i, r, want)
		}
	}
}

// batchTestRecords returns n random records: keys and values nil, empty or
// random, zero to three headers, timestamp deltas around zero.
func batchTestRecords(rng *rand.Rand, n int) []recordbatch.Record {
	blob := func(max int) []byte {
		switch rng.IntN(8) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, rng.IntN(max))
		for i := range b {
			b[i] = "abcdefgh0123"[rng.IntN(12)] // compressible
		}
		return b
	}
	recs := make([]recordbatch.Record, n)
	for i := range recs {
		r := recordbatch.Record{Key: blob(40), Value: blob(600), TimestampDelta: rng.Int64N(2000) - 100}
		for j := range rng.IntN(4) {
			r.Headers = append(r.Headers, kmsg.Header{Key: fmt.Sprintf("h%d", j), Value: blob(30)})
		}
		if rng.IntN(50) == 0 {
			r.TimestampDelta = math.MaxInt64 / 4 // a long varlong
		}
		recs[i] = r
	}
	return recs
}

// TestBatchRoundTripKmsg encodes random batches and reads them back with
// kmsg and franz-go's decompressor, independently of DecodeBatch, then with
// DecodeBatch.
func TestBatchRoundTripKmsg(t *testing.T) {
	rng := testRand(t)
	kdec := kgo.DefaultDecompressor()
	for iter := range 200 {
		p := recordbatch.Params{
			ProducerID:    rng.Int64N(1 << 40),
			ProducerEpoch: int16(rng.IntN(math.MaxInt16)),
			BaseSequence:  math.MaxInt32 - rng.Int32N(1<<20), // sometimes wraps
			Codec:         allCodecs[iter%len(allCodecs)],
			BaseTimestamp: time.Now().UnixMilli() - rng.Int64N(1e9),
		}
		recs := batchTestRecords(rng, 1+rng.IntN(60))
		b := recordbatch.NewBuilder(p)
		for _, r := range recs {
			b.Append(r)
		}
		raw, err := b.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}

		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(raw); err != nil {
			t.Fatalf("kmsg read: %v", err)
		}
		if int(rb.Length) != len(raw)-12 {
			t.Fatalf("length %d, batch is %d bytes", rb.Length, len(raw))
		}
		if crc := int32(crc32.Checksum(raw[21:], batchTestCRC)); crc != rb.CRC {
			t.Fatalf("CRC %#x, computed %#x", rb.CRC, crc)
		}
		maxDelta := recs[0].TimestampDelta
		for _, r := range recs {
			maxDelta = max(maxDelta, r.TimestampDelta)
		}
		wantHdr := kmsg.RecordBatch{
			FirstOffset: 0, Length: rb.Length, PartitionLeaderEpoch: -1, Magic: 2, CRC: rb.CRC,
			Attributes: int16(p.Codec), LastOffsetDelta: int32(len(recs) - 1),
			FirstTimestamp: p.BaseTimestamp, MaxTimestamp: p.BaseTimestamp + maxDelta,
			ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch, FirstSequence: p.BaseSequence,
			NumRecords: int32(len(recs)), Records: rb.Records,
		}
		if !reflect.DeepEqual(rb, wantHdr) {
			t.Fatalf("header %+v\nwant %+v", rb, wantHdr)
		}
		section, err := kdec.Decompress(rb.Records, kgo.CompressionCodecType(p.Codec))
		if err != nil {
			t.Fatalf("kgo decompress %v: %v", p.Codec, err)
		}
		for i, w := range recs {
			length, n := binary.Varint(section)
			var kr kmsg.Record
			if err := kr.ReadFrom(section[:n+int(length)]); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			section = section[n+int(length):]
			if kr.OffsetDelta != int32(i) || kr.TimestampDelta64 != w.TimestampDelta || kr.Attributes != 0 ||
				!batchTestSameBytes(kr.Key, w.Key) || !batchTestSameBytes(kr.Value, w.Value) || len(kr.Headers) != len(w.Headers) {
				t.Fatalf("record %d: %+v\nwant %+v", i, kr, w)
			}
			for j, h := range kr.Headers {
				if h.Key != w.Headers[j].Key || !batchTestSameBytes(h.Value, w.Headers[j].Value) {
					t.Fatalf("record %d header %d: %+v, want %+v", i, j, h, w.Headers[j])
				}
			}
		}
		if len(section) != 0 {
			t.Fatalf("%d bytes after the records", len(section))
		}

		dec, err := recordbatch.DecodeBatch(raw)
		if err != nil {
			t.Fatal(err)
		}
		batchTestCheckDecoded(t, dec, p, recs, 0)
	}
}

// batchTestSameBytes is bytes.Equal that also tells nil from empty.
func batchTestSameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// TestBatchSize checks that Size and SizeWith predict the encoded size and
// that TryAppend keeps to its limit.
func TestBatchSize(t *testing.T) {
	rng := testRand(t)
	recs := batchTestRecords(rng, 300)
	b := recordbatch.NewBuilder(recordbatch.Params{ProducerID: 1, BaseTimestamp: 1})
	if b.Size() != recordbatch.HeaderSize {
		t.Fatalf("empty Size() = %d", b.Size())
	}
	if _, err := b.AppendTo(nil); err == nil {
		t.Fatal("AppendTo of an empty batch succeeded")
	}
	var prev []byte
	for i, r := range recs {
		want := b.SizeWith(r)
		if got := b.Append(r); got != want || b.Size() != want {
			t.Fatalf("record %d: Append returned %d, Size %d, SizeWith said %d", i, got, b.Size(), want)
		}
		raw, err := b.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) != want {
			t.Fatalf("record %d: batch is %d bytes, Size said %d", i, len(raw), want)
		}
		// Appending leaves the earlier records' bytes alone.
		if prev != nil && !bytes.Equal(raw[recordbatch.HeaderSize:len(prev)], prev[recordbatch.HeaderSize:]) {
			t.Fatalf("record %d: earlier records changed", i)
		}
		prev = raw
		if b.NumRecords() != i+1 {
			t.Fatalf("NumRecords() = %d, want %d", b.NumRecords(), i+1)
		}
	}

	const limit = 16 << 10
	b.Reset(recordbatch.Params{ProducerID: 1})
	big := recordbatch.Record{Value: make([]byte, 2*limit)}
	if !b.TryAppend(big, limit) {
		t.Fatal("TryAppend refused a first record")
	}
	if b.TryAppend(recordbatch.Record{}, limit) {
		t.Fatal("TryAppend took a record past the limit")
	}
	b.Reset(recordbatch.Params{ProducerID: 1})
	for _, r := range recs {
		before := b.Size()
		if !b.TryAppend(r, limit) {
			if b.SizeWith(r) <= limit {
				t.Fatalf("TryAppend refused a record that fits: %d", b.SizeWith(r))
			}
			if b.Size() != before {
				t.Fatal("a refused TryAppend changed the batch")
			}
			break
		}
		if b.Size() > limit {
			t.Fatalf("Size %d past the limit", b.Size())
		}
	}
}

func TestBatchAppendAllocations(t *testing.T) {
	r := recordbatch.Record{
		Key:     []byte("key"),
		Value:   bytes.Repeat([]byte("v"), 100),
		Headers: []kmsg.Header{{Key: "kcheck-id", Value: []byte("0123456789")}},
	}
	b := recordbatch.NewBuilder(recordbatch.Params{})
	for range 1000 {
		b.Append(r) // grow the buffer
	}
	allocs := testing.AllocsPerRun(100, func() {
		b.Reset(recordbatch.Params{})
		for range 1000 {
			b.Append(r)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per 1000 appends into a reset builder, want 0", allocs)
	}
}

func TestSetBatchProducer(t *testing.T) {
	p, recs := javaFixture()
	for _, c := range allCodecs {
		p.Codec = c
		b := recordbatch.NewBuilder(p)
		for _, r := range recs {
			b.Append(r)
		}
		raw, err := b.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := recordbatch.SetProducer(raw, 99, 3, 12345); err != nil {
			t.Fatal(err)
		}
		b.SetProducer(99, 3, 12345)
		rebuilt, err := b.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(raw, rebuilt) {
			t.Fatalf("%v: rewritten batch differs from one built with the new producer", c)
		}
		if got := b.Params(); got.ProducerID != 99 || got.ProducerEpoch != 3 || got.BaseSequence != 12345 {
			t.Fatalf("Params() = %+v", got)
		}
		dec, err := recordbatch.DecodeBatch(raw)
		if err != nil {
			t.Fatal(err)
		}
		if dec.ProducerID != 99 || dec.ProducerEpoch != 3 || dec.Records[4].Sequence != 12349 {
			t.Fatalf("%v: decoded %+v", c, dec)
		}
	}
	if err := recordbatch.SetProducer(make([]byte, 20), 1, 1, 1); err == nil {
		t.Error("SetProducer of a short slice succeeded")
	}
}

func TestNextSequence(t *testing.T) {
	for _, c := range []struct{ seq, n, want int32 }{
		{0, 0, 0},
		{0, 5, 5},
		{100, 1, 101},
		{math.MaxInt32 - 5, 5, math.MaxInt32},
		{math.MaxInt32, 1, 0},
		{math.MaxInt32 - 2, 5, 2},
		{math.MaxInt32, math.MaxInt32, math.MaxInt32 - 1},
	} {
		if got := recordbatch.NextSequence(c.seq, c.n); got != c.want {
			t.Errorf("NextSequence(%d, %d) = %d, want %d", c.seq, c.n, got, c.want)
		}
	}
}

func TestDecodePartialAndCorrupt(t *testing.T) {
	rng := testRand(t)
	var all []byte
	var params []recordbatch.Params
	var recs [][]recordbatch.Record
	for i := range 4 {
		p := recordbatch.Params{ProducerID: 7, BaseSequence: int32(10 * i), Codec: allCodecs[i+1], BaseTimestamp: 5}
		rs := batchTestRecords(rng, 10)
		b := recordbatch.NewBuilder(p)
		for _, r := range rs {
			b.Append(r)
		}
		start := len(all)
		var err error
		if all, err = b.AppendTo(all); err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint64(all[start:], uint64(10*i)) // as a broker assigns offsets
		params, recs = append(params, p), append(recs, rs)
	}
	for cut := batchTestOffsetOf(t, all, 3); cut < len(all); cut += 7 {
		batches, err := recordbatch.Decode(all[:cut])
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if len(batches) != 3 {
			t.Fatalf("cut at %d: %d batches, want 3", cut, len(batches))
		}
	}
	batches, err := recordbatch.Decode(all)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range batches {
		batchTestCheckDecoded(t, b, params[i], recs[i], int64(10*i))
	}

	corrupt := bytes.Clone(all)
	corrupt[len(corrupt)-1] ^= 1
	if _, err := recordbatch.Decode(corrupt); err == nil {
		t.Error("decoding a batch with a flipped bit succeeded")
	}
	wrongLen := bytes.Clone(all[:batchTestOffsetOf(t, all, 1)])
	binary.BigEndian.PutUint32(wrongLen[8:], 20)
	if _, err := recordbatch.Decode(wrongLen); err == nil {
		t.Error("decoding a batch with a too short length succeeded")
	}
}

// batchTestOffsetOf returns where the i'th batch of data starts.
func batchTestOffsetOf(t *testing.T, data []byte, i int) int {
	t.Helper()
	at := 0
	for range i {
		at += 12 + int(binary.BigEndian.Uint32(data[at+8:]))
	}
	return at
}

// kgoGoldenHeaders returns the kgo headers for producer headers.
func kgoGoldenHeaders(hs []kmsg.Header) []kgo.RecordHeader {
	var out []kgo.RecordHeader
	for _, h := range hs {
		out = append(out, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return out
}

// TestBatchMatchesKgo captures the batch franz-go's producer sends for the
// fixture's records and checks that the builder writes the same bytes.
func TestBatchMatchesKgo(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "g"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var (
		mu      sync.Mutex
		batches [][]byte
	)
	c.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		for _, tp := range kr.(*kmsg.ProduceRequest).Topics {
			for _, p := range tp.Partitions {
				batches = append(batches, bytes.Clone(p.Records))
			}
		}
		return nil, nil, false
	})
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(c.ListenAddrs()...),
		kgo.DefaultProduceTopic("g"),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ManualFlushing(),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	p, recs := javaFixture()
	var wg sync.WaitGroup
	for _, r := range recs {
		wg.Add(1)
		kr := &kgo.Record{
			Key: r.Key, Value: r.Value, Headers: kgoGoldenHeaders(r.Headers),
			Timestamp: time.UnixMilli(p.BaseTimestamp + r.TimestampDelta),
		}
		cl.Produce(ctx, kr, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("kgo produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(batches) != 1 {
		t.Fatalf("kgo sent %d batches, want 1", len(batches))
	}
	kb := batches[0]
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(kb); err != nil {
		t.Fatal(err)
	}
	p.ProducerID, p.ProducerEpoch, p.BaseSequence = rb.ProducerID, rb.ProducerEpoch, 0
	b := recordbatch.NewBuilder(p)
	for _, r := range recs {
		b.Append(r)
	}
	ours, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, kb) {
		t.Fatalf("batch\n% x\nkgo\n% x", ours, kb)
	}
}

// kfakeConn drives a kfake broker with raw kmsg requests over a wire.Conn,
// at the versions it negotiates (Produce and Fetch name topics, v12).
type kfakeConn struct{ c *wire.Conn }

func kfakeDial(t *testing.T, addr string) *kfakeConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := wire.Dial(ctx, addr, "kcheck-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &kfakeConn{c: c}
}

// do sends req and reads its response.
func (c *kfakeConn) do(t *testing.T, req kmsg.Request) kmsg.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.c.Request(ctx, req)
	if err != nil {
		t.Fatalf("%T: %v", req, err)
	}
	return resp
}

// TestProduceFetchKfake produces a batch of each codec to a kfake broker
// with raw kmsg requests and reads the records back with franz-go's
// consumer and with Decode.
func TestProduceFetchKfake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn := kfakeDial(t, c.ListenAddrs()[0])
	rng := testRand(t)

	initReq := kmsg.NewPtrInitProducerIDRequest()
	initReq.TransactionTimeoutMillis = 60000
	initResp := conn.do(t, initReq).(*kmsg.InitProducerIDResponse)
	if initResp.ErrorCode != 0 || initResp.ProducerID < 0 {
		t.Fatalf("InitProducerID: error %d, producer ID %d", initResp.ErrorCode, initResp.ProducerID)
	}

	type sent struct {
		params recordbatch.Params
		recs   []recordbatch.Record
		raw    []byte
		offset int64
	}
	produce := func(raw []byte) *kmsg.ProduceResponseTopicPartition {
		req := kmsg.NewPtrProduceRequest()
		req.Acks = -1
		req.TimeoutMillis = 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = 0
		rp.Records = raw
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := conn.do(t, req).(*kmsg.ProduceResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("produce response %+v", resp)
		}
		return &resp.Topics[0].Partitions[0]
	}

	var (
		batches []sent
		seq     int32
		offset  int64
		base    = time.Now().UnixMilli()
	)
	for _, codec := range allCodecs {
		p := recordbatch.Params{
			ProducerID:    initResp.ProducerID,
			ProducerEpoch: initResp.ProducerEpoch,
			BaseSequence:  seq,
			Codec:         codec,
			BaseTimestamp: base,
		}
		recs := batchTestRecords(rng, 20+rng.IntN(30))
		for i := range recs {
			recs[i].Headers = append([]kmsg.Header{{Key: "kcheck-id", Value: []byte(fmt.Sprintf("%v-%d", codec, i))}}, recs[i].Headers...)
			recs[i].TimestampDelta = int64(i) * 3 % 17
		}
		b := recordbatch.NewBuilder(p)
		for _, r := range recs {
			b.Append(r)
		}
		raw, err := b.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		pr := produce(raw)
		if pr.ErrorCode != 0 || pr.BaseOffset != offset {
			t.Fatalf("produce %v: error %d, base offset %d, want 0 and %d", codec, pr.ErrorCode, pr.BaseOffset, offset)
		}
		batches = append(batches, sent{p, recs, raw, offset})
		seq = recordbatch.NextSequence(seq, int32(len(recs)))
		offset += int64(len(recs))
	}
	// An idempotent retry of the last batch is acknowledged with its
	// original offset and not written again.
	last := batches[len(batches)-1]
	if pr := produce(last.raw); pr.ErrorCode != 0 || pr.BaseOffset != last.offset {
		t.Fatalf("duplicate produce: error %d, base offset %d, want 0 and %d", pr.ErrorCode, pr.BaseOffset, last.offset)
	}

	// Read back with franz-go's consumer.
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(c.ListenAddrs()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"t": {0: kgo.NewOffset().At(0)}}),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []*kgo.Record
	for int64(len(got)) < offset {
		fs := cl.PollFetches(ctx)
		for _, e := range fs.Errors() {
			t.Fatalf("fetch %s/%d: %v", e.Topic, e.Partition, e.Err)
		}
		got = append(got, fs.Records()...)
	}
	if int64(len(got)) != offset {
		t.Fatalf("consumed %d records, want %d", len(got), offset)
	}
	i := 0
	for _, s := range batches {
		for j, w := range s.recs {
			r := got[i]
			i++
			hs := kgoGoldenHeaders(w.Headers)
			if r.Offset != s.offset+int64(j) || !batchTestSameBytes(r.Key, w.Key) || !batchTestSameBytes(r.Value, w.Value) ||
				!reflect.DeepEqual(r.Headers, hs) || r.Timestamp.UnixMilli() != s.params.BaseTimestamp+w.TimestampDelta ||
				r.ProducerID != s.params.ProducerID || r.ProducerEpoch != s.params.ProducerEpoch ||
				r.Attrs.CompressionType() != uint8(s.params.Codec) {
				t.Fatalf("%v record %d: got offset %d key %q value %q headers %v ts %v pid %d epoch %d codec %d\nwant %+v",
					s.params.Codec, j, r.Offset, r.Key, r.Value, r.Headers, r.Timestamp, r.ProducerID, r.ProducerEpoch, r.Attrs.CompressionType(), w)
			}
		}
	}

	// Read back with a raw fetch and Decode.
	freq := kmsg.NewPtrFetchRequest()
	freq.MinBytes = 1
	freq.MaxWaitMillis = 1000
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition = 0
	fp.PartitionMaxBytes = 10 << 20
	ft.Partitions = append(ft.Partitions, fp)
	freq.Topics = append(freq.Topics, ft)
	fresp := conn.do(t, freq).(*kmsg.FetchResponse)
	if fresp.ErrorCode != 0 || len(fresp.Topics) != 1 || len(fresp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch response %+v", fresp)
	}
	part := fresp.Topics[0].Partitions[0]
	if part.ErrorCode != 0 || part.HighWatermark != offset {
		t.Fatalf("fetch: error %d, high watermark %d, want %d", part.ErrorCode, part.HighWatermark, offset)
	}
	decoded, err := recordbatch.Decode(part.RecordBatches)
	if err != nil {
		t.Fatal(err)
	}
	if len(decoded) != len(batches) {
		t.Fatalf("fetched %d batches, want %d", len(decoded), len(batches))
	}
	for k, d := range decoded {
		if d.Codec() != batches[k].params.Codec || d.BaseSequence != batches[k].params.BaseSequence {
			t.Fatalf("batch %d: codec %v base sequence %d", k, d.Codec(), d.BaseSequence)
		}
		batchTestCheckDecoded(t, d, batches[k].params, batches[k].recs, batches[k].offset)
	}
}

func BenchmarkBatchAppend(b *testing.B) {
	r := recordbatch.Record{
		Key:     []byte("key-0123"),
		Value:   bytes.Repeat([]byte("v"), 200),
		Headers: []kmsg.Header{{Key: "kcheck-id", Value: []byte("p0-000000123456")}},
	}
	bb := recordbatch.NewBuilder(recordbatch.Params{})
	b.ReportAllocs()
	for b.Loop() {
		if !bb.TryAppend(r, 1<<20) {
			bb.Reset(recordbatch.Params{})
		}
	}
}

func BenchmarkBatchAppendTo(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := batchTestRecords(rng, 200)
	for _, c := range allCodecs {
		b.Run(c.String(), func(b *testing.B) {
			bb := recordbatch.NewBuilder(recordbatch.Params{Codec: c})
			for _, r := range recs {
				bb.Append(r)
			}
			dst := make([]byte, 0, 2*bb.Size())
			b.SetBytes(int64(bb.Size()))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bb.AppendTo(dst[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Finish hands out an uncompressed batch in the builder's own array, with the
// same bytes AppendTo makes; compressed or grown batches are encoded anew.
func TestFinishInPlace(t *testing.T) {
	for _, codec := range []recordbatch.Codec{recordbatch.CodecNone, recordbatch.CodecGzip} {
		for _, capacity := range []int{recordbatch.HeaderSize + 4096, recordbatch.HeaderSize + 8} {
			p := recordbatch.Params{ProducerID: 7, ProducerEpoch: 1, BaseSequence: 3, Codec: codec, BaseTimestamp: 1000}
			b := recordbatch.NewBuilder(p)
			buf := make([]byte, 0, capacity)
			b.Start(buf)
			want := recordbatch.NewBuilder(p)
			for i := 0; i < 20; i++ {
				r := recordbatch.Record{Key: []byte("k"), Value: []byte(fmt.Sprintf("value-%d", i)), TimestampDelta: int64(i)}
				b.Append(r)
				want.Append(r)
			}
			wantBytes, err := want.AppendTo(nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.Finish()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, wantBytes) {
				t.Fatalf("%v cap %d: Finish differs from AppendTo", codec, capacity)
			}
			inPlace := &got[0] == &buf[:1][0]
			if wantInPlace := codec == recordbatch.CodecNone && capacity > 1000; inPlace != wantInPlace {
				t.Fatalf("%v cap %d: in place %v, want %v", codec, capacity, inPlace, wantInPlace)
			}
		}
	}
}
