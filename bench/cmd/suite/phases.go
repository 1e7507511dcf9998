// The five measurements of the suite: throughput and latency on a real
// broker, pipelining under delay, the send path under contention, checker
// scaling, and TLC.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kcheck/kcheck/bench/loadgen"
	"github.com/kcheck/kcheck/producer"
)

// allClients are the producers the real-broker measurements can run
// (--clients picks some; suite.clients).
var allClients = []string{"ours-on", "ours-off", "java", "kgo", "librdkafka"}

// clients are the run's producers of the real-broker measurements: those
// --clients picked, or every one for a results file that does not say.
func (s *suite) clients() []string {
	if len(s.res.Clients) > 0 {
		return s.res.Clients
	}
	return allClients
}

// clientArgv is the command line of client's throughput mode.
func (s *suite) clientArgv(client, bootstrap string) []string {
	switch client {
	case "ours-on", "ours-off":
		rule := strings.TrimPrefix(client, "ours-")
		return []string{s.path.Produce, "--bench", "--bootstrap", bootstrap, "--first-ack", rule, "--hold-while-retrying", rule}
	case "java":
		return []string{"java", "-jar", s.path.JavaJar, "--bench", "--bootstrap", bootstrap}
	case "kgo":
		return []string{s.path.KgoDriver, "--bench", "--bootstrap", bootstrap}
	case "librdkafka":
		return []string{s.path.Python, filepath.Join(s.path.Root, "drivers/python/driver.py"), "--bench", "--bootstrap", bootstrap}
	case "ceiling":
		return []string{s.path.Ceiling, "--bench", "--bootstrap", bootstrap}
	}
	panic("unknown client " + client)
}

// runClient runs argv and parses its JSON line; a client that exits 1 (some
// records failed) still has a result, with the failures in it.
func (s *suite) runClient(ctx context.Context, argv []string) (*loadgen.Result, error) {
	p := run(ctx, 15*time.Minute, s.path.Root, nil, argv...)
	if p.err != nil {
		return nil, p.err
	}
	var r loadgen.Result
	if err := json.Unmarshal(lastJSON(p.stdout), &r); err != nil {
		return nil, fmt.Errorf("%s: no JSON result (exit %d): %s", filepath.Base(argv[0]), p.exit, lastLines(p.stderr, 3))
	}
	if p.exit != 0 {
		return &r, fmt.Errorf("%d of %d records failed: %s", r.Failed, r.Records, r.FirstError)
	}
	return &r, nil
}

// tpRun is one throughput measurement.
type tpRun struct {
	Client             string
	Partitions, Repeat int
	Result             *loadgen.Result `json:",omitempty"`
	Err                string          `json:",omitempty"`
}

// throughput runs every client on a fresh topic per measurement, clients
// interleaved in an order that changes every repeat, each topic deleted
// after its measurement so that the broker's log stays small.
func (s *suite) throughput(ctx context.Context) {
	s.res.BrokerWarmup = s.warmBroker(ctx, "throughput")
	for r := 0; r < s.p.TPRepeats; r++ {
		for _, parts := range s.p.TPPartitions {
			for _, c := range rotate(s.clients(), r) {
				if ctx.Err() != nil {
					return
				}
				run := tpRun{Client: c, Partitions: parts, Repeat: r}
				var err error
				var extra []string
				if s.path.ProfileDir != "" && (c == "ours-on" || c == "ours-off") {
					extra = []string{"--cpuprofile", filepath.Join(s.path.ProfileDir, fmt.Sprintf("%s-p%d-r%d.pprof", c, parts, r))}
				}
				run.Result, err = s.measureOnce(ctx, c, fmt.Sprintf("bench-tp-%s-p%d-r%d", c, parts, r), parts, s.p.TPRecords, s.p.TPWarmup, extra...)
				if err != nil {
					run.Err = err.Error()
					s.fail("throughput", fmt.Errorf("%s, %d partitions, repeat %d: %w", c, parts, r+1, err))
				} else {
					s.logf("throughput %s p=%d r=%d: %.0f records/s, p50 %.1f ms, p99 %.1f ms", c, parts, r+1,
						run.Result.RecordsPerS, run.Result.LatencyMs.P50, run.Result.LatencyMs.P99)
				}
				s.res.Throughput = append(s.res.Throughput, run)
			}
		}
	}
}

// turnsRun is one partition count's BenchmarkProduce runs in the turns
// phase: the lines go test printed for them (one a run).
type turnsRun struct {
	Partitions int
	Lines      []string
	Err        string `json:",omitempty"`
}

// turns runs BenchmarkProduce (producer/bench_test.go) against the phase's
// broker: ours with the rule on, off and traced, and kgo, in turns inside
// each run (bench/README.md, "Turns instead of legs"), TurnsRuns runs per
// partition count, 10 at a time in turn over the counts as bench/pooled.sh
// runs them; the report pools them with bench/pool.py.
func (s *suite) turns(ctx context.Context) {
	test, err := filepath.Abs(s.path.ProducerTest)
	if err != nil {
		s.fail("turns", err)
		return
	}
	byParts := make([]turnsRun, len(s.p.TPPartitions))
	for i, parts := range s.p.TPPartitions {
		byParts[i].Partitions = parts
	}
	defer func() { s.res.Turns = byParts }()
	for done := 0; done < s.p.TurnsRuns; done += 10 {
		for i, parts := range s.p.TPPartitions {
			if ctx.Err() != nil || byParts[i].Err != "" {
				continue
			}
			n := min(10, s.p.TurnsRuns-done)
			p := run(ctx, 30*time.Minute, filepath.Join(s.path.Root, "producer"),
				[]string{"KCHECK_BENCH_BROKERS=" + s.b.addr, "KCHECK_BENCH_PARTITIONS=" + strconv.Itoa(parts)},
				test, "-test.run", "^$", "-test.bench", "BenchmarkProduce$",
				"-test.benchtime", fmt.Sprintf("%dx", s.p.TurnsRecords*(1+parts/16)), "-test.count", strconv.Itoa(n))
			got := 0
			for _, l := range strings.Split(p.stdout, "\n") {
				if strings.HasPrefix(l, "BenchmarkProduce-") || strings.HasPrefix(l, "BenchmarkProduce ") {
					byParts[i].Lines = append(byParts[i].Lines, l)
					got++
				}
			}
			err := p.err
			if err == nil && (p.exit != 0 || got != n) {
				err = fmt.Errorf("exit %d, %d of %d runs printed: %s", p.exit, got, n, lastLines(p.stdout+p.stderr, 4))
			}
			if err != nil {
				byParts[i].Err = err.Error()
				s.fail("turns", fmt.Errorf("%d partitions, runs %d-%d: %w", parts, done+1, done+n, err))
				continue
			}
			s.logf("turns p=%d: %d of %d runs", parts, len(byParts[i].Lines), s.p.TurnsRuns)
		}
	}
}

// warmBroker runs one untimed round before the first measurement: every
// client once at each partition count, in the order of the first repeat,
// exactly as a measured repeat runs them. On a broker just started (its JIT
// cold), whichever client went first measured 2-3x slower than the rest
// (session 2's results.json); after a warm-up of our producer alone, the
// first client of the first repeat still measured 0.75 of the second
// client's records/s at 1 partition whatever its configuration (session 5:
// 7 of 7 runs, an A/A run and one with the order swapped among them). After
// a whole untimed round, every measured repeat follows the same thing: a
// full round of the clients. Each phase that measures clients on the broker
// (steady, throughput) runs its own round right before its first
// measurement. It returns a line per run, for the report.
// bench/README.md, "Rule on and rule off".
func (s *suite) warmBroker(ctx context.Context, phase string) []string {
	var lines []string
	for _, parts := range s.p.TPPartitions {
		for _, c := range rotate(s.clients(), 0) {
			if ctx.Err() != nil {
				return lines
			}
			res, err := s.measureOnce(ctx, c, fmt.Sprintf("bench-warm-%s-p%d", c, parts), parts, s.p.TPRecords, s.p.TPWarmup)
			line := fmt.Sprintf("%s at %d partitions: ", c, parts)
			if parts == 1 {
				line = fmt.Sprintf("%s at 1 partition: ", c)
			}
			if err != nil {
				line += "failed: " + err.Error()
			} else {
				line += fmt.Sprintf("%.0f records/s (not counted)", res.RecordsPerS)
			}
			s.logf("%s: warming up, %s", phase, line)
			lines = append(lines, line)
		}
	}
	return lines
}

// measureOnce runs client's throughput mode once on a fresh topic of parts
// partitions, deleting it afterwards: the topic is created and its leaders
// known before the client starts (createTopic), every partition written
// once by our producer with the first-ack rule on (settle), then the client's warm-up
// of warmup records goes to the same topic with every key in turn
// (--warmup-keys cycle: every partition gets records, and its first batch
// is acknowledged, before the timed part), with the same producer instance
// as the timed records that follow; acknowledgements are counted per
// TPWindowMs window (Result.Windows) to show whether the timed part was
// steady.
func (s *suite) measureOnce(ctx context.Context, client, topic string, parts, records, warmup int, extra ...string) (*loadgen.Result, error) {
	defer func() {
		if err := s.b.deleteTopics(ctx, topic); err != nil {
			s.logf("throughput: deleting %s: %v", topic, err)
		}
	}()
	if err := s.topics(ctx, topicSpec{topic, parts}); err != nil {
		return nil, err
	}
	if err := settle(ctx, s.b.addr, topic, parts); err != nil {
		return nil, err
	}
	argv := append(s.clientArgv(client, s.b.addr), "--topic", topic, "--warmup-keys", "cycle",
		"--records", strconv.Itoa(records), "--warmup", strconv.Itoa(warmup), "--window-ms", strconv.Itoa(s.p.TPWindowMs))
	argv = append(argv, extra...)
	return s.runClient(ctx, taskset(s.res.clientCPUs(), argv))
}

// settle writes one record to each of topic's parts partitions with our
// producer, the first-ack rule on, and waits for every acknowledgement: a
// new topic's first produce to a partition may be refused
// (NOT_LEADER_OR_FOLLOWER) while its leader takes over, and a client
// without the first-ack rule then loses records to the seed's race
// (KAFKA-14359) in its warm-up, every time at 64 partitions: the warm-up
// then waits out the delivery timeout, and the run measures that, not
// throughput. After settle the partitions take produce at once.
func settle(ctx context.Context, addr, topic string, parts int) error {
	p, err := producer.New(ctx, producer.Brokers(addr))
	if err != nil {
		return fmt.Errorf("settling %s: %w", topic, err)
	}
	defer p.Close(ctx)
	var mu sync.Mutex
	var errs []error
	seen := map[int32]bool{}
	for range parts { // no key: round robin, one record to each partition
		p.Produce(ctx, &producer.Message{Topic: topic, Value: []byte("settle")}, func(m *producer.Message, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			seen[m.Partition] = true
		})
	}
	if err := p.Flush(ctx); err != nil {
		return fmt.Errorf("settling %s: %w", topic, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		return fmt.Errorf("settling %s: %w", topic, errors.Join(errs...))
	}
	if len(seen) != parts {
		return fmt.Errorf("settling %s: wrote %d of its %d partitions", topic, len(seen), parts)
	}
	return nil
}

// steady runs every client once per partition count with the least warm-up
// that writes every partition (one record per key) and a long timed part,
// its acknowledgements counted per TPWindowMs window: how long each takes
// from a fresh topic to a steady rate, which sets TPWarmup and TPRecords.
func (s *suite) steady(ctx context.Context) {
	s.warmBroker(ctx, "steady") // its lines are in the log; the report has the throughput phase's
	for _, parts := range s.p.TPPartitions {
		for _, c := range rotate(s.clients(), 0) {
			if ctx.Err() != nil {
				return
			}
			run := tpRun{Client: c, Partitions: parts}
			var err error
			run.Result, err = s.measureOnce(ctx, c, fmt.Sprintf("bench-steady-%s-p%d", c, parts), parts, s.p.SteadyRecords, 1024)
			if err != nil {
				run.Err = err.Error()
				s.fail("steady", fmt.Errorf("%s, %d partitions: %w", c, parts, err))
			} else {
				s.logf("steady %s p=%d: %.0f records/s, windows %v", c, parts, run.Result.RecordsPerS, run.Result.Windows)
			}
			s.res.Steady = append(s.res.Steady, run)
		}
	}
}

// delayRun is one run through an added delay.
type delayRun struct {
	Client           string
	Via              string // "proxy": kcheck proxy --fault slow; "tcp": the broker's delayed listener
	InFlight, Repeat int
	Result           *loadgen.Result `json:",omitempty"`
	Err              string          `json:",omitempty"`
}

// delayInFlight are the max.in.flight settings compared; delayVia the two
// ways the delay is added.
var (
	delayInFlight = []int{5, 1}
	delayVia      = []string{"proxy", "tcp"}
)

// delay runs each client with every request held DelayMs, at a steady
// DelayRate records/s to one partition with linger DelayLingerMs, 5 and 1
// requests in flight, the delay added two ways: by kcheck proxy --fault slow
// (one proxy per run), and by the broker's delayed listener (delay.go). A
// client's runs of a repeat run at once, each on its own topic (they wait on
// the delay, not on the CPU); clients and repeats one after another.
func (s *suite) delay(ctx context.Context) {
	for r := 0; r < s.p.DelayRepeats; r++ {
		for _, c := range rotate(s.p.DelayClients, r) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			record := func(run delayRun, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					run.Err = err.Error()
					s.fail("delay", fmt.Errorf("%s via %s, %d in flight, repeat %d: %w", run.Client, run.Via, run.InFlight, r+1, err))
				} else {
					s.logf("delay %s via %s, in-flight %d, r=%d: p50 %.0f ms, p95 %.0f ms", run.Client, run.Via, run.InFlight, r+1,
						run.Result.LatencyMs.P50, run.Result.LatencyMs.P95)
				}
				s.res.Delay = append(s.res.Delay, run)
			}
			// The topics first, one after another (a restart of the broker
			// must not happen under a running client), then the runs at once.
			type job struct {
				run   delayRun
				topic string
			}
			var jobs []job
			var specs []topicSpec
			for _, via := range delayVia {
				for _, inflight := range delayInFlight {
					if c == "kgo" && inflight != 5 {
						continue // kgo fixes 5 in flight with idempotence
					}
					topic := fmt.Sprintf("bench-delay-%s-%s-f%d-r%d", c, via, inflight, r)
					jobs = append(jobs, job{delayRun{Client: c, Via: via, InFlight: inflight, Repeat: r}, topic})
					specs = append(specs, topicSpec{topic, 1})
				}
			}
			if ctx.Err() != nil {
				return
			}
			if err := s.topics(ctx, specs...); err != nil {
				for _, j := range jobs {
					record(j.run, err)
				}
				continue
			}
			addr, delayed := s.b.addr, s.b.delayed
			for _, j := range jobs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var argv []string
					if j.run.Via == "proxy" {
						argv = []string{s.path.Kcheck, "proxy", "--upstream", addr, "--broker-version", s.path.KafkaVersion,
							"--fault", fmt.Sprintf("slow:delay=%dms", s.p.DelayMs), "--"}
						argv = append(argv, s.clientArgv(c, "{bootstrap}")...)
					} else {
						argv = s.clientArgv(c, delayed)
					}
					argv = append(argv, "--topic", j.topic, "--records", strconv.Itoa(s.p.DelayRecords),
						"--rate", strconv.Itoa(s.p.DelayRate), "--linger-ms", strconv.Itoa(s.p.DelayLingerMs),
						"--max-in-flight", strconv.Itoa(j.run.InFlight), "--warmup", "10")
					var err error
					j.run.Result, err = s.runClient(ctx, argv)
					record(j.run, err)
				}()
			}
			wg.Wait()
			var names []string
			for _, j := range jobs {
				names = append(names, j.topic)
			}
			if err := s.b.deleteTopics(ctx, names...); err != nil {
				s.logf("delay: deleting topics: %v", err)
			}
		}
	}
}

// enqRun is one Produce-call-latency measurement (bench/cmd/enqueue).
type enqRun struct {
	Client             string
	Goroutines, Repeat int
	P50, P90, P99      int64
	P999, Max          int64
	Mean, CallsPerS    float64
	GCCycles           uint32 // GC cycles begun in the timed part
	Switches           int64  // times the OS took a core from the process's threads (-1: unknown)
	Err                string `json:",omitempty"`
}

func (s *suite) enqueue(ctx context.Context) {
	for r := 0; r < s.p.EnqRepeats; r++ {
		for _, g := range s.p.EnqGoroutines {
			for _, c := range rotate([]string{"ours", "kgo"}, r) {
				if ctx.Err() != nil {
					return
				}
				run := enqRun{Client: c, Goroutines: g, Repeat: r}
				p := run1(ctx, s, 10*time.Minute, "", s.path.Enqueue, "--client", c, "--goroutines", strconv.Itoa(g),
					"--records", strconv.Itoa(s.p.EnqRecords))
				var out struct {
					P50  int64   `json:"p50_ns"`
					P90  int64   `json:"p90_ns"`
					P99  int64   `json:"p99_ns"`
					P999 int64   `json:"p999_ns"`
					Max  int64   `json:"max_ns"`
					Mean float64 `json:"mean_ns"`
					CPS  float64 `json:"calls_per_s"`
					GC   uint32  `json:"gc_cycles"`
					Sw   int64   `json:"involuntary_switches"`
				}
				err := p.err
				if err == nil && p.exit != 0 {
					err = fmt.Errorf("exit %d: %s", p.exit, lastLines(p.stderr, 3))
				}
				if err == nil {
					err = json.Unmarshal(lastJSON(p.stdout), &out)
				}
				if err != nil {
					run.Err = err.Error()
					s.fail("enqueue", fmt.Errorf("%s, %d goroutines, repeat %d: %w", c, g, r+1, err))
				} else {
					run.P50, run.P90, run.P99, run.P999, run.Max, run.Mean, run.CallsPerS = out.P50, out.P90, out.P99, out.P999, out.Max, out.Mean, out.CPS
					run.GCCycles, run.Switches = out.GC, out.Sw
					s.logf("enqueue %s g=%d r=%d: p50 %d ns, p99 %d ns, p99.9 %d ns, %d GC cycles, %d involuntary switches", c, g, r+1, out.P50, out.P99, out.P999, out.GC, out.Sw)
				}
				s.res.Enqueue = append(s.res.Enqueue, run)
			}
		}
	}
}

// run1 is run with the suite's root as the default directory.
func run1(ctx context.Context, s *suite, timeout time.Duration, dir string, argv ...string) *proc {
	if dir == "" {
		dir = s.path.Root
	}
	return run(ctx, timeout, dir, nil, argv...)
}

// benchLine matches a go test benchmark result line.
var benchLine = regexp.MustCompile(`^(Benchmark\S+)\s+(\d+)\s+(.*)$`)

// parseBench returns the metrics (unit -> value) of the first benchmark line.
func parseBench(out string) (map[string]float64, error) {
	for _, l := range strings.Split(out, "\n") {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		f := strings.Fields(m[3])
		res := map[string]float64{"N": 0}
		res["N"], _ = strconv.ParseFloat(m[2], 64)
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("bad benchmark line %q", l)
			}
			res[f[i+1]] = v
		}
		return res, nil
	}
	return nil, fmt.Errorf("no benchmark result in: %s", lastLines(out, 3))
}

// verifyRun is one BenchmarkVerify process at one size.
type verifyRun struct {
	Events, Repeat                int
	NsPerEvent, EventsPerS        float64
	BytesPerOp, AllocsPerOp, NsOp float64
	MaxRSSMiB                     float64
	Err                           string `json:",omitempty"`
}

// expiryRun is one BenchmarkRemoveExpired process at one size.
type expiryRun struct {
	IDs, Repeat      int
	NsPerOp, NsPerID float64
	Err              string `json:",omitempty"`
}

// checker runs the checker's own benchmarks (go test -c binaries), one
// process per size and repeat, so each has its own peak RSS.
func (s *suite) checker(ctx context.Context) {
	for r := 0; r < s.p.CheckRepeats; r++ {
		for _, n := range s.p.VerifySizes {
			if ctx.Err() != nil {
				return
			}
			run := verifyRun{Events: n, Repeat: r}
			p := run1(ctx, s, 15*time.Minute, filepath.Join(s.path.Root, "checker/verify"), s.path.VerifyTest,
				"-test.run", "^$", "-test.bench", fmt.Sprintf("^BenchmarkVerify$/^events=%d$", n),
				"-test.benchtime", fmt.Sprintf("%dx", s.p.VerifyBenchtime), "-test.benchmem", "-test.count", "1")
			err := p.err
			if err == nil && p.exit != 0 {
				err = fmt.Errorf("exit %d: %s", p.exit, lastLines(p.stdout+p.stderr, 4))
			}
			var m map[string]float64
			if err == nil {
				m, err = parseBench(p.stdout)
			}
			if err != nil {
				run.Err = err.Error()
				s.fail("checker", fmt.Errorf("verify, %d events, repeat %d: %w", n, r+1, err))
			} else {
				run.NsPerEvent, run.EventsPerS, run.BytesPerOp, run.AllocsPerOp, run.NsOp =
					m["ns/event"], m["events/s"], m["B/op"], m["allocs/op"], m["ns/op"]
				run.MaxRSSMiB = float64(p.maxRSSKiB) / 1024
				s.logf("verify %d events r=%d: %.0f ns/event, %.0f B/op, peak RSS %.0f MiB", n, r+1, run.NsPerEvent, run.BytesPerOp, run.MaxRSSMiB)
			}
			s.res.Verify = append(s.res.Verify, run)
		}
		for _, n := range sortedKeys(s.p.ExpiryIters) {
			if ctx.Err() != nil {
				return
			}
			run := expiryRun{IDs: n, Repeat: r}
			p := run1(ctx, s, 10*time.Minute, filepath.Join(s.path.Root, "checker/replay"), s.path.ReplayTest,
				"-test.run", "^$", "-test.bench", fmt.Sprintf("^BenchmarkRemoveExpired$/^ids=%d$", n),
				"-test.benchtime", fmt.Sprintf("%dx", s.p.ExpiryIters[n]), "-test.count", "1")
			err := p.err
			if err == nil && p.exit != 0 {
				err = fmt.Errorf("exit %d: %s", p.exit, lastLines(p.stdout+p.stderr, 4))
			}
			var m map[string]float64
			if err == nil {
				m, err = parseBench(p.stdout)
			}
			if err != nil {
				run.Err = err.Error()
				s.fail("checker", fmt.Errorf("RemoveExpired, %d ids, repeat %d: %w", n, r+1, err))
			} else {
				run.NsPerOp, run.NsPerID = m["ns/op"], m["ns/id"]
				s.logf("RemoveExpired %d ids r=%d: %.0f ns/op, %.1f ns/id", n, r+1, run.NsPerOp, run.NsPerID)
			}
			s.res.Expiry = append(s.res.Expiry, run)
		}
	}
}

func sortedKeys(m map[int]int) []int { return slices.Sorted(maps.Keys(m)) }

// tlcRun is one configuration in one kcheck tlc run.
type tlcRun struct {
	Name, Expected, Got string
	OK                  bool
	States, Generated   int64
	Depth, Repeat       int
	Seconds             float64
}

// tvTrace is a trace made for trace validation.
type tvTrace struct {
	Records, Events int
	Err             string `json:",omitempty"`
}

// tvRun is one kcheck verify of a trace, with and without --tlc.
type tvRun struct {
	Records, Events, Repeat int
	GoSeconds, TLCSeconds   float64
	Err                     string `json:",omitempty"`
}

// tlc runs every make tlc configuration (kcheck tlc --format json), then
// TLC trace validation (kcheck verify --tlc) of traces made by kcheck run
// on the embedded broker, with kcheck verify without --tlc (the Go mirror of
// the spec) on the same trace as its peer.
func (s *suite) tlc(ctx context.Context) {
	env := []string{"KCHECK_TLA2TOOLS=" + s.path.TLCJar}
	for r := 0; r < s.p.TLCRepeats; r++ {
		if ctx.Err() != nil {
			return
		}
		p := run(ctx, 30*time.Minute, s.path.Root, env, s.path.Kcheck, "tlc", "--spec-dir", "spec", "--format", "json")
		var out []struct {
			Name      string  `json:"name"`
			Expected  string  `json:"expected"`
			Got       string  `json:"got"`
			OK        bool    `json:"ok"`
			States    int64   `json:"distinct_states"`
			Generated int64   `json:"states_generated"`
			Depth     int     `json:"depth"`
			Seconds   float64 `json:"seconds"`
		}
		err := p.err
		if err == nil {
			if err = json.Unmarshal([]byte(strings.TrimSpace(p.stdout)), &out); err != nil {
				err = fmt.Errorf("kcheck tlc: no JSON (exit %d): %s", p.exit, lastLines(p.stderr, 3))
			}
		}
		if err != nil {
			s.fail("tlc", fmt.Errorf("repeat %d: %w", r+1, err))
			continue
		}
		if p.exit != 0 {
			s.fail("tlc", fmt.Errorf("repeat %d: kcheck tlc exit %d: some configuration did not conclude as expected", r+1, p.exit))
		}
		for _, o := range out {
			s.res.TLC = append(s.res.TLC, tlcRun{Name: o.Name, Expected: o.Expected, Got: o.Got, OK: o.OK,
				States: o.States, Generated: o.Generated, Depth: o.Depth, Repeat: r, Seconds: o.Seconds})
		}
		s.logf("tlc r=%d: %d configurations in %.1f s", r+1, len(out), p.wall.Seconds())
	}

	dir, err := os.MkdirTemp("", "kcheck-bench-tv-")
	if err != nil {
		s.fail("tlc", err)
		return
	}
	defer os.RemoveAll(dir)
	for _, n := range s.p.TVRecords {
		if ctx.Err() != nil {
			return
		}
		trace := filepath.Join(dir, fmt.Sprintf("tv-%d.jsonl", n))
		tr := tvTrace{Records: n}
		p := run(ctx, 10*time.Minute, s.path.Root, nil, s.path.Kcheck, "run", "--records", strconv.Itoa(n), "--partitions", "8",
			"--value-bytes", "100", "--batch-bytes", "1024", "--linger", "0", "--trace", trace)
		err := p.err
		if err == nil && p.exit != 0 {
			err = fmt.Errorf("kcheck run exit %d: %s", p.exit, lastLines(p.stdout+p.stderr, 3))
		}
		if err == nil {
			var b []byte
			if b, err = os.ReadFile(trace); err == nil {
				tr.Events = strings.Count(string(b), "\n") - 1 // the header is not an event
			}
		}
		if err != nil {
			tr.Err = err.Error()
			s.fail("tlc", fmt.Errorf("making a trace of %d records: %w", n, err))
			s.res.TVTraces = append(s.res.TVTraces, tr)
			continue
		}
		s.res.TVTraces = append(s.res.TVTraces, tr)
		for r := 0; r < s.p.TVRepeats; r++ {
			if ctx.Err() != nil {
				return
			}
			tv := tvRun{Records: n, Events: tr.Events, Repeat: r}
			pg := run(ctx, 10*time.Minute, s.path.Root, nil, s.path.Kcheck, "verify", trace)
			pt := run(ctx, 30*time.Minute, s.path.Root, env, s.path.Kcheck, "verify", "--tlc", trace)
			var errs []string
			for _, q := range []*proc{pg, pt} {
				if q.err != nil {
					errs = append(errs, q.err.Error())
				} else if q.exit != 0 {
					errs = append(errs, fmt.Sprintf("kcheck verify exit %d: %s", q.exit, lastLines(q.stdout, 2)))
				}
			}
			if len(errs) > 0 {
				tv.Err = strings.Join(errs, "; ")
				s.fail("tlc", fmt.Errorf("trace validation of %d events, repeat %d: %s", tr.Events, r+1, tv.Err))
			} else {
				tv.GoSeconds, tv.TLCSeconds = pg.wall.Seconds(), pt.wall.Seconds()
				s.logf("trace validation %d events r=%d: verify %.2f s, verify --tlc %.2f s", tr.Events, r+1, tv.GoSeconds, tv.TLCSeconds)
			}
			s.res.TV = append(s.res.TV, tv)
		}
	}
}
