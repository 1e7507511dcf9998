package order

import "github.com/kcheck/kcheck/checker/idindex"

// ref and index are idindex's: where a batch, a record or an operation is
// kept, by id.
type (
	ref   = idindex.Ref
	index = idindex.Index
)

func refOf(pnum, i int) ref { return idindex.RefOf(pnum, i) }

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
