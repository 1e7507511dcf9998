package producer

import (
	"sync"
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

// A batch and the array behind its records' slice in one allocation, for
// the common sizes (newBatch).
type (
	batch8 struct {
		b batch
		r [8]pendingRecord
	}
	batch16 struct {
		b batch
		r [16]pendingRecord
	}
	batch32 struct {
		b batch
		r [32]pendingRecord
	}
	batch64 struct {
		b batch
		r [64]pendingRecord
	}
)

// batchClasses are the record capacities batchPool keeps batches by.
var batchClasses = [...]int{8, 16, 32, 64}

// newBatch returns an empty batch with room for est records, allocated
// with its records' array in one object when est is 64 or less: one
// allocation per batch instead of two.
func newBatch(est int) *batch {
	switch {
	case est <= 8:
		x := new(batch8)
		x.b.recs = x.r[:0]
		return &x.b
	case est <= 16:
		x := new(batch16)
		x.b.recs = x.r[:0]
		return &x.b
	case est <= 32:
		x := new(batch32)
		x.b.recs = x.r[:0]
		return &x.b
	case est <= 64:
		x := new(batch64)
		x.b.recs = x.r[:0]
		return &x.b
	}
	return &batch{recs: make([]pendingRecord, 0, est)}
}

// batchPool recycles done batches, their records' arrays with them, so
// that in a steady stream Produce allocates no batch: the sender puts a
// batch back once the application has been told of its records (put) and
// Produce takes one for its next batch (get). A pool per class of
// batchClasses; a class's pool holds batches with room for at least its
// size. Batches with room for more than twice the largest class are let go.
type batchPool struct {
	pools [len(batchClasses)]sync.Pool
}

// get returns an empty batch with room for at least est records: a
// recycled one when the pool has one, else a new one (newBatch).
func (bp *batchPool) get(est int) *batch {
	for i, c := range batchClasses {
		if est <= c {
			if b, ok := bp.pools[i].Get().(*batch); ok {
				return b
			}
			break
		}
	}
	return newBatch(est)
}

// put recycles b, whose records' outcomes have all been delivered and which
// nothing refers to any more (the core and the sender are done with it):
// it clears b's references to the records so the pool keeps none alive.
func (bp *batchPool) put(b *batch) {
	n := cap(b.recs)
	if n < batchClasses[0] || n > 2*batchClasses[len(batchClasses)-1] {
		return
	}
	recs := b.recs[:n]
	clear(recs)
	*b = batch{recs: recs[:0]}
	i := len(batchClasses) - 1
	for i > 0 && batchClasses[i] > n {
		i--
	}
	bp.pools[i].Put(b)
}
