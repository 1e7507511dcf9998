package matrix

import (
	"slices"

	"github.com/kcheck/kcheck/tracer"
)

// txnView is what a transactional run did to its transactions as the
// application and a read_committed consumer saw them, from the trace
// alone and apart from kcheck verify's checks (checker/txn, which reads
// the markers): the read-back a transactional cell holds verify to.
type txnView struct {
	// LostCommitted: records of a transaction the application was told
	// committed that the read_committed read after the run did not return.
	LostCommitted int `json:",omitempty"`
	// AbortedRead: records of a transaction the application was told
	// aborted that it returned, or that it or a poll returned though the
	// client had asked to abort their transaction (its EndTxn).
	AbortedRead int `json:",omitempty"`
	// Mingled: records closed by a marker (the read-back's, the first of
	// their producer after them) that also closes another transaction's;
	// Torn: records of a transaction whose records the markers both
	// commit and abort.
	Mingled int `json:",omitempty"`
	Torn    int `json:",omitempty"`
	// ReadEarly: records a read_committed poll returned before the client
	// sent the EndTxn that ends their transaction (the first it sent after
	// the record), or when it sent none after it: read before their
	// transaction was asked to commit.
	ReadEarly int `json:",omitempty"`
	// Hanging: records no marker closes in the read-back, though the
	// EndTxn that ends their transaction was answered: the last stable
	// offset stays behind them.
	Hanging int `json:",omitempty"`
}

// readTxnView reads the trace at path: each record belongs to the
// transaction whose TxnTold follows its Told (drivers/OUTCOMES.md,
// "Transactions": a record's line comes before its transaction's, and a
// failed commit's abort is the same transaction's second line), not to
// the wire's numbering that kcheck verify goes by; a transaction told
// neither committed nor aborted, or never ended, counts in neither
// LostCommitted nor AbortedRead. The markers are the read-back's.
func readTxnView(path string) (txnView, error) {
	f, err := tracer.Open(path)
	if err != nil {
		return txnView{}, err
	}
	defer f.Close()
	type txn struct {
		recs   []int64
		result string
	}
	var txns []*txn
	var pending []int64
	read := map[int64]bool{}
	type closed struct {
		p int32
		c int // the closing marker's index in the partition's ctl
	}
	closer := map[int64]closed{}
	fate := map[int64]tracer.Fate{}
	sent := map[int64]int64{} // a record's first send, trace time
	var ends []int64          // the client's EndTxn requests, trace time
	var asked []bool          // each one's commit (false: an abort)
	var answered []bool       // each one answered
	type polled struct{ t, id int64 }
	var polls []polled
	err = f.Each(func(_ int, e *tracer.Event) error {
		switch e.Kind {
		case tracer.Told:
			pending = append(pending, e.RecordID)
		case tracer.TxnTold:
			if n := len(txns); len(pending) == 0 && n > 0 && txns[n-1].result == tracer.Failed {
				txns[n-1].result = e.Result // the abort after a failed commit
				return nil
			}
			txns = append(txns, &txn{recs: pending, result: e.Result})
			pending = nil
		case tracer.ReadCommitted:
			for _, r := range e.Log {
				read[r.ID] = true
			}
		case tracer.SendNew:
			for _, id := range e.Records {
				if _, ok := sent[id]; !ok {
					sent[id] = e.T
				}
			}
		case tracer.EndTxn:
			ends, asked, answered = append(ends, e.T), append(asked, e.Commit), append(answered, false)
		case tracer.EndTxnReceive:
			if n := len(answered); n > 0 {
				answered[n-1] = true
			}
		case tracer.Poll:
			for _, r := range e.Log {
				polls = append(polls, polled{e.T, r.ID})
			}
		case tracer.ReadBack:
			for i, c := range tracer.Closers(e.Log, e.Ctl) {
				if c >= 0 {
					closer[e.Log[i].ID] = closed{e.Partition, c}
				}
				fate[e.Log[i].ID] = tracer.FateOf(e.Ctl, c)
			}
		}
		return nil
	})
	if err != nil {
		return txnView{}, err
	}
	var v txnView
	early, abortRead := map[int64]bool{}, map[int64]bool{}
	owners := map[closed]map[*txn]int{} // a marker's records, by transaction
	for _, t := range txns {
		var fates [3]int
		for _, id := range t.recs {
			if c, ok := closer[id]; ok {
				if owners[c] == nil {
					owners[c] = map[*txn]int{}
				}
				owners[c][t]++
			}
			if f, ok := fate[id]; ok {
				fates[f]++
			}
		}
		if fates[tracer.FateCommitted] > 0 && fates[tracer.FateAborted] > 0 {
			v.Torn += fates[tracer.FateCommitted] + fates[tracer.FateAborted]
		}
		for _, id := range t.recs {
			switch {
			case t.result == tracer.Committed && !read[id]:
				v.LostCommitted++
			case t.result == tracer.Aborted && read[id]:
				abortRead[id] = true
			}
		}
	}
	// end is the index in ends of the EndTxn that ends record id's
	// transaction, the first after its send; len(ends) if none.
	end := func(id int64) (int, bool) {
		st, ok := sent[id]
		if !ok {
			return 0, false
		}
		i, _ := slices.BinarySearch(ends, st+1)
		return i, true
	}
	for _, pl := range polls {
		i, ok := end(pl.id)
		switch {
		case !ok:
		case i == len(ends) || pl.t < ends[i]:
			early[pl.id] = true
		case !asked[i]:
			abortRead[pl.id] = true // returned once its transaction was asked to abort
		}
	}
	for id := range read {
		if i, ok := end(id); ok && i < len(ends) && !asked[i] {
			abortRead[id] = true
		}
	}
	for id, f := range fate {
		if i, ok := end(id); ok && f == tracer.FateOpen && i < len(ends) && answered[i] {
			v.Hanging++
		}
	}
	v.ReadEarly = len(early)
	v.AbortedRead = len(abortRead)
	for _, by := range owners {
		if len(by) > 1 {
			for _, n := range by {
				v.Mingled += n
			}
		}
	}
	return v, nil
}
