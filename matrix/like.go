package matrix

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kcheck/kcheck/checker"
)

// notModelled is the prediction for a family the spec does not model, or a
// scenario that predicts nothing for it (scenario.NotModelled).
const notModelled = "not modelled"

// Shown lists the spec's properties a run violated as seen from outside,
// by its read-back (h) and kcheck verify's kinds of violation: the names
// a prediction "invariant:NAME" uses, and "liveness". Where a property
// has no symptom of its own, the nearest is taken:
//
//	NoDuplicate        a record twice in the read-back; verify's duplicate
//	NoReorder          records out of send order; verify's nonmonotonic-send
//	AckedInLog         a record acknowledged (on the wire or to the
//	                   application) and lost; verify's inconsistent-offsets
//	NoGap,             verify's gap, or its lost-write with records lost that
//	NoOutOfOrderLoss   were not acknowledged (KAFKA-14359: absent while a
//	                   later sequence of their epoch is in the log)
//	NoFalseOutOfOrder  verify's failed-but-present (a record the application
//	                   was told definitely failed is in the log)
//	liveness           a stalled batch (verify's stall)
//
// and spec/TransactionalProducer.tla's, each from checker/txn's kinds:
// NoAbortedRead (aborted-read, abort-committed, or a record of a
// transaction told aborted that read_committed returned),
// CommittedAtomically (torn-transaction), NoWriteInOtherTxn,
// AckedCommitInLog (lost-commit, or a record of a transaction told
// committed that it did not return), LSOAdvances (hanging-transaction).
func Shown(h Happened, kinds []string) []string {
	has := func(k checker.Kind) bool { return slices.Contains(kinds, string(k)) }
	var out []string
	add := func(yes bool, props ...string) {
		if yes {
			out = append(out, props...)
		}
	}
	add(h.LostAcked+h.LostTold > 0 || has(checker.InconsistentOffset), "AckedInLog")
	add(has(checker.Gap) || has(checker.Lost) && h.Lost > max(h.LostAcked, h.LostTold), "NoGap", "NoOutOfOrderLoss")
	add(h.Duplicated > 0 || has(checker.Duplicate), "NoDuplicate")
	add(has(checker.FailedPresent), "NoFalseOutOfOrder")
	add(h.Reordered > 0 || has(checker.Reorder), "NoReorder")
	add(h.Stalls > 0 || has(checker.Stall), "liveness")
	// spec/TransactionalProducer.tla's (checker/txn's kinds).
	add(h.AbortedRead+h.ReadEarly > 0 || has(checker.AbortedRead) || has(checker.PollAbortedRead) || has(checker.AbortCommitted), "NoAbortedRead")
	add(h.Torn > 0 || has(checker.TornTxn), "CommittedAtomically")
	add(h.Mingled > 0 || has(checker.WriteInOtherTxn), "NoWriteInOtherTxn")
	add(h.LostCommitted > 0 || has(checker.LostCommit), "AckedCommitInLog")
	add(h.Hanging > 0 || has(checker.HangingTxn), "LSOAdvances")
	return out
}

// Matches reports whether a prediction is what a run that showed the
// properties shown (Shown) did: "pass" when it showed none,
// "invariant:NAME" when it showed NAME, "liveness" when it stalled. A
// family not modelled, or a deadlock, matches nothing.
func Matches(predicted string, shown []string) bool {
	switch {
	case predicted == "pass":
		return len(shown) == 0
	case predicted == "liveness":
		return slices.Contains(shown, "liveness")
	case strings.HasPrefix(predicted, "invariant:"):
		return slices.Contains(shown, strings.TrimPrefix(predicted, "invariant:"))
	}
	return false
}

// Like lists, sorted, the families whose predictions (family → prediction)
// match what a run did (Matches).
func Like(predictions map[string]string, h Happened, kinds []string) []string {
	shown := Shown(h, kinds)
	var out []string
	for _, f := range slices.Sorted(maps.Keys(predictions)) {
		if Matches(predictions[f], shown) {
			out = append(out, f)
		}
	}
	return out
}

// summarize says every family's prediction in a line, the families grouped
// by what is predicted for them, "pass" first: "pass (kgo, sarama);
// invariant:NoGap (java)".
func summarize(predictions map[string]string) string {
	by := map[string][]string{}
	for _, f := range slices.Sorted(maps.Keys(predictions)) {
		p := predictions[f]
		if p == "" {
			p = notModelled
		}
		by[p] = append(by[p], f)
	}
	ps := slices.SortedFunc(maps.Keys(by), func(a, b string) int {
		if (a == "pass") != (b == "pass") {
			if a == "pass" {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%s (%s)", p, strings.Join(by[p], ", ")))
	}
	return strings.Join(parts, "; ")
}

// predict sets c's prediction from a scenario's predictions (family →
// prediction) and its schedule: for a client of Unknown family, every
// family's (Predictions, and Predicted their summary); Worse and Like
// follow when the cell ran.
func (c *Cell) predict(predictions map[string]string, faults bool) {
	c.Predictions, c.Like, c.Worse = nil, nil, false
	switch {
	case !faults:
		c.Predicted = "no faults"
		return
	case c.Family == Unknown && len(predictions) > 0:
		c.Predictions = maps.Clone(predictions)
		c.Predicted = summarize(predictions)
	case c.Family == Unknown:
		c.Predicted = notModelled
	default:
		c.Predicted = predictions[c.Family]
		if c.Predicted == "" {
			c.Predicted = notModelled
		}
	}
	c.judge()
}

// judge sets Worse and, for a client of Unknown family, Like, from what
// the cell's run did; a cell that did not run has neither.
func (c *Cell) judge() {
	if c.Err != "" || c.Verdict == "" {
		c.Worse, c.Like = false, nil
		return
	}
	c.Worse = Worse(c.Predicted, c.Happened)
	if c.Family == Unknown && len(c.Predictions) > 0 {
		c.Like = Like(c.Predictions, c.Happened, c.Kinds)
	}
}

// likeWords says which families a cell of Unknown family behaved like, or
// "" when it has nothing to say.
func (c Cell) likeWords() string {
	if c.Family != Unknown || len(c.Predictions) == 0 || c.Err != "" {
		return ""
	}
	if len(c.Like) == 0 {
		return "behaves like no family"
	}
	return "behaves like " + strings.Join(c.Like, ", ")
}
