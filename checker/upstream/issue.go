package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kcheck/kcheck/checker"
	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/tracer"
)

// What an issue body shows at most: an anomaly a maintainer can read, not
// the whole trace (which the reader attaches).
const (
	maxFindings = 20  // anomalies listed
	maxRows     = 20  // rows of the told-against-log table (a row: one record, or a run of a batch's told and written alike)
	maxExcerpt  = 40  // trace lines quoted
	maxLine     = 400 // bytes of a quoted line; longer ones are cut and end in " …"
)

// Options tune an issue body.
type Options struct {
	// Repro is the command that reproduces the run, as given; "" derives it
	// from the trace's header (Repro).
	Repro string
	// ClusterDirs are directories of cluster schedules (kcheck scenarios
	// run --cluster DIR): a derived command for a run on a cluster names
	// the one holding its scenario's schedule.
	ClusterDirs []string
	// LinzTimeout is Porcupine's time limit in kcheck verify (0: its own).
	LinzTimeout time.Duration
}

// Issue is what an issue body says of one trace: kcheck verify's report,
// what the Collector gathered in its pass, and the lines it quotes.
type Issue struct {
	rep       *verify.Report
	col       *Collector
	opts      Options
	excerpt   []int                        // the lines quoted, in order
	left      int                          // lines of the anomalies' batches left out of the excerpt
	text      map[int]string               // their text, as in the trace (cut at maxLine)
	acked     []bool                       // by finding: whether its records were acknowledged (PropertyOf)
	rows      []row                        // the told-against-log table
	shown     int                          // the findings the table and excerpt show: the first shown
	moreRecs  int                          // records those findings name beyond the table's rows
	positions map[int64][]tracer.LogRecord // where the log holds each record the findings shown name
	cutTo     map[int64]bool               // the records the read-back excerpt shows
}

// File verifies the trace at path with kcheck verify, gathering what an
// issue body shows of the anomalies it finds, then reads the lines it
// quotes again. A bad trace (missing, malformed, not a trace) is an error
// naming path and, where there is one, the line.
func File(ctx context.Context, path string, opts Options) (*Issue, error) {
	col := NewCollector()
	rep, err := verify.File(ctx, path, verify.Options{LinzTimeout: opts.LinzTimeout, Observers: []verify.Observer{col}})
	if err != nil {
		return nil, err
	}
	is := &Issue{rep: rep, col: col, opts: opts}
	is.choose()
	if is.text, err = readLines(path, is.excerpt); err != nil {
		return nil, err
	}
	return is, nil
}

// Verdict is kcheck verify's verdict on the trace.
func (is *Issue) Verdict() verify.Verdict { return is.rep.Verdict }

// Anomalies is how many anomalies kcheck verify found: with none, there is
// no issue to write.
func (is *Issue) Anomalies() int { return len(is.rep.Violations) }

// Report is kcheck verify's report on the trace.
func (is *Issue) Report() *verify.Report { return is.rep }

// choose picks the records the table shows and the lines the excerpt
// quotes: for the first findings in verify's order, as many as fit in
// maxExcerpt lines (at least the first, cut to them), the lines verify
// names, every event of their batches, and what the application was told
// of each batch's first record they name (the table gives the line of the
// rest); and their records, in up to maxRows rows. It also notes, for every
// finding, whether its records were acknowledged.
func (is *Issue) choose() {
	col := is.col
	lines := map[int]bool{}
	recs := map[int64]bool{}
	var named []int64 // the records the findings shown name, in the order they name them
	for i, v := range is.rep.Violations {
		want := slices.Clone(v.Lines)
		var batches []batchKey
		if v.Partition >= 0 && v.Batch != 0 { // 0: none (or a proxy's batch of record 0, which its records name)
			batches = append(batches, batchKey{v.Partition, v.Batch})
		}
		acked := false
		toldOf := map[batchKey]bool{}
		for _, id := range v.Records {
			k, sent := col.recBatch[id]
			if sent {
				batches = append(batches, k)
			}
			if t, ok := col.told[id]; ok {
				if !sent || !toldOf[k] {
					want = append(want, t.line)
					toldOf[k] = true
				}
				acked = acked || t.result == tracer.Delivered
			}
		}
		if v.Kind == checker.Lost && len(batches) > 0 {
			// What lost it: the batch the partition sent next, whose
			// answer came first (a later sequence written, or the success
			// a client took for the lost batch's).
			if next, ok := col.next(batches[len(batches)-1]); ok {
				batches = append(batches, next)
			}
		}
		for _, k := range batches {
			if b := col.batches[k]; b != nil {
				want = append(want, b.lines...)
				acked = acked || b.acked && k.p == v.Partition
			}
		}
		is.acked = append(is.acked, acked)
		if is.shown < i {
			continue // an earlier finding did not fit
		}
		slices.Sort(want)
		want = slices.DeleteFunc(slices.Compact(want), func(l int) bool { return l <= 1 || lines[l] })
		if i > 0 && len(lines)+len(want) > maxExcerpt {
			continue
		}
		is.shown++
		for _, l := range want {
			if len(lines) < maxExcerpt {
				lines[l] = true
			} else {
				is.left++
			}
		}
		for _, id := range v.Records {
			if !recs[id] {
				recs[id] = true
				named = append(named, id)
			}
		}
	}
	is.positions = map[int64][]tracer.LogRecord{}
	for _, id := range named {
		is.positions[id] = nil
	}
	for _, p := range sortedKeys(col.logs) {
		for _, r := range col.logs[p].log {
			if _, ok := is.positions[r.ID]; ok {
				is.positions[r.ID] = append(is.positions[r.ID], r)
			}
		}
	}
	is.rows, is.moreRecs = is.table(named)
	is.cutTo = map[int64]bool{} // the read-back excerpt shows each row's first and last record
	for _, r := range is.rows {
		is.cutTo[r.ids[0]] = true
		is.cutTo[r.ids[len(r.ids)-1]] = true
	}
	for l := range lines {
		is.excerpt = append(is.excerpt, l)
	}
	slices.Sort(is.excerpt)
}

// readLines reads the lines of the trace at path that the excerpt quotes.
func readLines(path string, want []int) (map[int]string, error) {
	out := map[int]string{}
	if len(want) == 0 {
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	next := 0
	for line := 1; next < len(want); line++ {
		var text []byte
		for {
			chunk, err := br.ReadSlice('\n')
			if line == want[next] && len(text) <= maxLine {
				text = append(text, chunk...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !(errors.Is(err, io.EOF) && len(chunk) > 0) {
				return nil, fmt.Errorf("%s:%d: reading the trace again: %w", path, line, err)
			}
			break
		}
		if line == want[next] {
			out[line] = cut(string(bytes.TrimRight(text, "\r\n")))
			next++
		}
	}
	return out, nil
}

// cut cuts s at maxLine bytes.
func cut(s string) string {
	if len(s) <= maxLine {
		return s
	}
	return s[:maxLine] + " …"
}

func sortedKeys[V any](m map[int32]V) []int32 {
	var ks []int32
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Write writes the issue body, in Markdown.
func (is *Issue) Write(w io.Writer) error {
	rep, h := is.rep, is.rep.Header
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	p("<!-- Written by kcheck report %s: an issue body for the client's tracker. -->\n\n", rep.File)
	var summaries []string
	for i, v := range rep.Violations {
		if s := PropertyOf(v.Kind, is.acked[i]).Summary; !slices.Contains(summaries, s) {
			summaries = append(summaries, s)
		}
	}
	p("## %s: %s (idempotent producer, %s)\n\n", clientShort(h.Client), strings.Join(summaries, ", "), brokerText(h.Broker))

	p("**Client:** %s, with idempotence on", ClientText(h.Client))
	if h.Writer == tracer.ProxyWriter {
		p(", unchanged: kcheck's proxy traced it on the wire")
		if len(is.col.told) > 0 {
			p(", and its driver reported what the client told the application")
		}
	}
	p(".\n\n**Broker:** %s.\n\n", brokerText(h.Broker))
	p("**Workload:** topic `%s`, %s", h.Topic, plural(int64(h.Partitions), "partition"))
	if m := excerptOf.FindStringSubmatch(h.Config["excerpt"]); m != nil {
		p(" (the trace is partition %s of the run's, alone and renumbered 0)", m[1])
	}
	o := rep.Order
	p("; %d records sent, %d read back.\n\n", o.Records, o.ReadBack)

	p("### What was done to it\n\n")
	if len(h.Faults) == 0 {
		p("Nothing: no fault was injected.\n\n")
	} else {
		p("The faults injected, in the order they apply (the first whose selectors hold takes a partition's attempt):\n\n")
		for _, f := range h.Faults {
			p("- `%s`%s\n", f, faultText(f))
		}
		p("\n")
	}

	p("### What went wrong\n\n")
	p("kcheck verify found %s:\n\n", plural(int64(len(rep.Violations)), "anomaly"))
	for i, v := range rep.Violations {
		if i == maxFindings {
			p("\n... and %d more (`kcheck verify %s` lists them all).\n", len(rep.Violations)-i, rep.File)
			break
		}
		prop := PropertyOf(v.Kind, is.acked[i])
		where := ""
		if v.Partition >= 0 && h.Partitions > 1 {
			where = fmt.Sprintf(", partition %d", v.Partition)
		}
		p("%d. **%s**%s, breaks `%s` (%s): %s\n", i+1, v.Kind, where, prop.Name, prop.Meaning, v.Detail)
	}
	p("\n")

	p("### What the application was told, against the log\n\n")
	if is.shown < len(rep.Violations) {
		p("For %s (of %d; `kcheck verify %s` shows each):\n\n", is.firstN(), len(rep.Violations), rep.File)
	}
	if len(is.col.told) == 0 {
		p("The trace does not say what the client told the application (no `Told` events).\n\n")
	}
	if len(is.rows) > 0 {
		p("| records | told | in the log (read back after the run) |\n|---|---|---|\n")
		for _, r := range is.rows {
			p("| %s | %s | %s |\n", idsText(r.ids), is.toldText(r), is.logText(r))
		}
		if is.moreRecs > 0 {
			p("\n... and %d more records these anomalies name.\n", is.moreRecs)
		}
		p("\n")
	}

	p("### The trace, cut to these records\n\n")
	p("%d of the trace's %d lines, for %s: the events of their batches (sent, answered, faults on them, lost connections), what the application was told of each batch's first record, and the read-back cut to the records above; `…` marks lines left out. Each line is `LINE: EVENT`, in kcheck's trace format (tracer/FORMAT.md).", len(is.excerpt), rep.ReadBack.LastLine, is.firstN())
	if is.left > 0 {
		p(" %d more lines of these batches are left out.", is.left)
	}
	p("\n\n```\n")
	width := len(strconv.Itoa(rep.ReadBack.LastLine))
	prev := 0
	for _, l := range is.excerpt {
		if prev > 0 && l > prev+1 {
			p("%*s\n", width+1, "…")
		}
		prev = l
		if rb, _, ok := is.readBackAt(l); ok {
			p("%*d: %s\n", width, l, rb)
			continue
		}
		p("%*d: %s\n", width, l, is.text[l])
	}
	p("```\n\n")

	p("### Reproduce\n\n")
	cmd, note := Repro(h, is.opts)
	if cmd == "" {
		p("%s\n\n", note)
	} else {
		p("```\n%s\n```\n\n", cmd)
		if strings.HasPrefix(cmd, "kcheck scenarios run ") {
			p("With kcheck (github.com/kcheck/kcheck, `make build`): it starts Kafka %s (fetched from Maven Central), sets the client's driver up, runs it through kcheck's proxy with the faults above, and checks the trace with `kcheck verify`.", h.Broker.Version)
			if note != "" {
				p(" %s", note)
			}
			p("\n\n")
		}
	}
	p("`kcheck verify %s` gives the findings above from the trace.\n", rep.File)
	return bw.Flush()
}

// readBackAt renders line l when it is a ReadBack, its log cut to the
// first and last records of the table's rows.
func (is *Issue) readBackAt(l int) (text string, kept int, ok bool) {
	for _, part := range sortedKeys(is.col.logs) {
		rb := is.col.logs[part]
		if rb.line != l {
			continue
		}
		var kept [][5]int64
		for _, r := range rb.log {
			if is.cutTo[r.ID] {
				kept = append(kept, [5]int64{r.Offset, r.PID, int64(r.Epoch), int64(r.Seq), r.ID})
			}
		}
		logJSON, _ := json.Marshal(kept)
		if kept == nil {
			logJSON = []byte("[]")
		}
		return fmt.Sprintf(`{"i":%d,"t":%d,"ev":"ReadBack","p":%d,"log":%s}  (cut to the first and last records of each row above: %d of its %d)`,
			rb.i, rb.t, part, logJSON, len(kept), len(rb.log)), len(kept), true
	}
	return "", 0, false
}

// firstN names the findings the table and excerpt show.
func (is *Issue) firstN() string {
	if is.shown == 1 {
		return "anomaly 1"
	}
	return fmt.Sprintf("anomalies 1 to %d", is.shown)
}

// clientShort names the client for a title.
func clientShort(name string) string {
	if c, ok := stockClients[name]; ok {
		what, _, _ := strings.Cut(c.what, ",")
		return what + " " + c.version
	}
	if _, ok := ours[name]; ok {
		return "kcheck's producer (" + name + ")"
	}
	if name == "kcheck/producer" {
		return "kcheck's producer"
	}
	return name
}

func brokerText(b tracer.Broker) string {
	if b.Kind == "kafka" {
		return "Apache Kafka " + b.Version
	}
	return fmt.Sprintf("%s, as Kafka %s", b.Kind, b.Version)
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "y") {
		return fmt.Sprintf("%d %sies", n, what[:len(what)-1])
	}
	return fmt.Sprintf("%d %ss", n, what)
}
