package fault

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxScheduleLine bounds a schedule file's line: a fault is a few dozen bytes.
const maxScheduleLine = 4096

// ReadSchedule reads a schedule from r (called name in errors): one fault a
// line in the form Parse reads, in the order they apply; blank lines and
// lines starting with # are skipped. A line that does not parse is an
// error naming the file and the line.
func ReadSchedule(r io.Reader, name string) ([]Fault, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), maxScheduleLine)
	var out []Fault
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		f, err := Parse(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out = append(out, f)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: a line longer than %d bytes", name, line+1, maxScheduleLine)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
