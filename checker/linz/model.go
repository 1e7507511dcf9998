package linz

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// state is the model's state of one partition's log. It never holds the
// records themselves: an append is O(1) whatever the log's length.
type state struct {
	n      int64  // records in the log: the next append lands at offset n
	h1, h2 uint64 // two polynomial hashes of the record ids, in offset order
}

// The hashes are h = Σ f(id_i)·B^(n-1-i) mod 2^64 with two different bases
// and mixers, so appending k records is h·B^k + H(batch).
const (
	base1 = 0x9e3779b97f4a7c15
	base2 = 0xc2b2ae3d27d4eb4f
	salt2 = 0x165667b19e3779f9
)

// mix is SplitMix64's finalizer: it spreads small sequential ids over 64 bits.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// hashIDs returns what a run of ids adds to a state: their two hashes and
// the two bases raised to their count.
func hashIDs(ids []int64) (h1, h2, pow1, pow2 uint64) {
	pow1, pow2 = 1, 1
	for _, id := range ids {
		h1 = h1*base1 + mix(uint64(id))
		h2 = h2*base2 + mix(uint64(id)^salt2)
		pow1 *= base1
		pow2 *= base2
	}
	return h1, h2, pow1, pow2
}

// logState is the state of the log that holds exactly ids, in offset order.
func logState(ids []int64) state {
	h1, h2, _, _ := hashIDs(ids)
	return state{n: int64(len(ids)), h1: h1, h2: h2}
}

func (s state) append(b *batchInput) state {
	return state{n: s.n + int64(len(b.recs)), h1: s.h1*b.pow1 + b.h1, h2: s.h2*b.pow2 + b.h2}
}

// batchInput is a produce operation's input: the batch as first sent.
type batchInput struct {
	partition int32
	batch     int64
	pid       int64
	epoch     int16
	seq       int32
	recs      []int64 // record ids, in order (SendNew.recs)

	h1, h2, pow1, pow2 uint64 // what the batch adds to a state (hashIDs)

	// readBack is the partition's log as read back, the same for every
	// operation of the partition: an append is legal only if the log stays
	// a prefix of it (see doc.go, "Pruning").
	readBack *readLog
}

// readLog is the record ids of a partition's read-back, in offset order.
type readLog struct {
	ids []int64
}

// holds reports whether the read-back holds ids at offsets [n, n+len(ids)).
func (l *readLog) holds(n int64, ids []int64) bool {
	return n+int64(len(ids)) <= int64(len(l.ids)) && slices.Equal(l.ids[n:n+int64(len(ids))], ids)
}

func newBatchInput(partition int32, batch, pid int64, epoch int16, seq int32, recs []int64, readBack *readLog) *batchInput {
	b := new(batchInput)
	setBatchInput(b, partition, batch, pid, epoch, seq, recs, readBack)
	return b
}

// setBatchInput sets *b to the input of a batch.
func setBatchInput(b *batchInput, partition int32, batch, pid int64, epoch int16, seq int32, recs []int64, readBack *readLog) {
	*b = batchInput{partition: partition, batch: batch, pid: pid, epoch: epoch, seq: seq, recs: recs, readBack: readBack}
	b.h1, b.h2, b.pow1, b.pow2 = hashIDs(recs)
}

// outcomeKind is how a produce operation ended, as far as the trace tells.
type outcomeKind uint8

const (
	pending        outcomeKind = iota // no outcome by the end of the trace: unknown
	acked                             // Receive NONE: appended at a known base offset
	ackedAnyOffset                    // Receive DUPLICATE_SEQUENCE_NUMBER (or NONE with off -1): appended, offset not given
	failed                            // Fail: never written
	unknown                           // ExpireBatch, or Fail "producer closed" after the batch was sent
)

// outcome is a produce operation's output.
type outcome struct {
	kind   outcomeKind
	offset int64 // acked: the base offset
}

// readInput is a read operation's input: which partition was read back.
type readInput struct {
	partition int32
}

// readOutput is a read operation's output: the log read back, as a state.
// A segment's read sees the read-back up to the segment's end (check.go).
type readOutput struct {
	log state
}

// startInput is the input of the operation that opens a segment after the
// first: the log as read back up to the segment's first offset.
type startInput struct {
	partition int32
	log       state
}

// meta is an operation's Metadata: its op and its segment.
type meta struct {
	o   *op
	seg int32
}

// step is the model's nondeterministic step: every state the log can be in
// after the operation, none if the operation is illegal in s. It is pure.
// An append that would leave a log the read-back does not begin with is
// dropped: no later step can make such a log equal to the read-back.
func step(s state, input, output any) []state {
	return appendStep(nil, s, input, output)
}

// appendStep appends step's states to dst.
func appendStep(dst []state, s state, input, output any) []state {
	switch in := input.(type) {
	case *batchInput:
		out := output.(outcome)
		appends := in.readBack.holds(s.n, in.recs)
		switch out.kind {
		case acked:
			if s.n != out.offset || !appends {
				return dst
			}
			return append(dst, s.append(in))
		case ackedAnyOffset:
			if !appends {
				return dst
			}
			return append(dst, s.append(in))
		case failed:
			return append(dst, s)
		default: // unknown, pending: appended or not
			if !appends {
				return append(dst, s)
			}
			return append(dst, s, s.append(in))
		}
	case readInput:
		if s != output.(readOutput).log {
			return dst
		}
		return append(dst, s)
	case startInput:
		if s != (state{}) {
			return dst
		}
		return append(dst, in.log)
	}
	panic(fmt.Sprintf("linz: operation input of type %T", input))
}

// stateSet is the set of states a prefix of a history can reach: Porcupine's
// state. It is what NondeterministicModel.ToModel's power-set construction
// keeps, without its boxing of every state: the states step reaches from
// each state in turn, in that order, each kept once, where it first appears.
// So Porcupine's search, its verdict and the states it shows are the same.
type stateSet []state

// next is the set after the operation: empty if no state allows it.
func (ss stateSet) next(input, output any) stateSet {
	var buf [4]state
	all := buf[:0]
	for _, s := range ss {
		all = appendStep(all, s, input, output)
	}
	if len(all) == 0 {
		return nil
	}
	out := make(stateSet, 0, len(all))
	for _, s := range all {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// hash is ToModel's: the XOR of its states' hashes, as a set's is order-free.
func (ss stateSet) hash() uint64 {
	var h uint64
	for _, s := range ss {
		h ^= s.hash()
	}
	return h
}

// equal is ToModel's: both sets hold the same states.
func (ss stateSet) equal(o stateSet) bool {
	if len(ss) != len(o) {
		return false
	}
	for _, s := range ss {
		if !slices.Contains(o, s) {
			return false
		}
	}
	return true
}

func (s state) hash() uint64 { return s.h1 ^ mix(s.h2+uint64(s.n)) }

// partitionOf is the Kafka partition an operation's input names.
func partitionOf(input any) int32 {
	switch in := input.(type) {
	case *batchInput:
		return in.partition
	case readInput:
		return in.partition
	case startInput:
		return in.partition
	}
	panic(fmt.Sprintf("linz: operation input of type %T", input))
}

// segKey orders Porcupine's partitions: by Kafka partition, then segment.
type segKey struct {
	partition, seg int32
}

// partitionOps splits a history by Kafka partition and, within one, by
// segment, in increasing order, each keeping the history's order.
func partitionOps(history []porcupine.Operation) [][]porcupine.Operation {
	// Two passes: count each part, then fill it, sized once. A segment's
	// operations mostly follow each other, so the last key is checked first.
	type part struct {
		key segKey
		ops []porcupine.Operation
		n   int
	}
	keyOf := func(o *porcupine.Operation) segKey {
		return segKey{partitionOf(o.Input), o.Metadata.(*meta).seg}
	}
	by := make(map[segKey]int)
	var parts []part
	which := make([]int32, len(history)) // history[i]'s part
	last := -1
	for i := range history {
		k := keyOf(&history[i])
		if last < 0 || parts[last].key != k {
			j, ok := by[k]
			if !ok {
				j = len(parts)
				by[k] = j
				parts = append(parts, part{key: k})
			}
			last = j
		}
		parts[last].n++
		which[i] = int32(last)
	}
	for j := range parts {
		parts[j].ops = make([]porcupine.Operation, 0, parts[j].n)
	}
	for i, o := range history {
		parts[which[i]].ops = append(parts[which[i]].ops, o)
	}
	slices.SortFunc(parts, func(a, b part) int {
		return cmp.Or(cmp.Compare(a.key.partition, b.key.partition), cmp.Compare(a.key.seg, b.key.seg))
	})
	out := make([][]porcupine.Operation, len(parts))
	for i, p := range parts {
		out[i] = p.ops
	}
	return out
}

// newModel returns the Porcupine model of a set of partition logs: the
// nondeterministic step over stateSets (see stateSet).
func newModel() porcupine.Model {
	return porcupine.Model{
		Partition: partitionOps,
		Init:      func() any { return stateSet{state{}} },
		Step: func(s, input, output any) (bool, any) {
			next := s.(stateSet).next(input, output)
			return len(next) > 0, next
		},
		Equal:             func(a, b any) bool { return a.(stateSet).equal(b.(stateSet)) },
		Hash:              func(s any) uint64 { return s.(stateSet).hash() },
		DescribeOperation: describeOperation,
		DescribeState: func(s any) string {
			ss := s.(stateSet)
			descriptions := make([]string, 0, len(ss))
			for _, st := range ss {
				descriptions = append(descriptions, describeState(st))
			}
			return fmt.Sprintf("{%s}", strings.Join(descriptions, ", "))
		},
		DescribeOperationMetadata: describeMetadata,
	}
}

func describeOperation(input, output any) string {
	switch in := input.(type) {
	case *batchInput:
		return fmt.Sprintf("batch %d seq %d [%s] → %s", in.batch, in.seq, idRange(in.recs), describeOutcome(output.(outcome)))
	case readInput:
		return fmt.Sprintf("read → %d records", output.(readOutput).log.n)
	case startInput:
		return fmt.Sprintf("log as read back → %d records", in.log.n)
	}
	return fmt.Sprint(input, " → ", output)
}

func describeOutcome(o outcome) string {
	switch o.kind {
	case acked:
		return "ok @" + strconv.FormatInt(o.offset, 10)
	case ackedAnyOffset:
		return "ok @?"
	case failed:
		return "failed"
	case unknown:
		return "unknown"
	default:
		return "no outcome"
	}
}

func describeState(s state) string {
	return fmt.Sprintf("%d records (#%08x)", s.n, uint32(s.h1>>32))
}

// describeMetadata renders an operation's meta: its trace lines.
func describeMetadata(m any) string {
	mt, ok := m.(*meta)
	if !ok {
		return ""
	}
	o := mt.o
	switch {
	case o.start:
		return fmt.Sprintf("segment %d starts from the ReadBack (line %d)", mt.seg, o.callLine)
	case o.read:
		return fmt.Sprintf("segment %d: ReadBack, line %d", mt.seg, o.callLine)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "batch %d: pid %d epoch %d seq %d, %d records; sent line %d", o.in.batch, o.in.pid, o.in.epoch, o.in.seq, len(o.in.recs), o.callLine)
	if o.outLine > 0 {
		fmt.Fprintf(&b, "; %s on line %d", o.how(), o.outLine)
	} else {
		b.WriteString("; no outcome by the end of the trace")
	}
	return b.String()
}

// idRange renders record ids compactly: "4", "4 8", "4 … 104 (15)".
func idRange(ids []int64) string {
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return strconv.FormatInt(ids[0], 10)
	case 2:
		return fmt.Sprintf("%d %d", ids[0], ids[1])
	}
	return fmt.Sprintf("%d … %d (%d)", ids[0], ids[len(ids)-1], len(ids))
}

// uniqueStates sorts and de-duplicates states (the set Porcupine tracks).
func uniqueStates(ss []state) []state {
	slices.SortFunc(ss, func(a, b state) int {
		return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.h1, b.h1), cmp.Compare(a.h2, b.h2))
	})
	return slices.Compact(ss)
}
