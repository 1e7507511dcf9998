package producer

import "testing"

// TestBatchStore checks what Produce may rely on from a batch it takes from
// the store: room for the records it asked for, no records, and none of the
// previous batch's state; that put lets go of the records but keeps the
// arrays (the records', the ids'); and that a class
// hands its done batches out again rather than making new ones.
func TestBatchStore(t *testing.T) {
	bs := newBatchStore(100)
	for _, est := range []int{1, 8, 9, 16, 17, 33, 64, 65, 200, 4096, 4097} {
		b := bs.get(est)
		if len(b.recs) != 0 || cap(b.recs) < est {
			t.Fatalf("get(%d): len %d cap %d", est, len(b.recs), cap(b.recs))
		}
		m := &Message{}
		for range est {
			b.recs = append(b.recs, pendingRecord{msg: m, done: func(*Message, error) {}})
		}
		b.id, b.size, b.seq, b.traced, b.ids = 7, 100, 3, true, []int64{1}
		b.coreBatch()
		recs := b.recs[:cap(b.recs)]
		bs.put(b)
		if classOf(est) < 0 {
			continue
		}
		for i, r := range recs {
			if r.msg != nil || r.done != nil {
				t.Fatalf("put (cap %d): record %d still referenced", cap(recs), i)
			}
		}
		if b.id != 0 || b.size != 0 || b.seq != 0 || b.traced || len(b.ids) != 0 ||
			b.c.Data != nil || b.c.N != 0 || len(b.recs) != 0 || cap(b.recs) != cap(recs) {
			t.Fatalf("put (cap %d): state left: %+v", cap(recs), *b)
		}
		if cap(b.ids) == 0 {
			t.Fatalf("put (cap %d): the ids' array was let go, not kept for the next traced batch", cap(recs))
		}
		if got := bs.get(est); got != b {
			t.Fatalf("get(%d) after put: a new batch, not the one put back", est)
		}
	}
}

// TestBatchStoreBound checks that a class makes at most maxMade batches,
// then hands out batches of its own (still with room enough), and that it
// keeps no more than it made.
func TestBatchStoreBound(t *testing.T) {
	bs := newBatchStore(40)
	i := classOf(16)
	limit := bs.maxMade(i)
	var out []*batch
	for range limit + 3 {
		b := bs.get(16)
		if cap(b.recs) < 16 {
			t.Fatalf("cap %d < 16", cap(b.recs))
		}
		out = append(out, b)
	}
	c := &bs.classes[i]
	if c.made != limit {
		t.Fatalf("class made %d batches, want its bound %d (MaxBufferedRecords 40)", c.made, limit)
	}
	for _, b := range out {
		bs.put(b)
	}
	if len(c.free) != limit {
		t.Fatalf("class keeps %d free batches, want at most what it made, %d", len(c.free), limit)
	}
}

// TestBatchStoreNoAllocs checks the point of the store: once a class has
// made its batches, taking and giving back allocates nothing.
func TestBatchStoreNoAllocs(t *testing.T) {
	bs := newBatchStore(1000)
	held := make([]*batch, 50)
	cycle := func() {
		for j := range held {
			held[j] = bs.get(16)
		}
		for _, b := range held {
			bs.put(b)
		}
	}
	cycle()
	if a := testing.AllocsPerRun(20, cycle); a != 0 {
		t.Fatalf("%v allocations per cycle of 50 gets and puts, want 0", a)
	}
}
