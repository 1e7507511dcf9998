package linz

import (
	"slices"

	"github.com/kcheck/kcheck/checker/idindex"
)

// ref and index are idindex's: where a batch, a record or an operation is
// kept, by id.
type (
	ref   = idindex.Ref
	index = idindex.Index
)

func refOf(pnum, i int) ref { return idindex.RefOf(pnum, i) }

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
