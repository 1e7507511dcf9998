package tracer

// Fate is what became of a transactional record, as a partition's
// read-back shows it.
type Fate uint8

const (
	FateOpen      Fate = iota // no marker of its producer after it: its transaction is still open (or the record was not transactional)
	FateCommitted             // the first marker of its producer after it is a commit
	FateAborted               // the first marker of its producer after it is an abort
)

func (f Fate) String() string { return [...]string{"open", "committed", "aborted"}[f] }

// Closers returns, for each record of a ReadBack's log, the index in ctl of
// the control record that closes its transaction: the first marker of the
// record's producer id at a later offset, as a broker decides it; -1 when
// none does. log and ctl are in offset order.
func Closers(log []LogRecord, ctl []Marker) []int {
	out := make([]int, len(log))
	next := map[int64]int{} // producer id -> index in ctl of its next marker (at a higher offset)
	j := len(ctl) - 1
	for i := len(log) - 1; i >= 0; i-- {
		for ; j >= 0 && ctl[j].Offset > log[i].Offset; j-- {
			next[ctl[j].PID] = j + 1 // +1: the map's zero value is none
		}
		out[i] = next[log[i].PID] - 1
	}
	return out
}

// Fates returns the fate of each record of a ReadBack's log, decided by the
// marker that closes it (Closers). Records of an idempotent producer have
// no markers, so they come out FateOpen.
func Fates(log []LogRecord, ctl []Marker) []Fate {
	out := make([]Fate, len(log))
	for i, c := range Closers(log, ctl) {
		out[i] = FateOf(ctl, c)
	}
	return out
}

// FateOf is the fate a record closed by ctl[c] has (c from Closers).
func FateOf(ctl []Marker, c int) Fate {
	switch {
	case c < 0:
		return FateOpen
	case ctl[c].Commit:
		return FateCommitted
	}
	return FateAborted
}
