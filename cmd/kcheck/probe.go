package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/brokers/probe"
	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/tracer"
)

// probeCommand returns "kcheck broker probe".
func probeCommand() *cli.Command {
	return &cli.Command{
		Name:      "probe",
		Usage:     "ask a running broker what it does with the producer-state cases, and hold its answers to the spec's broker",
		UsageText: "kcheck broker probe --bootstrap HOST:PORT [--broker-kind K --broker-version V] [--traces DIR] [--json FILE]",
		Description: "Runs each case on a topic of its own (created, then deleted), one request at a time, on the wire:\n" +
			probeCases() +
			"\nEach case is written as a trace (DIR/CASE.jsonl, as kcheck proxy writes one) with its read-back, and\n" +
			"kcheck verify holds the broker's answers to the spec's broker (Apache Kafka's rules): what it cannot\n" +
			"explain is the broker's nonconformance, printed with its line. Prints a table, case by case: what the\n" +
			"broker answered, whether the spec's broker explains it, and what a client would see. Exit status: 0 when every case ran\n" +
			"(whatever the broker answered); 2 when the broker could not be reached or a case could not run.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bootstrap", Usage: "the broker, `HOST:PORT` (kcheck kafka or kcheck broker prints it)"},
			&cli.StringFlag{Name: "broker-kind", Value: "kafka", Usage: "what it is, for the traces: kafka, kfake or tansu"},
			&cli.StringFlag{Name: "broker-version", Usage: "its `VERSION`, for the traces (Kafka's or kfake's decides the rules verify applies)"},
			&cli.StringFlag{Name: "traces", Usage: "write the cases' traces to `DIR` (default: a new temporary directory, kept)", TakesFile: true},
			&cli.StringFlag{Name: "json", Usage: "also write the results as JSON to `FILE`", TakesFile: true},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("broker probe: unexpected argument %q", c.Args().First())
			}
			addr := c.String("bootstrap")
			if addr == "" {
				return usageErrorf("broker probe: --bootstrap HOST:PORT is required")
			}
			bcfg, err := proxyBroker(c.String("broker-kind"), c.String("broker-version"))
			if err != nil {
				return usageErrorf("broker probe: %v", err)
			}
			dir := c.String("traces")
			if dir == "" {
				if dir, err = os.MkdirTemp("", "kcheck-probe-"); err != nil {
					return err
				}
			} else if err := os.MkdirAll(dir, 0o755); err != nil {
				return usageErrorf("broker probe: --traces: %v", err)
			}
			prefix := fmt.Sprintf("kcheck-probe-%d", time.Now().Unix())
			res := probe.Run(c.Context, probe.Config{Bootstrap: addr, Broker: bcfg, Dir: dir, Prefix: prefix})
			txn := probeTransactions(c.Context, addr, bcfg, dir, prefix)
			return writeProbe(c.Context, c.App.Writer, bcfg, res, txn, c.String("json"))
		},
	}
}

func probeCases() string {
	var b strings.Builder
	for _, pc := range probe.Cases {
		fmt.Fprintf(&b, "  %-18s %s\n", pc.Name, pc.What)
	}
	return b.String()
}

// probeRow is one case's line of the table (and of --json).
type probeRow struct {
	Case     string   `json:"case"`
	Asks     string   `json:"asks"`
	Answers  []string `json:"answers"`
	Deciding []string `json:"deciding"` // the last answers, those that decide the case
	Kafka    string   `json:"kafka"`
	Verdict  string   `json:"verdict"`
	Finding  string   `json:"finding,omitempty"` // verify's nonconformance, in words, or why it was not verified
	// ClientSees are the kinds of anomaly verify finds for a client that
	// did what the case does (which it does on purpose).
	ClientSees string `json:"client_sees,omitempty"`
	Trace      string `json:"trace"`
	CouldNot   string `json:"could_not_run,omitempty"`
}

// probeFile is what --json writes: the broker and its cases.
type probeFile struct {
	Broker tracer.Broker `json:"broker"`
	Cases  []probeRow    `json:"cases"`
}

// probeTransactions runs our producer in transactions against the broker
// (kcheck run --transactional, every third transaction aborted, 200
// records on 4 partitions) and verifies its trace: what the broker's
// markers and read_committed make of them. A broker without transactions
// is a row that says so, in our producer's words.
func probeTransactions(ctx context.Context, addr string, b tracer.Broker, dir, prefix string) probeRow {
	trace := filepath.Join(dir, "transactions.jsonl")
	row := probeRow{Case: "transactions", Asks: "our producer in 20 transactions of 10 records on 4 partitions, every third aborted, read back with read_committed", Trace: trace}
	self, err := os.Executable()
	if err != nil {
		row.CouldNot, row.Verdict = err.Error(), "could not run"
		return row
	}
	version := b.Version
	if b.Kind != "kafka" {
		version = "" // our producer's header: the Kafka version it is, unknown
	}
	cmd := exec.CommandContext(ctx, self, "run", "--bootstrap", addr, "--broker-version", version, "--topic", prefix+"-transactions",
		"--transactional", "--txn-records", "10", "--txn-abort-every", "3", "--records", "200", "--partitions", "4", "--trace", trace)
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	if code := cmd.ProcessState.ExitCode(); err != nil && code == exitUsage {
		// The broker cannot do transactions (or was unreachable): our
		// producer's own words.
		row.Answers = []string{strings.TrimPrefix(lastOf(text), "kcheck: ")}
		row.Deciding, row.Verdict, row.Trace = row.Answers, "no transactions", ""
		return row
	}
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "transactions committed") || strings.HasPrefix(l, "read_committed sees") {
			row.Answers = append(row.Answers, l)
		}
	}
	row.Deciding = row.Answers
	rep, err := verify.File(ctx, trace, verify.Options{})
	if err != nil {
		row.Verdict = "not verified: " + err.Error()
		return row
	}
	row.Verdict = "conforms"
	var kinds []string
	for _, v := range rep.Violations {
		if v.Kind == checker.NonConformance {
			row.Verdict, row.Finding = "NONCONFORMANCE", fmt.Sprintf("line %d: %s", firstLine(v.Lines), v.Detail)
			continue
		}
		if !slices.Contains(kinds, string(v.Kind)) {
			kinds = append(kinds, string(v.Kind))
		}
	}
	row.ClientSees = strings.Join(kinds, ", ")
	return row
}

// lastOf is the last line of s.
func lastOf(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func writeProbe(ctx context.Context, w io.Writer, b tracer.Broker, res []probe.Result, txn probeRow, jsonPath string) error {
	var rows []probeRow
	failed := 0
	for _, r := range res {
		row := probeRow{Case: r.Case.Name, Asks: r.Case.What, Trace: r.Trace}
		for _, a := range r.Answers {
			row.Answers = append(row.Answers, a.String())
		}
		row.Deciding = row.Answers[max(0, len(row.Answers)-r.Case.Shown):]
		if r.Err != nil {
			row.CouldNot, row.Verdict = r.Err.Error(), "could not run"
			failed++
			rows = append(rows, row)
			continue
		}
		if why := r.Case.Unverifiable(); why != "" {
			row.Verdict = "not verified"
			row.Finding = why
			rows = append(rows, row)
			continue
		}
		rep, err := verify.File(ctx, r.Trace, verify.Options{})
		if err != nil {
			row.Verdict = "not verified: " + err.Error()
			rows = append(rows, row)
			continue
		}
		// The cases send what no client should, on purpose: the lost
		// writes, gaps and stalls verify finds are what a client would
		// see; what is the broker's is an answer the spec's broker cannot
		// explain (the client's attempts are taken as given on the wire).
		row.Verdict = "conforms"
		var seen []string
		for _, v := range rep.Violations {
			if v.Kind == checker.NonConformance {
				row.Verdict = "NONCONFORMANCE"
				row.Finding = fmt.Sprintf("line %d: %s", firstLine(v.Lines), v.Detail)
				continue
			}
			if !slices.Contains(seen, string(v.Kind)) {
				seen = append(seen, string(v.Kind))
			}
		}
		row.ClientSees = strings.Join(seen, ", ")
		rows = append(rows, row)
	}
	rows = append(rows, txn)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tthe broker answered\tthe spec's broker\ta client sees\ttrace")
	for _, r := range rows {
		sees := r.ClientSees
		if sees == "" {
			sees = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Case, strings.Join(r.Answers, "; "), r.Verdict, sees, r.Trace)
	}
	tw.Flush()
	for _, r := range rows {
		fmt.Fprintf(w, "\n%s: %s\n", r.Case, r.Asks)
		if r.Finding != "" {
			fmt.Fprintf(w, "  %s: %s\n", r.Verdict, r.Finding)
		}
		if r.CouldNot != "" {
			fmt.Fprintf(w, "  could not run: %s\n", r.CouldNot)
		}
	}
	if jsonPath != "" {
		err := writeFileAtomic(jsonPath, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(probeFile{Broker: b, Cases: rows})
		})
		if err != nil {
			return usageErrorf("broker probe: --json: %v", err)
		}
	}
	if failed > 0 {
		return &exitError{code: exitUsage, err: fmt.Errorf("broker probe: %d of %d cases could not run", failed, len(rows))}
	}
	return nil
}

func firstLine(lines []int) int {
	if len(lines) == 0 {
		return 0
	}
	return lines[0]
}

// tableCommand returns "kcheck broker table".
func tableCommand() *cli.Command {
	return &cli.Command{
		Name:      "table",
		Usage:     "tabulate probes of several brokers (kcheck broker probe --json) as Markdown: brokers by case",
		UsageText: "kcheck broker table PROBE.json...",
		Description: "Reads each file kcheck broker probe --json wrote and prints a Markdown table: a row per broker, a\n" +
			"column per case, each cell the broker's answers that decide the case, whether\n" +
			"the spec's broker explains the case's answers, and a link to its trace, relative to the current\n" +
			"directory. A file that cannot be read or is no probe's: file named, exit 2.",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("broker table: give the probes' JSON files")
			}
			var files []probeFile
			for _, path := range c.Args().Slice() {
				b, err := os.ReadFile(path)
				if err != nil {
					return usageErrorf("broker table: %v", err)
				}
				var pf probeFile
				if err := json.Unmarshal(b, &pf); err != nil || pf.Broker.Kind == "" || len(pf.Cases) == 0 {
					return usageErrorf("broker table: %s: not a kcheck broker probe --json file (%v)", path, err)
				}
				files = append(files, pf)
			}
			return writeProbeTable(c.App.Writer, files)
		},
	}
}

// writeProbeTable writes the Markdown table of the probes.
func writeProbeTable(w io.Writer, files []probeFile) error {
	var b strings.Builder
	b.WriteString("| broker |")
	for _, pc := range files[0].Cases {
		fmt.Fprintf(&b, " %s |", pc.Case)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(files[0].Cases)) + "\n")
	for _, f := range files {
		name := f.Broker.Kind + " " + f.Broker.Version
		if f.Broker.Kind == "kafka" {
			name = "Apache Kafka " + f.Broker.Version
		}
		fmt.Fprintf(&b, "| %s |", name)
		for _, r := range f.Cases {
			last := strings.Join(r.Deciding, "; ")
			if last == "" {
				last = "-"
			}
			mark := ""
			switch {
			case r.Verdict == "NONCONFORMANCE":
				mark = " **nonconformance**"
			case r.CouldNot != "":
				mark = " could not run"
			}
			if r.Trace == "" {
				fmt.Fprintf(&b, " %s%s |", last, mark)
			} else {
				fmt.Fprintf(&b, " [%s](%s)%s |", last, r.Trace, mark)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
