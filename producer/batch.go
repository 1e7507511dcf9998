package producer

import (
	"time"

	"github.com/kcheck/kcheck/producer/core"
)

// pendingRecord is a record waiting for its outcome.
type pendingRecord struct {
	msg  *Message
	done func(*Message, error)
}

// batch is one record batch of one partition. Its records are encoded when
// it is written (encode.go). Its protocol state (sequence, epoch, retries)
// is the core's, in c, once the sender takes it from the partition's buffer.
type batch struct {
	id      int64
	part    *partition
	recs    []pendingRecord
	ids     []int64   // kcheck ids of the records, when tracing
	traced  bool      // its SendNew is in the trace, so what the application is told of it goes there too (Told)
	created time.Time // when its first record was produced
	baseTs  int64     // the first record's timestamp (ms)
	maxTs   int64     // the latest record timestamp (ms)
	size    int       // encoded size without compression, header included

	// Owned by the sender once the batch leaves the partition's buffer.
	payload []byte // the compressed records, for a compressed codec
	seq     int32  // the base sequence and epoch it is encoded with: the core's, copied before each write
	epoch   int16
	c       core.Batch
}

func (b *batch) n() int32 { return int32(len(b.recs)) }

// coreBatch hands b to the core, its records complete.
func (b *batch) coreBatch() *core.Batch {
	b.c.ID, b.c.N, b.c.Created, b.c.MaxTs, b.c.Records, b.c.Data = b.id, b.n(), b.created, b.maxTs, b.ids, b
	return &b.c
}

// of returns the producer's batch behind the core's.
func of(cb *core.Batch) *batch { return cb.Data.(*batch) }
