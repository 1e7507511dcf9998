package txn

import (
	"fmt"
	"slices"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/tracer"
)

// The polls of a read_committed consumer (format version 7: Poll and
// PollEnd, tracer/poll) are held to the markers the read-back found and to
// the transactions' ends: a poll returns only records the markers commit,
// and only once their transaction has asked to commit; a poller's offsets
// on a partition never go backwards; it never goes past a committed record
// without returning it; and by the offset it says it reached at the end it
// has returned every committed record below it. A poller that gave up on a
// partition (a PollEnd with an error), or that has no PollEnd for a
// partition read back, leaves these checks inconclusive: they name
// nothing, and the verdict is never a pass.

// pollKey is one poller's view of one partition.
type pollKey struct {
	poller int32
	p      int32
}

// pollSeq is a poller's polls of a partition, in trace order, and how it
// ended.
type pollSeq struct {
	polls   []pollAt
	endLine int   // the PollEnd's line; 0: none yet
	endOff  int64 // the offset it reached
	endErr  string
	reason  string
}

type pollAt struct {
	line int
	from int64
	log  []tracer.LogRecord
}

// addPoll keeps a Poll or PollEnd; bad input when the poller already ended
// on the partition.
func (c *Checker) addPoll(line int, e *tracer.Event) error {
	k := pollKey{e.Poller, e.Partition}
	s := c.polls[k]
	if s == nil {
		s = &pollSeq{}
		c.polls[k] = s
	}
	if s.endLine > 0 {
		return bad(line, "%s of poller %d on partition %d after its PollEnd at line %d: a poller ends on a partition once", e.Kind, e.Poller, e.Partition, s.endLine)
	}
	if e.Kind == tracer.PollEnd {
		s.endLine, s.endOff, s.endErr, s.reason = line, e.Offset, e.Err, e.Reason
		return nil
	}
	s.polls = append(s.polls, pollAt{line: line, from: e.Offset, log: e.Log})
	return nil
}

// PollStats counts what the poll checks saw.
type PollStats struct {
	Pollers, Polls, Records int // pollers, Poll events, and records they returned
	// Inconclusive says why the poll checks could not conclude (a poller
	// gave up, or has no PollEnd for a partition read back); "" when they
	// did, or when there are no polls.
	Inconclusive string
}

// pollChecks runs the poll checks over every poller's partitions read back.
func (c *Checker) pollChecks(st *PollStats) []checker.Violation {
	if len(c.polls) == 0 {
		return nil
	}
	keys := slices.SortedFunc(func(yield func(pollKey) bool) {
		for k := range c.polls {
			if !yield(k) {
				return
			}
		}
	}, func(a, b pollKey) int {
		if a.poller != b.poller {
			return int(a.poller - b.poller)
		}
		return int(a.p - b.p)
	})
	pollers := map[int32]bool{}
	for _, k := range keys {
		s := c.polls[k]
		pollers[k.poller] = true
		st.Polls += len(s.polls)
		for _, pl := range s.polls {
			st.Records += len(pl.log)
		}
		if s.endLine > 0 && s.endErr != "NONE" && st.Inconclusive == "" {
			st.Inconclusive = fmt.Sprintf("poller %d gave up on partition %d at line %d (%s): its polls are not judged", k.poller, k.p, s.endLine, giveUp(s))
		}
	}
	st.Pollers = len(pollers)
	// Every poller must have ended on every partition read back.
	parts := slices.Sorted(func(yield func(int32) bool) {
		for p := range c.reads {
			if !yield(p) {
				return
			}
		}
	})
	for _, pl := range slices.Sorted(func(yield func(int32) bool) {
		for p := range pollers {
			if !yield(p) {
				return
			}
		}
	}) {
		for _, p := range parts {
			if s := c.polls[pollKey{pl, p}]; (s == nil || s.endLine == 0) && st.Inconclusive == "" {
				st.Inconclusive = fmt.Sprintf("poller %d has no PollEnd for partition %d (its final polls did not finish): its polls are not judged", pl, p)
			}
		}
	}
	if st.Inconclusive != "" {
		return nil
	}
	var out []checker.Violation
	for _, k := range keys {
		rd, ok := c.reads[k.p]
		if !ok {
			continue // no log to judge by: the read-back's coverage says so
		}
		out = append(out, c.pollSeqChecks(k, c.polls[k], rd)...)
	}
	return out
}

func giveUp(s *pollSeq) string {
	what := s.endErr
	if what == "" {
		what = "no Kafka error"
	}
	if s.reason != "" {
		what += ": " + s.reason
	}
	return what
}

// pollSeqChecks holds one poller's polls of one partition to the
// partition's read-back rd.
func (c *Checker) pollSeqChecks(k pollKey, s *pollSeq, rd read) []checker.Violation {
	fate := map[int64]tracer.Fate{}
	var committed []tracer.LogRecord // of this trace's producer, in offset order
	for i, cl := range tracer.Closers(rd.log, rd.ctl) {
		r := rd.log[i]
		f := tracer.FateOf(rd.ctl, cl)
		fate[r.Offset] = f
		if f == tracer.FateCommitted && c.pids[r.PID] {
			committed = append(committed, r)
		}
	}
	var out []checker.Violation
	who := fmt.Sprintf("poller %d on partition %d", k.poller, k.p)
	returned := map[int64]bool{}
	high, highLine := int64(-1), 0 // the highest offset returned so far, and the poll that returned it
	passed := int64(0)             // the offset the poller has gone past: a poll's start, or past a record it returned
	type pass struct {
		to   int64
		line int
	}
	var passes []pass // where passed rose, in order
	var nonmono, dirty []string
	var nonmonoIDs, dirtyIDs []int64
	nonmonoLines, dirtyLines := []int{}, []int{}
	for _, pl := range s.polls {
		if pl.from > passed {
			passed = pl.from
			passes = append(passes, pass{passed, pl.line})
		}
		for _, r := range pl.log {
			switch {
			case r.Offset <= high:
				nonmono = append(nonmono, fmt.Sprintf("offset %d at line %d after offset %d at line %d", r.Offset, pl.line, high, highLine))
				nonmonoIDs = append(nonmonoIDs, r.ID)
				nonmonoLines = append(nonmonoLines, highLine, pl.line)
			case r.Offset < pl.from:
				nonmono = append(nonmono, fmt.Sprintf("offset %d at line %d, asked from offset %d", r.Offset, pl.line, pl.from))
				nonmonoIDs = append(nonmonoIDs, r.ID)
				nonmonoLines = append(nonmonoLines, pl.line)
			}
			if r.Offset > high {
				high, highLine = r.Offset, pl.line
			}
			returned[r.Offset] = true
			if r.Offset+1 > passed {
				passed = r.Offset + 1
				passes = append(passes, pass{passed, pl.line})
			}
			if !c.pids[r.PID] {
				continue // another producer's: no transaction of this trace
			}
			f, held := fate[r.Offset]
			if !held {
				continue // not in the log read back: the read-back's checks
			}
			why := ""
			switch {
			case f != tracer.FateCommitted:
				why = f.String()
			default:
				if snt, ok := c.recs[r.ID]; ok {
					asked := 0
					if t := c.txs[snt.tx]; t != nil {
						asked = t.commitAsked
					}
					if asked == 0 || asked > pl.line {
						why = fmt.Sprintf("before transaction %d asked to commit", snt.tx)
						if asked > 0 {
							why += fmt.Sprintf(" at line %d", asked)
							dirtyLines = append(dirtyLines, asked)
						}
					}
				}
			}
			if why != "" {
				dirty = append(dirty, fmt.Sprintf("offset %d (record %d, %s) at line %d", r.Offset, r.ID, why, pl.line))
				dirtyIDs = append(dirtyIDs, r.ID)
				dirtyLines = append(dirtyLines, pl.line)
			}
		}
	}
	if len(dirty) > 0 {
		out = append(out, checker.Violation{Kind: checker.PollAbortedRead, Partition: k.p, Seq: -1, Records: dirtyIDs,
			Lines:  sorted(append(dirtyLines, rd.line)),
			Detail: fmt.Sprintf("%s returned %s: a read_committed consumer returns only records the markers commit, once their transaction has asked to commit", who, list(dirty))})
	}
	if len(nonmono) > 0 {
		out = append(out, checker.Violation{Kind: checker.NonMonotonicPoll, Partition: k.p, Seq: -1, Records: nonmonoIDs,
			Lines:  sorted(nonmonoLines),
			Detail: fmt.Sprintf("%s went backwards: %s", who, list(nonmono))})
	}
	// Committed records the poller never returned: those it went past are
	// skips, those below the end it reached and not passed are unseen.
	var skip, unseen []string
	var skipIDs, unseenIDs []int64
	skipLines, unseenLines := []int{rd.line}, []int{rd.line}
	for _, r := range committed {
		if returned[r.Offset] {
			continue
		}
		if r.Offset < passed {
			i, _ := slices.BinarySearchFunc(passes, r.Offset, func(p pass, off int64) int {
				if p.to <= off {
					return -1
				}
				return 1
			})
			skip = append(skip, fmt.Sprintf("offset %d (record %d, passed at line %d)", r.Offset, r.ID, passes[i].line))
			skipIDs = append(skipIDs, r.ID)
			skipLines = append(skipLines, passes[i].line)
		} else if s.endErr == "NONE" && r.Offset < s.endOff {
			unseen = append(unseen, fmt.Sprintf("offset %d (record %d)", r.Offset, r.ID))
			unseenIDs = append(unseenIDs, r.ID)
		}
	}
	if len(skip) > 0 {
		out = append(out, checker.Violation{Kind: checker.PollSkip, Partition: k.p, Seq: -1, Records: skipIDs, Lines: sorted(skipLines),
			Detail: fmt.Sprintf("%s went past %s without returning it, which the markers commit", who, list(skip))})
	}
	if len(unseen) > 0 {
		unseenLines = append(unseenLines, s.endLine)
		out = append(out, checker.Violation{Kind: checker.Unseen, Partition: k.p, Seq: -1, Records: unseenIDs, Lines: sorted(unseenLines),
			Detail: fmt.Sprintf("%s reached offset %d at the end (line %d) but never returned %s, which the markers commit", who, s.endOff, s.endLine, list(unseen))})
	}
	return out
}
