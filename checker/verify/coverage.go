package verify

import (
	"fmt"
	"slices"
)

// Coverage is what the trace's read-back covers of the header's partitions.
// A trace without its read-back (a run cut off before it, or kcheck proxy
// --readback=false) is incomplete: the spec replay and the stall check still
// see every event, but nothing that needs a partition's log can be checked.
type Coverage struct {
	Partitions int32  // the header's
	Read       int    // partitions with a ReadBack
	Unread     []Span // the header's partitions without one, in order; none when complete
	LastLine   int    // the trace's last line
	// Cut is the last line before the first ReadBack, when every event
	// after it is a ReadBack: the trace without its read-back.
	Cut int
}

// Complete reports whether every partition of the header was read back.
func (c *Coverage) Complete() bool { return len(c.Unread) == 0 }

// unread reports whether partition p has no ReadBack.
func (c *Coverage) unread(p int32) bool {
	_, found := slices.BinarySearchFunc(c.Unread, p, func(s Span, p int32) int {
		switch {
		case s.Last < p:
			return -1
		case s.First > p:
			return 1
		}
		return 0
	})
	return found
}

// unreadCount is how many partitions have no ReadBack.
func (c *Coverage) unreadCount() int {
	n := 0
	for _, s := range c.Unread {
		n += int(s.Last-s.First) + 1
	}
	return n
}

// skippedChecks are the checks that need a partition's log.
const skippedChecks = "lost-write, duplicate, nonmonotonic-send, gap, inconsistent-offsets, failed-but-present and linearizability (Porcupine)"

// Incomplete says, when the trace lacks its read-back in whole or in part,
// what it is (one line) and what was and was not checked and how to
// complete it (a few lines); "" and nil for a complete trace.
func (r *Report) Incomplete() (summary string, notes []string) {
	c := &r.ReadBack
	if c.Complete() {
		return "", nil
	}
	file := r.File
	if file == StdinName {
		file = "TRACE" // the file the piped trace came from, which the command cannot name
	}
	if c.Read == 0 {
		summary = fmt.Sprintf("incomplete trace: no read-back: it ends at line %d with no ReadBack event (a run cut off before it read its topic back, or kcheck proxy --readback=false)", c.LastLine)
		notes = []string{
			"checked: the spec replay of every event (sequences, epochs, in-flight limits, the broker's answers) and stalls",
			"skipped, as they need the partitions' logs: " + skippedChecks,
			"complete it with: kcheck readback --bootstrap ADDR " + file,
		}
		return summary, notes
	}
	have, read := "have", fmt.Sprintf("the %d partitions", c.Read)
	if n := c.unreadCount(); n == 1 {
		have = "has"
	}
	if c.Read == 1 {
		read = "the partition"
	}
	summary = fmt.Sprintf("incomplete read-back: %d of the %d partitions %s no ReadBack: %s", c.unreadCount(), c.Partitions, have, spanText(c.Unread))
	notes = []string{
		fmt.Sprintf("checked: the spec replay of every event and stalls; on %s read back, every check", read),
		fmt.Sprintf("skipped on %s, as they need the partition's log: %s", PartitionsText(c.Unread), skippedChecks),
	}
	redo := "kcheck readback reads the whole topic back and refuses a trace that has part of a read-back: read it back again from the trace without its ReadBack events"
	if c.Cut > 0 {
		redo = fmt.Sprintf("kcheck readback reads the whole topic back and refuses a trace that has part of a read-back: read it back again from the trace without it, its first %d lines: head -n %d %s > CUT && kcheck readback --bootstrap ADDR CUT",
			c.Cut, c.Cut, file)
	}
	return summary, append(notes, redo)
}
