package kafka

import (
	"bytes"
	"os"
	"strings"
)

// tailLines is how many lines of a log an error shows.
const tailLines = 20

// Tail returns the last lines of the file at path, or a line saying why it
// cannot. When a Java stack trace fills the end, its first lines are kept:
// they hold the exception and its message.
func Tail(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{"(" + err.Error() + ")"}
	}
	b = bytes.TrimRight(b, "\n")
	if len(b) == 0 {
		return []string{"(empty)"}
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) <= tailLines {
		return lines
	}
	return lines[len(lines)-tailLines:]
}
