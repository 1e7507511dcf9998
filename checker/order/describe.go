package order

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxListed bounds the ids a Detail spells out; Violation.Records has them all.
const maxListed = 8

// recordList names records by id: "record 4", "records 4, 8 and 9", or
// "15 records (4, 8, 9, ..., 104)".
func recordList(ids []int64) string {
	switch {
	case len(ids) == 1:
		return "record " + strconv.FormatInt(ids[0], 10)
	case len(ids) <= maxListed:
		return "records " + andList(ids)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d records (", len(ids))
	for _, id := range ids[:3] {
		fmt.Fprintf(&b, "%d, ", id)
	}
	fmt.Fprintf(&b, "..., %d)", ids[len(ids)-1])
	return b.String()
}

func andList(xs []int64) string {
	var b strings.Builder
	for i, x := range xs {
		switch {
		case i == 0:
		case i == len(xs)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	return b.String()
}

// runs writes numbers as ranges of consecutive values: "3-5 and 9". At most
// maxListed ranges are written.
func runs(xs []int64) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if len(parts) == maxListed {
			parts = append(parts, "...")
			break
		}
		if j == i {
			parts = append(parts, strconv.FormatInt(xs[i], 10))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		}
		i = j + 1
	}
	return joinAnd(parts)
}

// joinAnd joins "a", "b" and "c" as "a, b and c".
func joinAnd(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// plural returns "word xs" with word made plural when xs holds more than one.
func plural(word string, xs []int64) string {
	if len(xs) == 1 {
		return word + " " + runs(xs)
	}
	return word + "s " + runs(xs)
}

// seqRange is "sequence 3" or "sequences 3-5" for a batch of n records.
func seqRange(seq int32, n int) string {
	if n <= 1 {
		return fmt.Sprintf("sequence %d", seq)
	}
	return fmt.Sprintf("sequences %d-%d", seq, int64(seq)+int64(n)-1)
}

// upper capitalizes s's first letter, to start a sentence with a list.
func upper(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d
}

// shortfall tells, for a lost-write's detail, what the read-back of pt
// waited for and saw when its high watermark never passed the offsets the
// run acknowledged ("" when it did).
func shortfall(pt *part) string {
	s := pt.short
	if s == nil {
		return ""
	}
	return fmt.Sprintf(": its leader (node %d) reported the high watermark %d, at or below the acknowledged offset %d, after the read-back waited %.1f s (line %d)",
		s.Node, s.HWM, s.Offset, float64(s.WaitedMs)/1000, pt.shortLine)
}
