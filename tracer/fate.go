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

// Fates returns the fate of each record of a ReadBack's log: decided, as a
// broker decides it, by the first control record (ctl) of the record's
// producer id at a later offset. log and ctl are in offset order.
// Records of an idempotent producer have no markers, so they come out FateOpen.
func Fates(log []LogRecord, ctl []Marker) []Fate {
	out := make([]Fate, len(log))
	next := map[int64]Fate{} // producer id -> the fate its next marker (at a higher offset) gives
	j := len(ctl) - 1
	for i := len(log) - 1; i >= 0; i-- {
		for ; j >= 0 && ctl[j].Offset > log[i].Offset; j-- {
			f := FateAborted
			if ctl[j].Commit {
				f = FateCommitted
			}
			next[ctl[j].PID] = f
		}
		out[i] = next[log[i].PID] // FateOpen when none
	}
	return out
}
