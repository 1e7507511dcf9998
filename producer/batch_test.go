package producer

import "testing"

// TestBatchPool checks what Produce may rely on from a batch it takes from
// the pool: room for the records it asked for, no records, and none of the
// previous batch's state; and that put lets go of the records.
func TestBatchPool(t *testing.T) {
	var bp batchPool
	for _, est := range []int{1, 8, 9, 16, 17, 33, 64, 65, 200} {
		b := bp.get(est)
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
		bp.put(b)
		if cap(recs) <= 2*batchClasses[len(batchClasses)-1] {
			for i, r := range recs {
				if r.msg != nil || r.done != nil {
					t.Fatalf("put (cap %d): record %d still referenced", cap(recs), i)
				}
			}
			if want := (batch{recs: recs[:0]}); b.id != 0 || b.size != 0 || b.seq != 0 || b.traced || b.ids != nil ||
				b.c.Data != nil || b.c.N != 0 || len(b.recs) != 0 || cap(b.recs) != cap(want.recs) {
				t.Fatalf("put (cap %d): state left: %+v", cap(recs), *b)
			}
		}
		// Whatever the pool hands out next (sync.Pool may drop a batch),
		// it has room for what is asked.
		for _, e := range []int{1, est, 64} {
			if got := bp.get(e); len(got.recs) != 0 || cap(got.recs) < e {
				t.Fatalf("get(%d) after put: len %d cap %d", e, len(got.recs), cap(got.recs))
			}
		}
	}
}
