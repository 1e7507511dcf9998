package verify

import (
	"bytes"

	"github.com/kcheck/kcheck/checker"
)

// maxSlice is how much of a trace line a report shows: longer lines are cut
// there and end in " ...".
const maxSlice = 300

// lineStore keeps, as the trace is read, what a report shows of each of its
// lines (the first maxSlice bytes), so that the violations found at the end
// can quote the lines they name without reading the trace again. It holds
// at most the trace's size, in chunks of its own that hold no pointers.
type lineStore struct {
	chunks [][]byte
	// at[n-1] is line n: chunk<<(offBits+lenBits) | offset<<lenBits | length,
	// the length maxSlice+1 for a line cut at maxSlice.
	at []uint64
}

const (
	chunkSize = 1 << 20
	lenBits   = 9 // maxSlice+1 fits
	offBits   = 20
)

// add keeps the next line's text: the trace's lines are added in order, the
// header first.
func (s *lineStore) add(text []byte) {
	text = bytes.TrimSuffix(text, []byte{'\r'}) // as bufio.ScanLines reads it
	size := len(text)
	if size > maxSlice {
		text, size = text[:maxSlice], maxSlice+1
	}
	if len(s.chunks) == 0 || len(s.chunks[len(s.chunks)-1])+len(text) > chunkSize {
		s.chunks = append(s.chunks, make([]byte, 0, chunkSize))
	}
	c := len(s.chunks) - 1
	off := len(s.chunks[c])
	s.chunks[c] = append(s.chunks[c], text...)
	s.at = append(s.at, uint64(c)<<(offBits+lenBits)|uint64(off)<<lenBits|uint64(size))
}

// text returns what the report shows of line n, and whether the trace has it.
func (s *lineStore) text(n int) (string, bool) {
	if n < 1 || n > len(s.at) {
		return "", false
	}
	a := s.at[n-1]
	c, off, size := a>>(offBits+lenBits), int(a>>lenBits)&(1<<offBits-1), int(a&(1<<lenBits-1))
	if size > maxSlice {
		return string(s.chunks[c][off:off+maxSlice]) + " ...", true
	}
	return string(s.chunks[c][off : off+size]), true
}

// quote returns the text of every trace line a violation names.
func quote(vs []checker.Violation, lines *lineStore) map[int]string {
	out := map[int]string{}
	for _, v := range vs {
		for _, l := range v.Lines {
			if _, ok := out[l]; !ok {
				if text, ok := lines.text(l); ok {
					out[l] = text
				}
			}
		}
	}
	return out
}
