package producer

import (
	"sync"
	"time"
	"unsafe"

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

// A batchStore keeps the producer's batches for its life, so that once it
// holds as many as the buffer needs Produce allocates no batch, not even in
// a burst that outruns the acknowledgements (the sync.Pool this replaced is
// emptied by every GC, and its batches came back too late for a burst:
// bench/README.md, "Where the Produce() call's tail comes from"). Batches
// come in classes by how many records they have room for (8, 16, ... 4096);
// a class makes its batches a chunk at a time (two allocations a chunk),
// up to maxMade(class) of them, and takes back every one of its own that
// is done. A batch with room for more than the largest
// class, or asked for once a class has made its bound, is allocated on its
// own and left to the GC (put keeps one of a class's size in its place).
//
// Memory: a class makes batches only as a burst needs them (in chunks that
// double), and at most enough for 2×MaxBufferedRecords records: 16 bytes a
// record's room (24 when traced: its kcheck id, kept with the batch too) and
// 296 a batch, so at most 32 + 592/room bytes per buffered record for each
// class the records' sizes use, 48 + 592/room traced (69 and 85 for 1 KiB
// records in 16 KiB batches, the room-16 class: 690 and 850 KB at the
// default 10,000).
type batchStore struct {
	classes [storeClasses]batchClass
	max     int // MaxBufferedRecords
}

// batchClass is one class's batches: those made, and the free ones.
type batchClass struct {
	mu   sync.Mutex
	free []*batch
	made int
}

const (
	minClass     = 8    // the smallest class's room, in records
	storeClasses = 10   // classes of minClass<<i records' room
	chunkSlots   = 4096 // records' room a class makes at a time (64 KiB of pendingRecord)
	pageRecords  = 4096 / int(unsafe.Sizeof(pendingRecord{}))
)

func newBatchStore(maxBuffered int) *batchStore { return &batchStore{max: maxBuffered} }

// classOf returns the class of batches with room for at least est records,
// or -1 if none is that large.
func classOf(est int) int {
	for i := range storeClasses {
		if est <= minClass<<i {
			return i
		}
	}
	return -1
}

// maxMade bounds the batches class i makes: enough for the buffer's records
// in batches at least half full.
func (bs *batchStore) maxMade(i int) int {
	room := minClass << i
	return (2*bs.max+room-1)/room + 1
}

// get returns an empty batch with room for at least est records: a free one
// of its class, one of a new chunk while the class is under its bound, or
// else one of its own. A chunk is made outside the class's lock, so that
// other producers are not held up meanwhile; a class's chunks double in
// size, the first chunkSlots records' room, up to its bound.
func (bs *batchStore) get(est int) *batch {
	i := classOf(est)
	if i < 0 {
		return &batch{recs: make([]pendingRecord, 0, est)}
	}
	room := minClass << i
	c := &bs.classes[i]
	c.mu.Lock()
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free[n-1] = nil
		c.free = c.free[:n-1]
		c.mu.Unlock()
		return b
	}
	k := min(bs.maxMade(i)-c.made, max(chunkSlots/room, c.made))
	c.made += max(k, 0)
	c.mu.Unlock()
	if k <= 0 {
		return &batch{recs: make([]pendingRecord, 0, room)}
	}
	chunk := makeChunk(k, room)
	c.mu.Lock()
	c.free = append(c.free, chunk[1:]...)
	c.mu.Unlock()
	return chunk[0]
}

// makeChunk makes k batches with room for room records each, in two
// allocations: the batches, and their records' arrays. It writes to every
// page of the records' arrays, so that the page faults of memory fresh from
// the OS are taken here rather than by Produce, one in every 256 records.
func makeChunk(k, room int) []*batch {
	bs := make([]batch, k)
	rs := make([]pendingRecord, k*room)
	for j := 0; j < len(rs); j += pageRecords {
		rs[j] = pendingRecord{}
	}
	out := make([]*batch, k)
	for j := range bs {
		bs[j].recs = rs[j*room : j*room : (j+1)*room]
		out[j] = &bs[j]
	}
	return out
}

// put takes back b, whose records' outcomes have all been delivered and
// which nothing refers to any more (the core and the sender are done with
// it), if it is one of a class's: it clears b's references to the records
// so the store keeps none alive. Others are left to the GC.
func (bs *batchStore) put(b *batch) {
	n := cap(b.recs)
	i := classOf(n)
	if i < 0 || n != minClass<<i {
		return
	}
	recs := b.recs[:n]
	clear(recs)
	*b = batch{recs: recs[:0], ids: b.ids[:0]}
	c := &bs.classes[i]
	c.mu.Lock()
	if len(c.free) < c.made {
		c.free = append(c.free, b)
	}
	c.mu.Unlock()
}
