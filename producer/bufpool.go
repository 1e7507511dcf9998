package producer

import "sync"

// bufPool recycles the byte slices compressed batches keep their records in,
// so a steady stream of batches allocates none. Slices come back empty.
type bufPool struct {
	size int // the capacity new slices start with
	pool sync.Pool
}

func newBufPool(size int) *bufPool {
	return &bufPool{size: size}
}

func (bp *bufPool) get() []byte {
	if b, ok := bp.pool.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, bp.size)
}

func (bp *bufPool) put(b []byte) {
	if cap(b) == 0 || cap(b) > 4*bp.size {
		return // let oversized slices go
	}
	bp.pool.Put(&b)
}
