// Hand-written SVG bar charts for bench/RESULTS.md: groups of bars, one bar
// a series, the bar at the median of the repeats and a whisker from their
// min to their max; a linear or log y axis; dashed reference lines (goals).

package main

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"os"
	"slices"
	"strings"
)

// Series is one bar in every group.
type Series struct {
	Name string
	Vals []Spread // one per group; N == 0: no bar
}

// Ref is a dashed horizontal line, e.g. a goal.
type Ref struct {
	Y     float64
	Label string
}

// Chart is a grouped bar chart.
type Chart struct {
	Title, YLabel string
	Groups        []string
	Series        []Series
	Log           bool
	Refs          []Ref
	Note          string // a line under the chart
}

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

// SVG renders the chart.
func (c Chart) SVG() string {
	const (
		W, H           = 960.0, 460.0
		left, right    = 110.0, 210.0
		top, bottom    = 50.0, 120.0
		plotW, plotH   = W - left - right, H - top - bottom
		tickFontSize   = 11
		legendFontSize = 12
	)
	// The y range.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, v := range s.Vals {
			if v.ok() {
				lo, hi = math.Min(lo, v.Min), math.Max(hi, v.Max)
			}
		}
	}
	for _, r := range c.Refs {
		lo, hi = math.Min(lo, r.Y), math.Max(hi, r.Y)
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	var ymin, ymax float64
	var ticks []float64
	if c.Log {
		lo = math.Max(lo, 1e-9)
		ymin = math.Pow(10, math.Floor(math.Log10(lo)))
		ymax = math.Pow(10, math.Ceil(math.Log10(hi)))
		if ymax <= ymin {
			ymax = ymin * 10
		}
		for t := ymin; t <= ymax*1.0001; t *= 10 {
			ticks = append(ticks, t)
		}
	} else {
		ymin = 0
		step := niceStep(hi / 5)
		ymax = math.Ceil(hi*1.05/step) * step
		if ymax == 0 {
			ymax = 1
		}
		for t := 0.0; t <= ymax*1.0001; t += step {
			ticks = append(ticks, t)
		}
	}
	y := func(v float64) float64 {
		if c.Log {
			v = math.Max(v, ymin)
			return top + plotH - plotH*(math.Log10(v)-math.Log10(ymin))/(math.Log10(ymax)-math.Log10(ymin))
		}
		return top + plotH - plotH*(v-ymin)/(ymax-ymin)
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="white"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%.0f" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", left, esc(c.Title))
	// Grid and y ticks.
	for _, t := range ticks {
		ty := y(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, ty, left+plotW, ty)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%d" text-anchor="end">%s</text>`+"\n", left-6, ty+4, tickFontSize, esc(tick(t)))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", left, top, left, top+plotH)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", left, top+plotH, left+plotW, top+plotH)
	fmt.Fprintf(&b, `<text transform="translate(18,%.1f) rotate(-90)" font-size="12" text-anchor="middle">%s</text>`+"\n", top+plotH/2, esc(c.YLabel))
	// Bars.
	ng, ns := len(c.Groups), len(c.Series)
	if ng > 0 && ns > 0 {
		gw := plotW / float64(ng)
		pad := gw * 0.12
		bw := (gw - 2*pad) / float64(ns)
		for g, name := range c.Groups {
			gx := left + float64(g)*gw
			for s, se := range c.Series {
				if g >= len(se.Vals) || !se.Vals[g].ok() {
					continue
				}
				v := se.Vals[g]
				x := gx + pad + float64(s)*bw
				base := y(ymin)
				top := y(v.Med)
				col := palette[s%len(palette)]
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s, %s: %s</title></rect>`+"\n",
					x+1, top, math.Max(bw-2, 1), math.Max(base-top, 0), col, esc(se.Name), esc(name), esc(fmtSpread(v)))
				if v.N > 1 {
					cx := x + bw/2
					fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", cx, y(v.Min), cx, y(v.Max))
					for _, e := range []float64{v.Min, v.Max} {
						fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", cx-bw/5, y(e), cx+bw/5, y(e))
					}
				}
			}
			lx, ly := gx+gw/2, top+plotH+14
			fmt.Fprintf(&b, `<text transform="translate(%.1f,%.1f) rotate(-30)" font-size="%d" text-anchor="end">%s</text>`+"\n", lx+4, ly, tickFontSize, esc(name))
		}
	}
	// Reference lines.
	// Labels at least 13 px apart, the higher line's label above.
	refs := slices.Clone(c.Refs)
	slices.SortFunc(refs, func(a, b Ref) int { return cmp.Compare(a.Y, b.Y) })
	lastLabel := math.Inf(1)
	for _, r := range refs {
		ry := y(r.Y)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#c00" stroke-dasharray="6,4"/>`+"\n", left, ry, left+plotW, ry)
		ly := math.Min(ry+4, lastLabel-13)
		lastLabel = ly
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#c00">%s</text>`+"\n", left+plotW+6, ly, esc(r.Label))
	}
	// Legend.
	for s, se := range c.Series {
		ly := top + 10 + float64(s)*20
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/>`+"\n", left+plotW+20, ly-10, palette[s%len(palette)])
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%d">%s</text>`+"\n", left+plotW+38, ly, legendFontSize, esc(se.Name))
	}
	note := "bar: median of the repeats; whisker: min to max"
	if c.Note != "" {
		note += "; " + c.Note
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#555">%s</text>`+"\n", left, H-8, esc(note))
	b.WriteString("</svg>\n")
	return b.String()
}

// tick is num without trailing zeros: 10, 2.5k, 1M.
func tick(x float64) string {
	s := num(x)
	i := strings.IndexFunc(s, func(r rune) bool { return r != '.' && r != '-' && (r < '0' || r > '9') })
	n, suffix := s, ""
	if i >= 0 {
		n, suffix = s[:i], s[i:]
	}
	if strings.Contains(n, ".") {
		n = strings.TrimRight(strings.TrimRight(n, "0"), ".")
	}
	return n + suffix
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 || math.IsNaN(x) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

func esc(s string) string { return html.EscapeString(s) }

// writeChart writes c to path.
func writeChart(path string, c Chart) error {
	return os.WriteFile(path, []byte(c.SVG()), 0o644)
}
