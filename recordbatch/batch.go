package recordbatch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// HeaderSize is the size of a v2 record batch's fixed fields, from
// BaseOffset through NumRecords; the records section follows them.
const HeaderSize = 61

// Offsets of the fields of a v2 record batch.
const (
	offLength     = 8
	offCRC        = 17
	offAttributes = 21 // the CRC covers everything from here on
	offProducerID = 43
	offEpoch      = 51
	offSequence   = 53
)

// Record batch attribute bits besides the codec.
const (
	attrCodecMask     = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Seal sets the length and CRC-32C of batch, a complete v2 record batch
// whose other fields are written.
func Seal(batch []byte) {
	binary.BigEndian.PutUint32(batch[offLength:], uint32(len(batch)-12))
	binary.BigEndian.PutUint32(batch[offCRC:], crc32.Checksum(batch[offAttributes:], castagnoli))
}

// Record is one record to encode into a batch. A nil Key or Value is
// encoded as null, an empty non-nil one as empty.
type Record struct {
	Key, Value []byte
	Headers    []kmsg.Header
	// TimestampDelta is the record's timestamp in milliseconds relative
	// to the batch's BaseTimestamp.
	TimestampDelta int64
}

// Params are the batch-wide fields a producer chooses for a batch.
type Params struct {
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32 // the first record's sequence number
	Codec         Codec
	BaseTimestamp int64 // FirstTimestamp, in milliseconds since the Unix epoch
}

// Builder builds one v2 record batch (magic 2) for a produce request,
// a record at a time. Appending encodes just the new record; compression
// and the header happen in AppendTo. The zero value is not usable: start
// with NewBuilder or Reset.
type Builder struct {
	params     Params
	records    []byte // the uncompressed records section
	head       []byte // with Start: the header's bytes, right before records in one array
	n          int32  // number of records
	maxTsDelta int64
}

// NewBuilder returns an empty builder for a batch with parameters p.
func NewBuilder(p Params) *Builder {
	b := new(Builder)
	b.Reset(p)
	return b
}

// Reset empties b, keeping its buffer, to build a batch with parameters p.
func (b *Builder) Reset(p Params) {
	*b = Builder{params: p, records: b.records[:0]}
}

// Params returns the parameters b builds its batch with.
func (b *Builder) Params() Params { return b.params }

// Start makes the builder append its records into buf after room for the
// header, so that Finish can hand out an uncompressed batch without copying
// it. buf's contents are overwritten.
func (b *Builder) Start(buf []byte) {
	if cap(buf) < HeaderSize {
		buf = make([]byte, 0, 4096)
	}
	b.head = buf[:HeaderSize]
	b.records = buf[HeaderSize:HeaderSize]
}

// Finish returns the finished batch. For an uncompressed batch whose records
// are still where Start put them it writes the header in place and returns
// that array (no copy); otherwise it is AppendTo into a new slice. The builder
// must not be used after Finish.
func (b *Builder) Finish() ([]byte, error) {
	if b.params.Codec != CodecNone || b.head == nil || len(b.records) == 0 || &b.head[:cap(b.head)][HeaderSize] != &b.records[0] {
		return b.AppendTo(nil)
	}
	batch := b.head[:HeaderSize+len(b.records)]
	hdr := b.header()
	if got := len(hdr.AppendTo(batch[:0])); got != HeaderSize {
		return nil, fmt.Errorf("encode record batch: header of %d bytes", got)
	}
	if len(batch)-12 > math.MaxInt32 {
		return nil, fmt.Errorf("encode record batch: %d bytes is too large", len(batch))
	}
	binary.BigEndian.PutUint32(batch[offLength:], uint32(len(batch)-12))
	binary.BigEndian.PutUint32(batch[offCRC:], crc32.Checksum(batch[offAttributes:], castagnoli))
	return batch, nil
}

// header returns the batch's fixed fields.
func (b *Builder) header() kmsg.RecordBatch {
	return kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           int16(b.params.Codec),
		LastOffsetDelta:      b.n - 1,
		FirstTimestamp:       b.params.BaseTimestamp,
		MaxTimestamp:         b.params.BaseTimestamp + b.maxTsDelta,
		ProducerID:           b.params.ProducerID,
		ProducerEpoch:        b.params.ProducerEpoch,
		FirstSequence:        b.params.BaseSequence,
		NumRecords:           b.n,
	}
}

// SetProducer changes the producer ID, epoch and base sequence that the
// next AppendTo writes, as after a producer epoch bump.
func (b *Builder) SetProducer(id int64, epoch int16, baseSequence int32) {
	b.params.ProducerID, b.params.ProducerEpoch, b.params.BaseSequence = id, epoch, baseSequence
}

// NumRecords returns the number of records appended so far.
func (b *Builder) NumRecords() int { return int(b.n) }

// Size returns the encoded size of the batch so far without compression:
// the header plus every appended record. A compressed batch is usually
// smaller, but can exceed Size by the codec's framing on data that does not
// compress.
func (b *Builder) Size() int { return HeaderSize + len(b.records) }

// SizeWith returns what Size would be after appending r.
func (b *Builder) SizeWith(r Record) int {
	body := recordBodySize(&r, b.n)
	return b.Size() + VarintLen(int64(body)) + body
}

// Append encodes r as the next record of the batch and returns the new
// Size.
func (b *Builder) Append(r Record) int {
	if b.n == 0 || r.TimestampDelta > b.maxTsDelta {
		b.maxTsDelta = r.TimestampDelta
	}
	kr := kmsg.Record{
		Length:           int32(recordBodySize(&r, b.n)),
		TimestampDelta64: r.TimestampDelta,
		OffsetDelta:      b.n,
		Key:              r.Key,
		Value:            r.Value,
		Headers:          r.Headers,
	}
	b.records = kr.AppendTo(b.records)
	b.n++
	return b.Size()
}

// TryAppend appends r unless that would take Size past limit, and reports
// whether it appended. Like the Java producer's batch.size, the limit does
// not apply to a batch's first record, which is always appended.
func (b *Builder) TryAppend(r Record, limit int) bool {
	if b.n > 0 && b.SizeWith(r) > limit {
		return false
	}
	b.Append(r)
	return true
}

// AppendTo appends the finished batch to dst, compressing its records with
// the batch's codec, and returns the extended slice. The builder is left as
// it was, so AppendTo may be called again, for example after SetProducer.
func (b *Builder) AppendTo(dst []byte) ([]byte, error) {
	if b.n == 0 {
		return dst, errors.New("encode record batch: no records")
	}
	if !b.params.Codec.Valid() {
		return dst, fmt.Errorf("encode record batch: unknown compression codec %v", b.params.Codec)
	}
	start := len(dst)
	hdr := b.header()
	dst = hdr.AppendTo(dst)
	dst, err := b.params.Codec.Compress(dst, b.records)
	if err != nil {
		return dst[:start], fmt.Errorf("encode record batch: %w", err)
	}
	batch := dst[start:]
	if len(batch)-12 > math.MaxInt32 {
		return dst[:start], fmt.Errorf("encode record batch: %d bytes is too large", len(batch))
	}
	binary.BigEndian.PutUint32(batch[offLength:], uint32(len(batch)-12))
	binary.BigEndian.PutUint32(batch[offCRC:], crc32.Checksum(batch[offAttributes:], castagnoli))
	return dst, nil
}

// SetProducer rewrites the producer ID, epoch and base sequence of the
// encoded v2 batch in place and updates its CRC, without decompressing it.
func SetProducer(batch []byte, id int64, epoch int16, baseSequence int32) error {
	if len(batch) < HeaderSize || batch[16] != 2 {
		return errors.New("set batch producer: not a v2 record batch")
	}
	binary.BigEndian.PutUint64(batch[offProducerID:], uint64(id))
	binary.BigEndian.PutUint16(batch[offEpoch:], uint16(epoch))
	binary.BigEndian.PutUint32(batch[offSequence:], uint32(baseSequence))
	binary.BigEndian.PutUint32(batch[offCRC:], crc32.Checksum(batch[offAttributes:], castagnoli))
	return nil
}

// NextSequence returns the sequence number n records after seq, wrapping
// from math.MaxInt32 to 0 as Kafka's DefaultRecordBatch.incrementSequence
// does.
func NextSequence(seq, n int32) int32 {
	if seq > math.MaxInt32-n {
		return n - (math.MaxInt32 - seq) - 1
	}
	return seq + n
}

// recordBodySize returns the encoded size of r at offsetDelta, excluding
// the varint length that precedes every record.
func recordBodySize(r *Record, offsetDelta int32) int {
	n := 1 + // attributes
		VarintLen(r.TimestampDelta) +
		VarintLen(int64(offsetDelta)) +
		BytesLen(r.Key) +
		BytesLen(r.Value) +
		VarintLen(int64(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		n += VarintLen(int64(len(h.Key))) + len(h.Key) + BytesLen(h.Value)
	}
	return n
}

// BytesLen returns the encoded size of a varint length prefixed byte slice,
// where nil is encoded as length -1.
func BytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return VarintLen(int64(len(b))) + len(b)
}

// VarintLen returns the size of v as a zigzag varint, which is how Kafka
// encodes both its varints and varlongs.
func VarintLen(v int64) int {
	u := uint64(v)<<1 ^ uint64(v>>63)
	return (bits.Len64(u|1) + 6) / 7
}

// Batch is a record batch read back from a fetch response.
type Batch struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	Records              []DecodedRecord
}

// Codec returns the codec the batch's records were compressed with.
func (b *Batch) Codec() Codec { return Codec(b.Attributes & attrCodecMask) }

// Transactional reports whether the batch belongs to a transaction.
func (b *Batch) Transactional() bool { return b.Attributes&attrTransactional != 0 }

// Control reports whether the batch holds control records (transaction
// markers) rather than data.
func (b *Batch) Control() bool { return b.Attributes&attrControl != 0 }

// DecodedRecord is one record of a Batch, with the batch-wide fields
// that apply to it.
type DecodedRecord struct {
	Offset        int64
	Timestamp     int64 // milliseconds since the Unix epoch
	Key, Value    []byte
	Headers       []kmsg.Header
	ProducerID    int64
	ProducerEpoch int16
	Sequence      int32 // the batch's base sequence plus the offset delta, or -1 without one
}

// Decode decodes the v2 record batches that a fetch response holds
// for one partition. Like Kafka clients, it ignores a partial batch at the
// end, which brokers may send when a fetch hits its size limit. Keys,
// values and header values may alias data.
func Decode(data []byte) ([]Batch, error) {
	var batches []Batch
	for at := 0; len(data) >= 12; {
		length := int32(binary.BigEndian.Uint32(data[offLength:]))
		if length < HeaderSize-12 {
			return batches, fmt.Errorf("decode record batch at byte %d: length %d is too short", at, length)
		}
		size := 12 + int(length)
		if size > len(data) {
			break // a partial batch: the rest comes with the next fetch
		}
		b, err := DecodeBatch(data[:size])
		if err != nil {
			return batches, err
		}
		batches = append(batches, b)
		data = data[size:]
		at += size
	}
	return batches, nil
}

// DecodeBatch decodes one complete v2 record batch, verifying its length
// and CRC and decompressing its records. Keys, values and header values may
// alias raw.
func DecodeBatch(raw []byte) (Batch, error) {
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(raw); err != nil {
		return Batch{}, fmt.Errorf("decode record batch: %w", err)
	}
	if rb.Magic != 2 {
		return Batch{}, fmt.Errorf("decode record batch at offset %d: magic %d, want 2", rb.FirstOffset, rb.Magic)
	}
	if int(rb.Length) != len(raw)-12 {
		return Batch{}, fmt.Errorf("decode record batch at offset %d: length %d, but %d bytes follow it", rb.FirstOffset, rb.Length, len(raw)-12)
	}
	if crc := int32(crc32.Checksum(raw[offAttributes:], castagnoli)); crc != rb.CRC {
		return Batch{}, fmt.Errorf("decode record batch at offset %d: CRC %#x, computed %#x", rb.FirstOffset, uint32(rb.CRC), uint32(crc))
	}
	b := Batch{
		BaseOffset:           rb.FirstOffset,
		PartitionLeaderEpoch: rb.PartitionLeaderEpoch,
		Attributes:           rb.Attributes,
		LastOffsetDelta:      rb.LastOffsetDelta,
		FirstTimestamp:       rb.FirstTimestamp,
		MaxTimestamp:         rb.MaxTimestamp,
		ProducerID:           rb.ProducerID,
		ProducerEpoch:        rb.ProducerEpoch,
		BaseSequence:         rb.FirstSequence,
	}
	records := rb.Records
	if c := b.Codec(); c != CodecNone {
		var err error
		if records, err = c.Decompress(nil, records); err != nil {
			return Batch{}, fmt.Errorf("decode record batch at offset %d: %w", rb.FirstOffset, err)
		}
	}
	if rb.NumRecords < 0 {
		return Batch{}, fmt.Errorf("decode record batch at offset %d: %d records", rb.FirstOffset, rb.NumRecords)
	}
	b.Records = make([]DecodedRecord, 0, min(int(rb.NumRecords), len(records)))
	for i := range rb.NumRecords {
		r, n, err := decodeRecord(records)
		if err != nil {
			return Batch{}, fmt.Errorf("decode record batch at offset %d: record %d: %w", rb.FirstOffset, i, err)
		}
		records = records[n:]
		dr := DecodedRecord{
			Offset:        rb.FirstOffset + int64(r.OffsetDelta),
			Timestamp:     rb.FirstTimestamp + r.TimestampDelta64,
			Key:           r.Key,
			Value:         r.Value,
			Headers:       r.Headers,
			ProducerID:    rb.ProducerID,
			ProducerEpoch: rb.ProducerEpoch,
			Sequence:      -1,
		}
		if b.Attributes&attrLogAppendTime != 0 {
			dr.Timestamp = rb.MaxTimestamp
		}
		if rb.FirstSequence >= 0 {
			dr.Sequence = NextSequence(rb.FirstSequence, r.OffsetDelta)
		}
		b.Records = append(b.Records, dr)
	}
	if len(records) != 0 {
		return Batch{}, fmt.Errorf("decode record batch at offset %d: %d bytes after %d records", rb.FirstOffset, len(records), rb.NumRecords)
	}
	return b, nil
}

// decodeRecord decodes the record at the start of src and returns it with
// the number of bytes it took.
func decodeRecord(src []byte) (kmsg.Record, int, error) {
	length, n := binary.Varint(src)
	if n <= 0 || length < 0 || length > math.MaxInt32 {
		return kmsg.Record{}, 0, errors.New("bad length")
	}
	size := n + int(length)
	if size > len(src) {
		return kmsg.Record{}, 0, fmt.Errorf("length %d, but %d bytes remain", length, len(src)-n)
	}
	var r kmsg.Record
	if err := r.ReadFrom(src[:size]); err != nil {
		return kmsg.Record{}, 0, err
	}
	// ReadFrom does not check that the fields fill the length exactly.
	rr := Record{Key: r.Key, Value: r.Value, Headers: r.Headers, TimestampDelta: r.TimestampDelta64}
	if got := recordBodySize(&rr, r.OffsetDelta); got != int(length) {
		return kmsg.Record{}, 0, fmt.Errorf("length %d, but its fields take %d bytes", length, got)
	}
	return r, size, nil
}
