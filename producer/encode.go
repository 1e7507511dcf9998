package producer

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Records are encoded when their batch is written to a connection, straight
// into the connection's write buffer (as franz-go does), not when they are
// produced: Produce only sizes them. The bytes of a batch are then written
// once, next to the CRC that reads them and the write that sends them, while
// they are in cache. A retry encodes the batch again with its (possibly
// renumbered) sequence. A compressed batch is compressed once, when it gets
// its sequence, and keeps its compressed records for its retries.

// idHeaderKey is a kcheck-id header's key as encoded: its length varint
// (one byte: the key is short) and the key.
const idHeaderKey = string(rune(2*len(recordbatch.IDHeader))) + recordbatch.IDHeader

// decimalLen is the number of decimal digits of id, a kcheck id (from 1);
// the sign's place for a negative one, which no record has.
func decimalLen(id int64) int {
	if id < 0 {
		return len(strconv.FormatInt(id, 10))
	}
	n := 1
	for p := int64(10); n < 19 && id >= p; p *= 10 {
		n++
	}
	return n
}

// idHeaderSize is the encoded size of a record's kcheck-id header for id.
func idHeaderSize(id int64) int {
	digits := decimalLen(id)
	return len(idHeaderKey) + recordbatch.VarintLen(int64(digits)) + digits
}

// appendIDHeader appends the kcheck-id header for id: the key, then the
// id's decimal digits as the value, formatted in place.
func appendIDHeader(dst []byte, id int64) []byte {
	dst = append(dst, idHeaderKey...)
	dst = binary.AppendVarint(dst, int64(decimalLen(id)))
	return strconv.AppendInt(dst, id, 10)
}

// messageBodySize is the encoded size of m as the record at offsetDelta
// with timestamp delta tsDelta, excluding the record's length varint, with
// the kcheck-id header for id when traced. It is recordBodySize without
// building the record.
func messageBodySize(m *Message, tsDelta int64, offsetDelta int32, traced bool, id int64) int {
	nh := len(m.Headers)
	n := 1 + recordbatch.VarintLen(tsDelta) + recordbatch.VarintLen(int64(offsetDelta)) + recordbatch.BytesLen(m.Key) + recordbatch.BytesLen(m.Value)
	for i := range m.Headers {
		h := &m.Headers[i]
		n += recordbatch.VarintLen(int64(len(h.Key))) + len(h.Key) + recordbatch.BytesLen(h.Value)
	}
	if traced {
		nh++
		n += idHeaderSize(id)
	}
	return n + recordbatch.VarintLen(int64(nh))
}

// encoder encodes batches for the sender; it is owned by the sender
// goroutine (produce requests are written from it).
type encoder struct {
	pid    int64
	codec  recordbatch.Codec
	traced bool
	txn    bool   // the batches are transactional (attributes bit 4)
	recBuf []byte // the records section of a batch being compressed
}

// appendRecords appends b's records section, uncompressed, to dst, each
// record's size computed as it is written (messageBodySize).
func (e *encoder) appendRecords(dst []byte, b *batch) []byte {
	for i := range b.recs {
		m := b.recs[i].msg
		tsDelta := m.Timestamp.UnixMilli() - b.baseTs
		var id int64
		if e.traced {
			id = b.ids[i]
		}
		dst = binary.AppendVarint(dst, int64(messageBodySize(m, tsDelta, int32(i), e.traced, id)))
		dst = append(dst, 0) // attributes
		dst = binary.AppendVarint(dst, tsDelta)
		dst = binary.AppendVarint(dst, int64(i))
		dst = appendVarintBytes(dst, m.Key)
		dst = appendVarintBytes(dst, m.Value)
		nh := len(m.Headers)
		if e.traced {
			nh++
		}
		dst = binary.AppendVarint(dst, int64(nh))
		for j := range m.Headers {
			h := &m.Headers[j]
			dst = binary.AppendVarint(dst, int64(len(h.Key)))
			dst = append(dst, h.Key...)
			dst = appendVarintBytes(dst, h.Value)
		}
		if e.traced {
			dst = appendIDHeader(dst, id)
		}
	}
	return dst
}

// compress compresses b's records into b.payload, with a buffer from bufs;
// a batch of a compressed codec is compressed once, before its first send.
func (e *encoder) compress(b *batch, bufs *bufPool) error {
	e.recBuf = e.appendRecords(e.recBuf[:0], b)
	out, err := e.codec.Compress(bufs.get(), e.recBuf)
	if err != nil {
		bufs.put(out[:0])
		return err
	}
	b.payload = out
	return nil
}

// batchSize returns the size of b encoded: for an uncompressed batch the
// size Produce added up as it appended the records (batch.size, the same
// messageBodySize of each record at its offset and timestamp deltas), so the
// records are not sized a second time before they are written. AppendTo
// checks it against what appendBatch wrote.
func (e *encoder) batchSize(b *batch) int {
	if e.codec != recordbatch.CodecNone {
		return recordbatch.HeaderSize + len(b.payload)
	}
	return b.size
}

// appendBatch appends b as a v2 record batch with its current epoch and
// sequence.
func (e *encoder) appendBatch(dst []byte, b *batch) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, 0) // base offset
	dst = binary.BigEndian.AppendUint32(dst, 0) // length, below
	dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)
	dst = append(dst, 2)                        // magic
	dst = binary.BigEndian.AppendUint32(dst, 0) // CRC, below
	attrs := uint16(e.codec)
	if e.txn {
		attrs |= 0x10 // the transactional bit (recordbatch: attrTransactional)
	}
	dst = binary.BigEndian.AppendUint16(dst, attrs)
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.n()-1))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.baseTs))
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.maxTs))
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.pid))
	dst = binary.BigEndian.AppendUint16(dst, uint16(b.epoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.seq))
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.n()))
	if e.codec != recordbatch.CodecNone {
		dst = append(dst, b.payload...)
	} else {
		dst = e.appendRecords(dst, b)
	}
	recordbatch.Seal(dst[start:])
	return dst
}

// appendVarintBytes appends b with its zigzag varint length, -1 for nil.
func appendVarintBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// produceRequest is a produce request (acks=all, no transactional id) whose
// batches are encoded into the connection's write buffer when the request
// is written (kmsg.Request; wire.Conn.Send writes it). It speaks versions 3
// (the first with record batches, which idempotence needs) to 12 (the last
// that names topics).
type produceRequest struct {
	version    int16
	timeout    int32 // milliseconds
	batches    []*batch
	enc        *encoder
	txnID      string // the transactional id; "" for an idempotent producer
	maxVersion int16  // 0: 12
}

var _ kmsg.Request = (*produceRequest)(nil)

// Key returns Produce's API key.
func (r *produceRequest) Key() int16 { return kmsg.Produce.Int16() }

// MaxVersion returns the newest version the request can be encoded in.
// Under TV1 a transactional producer speaks at most v11: v12 adds the
// partition to the transaction implicitly (KIP-890 part 2; the Java
// client's ProduceRequest.Builder caps it the same way).
func (r *produceRequest) MaxVersion() int16 {
	if r.maxVersion > 0 {
		return r.maxVersion
	}
	return 12
}

// SetVersion sets the version the request is encoded in.
func (r *produceRequest) SetVersion(v int16) { r.version = v }

// GetVersion returns the version the request is encoded in.
func (r *produceRequest) GetVersion() int16 { return r.version }

// IsFlexible reports whether the version is a flexible one (KIP-482).
func (r *produceRequest) IsFlexible() bool { return r.version >= 9 }

// ReadFrom is not supported: the request is only ever written.
func (r *produceRequest) ReadFrom([]byte) error {
	return errors.New("producer: a produce request cannot be decoded")
}

// ResponseKind returns an empty produce response of the request's version.
func (r *produceRequest) ResponseKind() kmsg.Response {
	resp := kmsg.NewPtrProduceResponse()
	resp.SetVersion(r.version)
	return resp
}

// AppendTo appends the request's body, its batches grouped by topic in the
// order the topics first appear in r.batches.
func (r *produceRequest) AppendTo(dst []byte) []byte {
	flex := r.IsFlexible()
	switch {
	case r.txnID != "" && flex:
		dst = binary.AppendUvarint(dst, uint64(len(r.txnID))+1)
		dst = append(dst, r.txnID...)
	case r.txnID != "":
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(r.txnID)))
		dst = append(dst, r.txnID...)
	case flex:
		dst = append(dst, 0) // null transactional id (compact)
	default:
		dst = binary.BigEndian.AppendUint16(dst, 0xffff)
	}
	dst = binary.BigEndian.AppendUint16(dst, 0xffff) // acks -1
	dst = binary.BigEndian.AppendUint32(dst, uint32(r.timeout))
	topics := 0
	for i := range r.batches {
		if firstOfTopic(r.batches, i) {
			topics++
		}
	}
	dst = appendArrayLen(dst, topics, flex)
	for i, b := range r.batches {
		if !firstOfTopic(r.batches, i) {
			continue
		}
		topic := b.part.topic
		n := 0
		for _, c := range r.batches[i:] {
			if c.part.topic == topic {
				n++
			}
		}
		if flex {
			dst = binary.AppendUvarint(dst, uint64(len(topic))+1)
		} else {
			dst = binary.BigEndian.AppendUint16(dst, uint16(len(topic)))
		}
		dst = append(dst, topic...)
		dst = appendArrayLen(dst, n, flex)
		for _, c := range r.batches[i:] {
			if c.part.topic != topic {
				continue
			}
			dst = binary.BigEndian.AppendUint32(dst, uint32(c.part.id))
			dst = r.appendSized(dst, c, flex)
			if flex {
				dst = append(dst, 0) // partition tags
			}
		}
		if flex {
			dst = append(dst, 0) // topic tags
		}
	}
	if flex {
		dst = append(dst, 0) // request tags
	}
	return dst
}

// appendSized appends b with its size before it. The size is batchSize's;
// if the batch came out another size (a Message changed after Produce,
// which Produce's documentation forbids), it is written again after its
// true size, so the request stays well-formed.
func (r *produceRequest) appendSized(dst []byte, b *batch, flex bool) []byte {
	start, size := len(dst), r.enc.batchSize(b)
	for try := 0; ; try++ {
		if flex {
			dst = binary.AppendUvarint(dst, uint64(size)+1)
		} else {
			dst = binary.BigEndian.AppendUint32(dst, uint32(size))
		}
		at := len(dst)
		dst = r.enc.appendBatch(dst, b)
		if got := len(dst) - at; got != size && try == 0 {
			dst, size = dst[:start], got
			continue
		}
		return dst
	}
}

// firstOfTopic reports whether batches[i] is the first batch of its topic.
func firstOfTopic(batches []*batch, i int) bool {
	t := batches[i].part.topic
	for _, b := range batches[:i] {
		if b.part.topic == t {
			return false
		}
	}
	return true
}

func appendArrayLen(dst []byte, n int, flex bool) []byte {
	if flex {
		return binary.AppendUvarint(dst, uint64(n)+1)
	}
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}
