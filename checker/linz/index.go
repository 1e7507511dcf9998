package linz

import "slices"

// ref locates an operation: the number of its partition (its index in
// Checker.byNum) and its index in the partition's ops.
type ref int64

func refOf(pnum, i int) ref { return ref(int64(pnum)<<32 | int64(uint32(i))) }

func (r ref) part() int { return int(r >> 32) }
func (r ref) i() int    { return int(uint32(r)) }

// index maps ids to refs. kcheck numbers records and batches from 1 in the
// order they are made, so ids are small and dense: they go in a table,
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

// idSet is a set of ids: a bitset for the small, dense ids kcheck gives
// records, a map for any id far beyond the number of members.
type idSet struct {
	bits   []uint64
	sparse map[int64]struct{}
	n      int
}

// add adds id and reports whether it was new.
func (x *idSet) add(id int64) bool {
	if x.has(id) {
		return false
	}
	x.n++
	if id >= 0 && id < 64*int64(len(x.bits)) {
		x.bits[id/64] |= 1 << (id % 64)
		return true
	}
	if limit := 64 * (2*int64(x.n) + 1024); id >= 0 && id < limit {
		words := min(max(int64(2*len(x.bits)), id/64+1), limit/64)
		old := len(x.bits)
		x.bits = slices.Grow(x.bits, int(words)-old)[:words]
		clear(x.bits[old:])
		x.bits[id/64] |= 1 << (id % 64)
		return true
	}
	if x.sparse == nil {
		x.sparse = map[int64]struct{}{}
	}
	x.sparse[id] = struct{}{}
	return true
}

// has reports whether id is in the set.
func (x *idSet) has(id int64) bool {
	if id >= 0 && id < 64*int64(len(x.bits)) && x.bits[id/64]&(1<<(id%64)) != 0 {
		return true
	}
	_, ok := x.sparse[id]
	return ok
}
