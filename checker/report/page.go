package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/linz"
	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/tracer"
)

// The page's view model: every string the template prints, ready.

// page is index.html's.
type page struct {
	Title           string
	File            string
	Verdict         string
	VerdictClass    string
	VerdictNote     string
	Trace           string
	Checks          []checkRow
	Violations      []violationView
	ViolationsLeft  int
	ViolationsTotal int
	Partitions      []partView
	PartsNotes      []string // partitions not drawn, and why
	Range           string   // the time axis, for the zoom status
}

type checkRow struct {
	Name, Result, Class string
	Notes               []string
	Links               []link
}

type link struct{ Href, Text string }

type violationView struct {
	ID, Kind, Where, Detail string
	Num                     int
	See                     []link
	Lines                   []lineView
}

type lineView struct {
	N          int
	Href, Text string
}

type partView struct {
	ID, Title  string
	Violations []link
	Stats      string
	Linz       string
	View       string
	Notes      []string
	SVG        svgView
	Log        []logItem
	LogNote    string
	LogOpen    bool // the log is short, or a violation names the partition
	Absent     []absentView
}

type absentView struct {
	Text  string
	Links []link
}

type logItem struct {
	Kind                   string // run, gap or skip
	ID, Class, Href, Title string
	Label, Range, Note     string
}

// builder turns a collector into the page.
type builder struct {
	r       *verify.Report
	c       *drawing
	batchOf map[int64]int64
	tEnd    float64
	line    map[int]string      // trace line → the element showing it
	batch   map[batchKey]string // batch → its element in a timeline
	run     map[int]string      // violation → its first log run
	drawn   map[int32]bool      // the partitions drawn
}

// newPage builds the page for r from what col gathered.
func newPage(r *verify.Report, col *Collector, views map[int32]string) *page {
	c, batchOf := col.drawing(r)
	b := &builder{r: r, c: c, batchOf: batchOf, line: map[int]string{}, batch: map[batchKey]string{}, run: map[int]string{}}
	b.tEnd = b.axisEnd()
	pg := &page{
		File: r.File, Verdict: strings.ToUpper(string(r.Verdict)), VerdictClass: string(r.Verdict),
	}
	pg.Title = fmt.Sprintf("kcheck verify: %s: %s", pg.Verdict, r.File)
	step := niceStep(b.tEnd)
	pg.Range = tickLabel(0, step) + " – " + tickLabel(b.tEnd, step)
	switch r.Verdict {
	case verify.Valid:
		pg.VerdictNote = "every check passed"
	case verify.Inconclusive:
		pg.VerdictNote = "nothing wrong found, but a check could not finish: this is not a pass"
		if summary, _ := r.Incomplete(); summary != "" {
			pg.VerdictNote = summary + ": this is not a pass"
		}
	default:
		pg.VerdictNote = kindSummary(r.Violations)
	}
	pg.Trace = traceLine(r)
	pg.ViolationsTotal = len(r.Violations)
	pg.Checks = checks(r, views)

	ids := slices.Sorted(maps.Keys(c.parts))
	if silent := verify.Missing(r.Header.Partitions, ids); len(silent) > 0 {
		pg.PartsNotes = append(pg.PartsNotes, fmt.Sprintf("No event names %s of the header's %d.", verify.PartitionsText(silent), r.Header.Partitions))
	}
	if len(ids) > maxParts {
		// Those a violation names first, then the lowest, drawn in order.
		named := func(p int32) bool { return len(c.inv.byPart[p]) > 0 }
		drawn := slices.Clone(ids)
		slices.SortStableFunc(drawn, func(a, b int32) int {
			switch {
			case named(a) && !named(b):
				return -1
			case named(b) && !named(a):
				return 1
			}
			return 0
		})
		drawn = drawn[:maxParts]
		slices.Sort(drawn)
		pg.PartsNotes = append(pg.PartsNotes, fmt.Sprintf("Drawn: %d of the %d partitions the trace names (those violations name first, then the lowest); the text and JSON reports cover every one.", maxParts, len(ids)))
		ids = drawn
	}
	b.drawn = map[int32]bool{}
	for _, p := range ids {
		b.drawn[p] = true
		pg.Partitions = append(pg.Partitions, b.partition(c.parts[p], views[p]))
	}
	for i, v := range r.Violations {
		if i == maxViolations {
			pg.ViolationsLeft = len(r.Violations) - i
			break
		}
		pg.Violations = append(pg.Violations, b.violation(i+1, v))
	}
	return pg
}

func traceLine(r *verify.Report) string {
	h := r.Header
	rule := func(on bool) string {
		if on {
			return "on"
		}
		return "off"
	}
	rules := fmt.Sprintf("first-ack rule %s, hold-while-retrying %s, max in flight %d, delivery timeout %d ms",
		rule(h.FirstAck), rule(h.HoldWhileRetrying), h.MaxInFlight, h.DeliveryTimeoutMs)
	if h.Writer == tracer.ProxyWriter {
		rules = "traced on the wire: the client's rules unknown, checked by the broker's"
	}
	s := fmt.Sprintf("%s events by %s (%s), topic %q, %s; %s; broker %s %s (%s)",
		count(r.Events), h.Writer, h.Client, h.Topic, partitions(h.Partitions), rules, h.Broker.Kind, h.Broker.Version, h.Broker.NoStateRule)
	if len(h.Faults) > 0 {
		s += "; faults: " + strings.Join(h.Faults, ", ")
	}
	return s + fmt.Sprintf("; seed %d; checked in %v", h.Seed, r.Duration.Round(1e6))
}

func checks(r *verify.Report, views map[int32]string) []checkRow {
	byKind := map[checker.Kind]int{}
	for _, v := range r.Violations {
		byKind[v.Kind]++
	}
	var rows []checkRow
	if r.Conformance != "" {
		rows = append(rows, checkRow{Name: "spec replay", Result: "does NOT follow the spec", Class: "bad", Notes: []string{r.Conformance}})
	} else {
		rows = append(rows, checkRow{Name: "spec replay", Result: "follows the spec", Class: "good"})
	}
	if t := r.TLC; t != nil {
		row := checkRow{Name: "TLC trace validation"}
		switch {
		case t.Skipped != "":
			row.Result, row.Class, row.Notes = "not run", "meh", []string{t.Skipped}
		case t.Accepted:
			row.Result, row.Class = fmt.Sprintf("accepted (%s states, %v%s)", count(int(t.States)), t.Duration.Round(1e6), tlcRuns(t)), "good"
		case t.Inconclusive != "":
			row.Result, row.Class, row.Notes = "inconclusive", "meh", []string{t.Inconclusive}
		default:
			row.Result, row.Class = fmt.Sprintf("REJECTED after line %d (%s states, %v%s)", t.Furthest, count(int(t.States)), t.Duration.Round(1e6), tlcRuns(t)), "bad"
		}
		if t.Skipped == "" && t.Established != "" {
			row.Notes = append(row.Notes, t.Spec+": "+t.Established)
		}
		rows = append(rows, row)
	}
	order := 0
	for k, n := range byKind {
		if k != checker.NonConformance && k != checker.NotLinearizable {
			order += n
		}
	}
	o := r.Order
	row := checkRow{Name: "exactly-once ordering", Result: "no violation", Class: "good"}
	if order > 0 {
		var kinds []checker.Violation
		for _, v := range r.Violations {
			if v.Kind != checker.NonConformance && v.Kind != checker.NotLinearizable {
				kinds = append(kinds, v)
			}
		}
		row.Result, row.Class = kindSummary(kinds), "bad"
	}
	row.Notes = []string{
		fmt.Sprintf("records: %s sent, %s acknowledged, %s failed, %s unknown; %s read back", count(o.Records), count(o.Acked), count(o.Failed), count(o.Unknown), count(o.ReadBack)),
		fmt.Sprintf("OUT_OF_ORDER_SEQUENCE_NUMBER answers: %s (%s to batches acknowledged in the end); stalls: %s (%v)",
			count(o.OutOfOrderAnswers), count(o.OutOfOrderAcked), count(o.Stalls), o.StallTime.Round(1e6)),
	}
	rows = append(rows, row)
	row = checkRow{Name: "linearizability (Porcupine)", Result: string(r.Linz), Notes: r.LinzNotes}
	switch {
	case r.ReadBack.Read == 0:
		row.Result, row.Class, row.Notes = "skipped (no read-back)", "meh", nil
	case r.Linz == linz.Ok:
		row.Class = "good"
	case r.Linz == linz.Illegal:
		row.Class = "bad"
		if n := byKind[checker.NotLinearizable]; n == 0 {
			row.Notes = append(row.Notes, "the ordering check's violations in the same partitions cover it")
		}
	default:
		row.Class = "meh"
	}
	for _, p := range slices.Sorted(maps.Keys(views)) {
		row.Links = append(row.Links, link{views[p], fmt.Sprintf("partition %d in Porcupine", p)})
	}
	rows = append(rows, row)
	if summary, notes := r.Incomplete(); summary != "" {
		rows = append(rows, checkRow{Name: "read-back", Result: summary, Class: "meh", Notes: notes})
	}
	return rows
}

// kindSummary says how many violations of each kind, in order of first
// appearance: "8 lost-write, 8 stall".
func kindSummary(vs []checker.Violation) string {
	var kinds []checker.Kind
	n := map[checker.Kind]int{}
	for _, v := range vs {
		if n[v.Kind] == 0 {
			kinds = append(kinds, v.Kind)
		}
		n[v.Kind]++
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
	}
	return strings.Join(parts, ", ")
}

func (b *builder) violation(n int, v checker.Violation) violationView {
	vv := violationView{ID: "v" + strconv.Itoa(n), Num: n, Kind: string(v.Kind), Detail: v.Detail}
	var where []string
	if v.Partition >= 0 {
		where = append(where, fmt.Sprintf("partition %d", v.Partition))
	}
	if v.Batch != 0 {
		where = append(where, fmt.Sprintf("batch %d", v.Batch))
	}
	if v.Seq >= 0 {
		where = append(where, fmt.Sprintf("epoch %d, seq %d", v.Epoch, v.Seq))
	}
	vv.Where = strings.Join(where, " · ")
	if v.Partition >= 0 && b.drawn[v.Partition] {
		p := "p" + strconv.Itoa(int(v.Partition))
		vv.See = append(vv.See, link{"#" + p, fmt.Sprintf("partition %d timeline", v.Partition)})
		if id, ok := b.batch[batchKey{v.Partition, v.Batch}]; ok {
			vv.See = append(vv.See, link{"#" + id, fmt.Sprintf("batch %d", v.Batch)})
		}
		if id, ok := b.run[n]; ok {
			vv.See = append(vv.See, link{"#" + id, "in the log"})
		} else if pd := b.c.parts[v.Partition]; pd != nil && pd.log != nil {
			vv.See = append(vv.See, link{"#" + p + "-log", "the log"})
		}
	}
	for _, l := range v.Lines {
		lv := lineView{N: l, Href: b.line[l]}
		if lv.Href != "" {
			lv.Href = "#" + lv.Href
		}
		lv.Text = b.r.Slices[l]
		vv.Lines = append(vv.Lines, lv)
	}
	return vv
}

func (b *builder) partition(pd *partData, view string) partView {
	inv := b.c.inv
	id := "p" + strconv.Itoa(int(pd.p))
	pv := partView{ID: id, Title: fmt.Sprintf("Partition %d", pd.p), View: view}
	for i, n := range inv.byPart[pd.p] {
		if i == 20 {
			pv.Violations = append(pv.Violations, link{"#violations", fmt.Sprintf("and %d more", len(inv.byPart[pd.p])-i)})
			break
		}
		pv.Violations = append(pv.Violations, link{vref(n), fmt.Sprintf("#%d %s", n, b.r.Violations[n-1].Kind)})
	}
	o := pd.outcomes
	var outs []string
	for _, x := range []struct {
		n    int
		what string
	}{{o[acked], "acknowledged"}, {o[outOfOrder], "OUT_OF_ORDER_SEQUENCE_NUMBER"}, {o[errAnswer], "other error answers"}, {o[noAnswer], "no answer"}} {
		if x.n > 0 {
			outs = append(outs, count(x.n)+" "+x.what)
		}
	}
	pv.Stats = fmt.Sprintf("%s batches, %s attempts", count(pd.sent), count(pd.started))
	if len(outs) > 0 {
		pv.Stats += ": " + strings.Join(outs, ", ")
	}
	if lr := b.r.LinzResult(); lr != nil {
		if i, ok := slices.BinarySearchFunc(lr.Partitions, pd.p, func(pr linz.PartitionResult, p int32) int { return cmp.Compare(pr.Partition, p) }); ok {
			pr := &lr.Partitions[i]
			pv.Linz = "Porcupine: " + string(pr.Verdict)
			if pr.Verdict == linz.Inconclusive && pr.Reason != "" {
				pv.Linz += " (" + pr.Reason + ")"
			}
		}
	}
	if pd.log != nil {
		setFirst(b.line, pd.log.line, id+"-log")
	}
	pv.SVG = b.timeline(pd)
	drawn := pd.started - pd.left
	if pd.left > 0 {
		note := fmt.Sprintf("Drawn: %s of %s attempts, the first %s (until %s)", count(drawn), count(pd.started), count(drawn-pd.extra), fmtT(pd.cut))
		if pd.extra > 0 {
			note += fmt.Sprintf(" and %s that violations name", count(pd.extra))
		}
		pv.Notes = append(pv.Notes, note+fmt.Sprintf("; %s left out.", count(pd.left)))
	}
	if pd.leftMarks > 0 {
		pv.Notes = append(pv.Notes, fmt.Sprintf("%s more faults, disconnects and producer events are not drawn.", count(pd.leftMarks)))
	}
	pv.Log, pv.LogNote = b.logItems(pd)
	pv.LogOpen = len(pv.Log) <= 120 || len(inv.byPart[pd.p]) > 0
	if ld := pd.log; ld != nil {
		// One line per list of missing records, naming every violation
		// that lists them.
		byText := map[string]int{}
		for _, n := range slices.Sorted(maps.Keys(ld.absent)) {
			l := ld.absent[n]
			v := b.r.Violations[n-1]
			what := "records " + idText(l.ids, l.total)
			if l.total == 1 {
				what = "record " + idText(l.ids, l.total)
			}
			if v.Batch != 0 {
				what += fmt.Sprintf(" (batch %d)", v.Batch)
			}
			what += ": not in the log; named by"
			i, ok := byText[what]
			if !ok {
				i = len(pv.Absent)
				byText[what] = i
				pv.Absent = append(pv.Absent, absentView{Text: what})
			}
			pv.Absent[i].Links = append(pv.Absent[i].Links, link{vref(n), fmt.Sprintf("#%d %s", n, v.Kind)})
		}
	}
	return pv
}

// idText spells out ids: "4, 8 and 9", "1, 2, ... and 7 more".
func idText(ids []int64, total int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	switch {
	case total > len(ids):
		return strings.Join(s, ", ") + fmt.Sprintf(" and %s more", count(total-len(ids)))
	case len(s) > 1:
		return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
	}
	return strings.Join(s, "")
}

// logItems lists a partition's log excerpt as runs of consecutive records
// of one batch, with the gaps in sequences and the records left out.
func (b *builder) logItems(pd *partData) ([]logItem, string) {
	ld := pd.log
	if ld == nil {
		return nil, "No read-back of this partition in the trace."
	}
	inv := b.c.inv
	id := "p" + strconv.Itoa(int(pd.p))
	var items []logItem
	type run struct {
		first, last tracer.LogRecord
		batch       int64
		ids         []int64
		n           int
		named       []int64
		hit         int
	}
	var cur *run
	flush := func() {
		if cur == nil {
			return
		}
		it := logItem{Kind: "run", Class: "run", Range: strconv.FormatInt(cur.first.Offset, 10)}
		if cur.last.Offset != cur.first.Offset {
			it.Range += "–" + strconv.FormatInt(cur.last.Offset, 10)
		}
		switch {
		case cur.first.ID < 0:
			it.Label, it.Class = "foreign", "run foreign"
			it.Title = fmt.Sprintf("offsets %s: %d record(s) kcheck did not write (producer %d, epoch %d)", it.Range, cur.n, cur.first.PID, cur.first.Epoch)
		case cur.batch == 0:
			it.Label, it.Class = "?", "run foreign"
			it.Title = fmt.Sprintf("offsets %s: %d record(s) no SendNew of this trace lists (producer %d, epoch %d, seq %s)", it.Range, cur.n, cur.first.PID, cur.first.Epoch, seqRange(cur.first.Seq, int32(cur.n)))
		default:
			it.Label = "b" + strconv.FormatInt(cur.batch, 10)
			it.Title = fmt.Sprintf("offsets %s: batch %d, producer %d, epoch %d, seq %s, records %s", it.Range, cur.batch, cur.first.PID, cur.first.Epoch,
				seqRange(cur.first.Seq, int32(cur.n)), idText(cur.ids, cur.n))
			if h, ok := b.batch[batchKey{pd.p, cur.batch}]; ok {
				it.Href = "#" + h
			}
			if n := inv.batch[batchKey{pd.p, cur.batch}]; n > 0 && (cur.hit == 0 || n < cur.hit) {
				cur.hit = n
			}
		}
		if cur.hit > 0 {
			it.Class += " hit"
			it.ID = fmt.Sprintf("%s-o%d", id, cur.first.Offset)
			it.Title += fmt.Sprintf("\nnamed by violation #%d (%s)", cur.hit, b.r.Violations[cur.hit-1].Kind)
			if len(cur.named) > 0 {
				it.Note = "named: " + idText(cur.named, len(cur.named))
			}
			for _, n := range inv.byPart[pd.p] {
				v := &b.r.Violations[n-1]
				if v.Batch == cur.batch && cur.batch != 0 || slices.ContainsFunc(cur.named, func(r int64) bool { return slices.Contains(v.Records, r) }) {
					setFirst(b.run, n, it.ID)
				}
			}
			setFirst(b.run, cur.hit, it.ID)
			if it.Href == "" {
				it.Href = vref(cur.hit)
			}
		}
		items = append(items, it)
		cur = nil
	}
	for j, rec := range ld.recs {
		if j > 0 && ld.idx[j] != ld.idx[j-1]+1 {
			flush()
			items = append(items, logItem{Kind: "skip", Label: fmt.Sprintf("… %s records …", count(ld.idx[j]-ld.idx[j-1]-1))})
		}
		if g, ok := ld.gaps[j]; ok {
			flush()
			it := logItem{Kind: "gap", Class: "gap", Label: fmt.Sprintf("seq %s of epoch %d missing", seqSpan(g.from, g.to), g.epoch)}
			it.Title = fmt.Sprintf("producer %d, epoch %d: sequences %s are not in the log before offset %d", g.pid, g.epoch, seqSpan(g.from, g.to), rec.Offset)
			if g.later {
				it.Class, it.Label = "gap later", fmt.Sprintf("seq %s of epoch %d: later", seqSpan(g.from, g.to), g.epoch)
				it.Title += "; some of them come later in the log (out of order)"
			}
			if k, ok := b.batchAt(pd, g.epoch, g.from); ok {
				it.Label += fmt.Sprintf(" (b%d)", k)
				it.Href = "#" + b.batch[batchKey{pd.p, k}]
				for _, n := range inv.byPart[pd.p] {
					if b.r.Violations[n-1].Batch == k {
						it.ID = fmt.Sprintf("%s-g%d", id, j)
						setFirst(b.run, n, it.ID)
					}
				}
			}
			items = append(items, it)
		}
		bt := int64(0)
		if rec.ID >= 0 {
			bt = b.batchOf[rec.ID]
		}
		same := cur != nil && rec.PID == cur.last.PID && rec.Epoch == cur.last.Epoch && (rec.ID < 0) == (cur.last.ID < 0) &&
			bt == cur.batch && (bt == 0 || rec.Seq == cur.last.Seq+1)
		if !same {
			flush()
			cur = &run{first: rec, batch: bt}
		}
		cur.last = rec
		cur.n++
		if len(cur.ids) < maxIDs && rec.ID >= 0 {
			cur.ids = append(cur.ids, rec.ID)
		}
		if n := inv.record[rec.ID]; n > 0 && rec.ID >= 0 {
			cur.named = append(cur.named, rec.ID)
			if cur.hit == 0 || n < cur.hit {
				cur.hit = n
			}
		}
	}
	flush()
	if len(ld.idx) > 0 && ld.idx[len(ld.idx)-1] < ld.total-1 {
		items = append(items, logItem{Kind: "skip", Label: fmt.Sprintf("… %s more records", count(ld.total-1-ld.idx[len(ld.idx)-1]))})
	}
	note := fmt.Sprintf("%s records read back (line %d).", count(ld.total), ld.line)
	if len(ld.recs) < ld.total {
		first := min(b.c.perRecords, ld.total)
		note = fmt.Sprintf("%s records read back (line %d); listed: the first %s", count(ld.total), ld.line, count(first))
		if len(ld.recs) > first {
			note += fmt.Sprintf(", and %s around records that violations name or gaps in sequences", count(len(ld.recs)-first))
		}
		note += "."
	}
	return items, note
}

// batchAt finds a drawn batch of the partition that was sent with the given
// epoch and base sequence.
func (b *builder) batchAt(pd *partData, epoch int16, seq int32) (int64, bool) {
	var best int64
	found := false
	for k, bd := range pd.batches {
		for _, a := range bd.attempts {
			if a.epoch == epoch && a.seq == seq && (!found || k < best) {
				best, found = k, true
			}
		}
	}
	return best, found
}

func seqRange(seq, n int32) string {
	if n <= 1 {
		return strconv.Itoa(int(seq))
	}
	return seqSpan(seq, seq+n-1)
}

func seqSpan(from, to int32) string {
	if from == to {
		return strconv.Itoa(int(from))
	}
	return fmt.Sprintf("%d–%d", from, to)
}

// count formats n with thousands separators.
func count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fmtT formats a trace time (nanoseconds) in milliseconds.
func fmtT(t int64) string { return strconv.FormatFloat(float64(t)/1e6, 'f', 3, 64) + " ms" }

func fmtDur(d int64) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) + " ms" }
