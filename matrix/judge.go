package matrix

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kcheck/kcheck/checker/order"
)

// Summary is a client's own account of a run: what it sent and what its
// read-back found (the drivers' JSON line, or kcheck run's summary).
type Summary struct {
	Sent       int `json:"sent"`
	Acked      int `json:"acked"`
	Failed     int `json:"failed"`
	ReadBack   int `json:"read_back"`
	Lost       int `json:"lost"`
	LostAcked  int `json:"lost_acked"`
	Duplicated int `json:"duplicated"`
	OutOfOrder int `json:"out_of_order"`
}

// ParseSummary reads a driver's JSON line (the last line of its standard
// output that is a JSON object).
func ParseSummary(out []byte) (Summary, error) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var s Summary
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			return Summary{}, fmt.Errorf("the driver's JSON summary: %w", err)
		}
		return s, nil
	}
	return Summary{}, fmt.Errorf("the driver printed no JSON summary on standard output")
}

var (
	runSent = regexp.MustCompile(`sent (\d+), acknowledged (\d+), failed (\d+), read back (\d+)`)
	runLost = regexp.MustCompile(`lost (\d+) \((\d+) of them acknowledged\), duplicated (\d+), out of order (\d+)`)
	// A transactional run's: records of committed transactions lost (each
	// acknowledged), then of aborted ones committed (which Summary does
	// not count: txnView does, from the trace).
	runTxnLost = regexp.MustCompile(`of committed transactions lost or aborted (\d+); of aborted ones committed \d+; duplicated (\d+), out of order (\d+)`)
)

// ParseRunSummary reads kcheck run's summary lines, an idempotent run's or a
// transactional one's.
func ParseRunSummary(out []byte) (Summary, error) {
	n := func(s []byte) int { v, _ := strconv.Atoi(string(s)); return v }
	a, b := runSent.FindSubmatch(out), runLost.FindSubmatch(out)
	if t := runTxnLost.FindSubmatch(out); a != nil && b == nil && t != nil {
		return Summary{Sent: n(a[1]), Acked: n(a[2]), Failed: n(a[3]), ReadBack: n(a[4]),
			Lost: n(t[1]), LostAcked: n(t[1]), Duplicated: n(t[2]), OutOfOrder: n(t[3])}, nil
	}
	if a == nil || b == nil {
		return Summary{}, fmt.Errorf("kcheck run printed no summary (sent ..., lost ...)")
	}
	return Summary{Sent: n(a[1]), Acked: n(a[2]), Failed: n(a[3]), ReadBack: n(a[4]),
		Lost: n(b[1]), LostAcked: n(b[2]), Duplicated: n(b[3]), OutOfOrder: n(b[4])}, nil
}

// Happened is what a run did to its records, from the client's read-back
// and from what it told its application (kcheck verify's counts of Told).
type Happened struct {
	Lost, LostAcked, LostTold, Duplicated, Reordered, Stalls, Failed int
	// A transactional run's: what became of its transactions (txnView).
	txnView
}

// Happen combines a client's summary with verify's ordering statistics.
func Happen(s Summary, o order.Stats) Happened {
	return Happened{Lost: s.Lost, LostAcked: s.LostAcked, LostTold: o.LostTold, Duplicated: s.Duplicated,
		Reordered: s.OutOfOrder, Stalls: o.Stalls, Failed: s.Failed}
}

// Anomaly reports whether the read-back or the application's view shows a
// safety violation: a record acknowledged (on the wire or to the
// application) and lost, a duplicate, or a reorder. Records that failed
// and are absent are no anomaly.
func (h Happened) Anomaly() bool {
	return h.LostAcked+h.LostTold+h.Duplicated+h.Reordered+h.LostCommitted+h.AbortedRead+h.Mingled+h.Torn+h.ReadEarly+h.Hanging > 0
}

// LostAcknowledged reports whether a record acknowledged to the
// application was lost: by the client's read-back, by what it told the
// application, or as a record of a transaction told committed.
func (h Happened) LostAcknowledged() bool {
	return h.LostAcked > 0 || h.LostTold > 0 || h.LostCommitted > 0
}

// Clean reports whether nothing failed, was lost, stalled, duplicated or
// reordered.
func (h Happened) Clean() bool {
	return h == Happened{}
}

// String says what happened in a few words: "clean", or the counts.
func (h Happened) String() string {
	if h.Clean() {
		return "clean"
	}
	var ps []string
	add := func(n int, what string) {
		if n > 0 {
			ps = append(ps, fmt.Sprintf("%s %d", what, n))
		}
	}
	add(h.LostCommitted, "lost though committed")
	add(h.AbortedRead, "aborted yet read committed")
	add(h.Mingled, "in another transaction's commit or abort")
	add(h.Torn, "in a torn transaction")
	add(h.ReadEarly, "read committed before their commit")
	add(h.Hanging, "in a hanging transaction")
	add(h.LostTold, "lost though acknowledged to the application")
	if h.LostAcked > h.LostTold {
		add(h.LostAcked, "lost though acknowledged")
	}
	if rest := h.Lost - max(h.LostAcked, h.LostTold); rest > 0 {
		add(rest, "lost (failed to the application)")
	}
	add(h.Duplicated, "duplicated")
	add(h.Reordered, "reordered")
	add(h.Stalls, "stalled batches")
	add(h.Failed, "failed")
	return strings.Join(ps, ", ")
}

// Agreement is how kcheck verify's verdict compares with the read-back.
type Agreement string

const (
	Agrees     Agreement = "agrees"
	Missed     Agreement = "missed"      // the read-back shows an anomaly verify did not flag
	FalseAlarm Agreement = "false alarm" // verify flagged a run in which nothing went wrong
)

// Agree compares verify's verdict (flagged: not valid) with what happened.
func Agree(flagged bool, h Happened) Agreement {
	switch {
	case h.Anomaly() && !flagged:
		return Missed
	case h.Clean() && flagged:
		return FalseAlarm
	}
	return Agrees
}

// Worse reports whether a client did worse than the model predicts for its
// rules: the prediction is that every property holds ("pass"), and the run
// lost an acknowledged record, duplicated or reordered. A family the spec
// does not model predicts nothing.
func Worse(predicted string, h Happened) bool {
	return predicted == "pass" && h.Anomaly()
}
