package readback

import (
	"context"
	"fmt"
	"slices"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
)

// Committed is a partition read as read_committed after its read_uncommitted
// read: what a read_committed consumer sees, against what the markers the
// read_uncommitted read kept decide (tracer.Fates).
type Committed struct {
	LSO      int64  // the last stable offset the leader reported
	HWM      int64  // and the high watermark
	Visible  int    // records a read_committed consumer sees
	Disagree string // the first disagreement with the markers, "" when none
	// Log is the records a read_committed consumer returns, in offset
	// order: the trace's ReadCommitted event.
	Log []tracer.LogRecord
}

// readCommitted reads pr's partition again with isolation read_committed,
// from offset 0 to its last stable offset, and holds what a consumer at
// that level sees (every record of a transaction the markers commit, none
// of one they abort or leave open; records outside transactions too) to
// the markers: the broker's aborted-transaction index (the fetch's
// AbortedTransactions, which a consumer filters by) and its markers must
// tell the same.
func (r *reader) readCommitted(ctx context.Context, pr *pread) error {
	p := pr.part.ID
	c, err := r.conn(ctx, pr.l.node)
	if err != nil {
		return fmt.Errorf("readback: %s[%d]: read_committed: leader %d: %w", r.cfg.Topic, p, pr.l.node, err)
	}
	type rec struct {
		tracer.LogRecord
		txn bool
	}
	var recs []rec
	var abortMarks []tracer.Marker
	aborted := map[[2]int64]bool{} // (producer id, first offset) of each aborted transaction
	cm := &Committed{LSO: -1}
	for offset := int64(0); ; {
		fp, err := fetchAt(ctx, c, r.cfg.Topic, p, offset, pr.l.epoch, 1)
		if err != nil {
			return fmt.Errorf("readback: %s[%d] at offset %d: read_committed: %w", r.cfg.Topic, p, offset, err)
		}
		cm.LSO, cm.HWM = fp.LastStableOffset, fp.HighWatermark
		for _, a := range fp.AbortedTransactions {
			aborted[[2]int64{a.ProducerID, a.FirstOffset}] = true
		}
		batches, err := recordbatch.Decode(fp.RecordBatches)
		if err != nil {
			return fmt.Errorf("readback: %s[%d]: read_committed: %w", r.cfg.Topic, p, err)
		}
		before := offset
		for _, b := range batches {
			for _, d := range b.Records {
				if d.Offset < offset {
					continue
				}
				if b.Control() {
					if len(d.Key) >= 4 && d.Key[3] == 0 { // ABORT
						abortMarks = append(abortMarks, tracer.Marker{Offset: d.Offset, PID: d.ProducerID})
					}
				} else {
					recs = append(recs, rec{tracer.LogRecord{Offset: d.Offset, PID: d.ProducerID, Epoch: d.ProducerEpoch,
						Seq: d.Sequence, ID: recordbatch.RecordID(d.Headers)}, b.Transactional()})
				}
				offset = d.Offset + 1
			}
			offset = max(offset, b.BaseOffset+int64(b.LastOffsetDelta)+1)
		}
		if offset >= cm.LSO || offset == before {
			break
		}
	}
	// What a read_committed consumer keeps: a transactional record is
	// dropped from its producer's aborted transaction's first offset to
	// that producer's next abort marker (Kafka's consumer Fetcher).
	var starts []tracer.Marker // aborted transactions' first offsets, as markers
	for k := range aborted {
		starts = append(starts, tracer.Marker{Offset: k[1], PID: k[0]})
	}
	slices.SortFunc(starts, func(a, b tracer.Marker) int { return int(a.Offset - b.Offset) })
	visible := map[int64]bool{}
	inAbort := map[int64]bool{}
	si, ai := 0, 0
	for _, rc := range recs {
		for ; si < len(starts) && starts[si].Offset <= rc.Offset; si++ {
			inAbort[starts[si].PID] = true
		}
		for ; ai < len(abortMarks) && abortMarks[ai].Offset < rc.Offset; ai++ {
			delete(inAbort, abortMarks[ai].PID)
		}
		if !rc.txn || !inAbort[rc.PID] {
			visible[rc.Offset] = true
			cm.Visible++
			cm.Log = append(cm.Log, rc.LogRecord)
		}
	}
	fates := tracer.Fates(pr.part.Log, pr.part.Ctl)
	for i, lr := range pr.part.Log {
		want := fates[i] == tracer.FateCommitted
		if fates[i] == tracer.FateOpen && lr.Offset < cm.LSO {
			want = true // no marker of its producer: not transactional, or a transaction the LSO says is decided
		}
		if got := visible[lr.Offset]; got != want {
			cm.Disagree = fmt.Sprintf("offset %d (producer %d, id %d): the markers make it %s, but read_committed (last stable offset %d) %s it",
				lr.Offset, lr.PID, lr.ID, fates[i], cm.LSO, map[bool]string{true: "sees", false: "does not see"}[got])
			break
		}
	}
	pr.part.Committed = cm
	return nil
}
