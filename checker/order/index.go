package order

// ref locates a batch or a record: the number of its partition (its index
// in Checker.byNum) and its index within the partition.
type ref int64

func refOf(pnum, i int) ref { return ref(int64(pnum)<<32 | int64(uint32(i))) }

func (r ref) part() int { return int(r >> 32) }
func (r ref) i() int    { return int(uint32(r)) }

// index maps ids to refs. kcheck numbers records and batches from 1 in
// the order they are made, so ids are small and dense: they go in a table,
// which is much faster than a map at millions of entries. An id far beyond
// the number of entries goes in a map instead, so memory stays proportional
// to the entries whatever the ids. The table grows a block at a time, so
// growing it copies nothing.
type index struct {
	dense  [][]ref // ref+1 by id, in blocks of indexBlock; 0: none
	sparse map[int64]ref
	n      int
}

const indexBlock = 1 << 12

// get returns the ref of id, and whether it has one.
func (x *index) get(id int64) (ref, bool) {
	if id >= 0 && id < int64(len(x.dense))*indexBlock {
		if r := x.dense[id/indexBlock][id%indexBlock]; r > 0 {
			return r - 1, true
		}
	}
	r, ok := x.sparse[id]
	return r, ok
}

// put sets the ref of id, which has none yet.
func (x *index) put(id int64, r ref) {
	x.n++
	if limit := 2*int64(x.n) + 1024; id >= 0 && (id < int64(len(x.dense))*indexBlock || id < limit) {
		for id >= int64(len(x.dense))*indexBlock {
			x.dense = append(x.dense, make([]ref, indexBlock))
		}
		x.dense[id/indexBlock][id%indexBlock] = r + 1
		return
	}
	if x.sparse == nil {
		x.sparse = map[int64]ref{}
	}
	x.sparse[id] = r
}

// chunk is how many batches a batches chunk holds.
const chunk = 128

// batches stores batches in fixed-size chunks: growing it never copies a
// batch, and a *batch stays valid.
type batches struct {
	chunks [][]batch
	n      int
}

// add appends b and returns its index.
func (s *batches) add(b batch) int {
	if s.n%chunk == 0 {
		s.chunks = append(s.chunks, make([]batch, 0, chunk))
	}
	last := &s.chunks[len(s.chunks)-1]
	*last = append(*last, b)
	s.n++
	return s.n - 1
}

// at returns the batch at index i.
func (s *batches) at(i int) *batch { return &s.chunks[i/chunk][i%chunk] }

// column is an append-only list kept in blocks of columnBlock values, so
// that growing it copies nothing.
type column[T any] struct {
	blocks [][]T
	n      int
}

const columnBlock = 1 << 11

func (c *column[T]) add(v T) {
	if c.n%columnBlock == 0 {
		c.blocks = append(c.blocks, make([]T, columnBlock))
	}
	c.blocks[c.n/columnBlock][c.n%columnBlock] = v
	c.n++
}

func (c *column[T]) at(i int) T { return c.blocks[i/columnBlock][i%columnBlock] }
