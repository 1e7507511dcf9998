package matrix

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Tally counts what a matrix found.
type Tally struct {
	Cells, Errors, Reached, HeldBack, NotReached int
	Anomalies, Worse, Missed, FalseAlarms        int
	// OursOn counts our producer's (rule on) runs that verify flagged or
	// whose read-back shows an anomaly where the model predicts its rules
	// hold: it must be 0. (Where the model predicts a violation for them,
	// as after producer-state expiry, a flagged run is the prediction met.)
	OursOn int
}

// Tally counts r's cells.
func (r *Results) Tally() Tally {
	var t Tally
	for _, c := range r.Cells {
		t.Cells++
		if c.Err != "" {
			t.Errors++
			continue
		}
		switch c.Reach.Status {
		case Reached:
			t.Reached++
		case HeldBack:
			t.HeldBack++
		case NotReached:
			t.NotReached++
		}
		if c.Happened.Anomaly() {
			t.Anomalies++
		}
		if c.Worse {
			t.Worse++
		}
		switch c.Agreement {
		case Missed:
			t.Missed++
		case FalseAlarm:
			t.FalseAlarms++
		}
		if c.Client == "ours-on" && (c.Predicted == "pass" || c.Predicted == "no faults") && (c.Happened.Anomaly() || c.Verdict != "valid") {
			t.OursOn++
		}
	}
	return t
}

// OK reports whether kcheck did its job on every cell: every cell ran,
// verify agreed with every read-back, and our producer with the rule on
// was clean of anomalies and of verify's findings.
func (t Tally) OK() bool {
	return t.Errors == 0 && t.Missed == 0 && t.FalseAlarms == 0 && t.OursOn == 0
}

// WriteJSON writes r as one indented JSON document.
func (r *Results) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteMarkdown writes r as a matrix per scenario: a row per client and
// shape, a column per broker.
func (r *Results) WriteMarkdown(w io.Writer) error {
	t := r.Tally()
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s UTC, load average at the start %s, %.0f s in all (`kcheck scenarios run`).\n\n",
		r.Started.Format("2006-01-02 15:04"), r.Load, r.Total)
	if r.Interrupted != "" {
		fmt.Fprintf(&b, "This run was stopped before its end (%s): the cells below are those that finished.\n\n", r.Interrupted)
	}
	r.writeShards(&b)
	if r.Bootstrap != "" {
		fmt.Fprintf(&b, "On the cluster at %s, which kcheck did not start (Kafka %s), each topic named with this run's id and deleted at the end.\n\n",
			r.Bootstrap, strings.Join(r.Brokers, ", "))
	}
	for _, s := range r.Skipped {
		on := ""
		if s.Broker != "" {
			on = " on " + BrokerWords(s.Broker)
		}
		fmt.Fprintf(&b, "- Skipped %s%s: %s.\n", s.Scenario, on, s.Why)
	}
	if len(r.Skipped) > 0 {
		b.WriteString("\n")
	}
	if r.Repredicted != "" {
		fmt.Fprintf(&b, "The model's predictions were read again from spec/scenarios %s, after the cells ran (`kcheck scenarios run --from`).\n\n", r.Repredicted)
	}
	fmt.Fprintf(&b, "%d cells: %d reached the scenario's state, %d held back by the client's rules, %d not reached, %d could not run. "+
		"%d showed an anomaly (an acknowledged record lost, a duplicate or a reorder), %d of them worse than the model predicts for the client's rules. "+
		"kcheck verify missed %d anomalies and flagged %d clean runs; our producer with the rule on was flagged or anomalous in %d cells where the model predicts its rules hold.\n\n",
		t.Cells, t.Reached, t.HeldBack, t.NotReached, t.Errors, t.Anomalies, t.Worse, t.Missed, t.FalseAlarms, t.OursOn)
	b.WriteString("Each cell: whether the client reached the scenario's dangerous state; what happened to its records " +
		"(its read-back, and what it told its application); kcheck verify's verdict and whether it agrees with the read-back.\n")
	for _, g := range r.grid() {
		n := g.Name
		fmt.Fprintf(&b, "\n### %s\n\n", n)
		for _, l := range r.Schedule[n] {
			fmt.Fprintf(&b, "    %s\n", l)
		}
		for _, l := range r.Notes[n] {
			fmt.Fprintf(&b, "\n%s\n", l)
		}
		fmt.Fprintf(&b, "\nWall time %.0f s.\n\n", r.Seconds[n])
		b.WriteString("| client | model predicts | shape |")
		for _, v := range r.Brokers {
			fmt.Fprintf(&b, " %s |", BrokerWords(v))
		}
		b.WriteString("\n|---|---|---|")
		for range r.Brokers {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, row := range g.Rows {
			fmt.Fprintf(&b, "| %s | %s | %s |", row.Client, row.Predicted, row.Shape)
			for _, runs := range row.Brokers {
				var ss []string
				for _, c := range runs {
					ss = append(ss, c.short())
				}
				fmt.Fprintf(&b, " %s |", strings.Join(ss, " / "))
			}
			b.WriteString("\n")
		}
	}
	var worse []Cell
	for _, c := range r.Cells {
		if c.Worse {
			worse = append(worse, c)
		}
	}
	if len(worse) > 0 {
		b.WriteString("\n### Worse than the model predicts\n\n")
		sort.SliceStable(worse, func(i, j int) bool { return worse[i].Client < worse[j].Client })
		for _, c := range worse {
			fmt.Fprintf(&b, "- %s on %s, %s, %s: %s (family %s predicts pass); trace %s\n", c.Client, BrokerWords(c.Broker), c.Scenario, c.Shape, c.What, c.Family, c.Trace)
		}
	}
	var found []Cell
	for _, c := range r.Cells {
		if c.BrokerFinding != "" {
			found = append(found, c)
		}
	}
	if len(found) > 0 {
		b.WriteString("\n### Broker findings\n\n" +
			"Answers of a broker that the spec's broker (Apache Kafka's rules, checked on the wire) cannot explain; the broker's, not the client's, and not counted above.\n\n")
		for _, c := range found {
			fmt.Fprintf(&b, "- %s, %s, %s, %s: %s\n", BrokerWords(c.Broker), c.Scenario, c.Client, c.Shape, c.BrokerFinding)
		}
	}
	r.writeUnknown(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// gridScenario is a scenario's cells as the matrix lays them out: a row
// per client and shape, in the order of their first cell.
type gridScenario struct {
	Name string
	Rows []gridRow
}

// gridRow is a client's cells on one shape: Brokers[i] are its runs on
// Results.Brokers[i].
type gridRow struct {
	Client, Shape string
	Predicted     string // "family: prediction", of the client's last cell in the scenario
	Brokers       [][]Cell
}

// grid lays r's cells out by scenario, in the order of their first cell.
func (r *Results) grid() []gridScenario {
	var out []gridScenario
	index := map[string]int{}
	type rowKey struct{ scenario, client, shape string }
	rows := map[rowKey]int{}
	for _, c := range r.Cells {
		i, ok := index[c.Scenario]
		if !ok {
			i = len(out)
			index[c.Scenario] = i
			out = append(out, gridScenario{Name: c.Scenario})
		}
		g := &out[i]
		k := rowKey{c.Scenario, c.Client, c.Shape}
		j, ok := rows[k]
		if !ok {
			j = len(g.Rows)
			rows[k] = j
			g.Rows = append(g.Rows, gridRow{Client: c.Client, Shape: c.Shape, Brokers: make([][]Cell, len(r.Brokers))})
		}
		if b := slices.Index(r.Brokers, c.Broker); b >= 0 {
			g.Rows[j].Brokers[b] = append(g.Rows[j].Brokers[b], c)
		}
		for jj := range g.Rows {
			if g.Rows[jj].Client == c.Client {
				g.Rows[jj].Predicted = c.Family + ": " + c.Predicted
			}
		}
	}
	return out
}

// short is a cell in a few words.
func (c Cell) short() string {
	if c.Err != "" {
		return "could not run: " + c.Err
	}
	s := c.Reach.Status + ": " + c.What
	v := c.Verdict
	if len(c.Kinds) > 0 {
		v = strings.Join(c.Kinds, ", ")
	}
	s += "; verify: " + v
	if c.Agreement != Agrees {
		s += " (**" + string(c.Agreement) + "**)"
	}
	if c.Worse {
		s += " **worse than the model**"
	}
	if w := c.likeWords(); w != "" {
		s += "; " + w
	}
	return s
}

// writeUnknown says, for each client of Unknown family, how many of its
// cells that ran with predictions matched each family's prediction.
func (r *Results) writeUnknown(b *strings.Builder) {
	var clients []string
	judged := map[string]int{}
	like := map[string]map[string]int{} // client → family → cells matched
	for _, c := range r.Cells {
		if c.Family != Unknown || c.Err != "" || len(c.Predictions) == 0 {
			continue
		}
		if like[c.Client] == nil {
			clients = append(clients, c.Client)
			like[c.Client] = map[string]int{}
		}
		judged[c.Client]++
		for f := range c.Predictions {
			like[c.Client][f] += 0
		}
		for _, f := range c.Like {
			like[c.Client][f]++
		}
	}
	if len(clients) == 0 {
		return
	}
	b.WriteString("\n### Clients of unknown family\n\n" +
		"For each client defined with family unknown (--client-def), in how many of its cells that ran under a scenario's faults " +
		"each family's prediction matched what it did (drivers/DRIVERS.md).\n\n")
	for _, cl := range clients {
		fs := slices.SortedFunc(maps.Keys(like[cl]), func(x, y string) int {
			if d := like[cl][y] - like[cl][x]; d != 0 {
				return d
			}
			return strings.Compare(x, y)
		})
		var parts []string
		for _, f := range fs {
			parts = append(parts, fmt.Sprintf("%s %d", f, like[cl][f]))
		}
		fmt.Fprintf(b, "- %s, %d cells: %s\n", cl, judged[cl], strings.Join(parts, ", "))
	}
}
