package matrix

import (
	"fmt"
	"strings"
)

// Gate is a cell's outcome for a client's own CI (kcheck scenarios run
// --gate, --quick): whether the client did something the model does not
// excuse. Unlike Tally.OK, which asks whether kcheck judged every cell
// right, it judges the client; kcheck verify's agreement does not decide it.
type Gate string

// The outcomes of Cell.Gate.
const (
	GatePass Gate = "pass"
	// GateFail: a record acknowledged to the application was lost (whatever
	// the model predicts), or an anomaly the model does not predict for the
	// client's family.
	GateFail Gate = "fail"
	// GateError: the cell could not run; no verdict is no pass.
	GateError Gate = "error"
)

// PredictsViolation reports whether a prediction (TLC's outcome for a
// family, scenario.Scenario.Predictions) is a violation: "invariant:X" or
// "liveness". "pass", "no faults" (the Baseline) and "not modelled" are not.
func PredictsViolation(predicted string) bool {
	return strings.HasPrefix(predicted, "invariant:") || predicted == "liveness"
}

// Gate judges c for a client's CI, and says why in a sentence:
//   - GateError when the cell could not run;
//   - GateFail when the client lost a record acknowledged to its
//     application (its read-back's lost though acknowledged, or verify's
//     count of what it told the application), even where the model
//     predicts a violation for its family: no rule excuses it;
//   - for a client of Unknown family, GateFail when no family's
//     prediction matches what it did (Like is empty);
//   - GateFail when it duplicated or reordered (or lost an acknowledged
//     record) where the model predicts no violation for its family: a
//     prediction of "pass", the Baseline's "no faults", or "not modelled"
//     (a family, or a cluster scenario, the model predicts nothing for);
//   - GatePass otherwise, stalls and failed records included (the client
//     told its application).
func (c Cell) Gate() (Gate, string) {
	h := c.Happened
	switch {
	case c.Err != "":
		return GateError, "could not run: " + c.Err
	case h.LostAcknowledged():
		return GateFail, fmt.Sprintf("%s: a record acknowledged to the application lost (the model predicts %s for family %s)", c.What, c.Predicted, c.familyName())
	case h.Anomaly() && c.Family == Unknown && len(c.Like) == 0:
		return GateFail, fmt.Sprintf("%s: an anomaly no family's model predicts (family unknown; predictions %s)", c.What, c.Predicted)
	case h.Anomaly() && c.Family == Unknown:
		return GatePass, fmt.Sprintf("%s, as the model predicts for %s (family unknown)", c.What, strings.Join(c.Like, ", "))
	case h.Anomaly() && !PredictsViolation(c.Predicted):
		return GateFail, fmt.Sprintf("%s: an anomaly the model does not predict (it predicts %s for family %s)", c.What, c.Predicted, c.familyName())
	case h.Anomaly():
		return GatePass, fmt.Sprintf("%s, as the model predicts for family %s (%s)", c.What, c.familyName(), c.Predicted)
	}
	return GatePass, c.What
}

func (c Cell) familyName() string {
	if c.Family == "" {
		return "(none)"
	}
	return c.Family
}

// GateTally counts the cells of r that fail the gate and that could not run.
type GateTally struct {
	Cells, Fail, Error int
}

// GateTally counts r's cells by Cell.Gate.
func (r *Results) GateTally() GateTally {
	t := GateTally{Cells: len(r.Cells)}
	for _, c := range r.Cells {
		switch g, _ := c.Gate(); g {
		case GateFail:
			t.Fail++
		case GateError:
			t.Error++
		}
	}
	return t
}
