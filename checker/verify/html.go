package verify

import (
	"bufio"
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/kafkaerr"
	"github.com/kcheck/kcheck/checker/linz"
	"github.com/kcheck/kcheck/tracer"
)

// What the HTML report draws at most, so that a trace of a million events
// still gives a page of a few megabytes. Whatever a violation names is drawn
// beyond these (up to maxInvolved per partition); the page says what it left
// out.
const (
	attemptBudget = 8000  // attempts drawn over all partitions, shared out
	minAttempts   = 40    // attempts drawn per partition, at least ...
	maxAttempts   = 500   // ... and at most
	maxInvolved   = 1000  // attempts or marks drawn per partition because a violation names them
	maxGlobal     = 200   // Disconnects and partition-less Faults drawn
	recordBudget  = 16000 // log records listed over all partitions, shared out
	minRecords    = 100
	maxRecords    = 1000
	maxLogExtra   = 2000 // log records listed per partition around named records and gaps
	maxGaps       = 50   // sequence gaps marked per partition log
	maxViolations = 500  // violations listed
	maxIDs        = 40   // record ids spelled out per list
	maxParts      = 200  // partitions drawn: those violations name first, then the lowest
)

// Timeline geometry, in pixels.
const (
	gutter  = 92.0   // left margin for the lane labels
	plotW   = 1150.0 // the time axis
	markH   = 14     // one lane of marks
	laneH   = 12     // one lane of batches
	barH    = 8      // an attempt's bar
	laneTop = 3*markH + 6
	axisH   = 26
)

// outcome is how an attempt ended.
type outcome uint8

const (
	acked      outcome = iota // NONE or DUPLICATE_SEQUENCE_NUMBER
	errAnswer                 // any other error answer
	outOfOrder                // OUT_OF_ORDER_SEQUENCE_NUMBER
	noAnswer                  // disconnected, expired, failed, or unanswered at the end
)

var outcomeClass = [...]string{"ok", "err", "oos", "none"}

type batchKey struct {
	p int32
	b int64
}

// attempt is one send of a batch (SendNew or Resend) to what ended it.
type attempt struct {
	key           batchKey
	resend        bool
	start, end    int64
	line, endLine int
	req, node     int32
	epoch         int16
	seq, n        int32
	out           outcome
	result        string // how it ended, for its tooltip
	first         bool   // among its partition's first attempts: drawn whatever it shows
}

// batchDraw is a batch with at least one attempt drawn.
type batchDraw struct {
	key      batchKey
	attempts []*attempt
	endT     int64 // ExpireBatch or Fail, if one came
	endLine  int
	endWhy   string
}

// mark is an event drawn as a tick: Fault, Disconnect, Bump,
// ResolveSequences, ExpireBatch, Fail.
type mark struct {
	kind  tracer.Kind
	t     int64
	line  int
	batch int64
	tip   string
}

// partData is what the report draws of one partition.
type partData struct {
	p         int32
	batches   map[int64]*batchDraw
	marks     []mark
	started   int // attempts
	sent      int // batches (SendNew)
	outcomes  [4]int
	extra     int   // attempts drawn because a violation names them
	left      int   // attempts not drawn
	cut       int64 // start of the first attempt not drawn; -1 when all are
	marksSeen int
	leftMarks int
	log       *logData
}

// logData is the excerpt of a partition's read-back the report lists.
type logData struct {
	line   int // the ReadBack's trace line
	total  int
	recs   []tracer.LogRecord
	idx    []int           // each excerpt record's index in the whole log
	gaps   map[int]gap     // by excerpt index: sequences missing before it
	absent map[int]*idList // by violation number: named records not in the log
}

// idList is a capped list of record ids and how many there were.
type idList struct {
	ids   []int64
	total int
}

// gap is a run of sequences of one producer epoch missing from a log.
type gap struct {
	pid      int64
	epoch    int16
	from, to int32
	later    bool // some of them come later in the log
}

// involved indexes what the violations name, by 1-based violation number
// (the first one naming it).
type involved struct {
	batch  map[batchKey]int
	line   map[int]int
	record map[int64]int
	byPart map[int32][]int
}

func newInvolved(vs []checker.Violation) *involved {
	inv := &involved{batch: map[batchKey]int{}, line: map[int]int{}, record: map[int64]int{}, byPart: map[int32][]int{}}
	for i, v := range vs {
		n := i + 1
		if v.Partition >= 0 {
			inv.byPart[v.Partition] = append(inv.byPart[v.Partition], n)
			if v.Batch != 0 {
				setFirst(inv.batch, batchKey{v.Partition, v.Batch}, n)
			}
		}
		for _, l := range v.Lines {
			setFirst(inv.line, l, n)
		}
		for _, id := range v.Records {
			setFirst(inv.record, id, n)
		}
	}
	return inv
}

// vref links violation n: its entry, or the list when it is past those listed.
func vref(n int) string {
	if n > maxViolations {
		return "#violations"
	}
	return "#v" + strconv.Itoa(n)
}

// firstOf returns the smaller of two violation numbers, ignoring 0 (none).
func firstOf(a, b int) int {
	if a == 0 || b != 0 && b < a {
		return b
	}
	return a
}

func setFirst[K comparable, V any](m map[K]V, k K, v V) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// attempt returns the violation naming a's batch or one of its lines, or 0.
func (inv *involved) attempt(a *attempt) int {
	if n := inv.batch[a.key]; n > 0 {
		return n
	}
	if n := inv.line[a.line]; n > 0 {
		return n
	}
	return inv.line[a.endLine]
}

func (inv *involved) mark(p int32, m *mark) int {
	if n := inv.line[m.line]; n > 0 {
		return n
	}
	if m.batch != 0 {
		return inv.batch[batchKey{p, m.batch}]
	}
	return 0
}

// collector gathers, in one pass over the trace, what the page draws.
type collector struct {
	violations  []checker.Violation
	inv         *involved
	perAttempts int
	perMarks    int
	perRecords  int
	parts       map[int32]*partData
	open        map[batchKey][]*attempt
	global      []mark
	globalLeft  int
	last        int64 // time of the last event before the read-back
}

func (c *collector) part(p int32) *partData {
	pd := c.parts[p]
	if pd == nil {
		pd = &partData{p: p, batches: map[int64]*batchDraw{}, cut: -1}
		c.parts[p] = pd
	}
	return pd
}

func (c *collector) event(line int, e *tracer.Event) {
	if e.Kind != tracer.ReadBack && e.Kind != tracer.ReadBackShort {
		c.last = e.T
	}
	switch e.Kind {
	case tracer.SendNew, tracer.Resend:
		pd := c.part(e.Partition)
		pd.started++
		if e.Kind == tracer.SendNew {
			pd.sent++
		}
		k := batchKey{e.Partition, e.Batch}
		c.open[k] = append(c.open[k], &attempt{key: k, resend: e.Kind == tracer.Resend, start: e.T, line: line,
			req: e.Req, node: e.Node, epoch: e.Epoch, seq: e.Seq, n: e.N, first: pd.started <= c.perAttempts})
	case tracer.Receive:
		k := batchKey{e.Partition, e.Batch}
		list := c.open[k]
		if len(list) == 0 {
			return
		}
		i := slices.IndexFunc(list, func(a *attempt) bool { return a.req == e.Req && a.node == e.Node })
		if i < 0 {
			i = 0
		}
		a := list[i]
		if list = slices.Delete(list, i, i+1); len(list) == 0 {
			delete(c.open, k)
		} else {
			c.open[k] = list
		}
		a.end, a.endLine = e.T, line
		switch answer := kafkaerr.Classify(e.Err); {
		case e.Err == kafkaerr.None:
			a.out, a.result = acked, "acknowledged"
			if e.Offset >= 0 {
				a.result += " at offset " + strconv.FormatInt(e.Offset, 10)
			}
		case answer == kafkaerr.Acked:
			a.out, a.result = acked, e.Err+" (acknowledged, no offset)"
		case answer == kafkaerr.OutOfOrder:
			a.out, a.result = outOfOrder, e.Err
		default:
			a.out, a.result = errAnswer, e.Err
		}
		c.finish(a)
	case tracer.Disconnect:
		var cut []*attempt
		for k, list := range c.open {
			keep := list[:0]
			for _, a := range list {
				if a.node == e.Node {
					cut = append(cut, a)
				} else {
					keep = append(keep, a)
				}
			}
			if len(keep) == 0 {
				delete(c.open, k)
			} else {
				c.open[k] = keep
			}
		}
		c.endAll(cut, e.T, line, fmt.Sprintf("no answer: the connection to node %d was lost", e.Node))
		c.mark(-1, mark{kind: e.Kind, t: e.T, line: line,
			tip: fmt.Sprintf("Disconnect (line %d): the connection to node %d was lost; its outstanding batches go back to be retried", line, e.Node)})
	case tracer.ExpireBatch, tracer.Fail:
		k := batchKey{e.Partition, e.Batch}
		why := "expired (delivery.timeout.ms)"
		if e.Kind == tracer.Fail {
			why = "failed: " + e.Reason
		}
		c.endAll(c.open[k], e.T, line, "no answer: "+why)
		delete(c.open, k)
		if bd := c.part(e.Partition).batches[e.Batch]; bd != nil {
			bd.endT, bd.endLine, bd.endWhy = e.T, line, why
		}
		c.mark(e.Partition, mark{kind: e.Kind, t: e.T, line: line, batch: e.Batch,
			tip: fmt.Sprintf("%s (line %d): batch %d (epoch %d, seq %d) %s", e.Kind, line, e.Batch, e.Epoch, e.Seq, why)})
	case tracer.Bump:
		c.mark(e.Partition, mark{kind: e.Kind, t: e.T, line: line,
			tip: fmt.Sprintf("Bump (line %d): epoch bumped to %d; the partition's in-flight batches are renumbered from 0", line, e.Epoch)})
	case tracer.ResolveSequences:
		c.mark(e.Partition, mark{kind: e.Kind, t: e.T, line: line,
			tip: fmt.Sprintf("ResolveSequences (line %d): an unresolved sequence was settled (bump requested: %v)", line, e.Bumped)})
	case tracer.Fault:
		tip := fmt.Sprintf("Fault %s (line %d) on node %d", e.Fault, line, e.Node)
		if e.Seq >= 0 {
			tip += fmt.Sprintf(", hitting epoch %d seq %d", e.Epoch, e.Seq)
		}
		if e.Err != "" {
			tip += ", answered " + e.Err
		}
		c.mark(e.Partition, mark{kind: e.Kind, t: e.T, line: line, tip: tip})
	case tracer.ReadBack:
		c.readBack(line, e)
	}
}

// endAll ends attempts that got no answer, in trace order.
func (c *collector) endAll(as []*attempt, t int64, line int, why string) {
	as = slices.Clone(as)
	slices.SortFunc(as, func(a, b *attempt) int { return a.line - b.line })
	for _, a := range as {
		a.end, a.endLine, a.out, a.result = t, line, noAnswer, why
		c.finish(a)
	}
}

// finish counts an ended attempt and keeps it if it is drawn.
func (c *collector) finish(a *attempt) {
	pd := c.part(a.key.p)
	pd.outcomes[a.out]++
	switch {
	case a.first:
	case c.inv.attempt(a) > 0 && pd.extra < maxInvolved:
		pd.extra++
	default:
		pd.left++
		if pd.cut < 0 || a.start < pd.cut {
			pd.cut = a.start
		}
		return
	}
	bd := pd.batches[a.key.b]
	if bd == nil {
		bd = &batchDraw{key: a.key}
		pd.batches[a.key.b] = bd
	}
	bd.attempts = append(bd.attempts, a)
}

func (c *collector) mark(p int32, m mark) {
	if p < 0 {
		if len(c.global) < maxGlobal || c.inv.line[m.line] > 0 && len(c.global) < maxGlobal+maxInvolved {
			c.global = append(c.global, m)
		} else {
			c.globalLeft++
		}
		return
	}
	pd := c.part(p)
	pd.marksSeen++
	if pd.marksSeen <= c.perMarks || c.inv.mark(p, &m) > 0 && len(pd.marks) < c.perMarks+maxInvolved {
		pd.marks = append(pd.marks, m)
	} else {
		pd.leftMarks++
	}
}

// readBack keeps an excerpt of a partition's log: its first records, those
// around records a violation names, and those around gaps in a producer
// epoch's sequences.
func (c *collector) readBack(line int, e *tracer.Event) {
	pd := c.part(e.Partition)
	ld := &logData{line: line, total: len(e.Log), gaps: map[int]gap{}, absent: map[int]*idList{}}
	pd.log = ld
	extra := map[int]bool{}
	around := func(i int) {
		for j := max(i-2, 0); j <= min(i+2, len(e.Log)-1); j++ {
			if len(extra) < maxLogExtra {
				extra[j] = true
			}
		}
	}
	type pe struct {
		pid   int64
		epoch int16
	}
	next := map[pe]int32{}
	found := map[int64]bool{}
	var gapAt []int
	for i, r := range e.Log {
		if r.ID >= 0 && c.inv.record[r.ID] > 0 {
			found[r.ID] = true
			around(i)
		}
		if r.PID < 0 || r.Seq < 0 {
			continue
		}
		k := pe{r.PID, r.Epoch}
		want := next[k]
		if r.Seq > want && len(gapAt) < maxGaps {
			gapAt = append(gapAt, i)
			ld.gaps[i] = gap{pid: r.PID, epoch: r.Epoch, from: want, to: r.Seq - 1}
			around(i)
		}
		if r.Seq >= want {
			next[k] = r.Seq + 1
		}
	}
	// Whether a gap's sequences turn up later (a reorder, not a loss).
	for _, i := range gapAt {
		g := ld.gaps[i]
		for _, r := range e.Log[i+1:] {
			if r.PID == g.pid && r.Epoch == g.epoch && r.Seq >= g.from && r.Seq <= g.to {
				g.later = true
				break
			}
		}
		ld.gaps[i] = g
	}
	for i := range e.Log {
		if i < c.perRecords || extra[i] {
			ld.recs = append(ld.recs, e.Log[i])
			ld.idx = append(ld.idx, i)
		}
	}
	// The gaps, re-keyed by excerpt index.
	gaps := map[int]gap{}
	for j, i := range ld.idx {
		if g, ok := ld.gaps[i]; ok {
			gaps[j] = g
		}
	}
	ld.gaps = gaps
	for _, n := range c.inv.byPart[e.Partition] {
		for _, id := range c.violations[n-1].Records {
			if found[id] {
				continue
			}
			l := ld.absent[n]
			if l == nil {
				l = &idList{}
				ld.absent[n] = l
			}
			if l.total++; len(l.ids) < maxIDs {
				l.ids = append(l.ids, id)
			}
		}
	}
}

// WriteHTML writes dir/index.html, a self-contained page with timelines drawn from r.File
// read again, and Porcupine's view of each illegal partition; each file whole or not at all.
func (r *Report) WriteHTML(dir string) error {
	if err := r.writeHTML(dir); err != nil {
		return fmt.Errorf("HTML report in %s: %w", dir, err)
	}
	return nil
}

func (r *Report) writeHTML(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Porcupine's views go to a temporary directory first, so that a failure
	// leaves none half-written.
	var views map[int32]string
	var moves [][2]string
	if lr := r.linz; lr != nil && lr.Verdict == linz.Illegal {
		tmp, err := os.MkdirTemp(dir, ".kcheck-porcupine-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		files, err := lr.WriteIllegal(tmp)
		if err != nil {
			return err
		}
		views = map[int32]string{}
		for _, f := range files {
			name := filepath.Base(f)
			var p int32
			if _, err := fmt.Sscanf(name, "partition-%d.html", &p); err == nil {
				views[p] = name
			}
			moves = append(moves, [2]string{f, filepath.Join(dir, name)})
		}
	}
	pg, err := r.page(views)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".kcheck-index-*.html")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err := pageHTML.Execute(bw, pg); err != nil {
		tmp.Close()
		return fmt.Errorf("rendering: %w", err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	for _, m := range moves {
		if err := os.Rename(m[0], m[1]); err != nil {
			return err
		}
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, "index.html"))
}

// collect reads the trace again and gathers what the page draws, then maps
// the listed log records to their batches in a third, lighter pass.
func (r *Report) collect() (*collector, map[int64]int64, error) {
	parts := 1 // the partitions the trace names, not the header's count, which it only claims
	if r.linz != nil {
		parts = max(len(r.linz.Partitions), 1)
	}
	c := &collector{
		violations:  r.Violations,
		inv:         newInvolved(r.Violations),
		perAttempts: min(max(attemptBudget/parts, minAttempts), maxAttempts),
		perRecords:  min(max(recordBudget/parts, minRecords), maxRecords),
		parts:       map[int32]*partData{},
		open:        map[batchKey][]*attempt{},
	}
	c.perMarks = c.perAttempts / 2
	f, err := tracer.Open(r.File)
	if err != nil {
		return nil, nil, err
	}
	err = f.Each(func(line int, e *tracer.Event) error {
		c.event(line, e)
		return nil
	})
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	var rest []*attempt
	for _, list := range c.open {
		rest = append(rest, list...)
	}
	c.endAll(rest, c.last, 0, "no answer by the end of the trace")
	c.open = nil

	want := map[int64]bool{}
	for _, pd := range c.parts {
		if pd.log != nil {
			for _, rec := range pd.log.recs {
				if rec.ID >= 0 {
					want[rec.ID] = true
				}
			}
		}
	}
	batchOf := map[int64]int64{}
	if len(want) == 0 {
		return c, batchOf, nil
	}
	f, err = tracer.Open(r.File)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	err = f.Each(func(line int, e *tracer.Event) error {
		if e.Kind == tracer.SendNew {
			for _, id := range e.Records {
				if want[id] {
					batchOf[id] = e.Batch
				}
			}
		}
		return nil
	})
	return c, batchOf, err
}

// The page's view model: every string the template prints, ready.

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

type svgView struct {
	ID, W, H       string
	PlotX, PlotW   string
	PlotY, PlotH   string
	TEnd, LabelX   string
	AxisY, AxisEnd string
	TickY, TickY2  string
	TickTextY      string
	Labels         []svgLabel
	Guides         []svgLine
	Marks          []svgMark
	Batches        []svgBatch
	Shade          *svgShade
	Ticks          []svgTick
	Empty, EmptyY  string
	EmptyX         string
	LaneTop, LaneH string
}

type svgLabel struct{ Y, Text, Class string }
type svgLine struct{ Class, X, Y1, Y2 string }

type svgMark struct {
	ID, Class, X, Y1, Y2, Title, Href string
}

type svgBatch struct {
	ID, Class, Title, Href string
	LX1, LX2, LY, BarY     string
	Life                   bool   // a line from its first send to its end: more than one attempt, or an end
	EndX                   string // a tick where ExpireBatch or Fail ended it
	EndY1, EndY2           string
	Label, LabelX, LabelDX string
	LabelY, LabelAnchor    string
	BandY, BandW           string // a band behind a batch a violation names
	Bars                   []svgBar
}

type svgBar struct{ ID, Class, X, W, Title string }

type svgShade struct{ X, Y, W, H, Text, TextX, TextY string }

type svgTick struct{ X, Label string }

type logItem struct {
	Kind                   string // run, gap or skip
	ID, Class, Href, Title string
	Label, Range, Note     string
}

// builder turns a collector into the page.
type builder struct {
	r       *Report
	c       *collector
	batchOf map[int64]int64
	tEnd    float64
	line    map[int]string      // trace line → the element showing it
	batch   map[batchKey]string // batch → its element in a timeline
	run     map[int]string      // violation → its first log run
	drawn   map[int32]bool      // the partitions drawn
}

func (r *Report) page(views map[int32]string) (*page, error) {
	c, batchOf, err := r.collect()
	if err != nil {
		return nil, err
	}
	b := &builder{r: r, c: c, batchOf: batchOf, line: map[int]string{}, batch: map[batchKey]string{}, run: map[int]string{}}
	b.tEnd = b.axisEnd()
	pg := &page{
		File: r.File, Verdict: strings.ToUpper(string(r.Verdict)), VerdictClass: string(r.Verdict),
	}
	pg.Title = fmt.Sprintf("kcheck verify: %s: %s", pg.Verdict, r.File)
	step := niceStep(b.tEnd)
	pg.Range = tickLabel(0, step) + " – " + tickLabel(b.tEnd, step)
	switch r.Verdict {
	case Valid:
		pg.VerdictNote = "every check passed"
	case Inconclusive:
		pg.VerdictNote = "nothing wrong found, but a check could not finish: this is not a pass"
		if summary, _ := r.Incomplete(); summary != "" {
			pg.VerdictNote = summary + ": this is not a pass"
		}
	default:
		pg.VerdictNote = kindSummary(r.Violations)
	}
	pg.Trace = r.traceLine()
	pg.ViolationsTotal = len(r.Violations)
	pg.Checks = r.checks(views)

	ids := slices.Sorted(maps.Keys(c.parts))
	if silent := missing(r.Header.Partitions, ids); len(silent) > 0 {
		pg.PartsNotes = append(pg.PartsNotes, fmt.Sprintf("No event names %s of the header's %d.", partitionsText(silent), r.Header.Partitions))
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
	return pg, nil
}

// axisEnd is the end of the common time axis: the last thing drawn.
func (b *builder) axisEnd() float64 {
	var end int64
	cut := false
	for _, pd := range b.c.parts {
		cut = cut || pd.cut >= 0
		for _, bd := range pd.batches {
			for _, a := range bd.attempts {
				end = max(end, a.end)
			}
			end = max(end, bd.endT)
		}
		for _, m := range pd.marks {
			if pd.cut < 0 || m.t <= pd.cut || b.c.inv.mark(pd.p, &m) > 0 {
				end = max(end, m.t)
			}
		}
	}
	for _, m := range b.c.global {
		end = max(end, m.t)
	}
	if !cut {
		end = max(end, b.c.last)
	}
	return float64(max(end, 1))
}

func (b *builder) x(t int64) float64 { return gutter + float64(t)/b.tEnd*plotW }

func (r *Report) traceLine() string {
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
	s := fmt.Sprintf("%s events by %s (%s), topic %q, %d partitions; %s; broker %s %s (%s)",
		count(r.Events), h.Writer, h.Client, h.Topic, h.Partitions, rules, h.Broker.Kind, h.Broker.Version, h.Broker.NoStateRule)
	if len(h.Faults) > 0 {
		s += "; faults: " + strings.Join(h.Faults, ", ")
	}
	return s + fmt.Sprintf("; seed %d; checked in %v", h.Seed, r.Duration.Round(1e6))
}

func (r *Report) checks(views map[int32]string) []checkRow {
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
			row.Result, row.Class = fmt.Sprintf("accepted (%s states, %v)", count(int(t.States)), t.Duration.Round(1e6)), "good"
		default:
			row.Result, row.Class = fmt.Sprintf("REJECTED after line %d (%s states, %v)", t.Furthest, count(int(t.States)), t.Duration.Round(1e6)), "bad"
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
	if lr := b.r.linz; lr != nil {
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

// timeline draws one partition: three lanes of marks, then its batches
// packed into lanes (a batch keeps one lane from its first send to its
// end), then the time axis.
func (b *builder) timeline(pd *partData) svgView {
	inv := b.c.inv
	id := "p" + strconv.Itoa(int(pd.p))
	sv := svgView{ID: id + "-tl", PlotX: num(gutter), PlotW: num(plotW)}

	bds := make([]*batchDraw, 0, len(pd.batches))
	for _, bd := range pd.batches {
		slices.SortFunc(bd.attempts, func(x, y *attempt) int { return x.line - y.line })
		bds = append(bds, bd)
	}
	slices.SortFunc(bds, func(x, y *batchDraw) int { return x.attempts[0].line - y.attempts[0].line })

	type placed struct {
		bd           *batchDraw
		lane         int
		x1, x2       float64
		hit          int
		label        string
		labelAt      int // 0: none, 1: right of the batch, 2: left of it, 3: in the gutter
		start, endAt int64
	}
	var laneEnd []float64
	var ps []placed
	for _, bd := range bds {
		pl := placed{bd: bd, start: bd.attempts[0].start}
		for _, a := range bd.attempts {
			pl.endAt = max(pl.endAt, a.end)
			if pl.hit == 0 {
				pl.hit = inv.attempt(a)
			}
		}
		pl.endAt = max(pl.endAt, bd.endT)
		pl.x1, pl.x2 = b.x(pl.start), b.x(pl.endAt)
		lo, hi := pl.x1, pl.x2
		if pl.hit > 0 {
			pl.label = "b" + strconv.FormatInt(bd.key.b, 10)
			named := 0
			for _, n := range inv.byPart[pd.p] {
				if b.r.Violations[n-1].Batch != bd.key.b {
					continue
				}
				if named++; named > 3 {
					pl.label += " …"
					break
				}
				pl.label += " #" + strconv.Itoa(n)
			}
			if named == 0 {
				pl.label += " #" + strconv.Itoa(pl.hit)
			}
			switch w := 6.5*float64(len(pl.label)) + 6; {
			case hi+w <= gutter+plotW:
				pl.labelAt, hi = 1, hi+w
			case lo-w >= gutter:
				pl.labelAt, lo = 2, lo-w
			default:
				pl.labelAt = 3
			}
		}
		pl.lane = -1
		for l, e := range laneEnd {
			if e+2 <= lo {
				pl.lane = l
				break
			}
		}
		if pl.lane < 0 {
			pl.lane = len(laneEnd)
			laneEnd = append(laneEnd, 0)
		}
		laneEnd[pl.lane] = hi
		ps = append(ps, pl)
	}
	lanes := max(len(laneEnd), 1)
	laneBot := laneTop + lanes*laneH
	axisY := laneBot + 6
	sv.W, sv.H = num(gutter+plotW+28), strconv.Itoa(axisY+axisH)
	sv.PlotY, sv.PlotH = "0", strconv.Itoa(axisY)
	sv.LaneTop, sv.LaneH = strconv.Itoa(laneTop-2), strconv.Itoa(laneBot-laneTop+4)
	sv.AxisY, sv.AxisEnd = strconv.Itoa(axisY), num(gutter+plotW)
	sv.TickY, sv.TickY2, sv.TickTextY = strconv.Itoa(axisY), strconv.Itoa(axisY+4), strconv.Itoa(axisY+15)
	sv.TEnd, sv.LabelX = num(b.tEnd), num(gutter-8)
	sv.Labels = []svgLabel{
		{Y: strconv.Itoa(markH - 4), Text: "faults"},
		{Y: strconv.Itoa(2*markH - 4), Text: "disconnects"},
		{Y: strconv.Itoa(3*markH - 4), Text: "producer"},
	}
	gutterLabel := map[int]bool{}
	for _, pl := range ps {
		if pl.labelAt == 3 && !gutterLabel[pl.lane] {
			gutterLabel[pl.lane] = true
			sv.Labels = append(sv.Labels, svgLabel{Y: strconv.Itoa(laneTop + pl.lane*laneH + laneH - 3), Text: pl.label, Class: "ll hit"})
		}
	}
	if !gutterLabel[0] {
		sv.Labels = append(sv.Labels, svgLabel{Y: strconv.Itoa(laneTop + laneH - 3), Text: "batches"})
	}
	for i := range sv.Labels {
		if sv.Labels[i].Class == "" {
			sv.Labels[i].Class = "ll"
		}
	}
	if len(ps) == 0 {
		sv.Empty, sv.EmptyX, sv.EmptyY = "no attempts in this partition", num(gutter+8), strconv.Itoa(laneTop+laneH-3)
	}

	// Marks, with faint guides down through the batches.
	drawMark := func(m *mark, global bool) {
		hit := 0
		if !global {
			hit = inv.mark(pd.p, m)
		} else {
			hit = inv.line[m.line]
		}
		if pd.cut >= 0 && m.t > pd.cut && hit == 0 {
			pd.leftMarks++
			return
		}
		lane, class := 2, "bump"
		switch m.kind {
		case tracer.Fault:
			lane, class = 0, "fault"
		case tracer.Disconnect:
			lane, class = 1, "disc"
		case tracer.ResolveSequences:
			class = "resolve"
		case tracer.ExpireBatch, tracer.Fail:
			class = "expire"
		}
		x := num(b.x(m.t))
		sm := svgMark{Class: "mk " + class, X: x, Y1: strconv.Itoa(lane*markH + 2), Y2: strconv.Itoa((lane+1)*markH - 2), Title: m.tip}
		if hit > 0 {
			sm.Class += " hit"
			sm.Href = vref(hit)
			sm.Title += fmt.Sprintf("\nnamed by violation #%d", hit)
			if !global {
				sm.ID = fmt.Sprintf("%s-m%d", id, m.line)
				setFirst(b.line, m.line, sm.ID)
			}
		}
		sv.Marks = append(sv.Marks, sm)
		if class == "fault" || class == "disc" || class == "bump" {
			sv.Guides = append(sv.Guides, svgLine{Class: "guide " + class, X: x, Y1: strconv.Itoa((lane+1)*markH - 2), Y2: strconv.Itoa(laneBot)})
		}
	}
	for i := range pd.marks {
		drawMark(&pd.marks[i], false)
	}
	for i := range b.c.global {
		drawMark(&b.c.global[i], true)
	}

	for _, pl := range ps {
		bd := pl.bd
		y := laneTop + pl.lane*laneH
		first := bd.attempts[0]
		sb := svgBatch{
			ID:    fmt.Sprintf("%s-b%d", id, bd.key.b),
			Class: "batch",
			LX1:   num(pl.x1), LX2: num(pl.x2), LY: num(float64(y) + laneH/2 - 0.5), BarY: strconv.Itoa(y + (laneH-barH)/2),
			Title: fmt.Sprintf("batch %d: %d records, epoch %d, seq %s", bd.key.b, first.n, first.epoch, seqRange(first.seq, first.n)),
		}
		b.batch[bd.key] = sb.ID
		sb.Life = len(bd.attempts) > 1 || bd.endLine > 0 || pl.hit > 0
		if bd.endLine > 0 {
			sb.EndX, sb.EndY1, sb.EndY2 = num(b.x(bd.endT)), strconv.Itoa(y+1), strconv.Itoa(y+laneH-1)
			sb.Title += fmt.Sprintf("; %s (line %d)", bd.endWhy, bd.endLine)
		}
		if pl.hit > 0 {
			sb.Class += " hit"
			sb.Href = vref(pl.hit)
			sb.Title += fmt.Sprintf("\nnamed by violation #%d (%s)", pl.hit, b.r.Violations[pl.hit-1].Kind)
			sb.BandY, sb.BandW = strconv.Itoa(y), num(pl.x2-pl.x1)
			sb.LabelY = strconv.Itoa(y + laneH - 2)
			switch pl.labelAt {
			case 1:
				sb.Label, sb.LabelX, sb.LabelDX, sb.LabelAnchor = pl.label, num(pl.x2), "5", "start"
			case 2:
				sb.Label, sb.LabelX, sb.LabelDX, sb.LabelAnchor = pl.label, num(pl.x1), "-5", "end"
			}
		}
		for _, a := range bd.attempts {
			bar := svgBar{Class: "a " + outcomeClass[a.out], X: num(b.x(a.start)), W: num(b.x(a.end) - b.x(a.start))}
			kind := "SendNew"
			if a.resend {
				kind = "Resend"
			}
			ended := fmt.Sprintf("%s (line %d)", a.result, a.endLine)
			if a.endLine == 0 {
				ended = a.result
			}
			bar.Title = fmt.Sprintf("batch %d: %s (line %d) → %s\nepoch %d, seq %s, request %d to node %d\n%s → %s (%s)",
				bd.key.b, kind, a.line, ended, a.epoch, seqRange(a.seq, a.n), a.req, a.node, fmtT(a.start), fmtT(a.end), fmtDur(a.end-a.start))
			if n := firstOf(inv.line[a.line], inv.line[a.endLine]); n > 0 {
				bar.Class += " hit"
				bar.ID = fmt.Sprintf("%s-a%d", id, a.line)
				bar.Title += fmt.Sprintf("\nnamed by violation #%d", n)
				if inv.line[a.line] > 0 {
					setFirst(b.line, a.line, bar.ID)
				}
				if inv.line[a.endLine] > 0 {
					setFirst(b.line, a.endLine, bar.ID)
				}
			}
			sb.Bars = append(sb.Bars, bar)
		}
		sv.Batches = append(sv.Batches, sb)
	}

	if pd.cut >= 0 {
		x := b.x(pd.cut)
		sv.Shade = &svgShade{X: num(x), Y: strconv.Itoa(laneTop - 2), W: num(gutter + plotW - x), H: strconv.Itoa(laneBot - laneTop + 2),
			Text:  fmt.Sprintf("after %s: only what violations name (%s attempts left out)", fmtT(pd.cut), count(pd.left)),
			TextX: num(x + 4), TextY: strconv.Itoa(laneTop + 9)}
	}
	step := niceStep(b.tEnd)
	for i := 0; float64(i)*step <= b.tEnd*(1+1e-9); i++ {
		t := float64(i) * step
		sv.Ticks = append(sv.Ticks, svgTick{X: num(gutter + t/b.tEnd*plotW), Label: tickLabel(t, step)})
	}
	return sv
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

// num formats a coordinate with at most three decimals, enough for the
// page's script to zoom in a thousandfold.
func num(x float64) string {
	return strconv.FormatFloat(math.Round(x*1000)/1000, 'f', -1, 64)
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

// niceStep is the tick spacing for a span of nanoseconds: 1, 2 or 5 times a
// power of ten, about eight ticks. The page's script computes the same.
func niceStep(span float64) float64 {
	raw := span / 8
	if raw <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// tickLabel formats t (nanoseconds) in the unit the step suits, with as many
// decimals as the step needs. The page's script computes the same.
func tickLabel(t, step float64) string {
	if t == 0 {
		return "0"
	}
	unit, name := 1.0, "ns"
	switch {
	case step >= 1e9:
		unit, name = 1e9, "s"
	case step >= 1e6:
		unit, name = 1e6, "ms"
	case step >= 1e3:
		unit, name = 1e3, "µs"
	}
	d := max(0, int(-math.Floor(math.Log10(step/unit)+1e-9)))
	return strconv.FormatFloat(t/unit, 'f', d, 64) + " " + name
}

var pageHTML = template.Must(template.New("page").Parse(pageTemplate))

const pageTemplate = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
:root{--ok:#43a047;--err:#f2b600;--oos:#8e44ad;--none:#a7a7a7;--fault:#e8590c;--disc:#c92a2a;--bump:#1971c2;--resolve:#0c8599;--expire:#212529;--hit:#d6001c}
*{box-sizing:border-box}
body{margin:0;color:#1d1f21;background:#fff;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1320px;margin:0 auto;padding:16px 20px 60px}
code{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
a{color:#1864ab}
h2{margin:28px 0 10px;font-size:20px;border-bottom:1px solid #dee2e6;padding-bottom:4px}
h3{margin:0 0 4px;font-size:16px}
details.logd summary{margin:10px 0 2px;font-size:13px;font-weight:600;cursor:pointer}
.verdict{border-left:8px solid;padding:10px 16px;border-radius:4px;display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 18px}
.verdict.valid{background:#ebfbee;border-color:#2b8a3e}
.verdict.violations{background:#fff0f0;border-color:#c92a2a}
.verdict.inconclusive{background:#fff9db;border-color:#f08c00}
.vword{font-size:28px;font-weight:700;letter-spacing:.04em}
.valid .vword{color:#2b8a3e}.violations .vword{color:#c92a2a}.inconclusive .vword{color:#e67700}
.vnote{font-size:16px}
.file{flex-basis:100%;color:#495057}
.trace{color:#495057;font-size:13px;margin:8px 0}
table.checks{border-collapse:collapse;margin:6px 0}
.checks th{text-align:left;font-weight:600;padding:4px 14px 4px 8px;vertical-align:top;white-space:nowrap;border-left:4px solid}
.checks td{padding:4px 8px;vertical-align:top}
.checks tr.good th{border-color:#2b8a3e}.checks tr.bad th{border-color:#c92a2a}.checks tr.meh th{border-color:#f08c00}
.checks tr.bad strong{color:#c92a2a}
.note{color:#495057;font-size:13px}
nav.toc{margin:12px 0;font-size:13px}
nav.toc a{margin-right:4px}
nav.toc a.bad{color:#c92a2a;font-weight:600}
ol.violations{list-style:none;padding:0;margin:0}
.violation{border:1px solid #dee2e6;border-left:4px solid var(--hit);border-radius:4px;padding:8px 12px;margin:0 0 10px}
.violation:target{box-shadow:0 0 0 3px #ffc9c9}
.vh .num{color:#868e96;font-weight:600}
.vh .kind{font-weight:700;color:var(--hit)}
.vh .where{color:#495057;margin-left:6px}
.detail{margin:4px 0}
.see{margin:4px 0;font-size:13px}
table.lines{border-collapse:collapse;width:100%;table-layout:fixed}
.lines td{padding:1px 6px;vertical-align:top;border-top:1px solid #f1f3f5}
.lines td.ln{width:80px;white-space:nowrap;font-size:12px}
.lines code{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;color:#343a40}
.toolbar{position:sticky;top:0;z-index:2;background:#f8f9fa;border:1px solid #dee2e6;border-radius:4px;padding:6px 10px;display:flex;flex-wrap:wrap;gap:6px 18px;font-size:12px;align-items:center}
.legend span.i{white-space:nowrap;margin-right:10px}
.sw{display:inline-block;width:16px;height:8px;margin-right:4px;vertical-align:middle}
.sw.ok{background:var(--ok)}.sw.err{background:var(--err)}.sw.oos{background:var(--oos)}.sw.none{background:var(--none)}
.sw.hit{background:#fff;border:2px solid var(--hit);height:10px}
.sw.m{width:3px;height:13px}
.sw.fault{background:var(--fault)}.sw.disc{background:var(--disc)}.sw.bump{background:var(--bump)}.sw.resolve{background:var(--resolve)}.sw.expire{background:var(--expire)}
.zoom button{font:inherit;padding:0 6px}
.zoom-status{font-weight:600}
.partition{margin:18px 0 26px;padding-top:6px;border-top:1px solid #e9ecef}
.partition:target h3{color:var(--hit)}
a.vlink{font-size:12px;font-weight:600;color:var(--hit);margin-left:6px}
.pstats,.pnote{margin:2px 0;font-size:12px;color:#495057}
.tlwrap{overflow-x:auto;margin:4px 0}
svg.timeline{display:block;user-select:none;-webkit-user-select:none;cursor:crosshair}
svg .ll{font-size:11px;fill:#495057;text-anchor:end}
svg .lanes{fill:#f8f9fa}
svg .empty{font-size:11px;fill:#868e96}
svg .a{stroke-width:1}
svg .a.ok{fill:var(--ok);stroke:var(--ok)}
svg .a.err{fill:var(--err);stroke:var(--err)}
svg .a.oos{fill:var(--oos);stroke:var(--oos)}
svg .a.none{fill:var(--none);stroke:var(--none)}
svg .a.hit{stroke:#000;stroke-width:1.5}
svg .band{fill:#ffe3e3}
svg .ll.hit{fill:var(--hit);font-weight:700}
svg .a:target{stroke:#000;stroke-width:3}
svg .life{stroke:#adb5bd;stroke-width:1}
svg .batch.hit .life{stroke:var(--hit);stroke-width:1.5}
svg .batch:target .life{stroke:#000;stroke-width:3}
svg .end{stroke:var(--expire);stroke-width:2}
svg .bl{font-size:10px;font-weight:700;fill:var(--hit)}
svg .mk{stroke-width:3}
svg .mk.fault{stroke:var(--fault)}svg .mk.disc{stroke:var(--disc)}svg .mk.bump{stroke:var(--bump)}
svg .mk.resolve{stroke:var(--resolve)}svg .mk.expire{stroke:var(--expire)}
svg .mk.hit{stroke-width:5}
svg .mk:target{stroke:#000}
svg .guide{stroke-width:1;stroke-opacity:.22}
svg .guide.fault{stroke:var(--fault)}svg .guide.disc{stroke:var(--disc);stroke-opacity:.45}svg .guide.bump{stroke:var(--bump);stroke-opacity:.45}
svg .shade{fill:#f1f3f5}
svg .shade-t{font-size:10px;fill:#868e96}
svg .axis{stroke:#868e96}
svg .ticks line{stroke:#868e96}
svg .ticks text{font-size:10px;fill:#495057;text-anchor:middle}
svg .sel{fill:#1971c2;fill-opacity:.12;stroke:#1971c2}
.log{display:flex;flex-wrap:wrap;gap:3px;margin:4px 0;font:11px/1.25 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
.log>*{border-radius:3px;padding:1px 5px;text-decoration:none;color:inherit}
.run{display:inline-flex;flex-direction:column;min-width:38px;border:1px solid #ced4da;background:#f1f3f5}
.run b{font-weight:600;color:#343a40}.run span{color:#6c757d}
a.run:hover{border-color:#1971c2}
.run.foreign{background:#fff;border-style:dashed}
.run.hit{border:2px solid var(--hit);background:#fff0f0}
.run .named{color:var(--hit)}
.run:target{box-shadow:0 0 0 3px #ffc9c9}
.gap{display:inline-flex;align-items:center;border:2px dashed var(--hit);color:var(--hit);font-weight:600}
.gap.later{border-color:var(--err);color:#8f6b00}
.skip{display:inline-flex;align-items:center;color:#868e96}
.absent{margin:2px 0;font-size:12px;color:var(--hit)}
</style></head>
<body data-script="none">
<main>
<header class="verdict {{.VerdictClass}}">
<div class="vword">{{.Verdict}}</div><div class="vnote">{{.VerdictNote}}</div>
<div class="file">kcheck verify <code>{{.File}}</code></div>
</header>
<p class="trace">{{.Trace}}</p>
<table class="checks">
{{range .Checks}}<tr class="{{.Class}}"><th>{{.Name}}</th><td><strong>{{.Result}}</strong>{{range .Notes}}<div class="note">{{.}}</div>{{end}}{{if .Links}}<div class="note">{{range $i, $l := .Links}}{{if $i}} · {{end}}<a href="{{$l.Href}}">{{$l.Text}}</a>{{end}}</div>{{end}}</td></tr>
{{end}}</table>
<nav class="toc">{{if .Violations}}<a href="#violations">Violations</a> · {{end}}<a href="#timelines">Partitions</a>: {{range .Partitions}}<a href="#{{.ID}}"{{if .Violations}} class="bad"{{end}}>{{.ID}}</a>{{end}}</nav>
{{if .Violations}}<section id="violations">
<h2>{{.ViolationsTotal}} violation(s)</h2>
{{if .ViolationsLeft}}<p class="note">The first {{len .Violations}} are listed; {{.ViolationsLeft}} more are in the text and JSON reports.</p>{{end}}
<ol class="violations">
{{range .Violations}}<li id="{{.ID}}" class="violation">
<div class="vh"><span class="num">#{{.Num}}</span> <span class="kind">{{.Kind}}</span>{{if .Where}} <span class="where">{{.Where}}</span>{{end}}</div>
<p class="detail">{{.Detail}}</p>
{{if .See}}<p class="see">See {{range $i, $l := .See}}{{if $i}} · {{end}}<a href="{{$l.Href}}">{{$l.Text}}</a>{{end}}</p>{{end}}
{{if .Lines}}<table class="lines">{{range .Lines}}<tr><td class="ln">{{if .Href}}<a href="{{.Href}}" title="show it in the timeline">line {{.N}}</a>{{else}}line {{.N}}{{end}}</td><td><code title="{{.Text}}">{{.Text}}</code></td></tr>{{end}}</table>{{end}}
</li>
{{end}}</ol>
</section>{{end}}
<section id="timelines">
<h2>Partitions</h2>
{{range .PartsNotes}}<p class="note">{{.}}</p>
{{end}}<div class="toolbar">
<span class="legend"><span class="i"><span class="sw ok"></span>acknowledged</span><span class="i"><span class="sw err"></span>error answer (retried)</span><span class="i"><span class="sw oos"></span>OUT_OF_ORDER_SEQUENCE_NUMBER</span><span class="i"><span class="sw none"></span>no answer (disconnected, expired, failed)</span><span class="i"><span class="sw hit"></span>named by a violation</span>
<span class="i"><span class="sw m fault"></span>Fault</span><span class="i"><span class="sw m disc"></span>Disconnect</span><span class="i"><span class="sw m bump"></span>Bump</span><span class="i"><span class="sw m resolve"></span>ResolveSequences</span><span class="i"><span class="sw m expire"></span>ExpireBatch / Fail</span></span>
<span class="zoom">time <span class="zoom-status">{{.Range}}</span> · drag across a timeline to zoom in · double-click or <button type="button" class="zoom-reset">zoom out</button></span>
</div>
{{range .Partitions}}<section class="partition" id="{{.ID}}">
<h3>{{.Title}}{{range .Violations}}<a class="vlink" href="{{.Href}}">{{.Text}}</a>{{end}}</h3>
<p class="pstats">{{.Stats}}{{if .Linz}} · {{.Linz}}{{end}}{{if .View}} · <a href="{{.View}}">Porcupine's view of this partition</a>{{end}}</p>
{{range .Notes}}<p class="pnote">{{.}}</p>{{end}}
<div class="tlwrap">{{template "svg" .SVG}}</div>
<details class="logd" id="{{.ID}}-log"{{if .LogOpen}} open{{end}}><summary>Log as read back: offsets, and the batch of each run of records</summary>
<p class="pnote">{{.LogNote}}</p>
{{if .Log}}<div class="log">{{range .Log}}{{if eq .Kind "run"}}<a{{if .ID}} id="{{.ID}}"{{end}} class="{{.Class}}"{{if .Href}} href="{{.Href}}"{{end}} title="{{.Title}}"><b>{{.Label}}</b><span>{{.Range}}</span>{{if .Note}}<span class="named">{{.Note}}</span>{{end}}</a>{{else if eq .Kind "gap"}}<a{{if .ID}} id="{{.ID}}"{{end}} class="{{.Class}}"{{if .Href}} href="{{.Href}}"{{end}} title="{{.Title}}">{{.Label}}</a>{{else}}<span class="skip">{{.Label}}</span>{{end}}{{end}}</div>{{end}}
</details>
{{range .Absent}}<p class="absent">{{.Text}}{{range .Links}} <a href="{{.Href}}">{{.Text}}</a>{{end}}</p>{{end}}
</section>
{{end}}</section>
</main>
<script>
(function () {
  "use strict";
  var svgs = document.querySelectorAll("svg.timeline");
  document.body.setAttribute("data-script", "ok");
  if (!svgs.length) return;
  var NS = svgs[0].namespaceURI;
  var G = +svgs[0].getAttribute("data-gutter");
  var W = +svgs[0].getAttribute("data-width");
  var T = +svgs[0].getAttribute("data-tend");
  var view = [0, T];

  function niceStep(span) {
    var raw = span / 8;
    if (raw <= 0) return 1;
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var ms = [1, 2, 5];
    for (var i = 0; i < ms.length; i++) if (ms[i] * mag >= raw) return ms[i] * mag;
    return 10 * mag;
  }
  function label(t, step) {
    if (t === 0) return "0";
    var u = step >= 1e9 ? [1e9, "s"] : step >= 1e6 ? [1e6, "ms"] : step >= 1e3 ? [1e3, "\u00b5s"] : [1, "ns"];
    var d = Math.max(0, -Math.floor(Math.log10(step / u[0]) + 1e-9));
    return (t / u[0]).toFixed(d) + " " + u[1];
  }
  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text) e.textContent = text;
    return e;
  }
  function ticks(svg, step) {
    var g = svg.querySelector("g.ticks");
    if (!g) return;
    var y = +g.getAttribute("data-y");
    while (g.firstChild) g.removeChild(g.firstChild);
    var span = view[1] - view[0];
    for (var i = Math.ceil(view[0] / step); i * step <= view[1] + step * 1e-9; i++) {
      var t = i * step, x = G + (t - view[0]) / span * W;
      g.appendChild(el("line", {x1: x, x2: x, y1: y, y2: y + 4}));
      g.appendChild(el("text", {x: x, y: y + 15}, label(t, step)));
    }
  }
  function place() {
    var span = view[1] - view[0], k = W / span, step = niceStep(span);
    function sx(x) { return G + ((x - G) * T / W - view[0]) * k; }
    for (var s = 0; s < svgs.length; s++) {
      var els = svgs[s].querySelectorAll(".plot rect, .plot line, .plot text");
      for (var i = 0; i < els.length; i++) {
        var e = els[i], o = e.kcheckX;
        if (!o) {
          o = e.kcheckX = e.tagName === "line" ?
            [+e.getAttribute("x1"), +e.getAttribute("x2")] :
            [+e.getAttribute("x"), +(e.getAttribute("width") || 0)];
        }
        if (e.tagName === "line") {
          e.setAttribute("x1", sx(o[0]));
          e.setAttribute("x2", sx(o[1]));
        } else {
          e.setAttribute("x", sx(o[0]));
          if (e.tagName === "rect") e.setAttribute("width", o[1] * T / W * k);
        }
      }
      ticks(svgs[s], step);
    }
    var st = document.querySelectorAll(".zoom-status");
    for (var j = 0; j < st.length; j++) st[j].textContent = label(view[0], step) + " \u2013 " + label(view[1], step);
    document.body.setAttribute("data-zoom", Math.round(view[0]) + "-" + Math.round(view[1]));
  }
  function zoom(a, b) {
    a = Math.max(0, Math.min(a, T));
    b = Math.max(0, Math.min(b, T));
    if (b - a < 1000) return;
    view = [a, b];
    place();
  }
  function xOf(svg, ev) {
    return Math.max(G, Math.min(G + W, ev.clientX - svg.getBoundingClientRect().left));
  }
  var drag = null;
  Array.prototype.forEach.call(svgs, function (svg) {
    svg.addEventListener("mousedown", function (ev) {
      if (ev.button !== 0 || ev.clientX - svg.getBoundingClientRect().left < G) return;
      var x = xOf(svg, ev);
      var r = el("rect", {"class": "sel", x: x, y: 0, width: 0, height: svg.getAttribute("height")});
      svg.appendChild(r);
      drag = {svg: svg, x0: x, rect: r};
      ev.preventDefault();
    });
    svg.addEventListener("dblclick", function () { zoom(0, T); });
  });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    var x = xOf(drag.svg, ev);
    drag.rect.setAttribute("x", Math.min(x, drag.x0));
    drag.rect.setAttribute("width", Math.abs(x - drag.x0));
  });
  window.addEventListener("mouseup", function (ev) {
    if (!drag) return;
    var d = drag;
    drag = null;
    d.svg.removeChild(d.rect);
    var x = xOf(d.svg, ev), a = Math.min(x, d.x0), b = Math.max(x, d.x0);
    if (b - a < 4) return;
    var span = view[1] - view[0];
    zoom(view[0] + (a - G) / W * span, view[0] + (b - G) / W * span);
  });
  var buttons = document.querySelectorAll(".zoom-reset");
  for (var i = 0; i < buttons.length; i++) buttons[i].addEventListener("click", function () { zoom(0, T); });
  var q = new URLSearchParams(location.search).get("t");
  if (q) {
    var ab = q.split("-");
    zoom(+ab[0], +ab[1]);
  }
})();
</script>
</body></html>
{{define "svg"}}<svg class="timeline" id="{{.ID}}" width="{{.W}}" height="{{.H}}" data-gutter="{{.PlotX}}" data-width="{{.PlotW}}" data-tend="{{.TEnd}}">
<defs><clipPath id="{{.ID}}-clip"><rect x="{{.PlotX}}" y="{{.PlotY}}" width="{{.PlotW}}" height="{{.PlotH}}"/></clipPath></defs>
<rect class="lanes" x="{{.PlotX}}" y="{{.LaneTop}}" width="{{.PlotW}}" height="{{.LaneH}}"/>
{{range .Labels}}<text class="{{.Class}}" x="{{$.LabelX}}" y="{{.Y}}">{{.Text}}</text>{{end}}
{{with .Empty}}<text class="empty" x="{{$.EmptyX}}" y="{{$.EmptyY}}">{{.}}</text>{{end}}
<g class="plot" clip-path="url(#{{.ID}}-clip)">
{{with .Shade}}<rect class="shade" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"/><text class="shade-t" x="{{.TextX}}" y="{{.TextY}}">{{.Text}}</text>{{end}}
{{range .Guides}}<line class="{{.Class}}" x1="{{.X}}" x2="{{.X}}" y1="{{.Y1}}" y2="{{.Y2}}"/>{{end}}
{{range .Marks}}{{if .Href}}<a href="{{.Href}}">{{end}}<line{{if .ID}} id="{{.ID}}"{{end}} class="{{.Class}}" x1="{{.X}}" x2="{{.X}}" y1="{{.Y1}}" y2="{{.Y2}}"><title>{{.Title}}</title></line>{{if .Href}}</a>{{end}}{{end}}
{{range .Batches}}{{$b := .}}<g class="{{.Class}}" id="{{.ID}}"><title>{{.Title}}</title>{{if .Href}}<a href="{{.Href}}"><rect class="band" x="{{.LX1}}" y="{{.BandY}}" width="{{.BandW}}" height="12"/>{{end}}{{if .Life}}<line class="life" x1="{{.LX1}}" x2="{{.LX2}}" y1="{{.LY}}" y2="{{.LY}}"/>{{end}}{{range .Bars}}<rect{{if .ID}} id="{{.ID}}"{{end}} class="{{.Class}}" x="{{.X}}" y="{{$b.BarY}}" width="{{.W}}" height="8"><title>{{.Title}}</title></rect>{{end}}{{if .EndX}}<line class="end" x1="{{.EndX}}" x2="{{.EndX}}" y1="{{.EndY1}}" y2="{{.EndY2}}"/>{{end}}{{if .Label}}<text class="bl" x="{{.LabelX}}" dx="{{.LabelDX}}" y="{{.LabelY}}" text-anchor="{{.LabelAnchor}}">{{.Label}}</text>{{end}}{{if .Href}}</a>{{end}}</g>
{{end}}</g>
<line class="axis" x1="{{.PlotX}}" x2="{{.AxisEnd}}" y1="{{.AxisY}}" y2="{{.AxisY}}"/>
<g class="ticks" data-y="{{.TickY}}">{{range .Ticks}}<line x1="{{.X}}" x2="{{.X}}" y1="{{$.TickY}}" y2="{{$.TickY2}}"/><text x="{{.X}}" y="{{$.TickTextY}}">{{.Label}}</text>{{end}}</g>
</svg>{{end}}`
