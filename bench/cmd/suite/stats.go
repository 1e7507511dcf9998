// Spreads over repeats (min, median, max), paired ratios, and number
// formatting for bench/RESULTS.md.

package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Spread is the min, median and max of the repeats that produced a value.
type Spread struct {
	Min, Med, Max float64
	N             int
}

// spread of xs, skipping NaNs (failed repeats).
func spread(xs []float64) Spread {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return Spread{Min: math.NaN(), Med: math.NaN(), Max: math.NaN()}
	}
	slices.Sort(v)
	med := v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return Spread{Min: v[0], Med: med, Max: v[len(v)-1], N: len(v)}
}

// ok reports whether s has any value.
func (s Spread) ok() bool { return s.N > 0 }

// ratios pairs a[i] with b[i] (the same repeat): a[i]/b[i].
func ratios(a, b []float64) []float64 {
	out := make([]float64, min(len(a), len(b)))
	for i := range out {
		out[i] = a[i] / b[i]
	}
	return out
}

// num formats x with about three significant digits and a k/M/G suffix.
func num(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	if x == 0 {
		return "0"
	}
	ax, div, suffix := math.Abs(x), 1.0, ""
	switch {
	case ax >= 1e9:
		div, suffix = 1e9, "G"
	case ax >= 1e6:
		div, suffix = 1e6, "M"
	case ax >= 1e4:
		div, suffix = 1e3, "k"
	}
	v := x / div
	switch av := math.Abs(v); {
	case av >= 100:
		return fmt.Sprintf("%.0f%s", v, suffix)
	case av >= 10:
		return fmt.Sprintf("%.1f%s", v, suffix)
	case av >= 0.1 || av == 0:
		return fmt.Sprintf("%.2f%s", v, suffix)
	}
	return fmt.Sprintf("%.2g", v)
}

// fmtSpread is "med (min–max)" with num, or n/a.
func fmtSpread(s Spread) string { return fmtSpreadWith(s, num) }

func fmtSpreadWith(s Spread, f func(float64) string) string {
	if !s.ok() {
		return "n/a"
	}
	if s.N == 1 {
		return f(s.Med) + " (1 run)"
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Med), f(s.Min), f(s.Max))
}

// ratio formats a ratio spread: two decimals, fewer for large ratios.
func ratio(s Spread) string {
	return fmtSpreadWith(s, func(x float64) string {
		switch ax := math.Abs(x); {
		case ax >= 100:
			return fmt.Sprintf("%.0f", x)
		case ax >= 10:
			return fmt.Sprintf("%.1f", x)
		}
		return fmt.Sprintf("%.2f", x)
	})
}

// count formats a whole number with thousands separators: 28,041.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// seconds formats a duration in seconds.
func secs(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	if x < 10 {
		return fmt.Sprintf("%.2f s", x)
	}
	return fmt.Sprintf("%.1f s", x)
}

// nan is a failed repeat's value.
var nan = math.NaN()
