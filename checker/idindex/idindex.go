// Package idindex maps kcheck's record and batch ids to where the checkers
// keep them: a partition's number and an index within it. kcheck numbers
// records and batches from 1 in the order they are made, so ids are small and
// dense: they go in a table, which is much faster than a map at millions of
// entries. An id far beyond the number of entries goes in a map instead, so
// memory stays proportional to the entries whatever the ids. The table grows
// a block at a time, so growing it copies nothing.
package idindex

// Ref locates a batch, a record or an operation: the number of its partition
// and its index within the partition.
type Ref int64

// RefOf returns the Ref of index i of partition number pnum.
func RefOf(pnum, i int) Ref { return Ref(int64(pnum)<<32 | int64(uint32(i))) }

// Part returns the partition number.
func (r Ref) Part() int { return int(r >> 32) }

// I returns the index within the partition.
func (r Ref) I() int { return int(uint32(r)) }

// Index maps ids to Refs. Its zero value is empty and ready to use.
type Index struct {
	dense  [][]Ref // Ref+1 by id, in blocks of block; 0: none
	sparse map[int64]Ref
	n      int
}

const block = 1 << 12

// Get returns the Ref of id, and whether it has one.
func (x *Index) Get(id int64) (Ref, bool) {
	if id >= 0 && id < int64(len(x.dense))*block {
		if r := x.dense[id/block][id%block]; r > 0 {
			return r - 1, true
		}
	}
	r, ok := x.sparse[id]
	return r, ok
}

// Put sets the Ref of id, which has none yet.
func (x *Index) Put(id int64, r Ref) {
	x.n++
	if limit := 2*int64(x.n) + 1024; id >= 0 && (id < int64(len(x.dense))*block || id < limit) {
		for id >= int64(len(x.dense))*block {
			x.dense = append(x.dense, make([]Ref, block))
		}
		x.dense[id/block][id%block] = r + 1
		return
	}
	if x.sparse == nil {
		x.sparse = map[int64]Ref{}
	}
	x.sparse[id] = r
}
