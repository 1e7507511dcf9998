// Package report writes what kcheck verify found (a verify.Report) for
// people and machines: Text, JSON and JUnit to an io.Writer, and HTML into
// a directory, its page drawn from what a Collector gathered in verify's
// one pass over the trace. The page's template, CSS and script are files of
// html/, embedded.
package report

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/tv"
	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/tracer"
)

// Text writes r for a person: the verdict first, then each
// violation with the trace lines that show it.
func Text(w io.Writer, r *verify.Report) error {
	bw := bufio.NewWriter(w)
	h := r.Header
	fmt.Fprintf(bw, "kcheck verify %s: %s\n", r.File, strings.ToUpper(string(r.Verdict)))
	if summary, notes := r.Incomplete(); summary != "" {
		fmt.Fprintf(bw, "  %s\n", summary)
		for _, n := range notes {
			fmt.Fprintf(bw, "    %s\n", n)
		}
	}
	rule := "first-ack rule off"
	switch {
	case h.Writer == tracer.ProxyWriter:
		rule = "traced on the wire (the client's rules unknown: checked by the broker's)"
	case h.FirstAck:
		rule = "first-ack rule on"
	}
	fmt.Fprintf(bw, "  trace: %d events by %s (%s), topic %q, %s, %s, broker %s %s (%s)\n",
		r.Events, h.Writer, h.Client, h.Topic, partitions(h.Partitions), rule, h.Broker.Kind, h.Broker.Version, h.Broker.NoStateRule)
	conf := "follows the spec"
	if r.Conformance != "" {
		conf = "DOES NOT follow the spec"
	}
	fmt.Fprintf(bw, "  spec replay: %s\n", conf)
	if t := r.Txn; t != nil {
		rc := "no read_committed read in the trace"
		if t.ReadCommitted > 0 {
			rc = fmt.Sprintf("read_committed read of %s held to the markers", partitions(int32(t.ReadCommitted)))
		}
		fmt.Fprintf(bw, "  transactions: TV%d, transactional id %q: %d (%d committed, %d aborted); records read back %d committed, %d aborted, %d open; %s; checked: aborted reads, commits of aborted transactions, torn transactions, writes in another transaction, lost commits, hanging transactions, and per epoch duplicates, reorders, gaps, lost acknowledged records\n",
			h.TxnVersion, h.TransactionalID, t.Transactions, t.Committed, t.Aborted, t.RecCommitted, t.RecAborted, t.RecOpen, rc)
		switch ps := t.Poll; {
		case ps.Inconclusive != "":
			fmt.Fprintf(bw, "  read_committed polls: %d by %d poller(s), %d records: INCONCLUSIVE: %s\n", ps.Polls, ps.Pollers, ps.Records, ps.Inconclusive)
		case ps.Pollers > 0:
			fmt.Fprintf(bw, "  read_committed polls: %d by %d poller(s), %d records; checked: aborted or uncommitted records returned, offsets going backwards, committed records skipped or never returned\n", ps.Polls, ps.Pollers, ps.Records)
		}
	}
	if r.TLC != nil {
		switch {
		case r.TLC.Skipped != "":
			fmt.Fprintf(bw, "  TLC trace validation: not run: %s\n", r.TLC.Skipped)
		case r.TLC.Accepted:
			fmt.Fprintf(bw, "  TLC trace validation: accepted (%d states, %v%s)\n", r.TLC.States, r.TLC.Duration.Round(1e6), tlcRuns(r.TLC))
		case r.TLC.Inconclusive != "":
			fmt.Fprintf(bw, "  TLC trace validation: INCONCLUSIVE: %s\n", r.TLC.Inconclusive)
		case r.TLC.Spec == tv.TxnSpec:
			fmt.Fprintf(bw, "  TLC trace validation: REJECTED at line %d (%d states, %v%s)\n", r.TLC.At, r.TLC.States, r.TLC.Duration.Round(1e6), tlcRuns(r.TLC))
		default:
			fmt.Fprintf(bw, "  TLC trace validation: REJECTED after line %d (%d states, %v%s)\n", r.TLC.Furthest, r.TLC.States, r.TLC.Duration.Round(1e6), tlcRuns(r.TLC))
		}
		if r.TLC.Skipped == "" && (r.TLC.Spec == tv.WireSpec || r.TLC.Spec == tv.TxnSpec) && r.TLC.Established != "" {
			fmt.Fprintf(bw, "    TLC (%s): %s\n", r.TLC.Spec, r.TLC.Established)
		}
		if len(r.TLC.Violated) > 0 {
			fmt.Fprintf(bw, "    TLC: the final state violates %s\n", strings.Join(r.TLC.Violated, ", "))
		}
		if r.TLC.Kind != "" {
			fmt.Fprintf(bw, "    TLC's finding, named as the Go check names it: %s\n", r.TLC.Kind)
		}
	}
	if r.ReadBack.Read == 0 {
		fmt.Fprintf(bw, "  linearizability (Porcupine): skipped (no read-back)\n")
	} else {
		fmt.Fprintf(bw, "  linearizability (Porcupine): %s\n", r.Linz)
		for _, n := range r.LinzNotes {
			fmt.Fprintf(bw, "    %s\n", n)
		}
	}
	o := r.Order
	fmt.Fprintf(bw, "  records: %d sent, %d acknowledged, %d failed, %d unknown; %d read back\n", o.Records, o.Acked, o.Failed, o.Unknown, o.ReadBack)
	if told := o.ToldDelivered + o.ToldFailed + o.ToldNone; told > 0 {
		fmt.Fprintf(bw, "  the application was told: %d delivered, %d failed, %d no answer; %d told delivered and not read back\n",
			o.ToldDelivered, o.ToldFailed, o.ToldNone, o.LostTold)
	}
	fmt.Fprintf(bw, "  OUT_OF_ORDER_SEQUENCE_NUMBER answers: %d (%d to batches acknowledged in the end); stalls: %d (%v)\n",
		o.OutOfOrderAnswers, o.OutOfOrderAcked, o.Stalls, o.StallTime.Round(1e6))
	if len(r.Violations) > 0 {
		fmt.Fprintf(bw, "\n%d violation(s):\n", len(r.Violations))
	}
	for i, v := range r.Violations {
		where := ""
		if v.Partition >= 0 {
			where = fmt.Sprintf(" partition %d", v.Partition)
		}
		fmt.Fprintf(bw, "\n%d. %s%s\n   %s\n", i+1, v.Kind, where, v.Detail)
		for _, l := range v.Lines {
			if s, ok := r.Slices[l]; ok {
				fmt.Fprintf(bw, "   %s:%d  %s\n", r.File, l, s)
			}
		}
	}
	return bw.Flush()
}

// jsonReport is the machine-readable form.
type jsonReport struct {
	File        string            `json:"file"`
	Verdict     verify.Verdict    `json:"verdict"`
	Events      int               `json:"events"`
	Header      tracer.Header     `json:"header"`
	Conformance string            `json:"conformance,omitempty"`
	Linz        string            `json:"linearizability"`
	LinzNotes   []string          `json:"linearizability_notes,omitempty"`
	Order       any               `json:"order"`
	TLC         *verify.TLCResult `json:"tlc,omitempty"`
	ReadBack    jsonReadBack      `json:"read_back"`
	Txn         *jsonTxn          `json:"transactions,omitempty"`
	Violations  []jsonViolation   `json:"violations"`
	DurationMs  int64             `json:"duration_ms,omitempty"`
}

// jsonReadBack is Coverage, and for an incomplete trace what Incomplete says.
type jsonReadBack struct {
	Complete bool       `json:"complete"`
	Read     int        `json:"partitions_read"`
	Unread   [][2]int32 `json:"unread,omitempty"` // spans of partitions, [first, last]
	Summary  string     `json:"summary,omitempty"`
	Notes    []string   `json:"notes,omitempty"`
}

// jsonTxn is what the transactional check saw (txn.Stats).
type jsonTxn struct {
	Transactions  int `json:"transactions"`
	Committed     int `json:"committed"`
	Aborted       int `json:"aborted"`
	RecCommitted  int `json:"records_committed"`
	RecAborted    int `json:"records_aborted"`
	RecOpen       int `json:"records_open"`
	ReadCommitted int `json:"partitions_read_committed"`
	// A read_committed consumer's polls (format version 7).
	Polls            int    `json:"polls,omitempty"`
	Pollers          int    `json:"pollers,omitempty"`
	PollRecords      int    `json:"poll_records,omitempty"`
	PollInconclusive string `json:"poll_inconclusive,omitempty"`
}

type jsonViolation struct {
	Kind       checker.Kind `json:"kind"`
	Partition  int32        `json:"partition"`
	ProducerID int64        `json:"producer_id,omitempty"`
	Epoch      int16        `json:"epoch"`
	Seq        int32        `json:"seq"`
	Batch      int64        `json:"batch,omitempty"`
	Records    []int64      `json:"records,omitempty"`
	Lines      []int        `json:"lines"`
	Detail     string       `json:"detail"`
}

// JSON writes r as one JSON object. It says how long the checks took
// (duration_ms, and TLC's Duration) only with timing, so that the same trace
// gives the same bytes.
func JSON(w io.Writer, r *verify.Report, timing bool) error {
	jr := jsonReport{File: r.File, Verdict: r.Verdict, Events: r.Events, Header: r.Header, Conformance: r.Conformance,
		Linz: string(r.Linz), LinzNotes: r.LinzNotes, Order: r.Order, TLC: r.TLC, Violations: []jsonViolation{}}
	if timing {
		jr.DurationMs = r.Duration.Milliseconds()
	} else if r.TLC != nil {
		t := *r.TLC
		t.Duration = 0
		jr.TLC = &t
	}
	if t := r.Txn; t != nil {
		jr.Txn = &jsonTxn{t.Transactions, t.Committed, t.Aborted, t.RecCommitted, t.RecAborted, t.RecOpen, t.ReadCommitted,
			t.Poll.Polls, t.Poll.Pollers, t.Poll.Records, t.Poll.Inconclusive}
	}
	jr.ReadBack = jsonReadBack{Complete: r.ReadBack.Complete(), Read: r.ReadBack.Read}
	jr.ReadBack.Summary, jr.ReadBack.Notes = r.Incomplete()
	for _, s := range r.ReadBack.Unread {
		jr.ReadBack.Unread = append(jr.ReadBack.Unread, [2]int32{s.First, s.Last})
	}
	for _, v := range r.Violations {
		jr.Violations = append(jr.Violations, jsonViolation{v.Kind, v.Partition, v.ProducerID, v.Epoch, v.Seq, v.Batch, v.Records, v.Lines, v.Detail})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jr)
}

// JUnit writes r as JUnit XML: one test case per check, failing
// with its violations, so CI systems show what broke.
func JUnit(w io.Writer, r *verify.Report) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type skipped struct {
		Message string `xml:"message,attr,omitempty"`
	}
	type testcase struct {
		Name    string   `xml:"name,attr"`
		Class   string   `xml:"classname,attr"`
		Failure *failure `xml:"failure,omitempty"`
		Skipped *skipped `xml:"skipped,omitempty"`
	}
	type suite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	byCheck := map[string][]checker.Violation{}
	for _, v := range r.Violations {
		check := "order"
		switch v.Kind {
		case checker.NonConformance:
			check = "spec-replay"
		case checker.NotLinearizable:
			check = "linearizability"
		}
		if v.Kind.Transactional() {
			check = "transactions"
		}
		byCheck[check] = append(byCheck[check], v)
	}
	s := suite{Name: "kcheck verify " + r.File}
	checks := []string{"spec-replay", "order", "linearizability"}
	if r.Txn != nil {
		checks = append(checks, "transactions")
	}
	if r.TLC != nil {
		checks = append(checks, "tlc")
	}
	summary, notes := r.Incomplete()
	if summary != "" {
		checks = append(checks, "read-back")
	}
	for _, c := range checks {
		tc := testcase{Name: c, Class: "kcheck.verify"}
		vs := byCheck[c]
		switch {
		case c == "linearizability" && len(vs) == 0 && r.ReadBack.Read == 0:
			tc.Skipped = &skipped{Message: "no read-back"}
		case c == "linearizability" && len(vs) == 0 && r.Linz == "inconclusive":
			tc.Failure = &failure{Message: "inconclusive", Type: "inconclusive", Text: strings.Join(r.LinzNotes, "\n")}
		case c == "tlc" && r.TLC.Skipped != "":
			tc.Skipped = &skipped{Message: r.TLC.Skipped}
		case c == "tlc" && r.TLC.Inconclusive != "":
			tc.Failure = &failure{Message: "inconclusive", Type: "inconclusive", Text: r.TLC.Inconclusive}
		case c == "read-back":
			// Inconclusive, never a pass: the checks that need the log did not run.
			tc.Failure = &failure{Message: summary, Type: "incomplete", Text: strings.Join(notes, "\n")}
		}
		if len(vs) > 0 {
			var text []string
			for _, v := range vs {
				text = append(text, fmt.Sprintf("%s partition %d lines %v: %s", v.Kind, v.Partition, v.Lines, v.Detail))
			}
			kinds := []string{}
			for _, v := range vs {
				kinds = append(kinds, string(v.Kind))
			}
			slices.Sort(kinds)
			tc.Failure = &failure{Message: strings.Join(slices.Compact(kinds), ", "), Type: "violation", Text: strings.Join(text, "\n")}
		}
		if tc.Failure != nil {
			s.Failures++
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// tlcRuns says how TLC's runs split the trace, when they did: "" for one
// run; the partitions of the run that rejected it, if one did.
func tlcRuns(t *verify.TLCResult) string {
	if t.Runs <= 1 {
		return ""
	}
	s := fmt.Sprintf("; %d runs in parallel, partitions that share nothing checked apart", t.Runs)
	if len(t.Rejected) > 0 {
		s += fmt.Sprintf("; the run of partitions %v rejected it", t.Rejected)
	}
	return s
}

// partitions says how many partitions, as "1 partition" or "8 partitions".
func partitions(n int32) string {
	if n == 1 {
		return "1 partition"
	}
	return fmt.Sprintf("%d partitions", n)
}
