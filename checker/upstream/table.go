package upstream

import (
	"fmt"
	"strings"

	"github.com/kcheck/kcheck/tracer"
)

// row is a row of the told-against-log table: one record, or a run of
// records of one batch, in its order, told alike (the same result, at
// consecutive offsets or none) and written alike (each as many times, each
// copy at the offset and sequence after the last record's same copy, in
// its epoch; or none at all).
type row struct {
	ids []int64
}

// table groups the records named, in the order named, into at most
// maxRows rows, and returns how many records it left out.
func (is *Issue) table(named []int64) (rows []row, left int) {
	for i, id := range named {
		if n := len(rows); n > 0 && is.follows(rows[n-1].ids[len(rows[n-1].ids)-1], id) {
			rows[n-1].ids = append(rows[n-1].ids, id)
			continue
		}
		if len(rows) == maxRows {
			return rows, len(named) - i
		}
		rows = append(rows, row{ids: []int64{id}})
	}
	return rows, 0
}

// follows reports whether record b can follow record a in a row.
func (is *Issue) follows(a, b int64) bool {
	ka, okA := is.col.recBatch[a]
	kb, okB := is.col.recBatch[b]
	if !okA || !okB || ka != kb {
		return false
	}
	ta, toldA := is.col.told[a]
	tb, toldB := is.col.told[b]
	if toldA != toldB || toldA && (ta.result != tb.result || ta.err != tb.err || ta.reason != tb.reason || ta.p != tb.p ||
		(ta.off < 0) != (tb.off < 0) || ta.off >= 0 && tb.off != ta.off+1) {
		return false
	}
	pa, pb := is.positions[a], is.positions[b]
	if len(pa) != len(pb) {
		return false
	}
	for k, ra := range pa {
		if rb := pb[k]; rb.Offset != ra.Offset+1 || rb.Epoch != ra.Epoch || rb.PID != ra.PID || rb.Seq != ra.Seq+1 {
			return false
		}
	}
	return true
}

// idsText names a row's records.
func idsText(ids []int64) string {
	switch len(ids) {
	case 1:
		return fmt.Sprint(ids[0])
	case 2:
		return fmt.Sprintf("%d and %d", ids[0], ids[1])
	case 3:
		return fmt.Sprintf("%d, %d and %d", ids[0], ids[1], ids[2])
	}
	return fmt.Sprintf("%d, %d, …, %d (%d records)", ids[0], ids[1], ids[len(ids)-1], len(ids))
}

// toldText says what the application was told of a row's records.
func (is *Issue) toldText(r row) string {
	first, last := r.ids[0], r.ids[len(r.ids)-1]
	t, ok := is.col.told[first]
	if !ok {
		return "nothing"
	}
	lines := fmt.Sprintf("line %d", t.line)
	if tl := is.col.told[last].line; tl != t.line {
		lines = fmt.Sprintf("lines %d-%d", t.line, tl)
		if tl-t.line != len(r.ids)-1 {
			lines = fmt.Sprintf("lines %d, …, %d", t.line, tl)
		}
	}
	part := ""
	if is.rep.Header.Partitions > 1 && t.p >= 0 {
		part = fmt.Sprintf("partition %d, ", t.p)
	}
	var s string
	switch t.result {
	case tracer.Delivered:
		switch {
		case t.off < 0:
			s = "delivered, with no offset"
		case len(r.ids) == 1:
			s = fmt.Sprintf("delivered at %soffset %d", part, t.off)
		default:
			s = fmt.Sprintf("delivered at %soffsets %d-%d", part, t.off, is.col.told[last].off)
		}
	case tracer.Failed:
		s = "failed"
		if t.err != "" {
			s += ": " + t.err
		}
		if t.reason != "" {
			s += fmt.Sprintf(" (%q)", t.reason)
		}
	default:
		s = "no answer by the end of the run"
	}
	return fmt.Sprintf("%s (%s)", s, lines)
}

// logText says where the log read back holds a row's records.
func (is *Issue) logText(r row) string {
	first, last := is.positions[r.ids[0]], is.positions[r.ids[len(r.ids)-1]]
	if len(first) == 0 {
		return "not in the log"
	}
	var ps []string
	for k, a := range first {
		if b := last[k]; len(r.ids) > 1 {
			ps = append(ps, fmt.Sprintf("offsets %d-%d (epoch %d, sequences %d-%d)", a.Offset, b.Offset, a.Epoch, a.Seq, b.Seq))
		} else {
			ps = append(ps, fmt.Sprintf("offset %d (epoch %d, sequence %d)", a.Offset, a.Epoch, a.Seq))
		}
	}
	return strings.Join(ps, " and ")
}
