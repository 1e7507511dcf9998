// The txn phase (--txn; bench/run.sh --txn, make bench-txn): the seed's
// transactional table (KAFKA-14359's measurement table) on one Kafka broker
// with transaction.version 2: transactions of 10 and 2,000 records and
// idempotent runs, at 1 and 64 partitions; our producer with the first-ack
// rule on and off beside the stock Java client and the ceiling (what the
// broker takes from pre-built batches: bench/cmd/ceiling), in turns as the
// throughput phase runs its clients; written to RESULTS-txn.md.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/bench/loadgen"
)

// txnRow is one row of the seed's table.
type txnRow struct {
	Partitions int
	PerTxn     int // records a transaction; 0: idempotent
}

// txnRows are the seed's rows, in its order.
var txnRows = []txnRow{{1, 10}, {64, 10}, {1, 2000}, {64, 2000}, {1, 0}, {64, 0}}

// txnClients are the phase's producers: ours with the rule on and off, the
// Java client (the --java-jar the suite is given) and the ceiling.
var txnClients = []string{"ours-on", "ours-off", "java", "ceiling"}

// txnRun is one measurement of the txn phase.
type txnRun struct {
	Row    txnRow
	Client string
	Repeat int
	Result *loadgen.Result `json:",omitempty"`
	Err    string          `json:",omitempty"`
}

// sizes are a row's timed and warm-up records.
func (s *suite) txnSizes(r txnRow) (records, warmup int) {
	switch r.PerTxn {
	case 0:
		return s.p.TxnIdem, s.p.TxnIdemWarm
	case 10:
		return s.p.TxnSmall, s.p.TxnSmallWarm
	}
	return s.p.TxnLarge, s.p.TxnLargeWarm
}

// txn runs the phase: the broker's transaction.version first, then an
// untimed round, then TxnRepeats repeats, each running every row with
// every client on a fresh topic, the clients in the order rotate gives
// the repeat (as the throughput phase), the load average marked at each
// repeat.
func (s *suite) txn(ctx context.Context) {
	f, err := s.txnFeature(ctx)
	if err != nil {
		s.fail("txn", fmt.Errorf("reading the broker's finalized features: %w", err))
	}
	s.res.TxnFeature = f
	s.logf("txn: the broker's %s", f)
	// The untimed round: every client once on a small-transaction row and
	// an idempotent one, in the first repeat's order (warmBroker's reason:
	// a broker just started makes the first client 2-3x slower).
	for _, row := range []txnRow{{1, 10}, {64, 0}} {
		for _, c := range rotate(txnClients, 0) {
			if ctx.Err() != nil {
				return
			}
			res, err := s.measureTxn(ctx, c, row, fmt.Sprintf("bench-txn-warm-%s-%s", c, row.slug()))
			line := fmt.Sprintf("%s, %s: ", s.clientName(c), row.label())
			if err != nil {
				line += "failed: " + err.Error()
			} else {
				line += fmt.Sprintf("%.0f records/s (not counted)", res.RecordsPerS)
			}
			s.logf("txn: warming up, %s", line)
			s.res.TxnWarmup = append(s.res.TxnWarmup, line)
		}
	}
	for r := 0; r < s.p.TxnRepeats; r++ {
		s.mark(fmt.Sprintf("txn repeat %d of %d", r+1, s.p.TxnRepeats))
		for _, row := range txnRows {
			for _, c := range rotate(txnClients, r) {
				if ctx.Err() != nil {
					return
				}
				run := txnRun{Row: row, Client: c, Repeat: r}
				var err error
				run.Result, err = s.measureTxn(ctx, c, row, fmt.Sprintf("bench-txn-%s-%s-r%d", c, row.slug(), r))
				if err != nil {
					run.Err = err.Error()
					s.fail("txn", fmt.Errorf("%s, %s, repeat %d: %w", c, row.label(), r+1, err))
				} else {
					p50, p99 := txnLatency(run.Result)
					s.logf("txn %s %s r=%d: %.0f records/s, p50 %.2f ms, p99 %.2f ms", c, row.label(), r+1, run.Result.RecordsPerS, p50, p99)
				}
				s.res.Txn = append(s.res.Txn, run)
			}
		}
	}
}

// measureTxn runs client on row once (measureOnce: a fresh topic, settled,
// the warm-up on it with every key in turn, then the timed records), each
// transactional run with the topic as its transactional id.
func (s *suite) measureTxn(ctx context.Context, client string, row txnRow, topic string) (*loadgen.Result, error) {
	records, warmup := s.txnSizes(row)
	var extra []string
	if row.PerTxn > 0 {
		extra = []string{"--transactional", "--txn-records", strconv.Itoa(row.PerTxn), "--transactional-id", topic}
	}
	res, err := s.measureOnce(ctx, client, topic, row.Partitions, records, warmup, extra...)
	if err == nil && row.PerTxn > 0 && (res.Txns == nil || res.Txns.Committed == 0) {
		err = fmt.Errorf("no committed transaction in its answer")
	}
	return res, err
}

// txnFeature reads the broker's finalized transaction.version from its
// ApiVersions answer.
func (s *suite) txnFeature(ctx context.Context) (string, error) {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kcheck-bench", "0.1.0"
	resp, err := req.RequestWith(rctx, s.b.admin)
	if err != nil {
		return "transaction.version unknown", err
	}
	for _, f := range resp.FinalizedFeatures {
		if f.Name == "transaction.version" {
			sup := ""
			for _, sf := range resp.SupportedFeatures {
				if sf.Name == f.Name {
					sup = fmt.Sprintf("; the broker supports %d-%d", sf.MinVersion, sf.MaxVersion)
				}
			}
			return fmt.Sprintf("finalized transaction.version %d (ApiVersions of %s, features epoch %d%s)", f.MaxVersionLevel, s.b.addr, resp.FinalizedFeaturesEpoch, sup), nil
		}
	}
	return fmt.Sprintf("finalized features list no transaction.version (ApiVersions of %s): level 0", s.b.addr), nil
}

func (r txnRow) slug() string {
	if r.PerTxn == 0 {
		return fmt.Sprintf("idem-p%d", r.Partitions)
	}
	return fmt.Sprintf("txn%d-p%d", r.PerTxn, r.Partitions)
}

func (r txnRow) label() string {
	if r.PerTxn == 0 {
		return fmt.Sprintf("idempotent, %d partition%s", r.Partitions, plural(r.Partitions))
	}
	return fmt.Sprintf("transactional, %d partition%s, %s records a transaction", r.Partitions, plural(r.Partitions), count(int64(r.PerTxn)))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// txnLatency is the row's latency of a run: begin-to-commit p50 and p99 of
// a transactional run, produce-to-ack of an idempotent one.
func txnLatency(r *loadgen.Result) (p50, p99 float64) {
	if r.Txns != nil {
		return r.Txns.BeginToCommit.P50, r.Txns.BeginToCommit.P99
	}
	return r.LatencyMs.P50, r.LatencyMs.P99
}

// txnVals is a value of every repeat of client on row (NaN: failed).
func (s *suite) txnVals(client string, row txnRow, f func(*loadgen.Result) float64) []float64 {
	v := make([]float64, s.p.TxnRepeats)
	for i := range v {
		v[i] = nan
	}
	for _, r := range s.res.Txn {
		if r.Client == client && r.Row == row && r.Result != nil && r.Err == "" && r.Repeat < len(v) {
			v[r.Repeat] = f(r.Result)
		}
	}
	return v
}

func txnP50(r *loadgen.Result) float64 { p, _ := txnLatency(r); return p }
func txnP99(r *loadgen.Result) float64 { _, p := txnLatency(r); return p }

// perTxnMs is a transactional run's mean time per transaction, in ms.
func perTxnMs(r *loadgen.Result) float64 {
	if r.Txns == nil || r.RecordsPerS <= 0 {
		return nan
	}
	return float64(r.Txns.Records) / r.RecordsPerS * 1000
}

// interval is a pooled value: the median over the repeats with its 95%
// bootstrap interval (bench/pool.py --values), and min and max.
type interval struct {
	N                        int
	Median, Lo, Hi, Min, Max float64
}

func (iv interval) String() string {
	if iv.N == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%s (%s–%s)", r3(iv.Median), r3(iv.Lo), r3(iv.Hi))
}

// r3 formats a ratio with three significant digits or so.
func r3(x float64) string {
	switch ax := math.Abs(x); {
	case ax >= 100:
		return fmt.Sprintf("%.0f", x)
	case ax >= 10:
		return fmt.Sprintf("%.1f", x)
	case ax >= 1:
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.3f", x)
}

// poolValues pools named lists of per-repeat values with bench/pool.py
// --values, the one place the bootstrap is written; NaNs (failed repeats)
// are left out.
func (s *suite) poolValues(named map[string][]float64) (map[string]interval, error) {
	clean := map[string][]*float64{}
	for k, vs := range named {
		out := make([]*float64, len(vs))
		for i, v := range vs {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				out[i] = &vs[i]
			}
		}
		clean[k] = out
	}
	b, err := json.Marshal(clean)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "kcheck-txn-*.json")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(b)
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
	p := run(context.Background(), time.Minute, s.path.Root, nil, py, filepath.Join(s.path.Root, "bench/pool.py"), "--values", f.Name())
	if p.err != nil || p.exit != 0 {
		return nil, fmt.Errorf("bench/pool.py --values: exit %d: %s", p.exit, lastLines(p.stderr, 3))
	}
	var out map[string]interval
	if err := json.Unmarshal([]byte(p.stdout), &out); err != nil {
		return nil, fmt.Errorf("bench/pool.py --values' JSON: %w", err)
	}
	return out, nil
}

// judge is a budget's verdict on a pooled ratio that should be at least
// bound: met when its whole interval is, not met when its median is
// below, otherwise not resolved by these repeats (the turns phase's rule).
func judge(iv interval, bound float64) string {
	switch {
	case iv.N == 0:
		return "**not measured**"
	case iv.Lo >= bound:
		return "**met**"
	case iv.Median < bound:
		return "**not met**"
	}
	return "**not resolved**"
}

// waitVerdict judges the seed's "large transactions wait about one round
// trip each": the extra time a transaction takes with the rule (its
// interval) against one round trip rtt. Confirmed when the interval's top
// is within 1.5 round trips; not confirmed when its median is above that;
// otherwise not resolved.
func waitVerdict(extra interval, rtt float64) string {
	switch {
	case extra.N == 0 || math.IsNaN(rtt) || rtt <= 0:
		return "**not measured**"
	case extra.Hi <= 1.5*rtt:
		return "**confirmed** (at most about one round trip)"
	case extra.Median > 1.5*rtt:
		return "**not confirmed** (more than one round trip)"
	}
	return "**not resolved** (the median is within one round trip, the interval reaches past it)"
}

// nothingVerdict judges the seed's "small transactions have nothing to
// wait for": the rule's records/s ratio (on ÷ off) and its begin-to-commit
// p50 ratio (off ÷ on, so that above 1 is better for the rule) both at
// least 0.98 over their whole interval: confirmed; a median below:
// not confirmed; otherwise not resolved.
func nothingVerdict(rate, lat interval) string {
	a, b := judge(rate, 0.98), judge(lat, 0.98)
	switch {
	case a == "**not measured**" || b == "**not measured**":
		return "**not measured**"
	case a == "**met**" && b == "**met**":
		return "**confirmed**"
	case a == "**not met**" || b == "**not met**":
		return "**not confirmed**"
	}
	return "**not resolved**"
}

// slowTxnMs is the begin-to-commit p50 from which a run of 10-record
// transactions counts as waiting on the broker's add-partition retry (20 ms
// by default; a transaction takes 1-6 ms otherwise here).
const slowTxnMs = 15.0

// reportTxnFile is RESULTS-txn.md.
func (s *suite) reportTxnFile() (string, error) {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	res := s.res
	flag := ""
	if res.Mode == "quick" {
		flag = " --quick"
	}
	java := s.clientName("java")
	w("# kcheck: the seed's transactional table\n\n")
	w("Generated by `bench/run.sh --txn%s` (%s mode; `make bench-txn%s`), %s to %s UTC, %s in all; %d repeat(s). ",
		flag, res.Mode, map[bool]string{true: "-quick", false: ""}[res.Mode == "quick"],
		res.Started.UTC().Format("2006-01-02 15:04"), res.Finished.UTC().Format("15:04"),
		res.Finished.Sub(res.Started).Round(time.Second), s.p.TxnRepeats)
	w("Issue 29 parts 5 and 6: the measurement table of the seed (apache/kafka PR #23853, KAFKA-14359) on one Apache Kafka %s broker, our producer with the first-ack rule on (\"with\") and off (\"without\") beside the stock %s and the ceiling, all in one run. ", res.Machine.Kafka, java)
	w("Raw numbers: [results-txn.json](results-txn.json). Back to [RESULTS.md](RESULTS.md) and [README.md](README.md).\n\n")
	w("The broker's %s.\n\n", orNA(res.TxnFeature))

	type cell struct {
		rate, p50, p99 map[string][]float64
	}
	cells := map[txnRow]cell{}
	named := map[string][]float64{}
	key := func(r txnRow, what string) string { return r.slug() + " " + what }
	for _, r := range txnRows {
		c := cell{map[string][]float64{}, map[string][]float64{}, map[string][]float64{}}
		for _, cl := range txnClients {
			c.rate[cl] = s.txnVals(cl, r, rps)
			c.p50[cl] = s.txnVals(cl, r, txnP50)
			c.p99[cl] = s.txnVals(cl, r, txnP99)
		}
		cells[r] = c
		named[key(r, "on/off")] = ratios(c.rate["ours-on"], c.rate["ours-off"])
		named[key(r, "on/java")] = ratios(c.rate["ours-on"], c.rate["java"])
		for _, cl := range []string{"ours-on", "ours-off", "java"} {
			named[key(r, cl+"/ceiling")] = ratios(c.rate[cl], c.rate["ceiling"])
		}
		named[key(r, "p50 off/on")] = ratios(c.p50["ours-off"], c.p50["ours-on"])
		if r.PerTxn > 0 {
			on, off := s.txnVals("ours-on", r, perTxnMs), s.txnVals("ours-off", r, perTxnMs)
			d := make([]float64, len(on))
			for i := range d {
				d[i] = on[i] - off[i]
			}
			named[key(r, "extra ms")] = d
			dp := make([]float64, len(on))
			for i := range dp {
				dp[i] = c.p50["ours-on"][i] - c.p50["ours-off"][i]
			}
			named[key(r, "extra p50 ms")] = dp
		}
	}
	iv, err := s.poolValues(named)
	if err != nil {
		return "", err
	}
	get := func(r txnRow, what string) interval { return iv[key(r, what)] }
	med := func(v []float64) string { return num(spread(v).Med) }
	msf := func(v []float64) string {
		sp := spread(v)
		if !sp.ok() {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", sp.Med)
	}

	w("## The table\n\n")
	w("In the seed's layout (its first nine columns; \"with\" and \"without\" are ours, the first-ack rule on and off), with the Java client and the ceiling beside them. ")
	w("Values are medians over the %d repeat(s); each ratio is taken per repeat (the clients measured back to back on the same broker) and shown as its median with the 95%% bootstrap interval of that median (`bench/pool.py --values`). ", s.p.TxnRepeats)
	w("Latency: transactional rows, begin to commit (from before the begin call to the return of the commit call); idempotent rows, produce call to acknowledgement at full throughput (the seed timed 2,000 single-record sends there instead).\n\n")
	w("| Workload | Partitions | Records/txn | records/s with | records/s without | records/s %s | records/s ceiling | with ÷ without | with ÷ %s | with ÷ ceiling | without ÷ ceiling | %s ÷ ceiling | p50 ms with | p50 ms without | p50 ms %s | p50 ms ceiling | p99 ms with | p99 ms without | p99 ms %s | p99 ms ceiling |\n", java, java, java, java, java)
	w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range txnRows {
		c := cells[r]
		wl, per := "transactional", count(int64(r.PerTxn))
		if r.PerTxn == 0 {
			wl, per = "idempotent", "-"
		}
		w("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", wl, r.Partitions, per,
			med(c.rate["ours-on"]), med(c.rate["ours-off"]), med(c.rate["java"]), med(c.rate["ceiling"]),
			get(r, "on/off"), get(r, "on/java"), get(r, "ours-on/ceiling"), get(r, "ours-off/ceiling"), get(r, "java/ceiling"),
			msf(c.p50["ours-on"]), msf(c.p50["ours-off"]), msf(c.p50["java"]), msf(c.p50["ceiling"]),
			msf(c.p99["ours-on"]), msf(c.p99["ours-off"]), msf(c.p99["java"]), msf(c.p99["ceiling"]))
	}
	w("\nThe spread over the repeats, records/s `median (min–max)`:\n\n")
	w("| Workload | Partitions | Records/txn | with | without | %s | ceiling | runs ok (with, without, Java, ceiling) |\n|---|---|---|---|---|---|---|---|\n", java)
	for _, r := range txnRows {
		c := cells[r]
		wl, per := "transactional", count(int64(r.PerTxn))
		if r.PerTxn == 0 {
			wl, per = "idempotent", "-"
		}
		var ok []string
		for _, cl := range txnClients {
			ok = append(ok, fmt.Sprintf("%d/%d", spread(c.rate[cl]).N, s.p.TxnRepeats))
		}
		w("| %s | %d | %s | %s | %s | %s | %s | %s |\n", wl, r.Partitions, per, fmtSpread(spread(c.rate["ours-on"])), fmtSpread(spread(c.rate["ours-off"])),
			fmtSpread(spread(c.rate["java"])), fmtSpread(spread(c.rate["ceiling"])), strings.Join(ok, ", "))
	}

	w("\n## Budgets\n\n")
	w("Each judged on the ratio's 95%% interval: **met** when the whole interval is on the budget's side, **not met** when the median is not, **not resolved** otherwise (more repeats would say: `--txn-repeats`).\n\n")
	w("| Workload | Partitions | Records/txn | with ÷ without ≥ 0.98 | verdict | with ÷ %s ≥ 1 | verdict |\n|---|---|---|---|---|---|---|\n", java)
	for _, r := range txnRows {
		wl, per := "transactional", count(int64(r.PerTxn))
		if r.PerTxn == 0 {
			wl, per = "idempotent", "-"
		}
		w("| %s | %d | %s | %s | %s | %s | %s |\n", wl, r.Partitions, per, get(r, "on/off"), judge(get(r, "on/off"), 0.98), get(r, "on/java"), judge(get(r, "on/java"), 1))
	}

	w("\n## The seed's claims\n\n")
	w("**\"Small transactions have nothing to wait for\"** (10 records a transaction: about one batch per partition, so no second batch waits for a first acknowledgement). ")
	w("Judged on the rule's records/s ratio (with ÷ without) and its begin-to-commit p50 ratio (without ÷ with, above 1 when the rule is faster), both at least 0.98 over their whole interval: ")
	var small []string
	for _, r := range txnRows {
		if r.PerTxn == 10 {
			small = append(small, fmt.Sprintf("%d partition%s: records/s %s, p50 %s: %s", r.Partitions, plural(r.Partitions), get(r, "on/off"), get(r, "p50 off/on"),
				nothingVerdict(get(r, "on/off"), get(r, "p50 off/on"))))
		}
	}
	w("%s.\n\n", strings.Join(small, "; "))
	w("How often a run's transactions waited on the broker: the runs of 10-record transactions whose begin-to-commit p50 was %.0f ms or more (the broker holding a transaction's first Produce while it adds the partition, below), of the runs that completed:\n\n", slowTxnMs)
	w("| Partitions | with | without | %s | ceiling |\n|---|---|---|---|---|\n", java)
	for _, r := range txnRows {
		if r.PerTxn != 10 {
			continue
		}
		w("| %d |", r.Partitions)
		for _, cl := range txnClients {
			sp := s.txnVals(cl, r, txnP50)
			n, slow := 0, 0
			for _, v := range sp {
				if !math.IsNaN(v) {
					n++
					if v >= slowTxnMs {
						slow++
					}
				}
			}
			w(" %d of %d |", slow, n)
		}
		w("\n")
	}
	w("\n")
	reqP50 := func(r *loadgen.Result) float64 { return r.LatencyMs.P50 }
	rtt := spread(s.txnVals("ceiling", txnRow{1, 10}, reqP50)).Med
	bare := spread(s.txnVals("ceiling", txnRow{1, 0}, reqP50)).Med
	w("**\"Large ones wait about one round trip each\"** (2,000 records a transaction: a partition's second batch waits for its first acknowledgement once per transaction, as the epoch bumps at every commit under TV2). ")
	w("The extra time a transaction takes with the rule, per repeat (2,000 ÷ records/s with, minus the same without), pooled, against one round trip: a Produce request written to answered by the ceiling, median %.2f ms in its 1-partition idempotent runs on this machine in this run. ", bare)
	w("(The answer the rule waits for, a transaction's first Produce, comes in two modes on Kafka 4.x: about that round trip, or some 20 ms more when it reaches the broker while the previous transaction's markers are still being written: the broker then retries adding the partition to the new transaction every `add.partitions.to.txn.retry.backoff.ms`, 20 ms by default, KAFKA-18654, before it appends. The ceiling's 10-record transactions, one Produce request each, median %.2f ms written to answered over its runs of either mode.) ", rtt)
	w("Confirmed when the interval's top is within 1.5 round trips: ")
	var large []string
	for _, r := range txnRows {
		if r.PerTxn == 2000 {
			large = append(large, fmt.Sprintf("%d partition%s: %s ms a transaction (begin-to-commit p50 with − without: %s ms): %s", r.Partitions, plural(r.Partitions),
				get(r, "extra ms"), get(r, "extra p50 ms"), waitVerdict(get(r, "extra ms"), bare)))
		}
	}
	w("%s.\n\n", strings.Join(large, "; "))

	w("## Setup\n\n")
	w("One Apache Kafka %s broker (`kcheck kafka`, as RESULTS.md's § 1) for the whole run; in each repeat every row with every client on a fresh topic, deleted after its measurement; the clients in the order `rotate` gives the repeat (repeats in pairs, the second reversed, each pair starting one client later: the throughput phase's turns). ", res.Machine.Kafka)
	w("Each measurement: the topic created and its leaders known, every partition written once (settle), then by the same producer instance a warm-up to the same topic with every key in turn (`--warmup-keys cycle`), in transactions of the row's size for a transactional row, all of it acknowledged (committed) before the timed part: %s records for 10-record transactions, %s for 2,000-record ones, %s idempotent; then %s, %s and %s timed records. ",
		count(int64(s.p.TxnSmallWarm)), count(int64(s.p.TxnLargeWarm)), count(int64(s.p.TxnIdemWarm)), count(int64(s.p.TxnSmall)), count(int64(s.p.TxnLarge)), count(int64(s.p.TxnIdem)))
	w("Every client as in RESULTS.md's § 1: acks=all, linger 5 ms, batches of 16 KiB, 5 requests in flight, no compression, 1 KiB values with one of 1,024 keys drawn by `java.util.Random(1)` and partitioned by murmur2. ")
	w("A transaction: begin, its records produced at once, commit (which sends and waits for every record first); every transactional id is the topic's name; ours speaks TV2 when the cluster's transaction.version is 2 (it says which in its JSON's `version`), and the Java client decides the same way; the ceiling speaks TV2 only. ")
	w("Drivers: `bench/cmd/produce --transactional` (ours), `drivers/java --bench --transactional` (the client's own API at its transactional defaults), `bench/cmd/ceiling`. ")
	w("The ceiling sends the same records cut into the same batches (16 KiB a partition, in key order), built and sequenced before the clock starts, one Produce request a round holding the next batch of every partition that has one, up to 5 requests in flight on one connection, and a transaction's EndTxn once its requests are answered; it retries nothing and any error ends its run: no linger, no buffer, no client logic.\n\n")
	if len(res.TxnWarmup) > 0 {
		w("Before the first repeat, one untimed round: %s.\n\n", strings.Join(res.TxnWarmup, "; "))
	}
	s.machineSection(&b)
	if len(res.Errors) > 0 {
		w("## What failed\n\n")
		for _, e := range res.Errors["txn"] {
			w("- %s\n", strings.ReplaceAll(e, "\n", " "))
		}
		w("\n")
	}
	return b.String(), nil
}
