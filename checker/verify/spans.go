package verify

import (
	"fmt"
	"strings"
)

// Span is the partitions First to Last, both included.
type Span struct{ First, Last int32 }

func (s Span) String() string {
	if s.First == s.Last {
		return fmt.Sprint(s.First)
	}
	return fmt.Sprintf("%d-%d", s.First, s.Last)
}

// maxSpans is how many spans a sentence spells out.
const maxSpans = 20

// spanText spells spans out, "0-3, 5, 7-15", the first maxSpans of them.
func spanText(spans []Span) string {
	var parts []string
	for i, s := range spans {
		if i == maxSpans {
			parts = append(parts, fmt.Sprintf("and %d more runs", len(spans)-i))
			break
		}
		parts = append(parts, s.String())
	}
	return strings.Join(parts, ", ")
}

// PartitionsText is "partition 3" or "partitions 3, 5-7".
func PartitionsText(spans []Span) string {
	if len(spans) == 1 && spans[0].First == spans[0].Last {
		return "partition " + spans[0].String()
	}
	return "partitions " + spanText(spans)
}

// Missing returns the partitions 0 to n-1 that are not in have, which is
// sorted, as spans: as many as have has partitions, plus one, whatever n is.
func Missing(n int32, have []int32) []Span {
	var out []Span
	next := int32(0)
	for _, p := range have {
		if p > next {
			out = append(out, Span{next, p - 1})
		}
		next = max(next, p+1)
	}
	if next < n {
		out = append(out, Span{next, n - 1})
	}
	return out
}
