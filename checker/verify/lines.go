package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

// lineOffsets notes, as the trace is read, where each of its lines starts,
// so that the lines a report quotes are read again from src, the trace's
// bytes, one by one: for a trace that can be (a regular file), it keeps 8
// bytes a line rather than the line.
type lineOffsets struct {
	src    io.ReaderAt
	chunks [][]int64 // each of offsetChunk lines but the last: never copied as it grows
	n      int
}

const offsetChunk = 1 << 13

// add notes where the next line starts: the trace's lines are added in
// order, the header first.
func (o *lineOffsets) add(off int64) {
	if o.n%offsetChunk == 0 {
		o.chunks = append(o.chunks, make([]int64, 0, offsetChunk))
	}
	o.chunks[len(o.chunks)-1] = append(o.chunks[len(o.chunks)-1], off)
	o.n++
}

// text reads line n again and returns what the report shows of it, and
// whether the trace has it.
func (o *lineOffsets) text(n int) (string, bool, error) {
	if n < 1 || n > o.n {
		return "", false, nil
	}
	off := o.chunks[(n-1)/offsetChunk][(n-1)%offsetChunk]
	buf := make([]byte, maxSlice+2) // enough to tell a line longer than maxSlice, a final '\r' aside
	k, err := o.src.ReadAt(buf, off)
	if err != nil && !(errors.Is(err, io.EOF) && k > 0) {
		return "", false, fmt.Errorf("reading line %d again: %w", n, err)
	}
	line := buf[:k]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	size := len(shown(line))
	if size > maxSlice {
		return string(line[:maxSlice]) + " ...", true, nil
	}
	return string(line[:size]), true, nil
}

// quotedLines is where a report's quoted lines come from: kept in memory
// (lineStore), or read again (lineOffsets).
type quotedLines interface {
	text(n int) (string, bool, error)
}

// storedLines is a lineStore as quotedLines.
type storedLines struct{ *lineStore }

func (s storedLines) text(n int) (string, bool, error) {
	t, ok := s.lineStore.text(n)
	return t, ok, nil
}

// quote returns the text of every trace line a violation names.
func quote(vs []checker.Violation, lines quotedLines) (map[int]string, error) {
	out := map[int]string{}
	for _, v := range vs {
		for _, l := range v.Lines {
			if _, ok := out[l]; !ok {
				text, ok, err := lines.text(l)
				if err != nil {
					return nil, err
				}
				if ok {
					out[l] = text
				}
			}
		}
	}
	return out, nil
}
