package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/kcheck/kcheck/tracer"
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
			ended := fmt.Sprintf("%s (line %d)", a.how(), a.endLine)
			if a.endLine == 0 {
				ended = a.how()
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

// num formats a coordinate with at most three decimals, enough for the
// page's script to zoom in a thousandfold.
func num(x float64) string {
	return strconv.FormatFloat(math.Round(x*1000)/1000, 'f', -1, 64)
}

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
