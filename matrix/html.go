package matrix

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/kcheck/kcheck/checker/report"
)

// htmlAssets are the matrix page's template and the CSS it adds to
// kcheck's shared style sheet (report.BaseCSS).
//
//go:embed html/matrix.tmpl html/matrix.css
var htmlAssets embed.FS

var matrixHTML = template.Must(template.ParseFS(htmlAssets, "html/matrix.tmpl", "html/matrix.css"))

// The page's data: what html/matrix.tmpl draws.
type (
	htmlPage struct {
		Title, Word, Note, Class, Run string
		Base                          template.CSS
		Notes                         []string
		Checks                        []htmlCheck
		Failing                       []htmlFailing
		Scenarios                     []htmlScenario
		Brokers                       []string
	}
	htmlCheck struct {
		Name, Result, Class string
		Notes               []string
	}
	htmlFailing struct {
		ID, Scenario, Name, Why, Trace string
	}
	htmlScenario struct {
		ID, Name, Seconds string
		Bad               bool
		Schedule, Notes   []string
		Rows              []htmlRow
	}
	htmlRow struct {
		Client, Shape, Predicted string
		Brokers                  [][]htmlCell
	}
	htmlCell struct {
		Class, Text, Gate, Trace string
	}
)

// WriteHTML writes r as one self-contained HTML page (its CSS inline, no
// script, nothing fetched): a banner with the gate's verdict on every cell
// (Cell.Gate: FAIL when a cell fails it, NO VERDICT when none fails but
// one could not run, else PASS), the tally, the cells that fail the gate,
// and per scenario its schedule and the matrix of its cells, a row per
// client and shape, a column per broker, each cell coloured by its gate
// (pass, fail, could not run, not reached) with its trace's path. The
// output depends on r alone.
func (r *Results) WriteHTML(w io.Writer) error {
	t, gt := r.Tally(), r.GateTally()
	pg := htmlPage{Base: report.BaseCSS(), Brokers: r.Brokers,
		Title: fmt.Sprintf("kcheck scenarios run: %d cells", t.Cells),
		Run: fmt.Sprintf("%s UTC, load average at the start %s, %.0f s in all; clients %s; brokers %s",
			r.Started.Format("2006-01-02 15:04"), r.Load, r.Total, strings.Join(r.Clients, ", "), brokerList(r.Brokers))}
	switch {
	case gt.Fail > 0:
		pg.Word, pg.Class = "FAIL", "violations"
		pg.Note = fmt.Sprintf("%d of %d cells fail the gate: a record acknowledged to the application lost, or an anomaly the model does not predict for the client's family", gt.Fail, gt.Cells)
	case gt.Error > 0:
		pg.Word, pg.Class = "NO VERDICT", "inconclusive"
		pg.Note = fmt.Sprintf("%d of %d cells could not run; none of the others fails the gate", gt.Error, gt.Cells)
	default:
		pg.Word, pg.Class = "PASS", "valid"
		pg.Note = fmt.Sprintf("%d cells: no record acknowledged to the application lost, no anomaly the model does not predict", gt.Cells)
	}
	if r.Interrupted != "" {
		pg.Notes = append(pg.Notes, fmt.Sprintf("This run was stopped before its end (%s): the cells here are those that finished.", r.Interrupted))
	}
	if r.Repredicted != "" {
		pg.Notes = append(pg.Notes, fmt.Sprintf("The model's predictions were read again from spec/scenarios %s, after the cells ran.", r.Repredicted))
	}
	class := func(bad bool) string {
		if bad {
			return "bad"
		}
		return "good"
	}
	pg.Checks = []htmlCheck{
		{Name: "Cells", Class: class(t.Errors > 0), Result: fmt.Sprintf("%d: %d reached the scenario's state, %d held back by the client's rules, %d not reached, %d could not run", t.Cells, t.Reached, t.HeldBack, t.NotReached, t.Errors)},
		{Name: "Anomalies", Class: class(gt.Fail > 0), Result: fmt.Sprintf("%d cells fail the gate; %d showed an anomaly, %d of them worse than the model predicts", gt.Fail, t.Anomalies, t.Worse),
			Notes: []string{"An anomaly: an acknowledged record lost, a duplicate or a reorder, by the client's read-back or by what it told its application."}},
		{Name: "kcheck verify", Class: class(t.Missed+t.FalseAlarms > 0), Result: fmt.Sprintf("missed %d anomalies, flagged %d clean runs", t.Missed, t.FalseAlarms)},
	}
	for _, g := range r.grid() {
		s := htmlScenario{ID: topicUnsafe.ReplaceAllString(g.Name, "-"), Name: g.Name, Seconds: fmt.Sprintf("%.0f", r.Seconds[g.Name]),
			Schedule: r.Schedule[g.Name], Notes: r.Notes[g.Name]}
		for _, row := range g.Rows {
			hr := htmlRow{Client: row.Client, Shape: row.Shape, Predicted: row.Predicted}
			for _, runs := range row.Brokers {
				var hcs []htmlCell
				for _, c := range runs {
					gate, why := c.Gate()
					hc := htmlCell{Class: string(gate), Text: plain(c.short()), Gate: string(gate) + ": " + why, Trace: c.Trace}
					switch {
					case gate == GateFail:
						s.Bad = true
						name := c.Client + "/" + c.Shape + "/" + c.Broker
						if c.Run > 1 {
							name += fmt.Sprintf("/run %d", c.Run)
						}
						pg.Failing = append(pg.Failing, htmlFailing{ID: s.ID, Scenario: g.Name, Name: name, Why: why, Trace: c.Trace})
					case gate == GateError:
						hc.Text = ""
					case c.Reach.Status == NotReached:
						hc.Class, hc.Gate = "skip", hc.Gate+" (not reached: "+c.Reach.Why+")"
					}
					hcs = append(hcs, hc)
				}
				hr.Brokers = append(hr.Brokers, hcs)
			}
			s.Rows = append(s.Rows, hr)
		}
		pg.Scenarios = append(pg.Scenarios, s)
	}
	if err := matrixHTML.ExecuteTemplate(w, "matrix.tmpl", pg); err != nil {
		return fmt.Errorf("HTML report: %w", err)
	}
	return nil
}

// brokerList is a matrix's brokers in words, joined.
func brokerList(names []string) string {
	words := make([]string, len(names))
	for i, n := range names {
		words[i] = BrokerWords(n)
	}
	return strings.Join(words, ", ")
}
