package verify

import (
	"bytes"
	"slices"

	"github.com/kcheck/kcheck/checker"
)

// maxSlice is how much of a trace line a report shows: longer lines are cut
// there and end in " ...".
const maxSlice = 300

// lineStore keeps, as the trace is read, what a report shows of each of its
// lines (the first maxSlice bytes), so that the violations found at the end
// can quote the lines they name without reading the trace again. It holds
// at most the trace's size, in chunks that hold no pointers and are never
// copied once written.
type lineStore struct {
	chunks []lineChunk
	n      int // lines added
}

// lineChunk holds the text of lines first, first+1, ...: line first+i is
// data[at[i]>>lenBits:][:at[i]&lenMask], cut at maxSlice when the length is
// maxSlice+1.
type lineChunk struct {
	first int
	data  []byte
	at    []uint32
}

const (
	chunkSize  = 1 << 20
	firstChunk = 1 << 14
	lenBits    = 9 // maxSlice+1 fits; an offset in a chunk takes 20 bits more
	lenMask    = 1<<lenBits - 1
)

// shown returns what a report may show of a line's text: the line as
// bufio.ScanLines reads it (without a final carriage return), and of a longer
// one its first maxSlice+1 bytes, which tell lineStore.add to cut it.
func shown(text []byte) []byte {
	text = bytes.TrimSuffix(text, []byte{'\r'})
	return text[:min(len(text), maxSlice+1)]
}

// add keeps the next line's text, shown: the trace's lines are added in
// order, the header first.
func (s *lineStore) add(text []byte) {
	size := len(text)
	if size > maxSlice {
		text, size = text[:maxSlice], maxSlice+1
	}
	s.n++
	if len(s.chunks) == 0 || len(s.chunks[len(s.chunks)-1].data)+len(text) > cap(s.chunks[len(s.chunks)-1].data) {
		size := firstChunk // a short trace keeps a small store: each chunk twice the last, up to chunkSize
		if len(s.chunks) > 0 {
			size = min(2*cap(s.chunks[len(s.chunks)-1].data), chunkSize)
		}
		s.chunks = append(s.chunks, lineChunk{first: s.n, data: make([]byte, 0, size), at: make([]uint32, 0, size/128)})
	}
	c := &s.chunks[len(s.chunks)-1]
	c.at = append(c.at, uint32(len(c.data))<<lenBits|uint32(size))
	c.data = append(c.data, text...)
}

// text returns what the report shows of line n, and whether the trace has it.
func (s *lineStore) text(n int) (string, bool) {
	if n < 1 || n > s.n {
		return "", false
	}
	i, found := slices.BinarySearchFunc(s.chunks, n, func(c lineChunk, n int) int { return c.first - n })
	if !found {
		i--
	}
	c := &s.chunks[i]
	a := c.at[n-c.first]
	off, size := int(a>>lenBits), int(a&lenMask)
	if size > maxSlice {
		return string(c.data[off:off+maxSlice]) + " ...", true
	}
	return string(c.data[off : off+size]), true
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
