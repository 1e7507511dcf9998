package matrix

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kcheck/kcheck/builds"
	"github.com/kcheck/kcheck/kafka"
)

// Client is a producer a cell runs: our own (kcheck run) or a driver of a
// client kcheck did not write (drivers/, or one a file defines:
// clientdef.go, drivers/DRIVERS.md), each writing the JSON summary of
// drivers/OUTCOMES.md's drivers on standard output.
type Client struct {
	// Name names the client in the matrix: a stock client's name, or a
	// build's exact name (builds.Spec.Name: java@4.0.0,
	// kgo@/src/franz-go#sha256:…).
	Name string
	// Base, for a build the user named (NAME@VERSION or NAME@PATH, package
	// builds), is the stock client whose rules, and so family, it has; ""
	// for a stock client. Given is the build as the user named it, key its
	// name in file and topic names (builds.Spec.Key).
	Base, Given, key string
	// Ours: kcheck run with the first-ack and hold rules FirstAck, and the
	// idle re-arm rule with them unless NoRearm; its summary is kcheck
	// run's text, not JSON.
	Ours     bool
	FirstAck bool
	NoRearm  bool
	// Def, for a client defined by a file (--client-def, ReadClientDefs),
	// is that file; fam is the family it claims, a family's name or
	// Unknown. Its command is a template (clientdef.go) that Prepare
	// returns whole, and command fills in for each cell.
	Def string
	fam string
	// prepare builds or installs the driver under root and returns the
	// command that runs it, before its flags.
	prepare func(ctx context.Context, env *Env) ([]string, error)
}

// Env is what preparing a client needs: the repository root, where to
// build, and the kcheck executable.
type Env struct {
	Root   string // the kcheck repository (drivers/ is under it)
	Bin    string // where Go drivers are built
	Kcheck string // the kcheck executable
	// Cache is where builds go (under builds/); "": Config.Cache, else
	// $KCHECK_CACHE or ~/.cache/kcheck.
	Cache string
}

// Clients lists every client a matrix can run, in the matrix's order.
func Clients() []Client {
	return []Client{
		{Name: "ours-off", Ours: true},
		{Name: "ours-on", Ours: true, FirstAck: true},
		{Name: "ours-norearm", Ours: true, FirstAck: true, NoRearm: true},
		{Name: "java-4.3.1", prepare: javaDriver("4.3.1")},
		{Name: "java-4.4.0", prepare: javaDriver("4.4.0")},
		{Name: "kgo", prepare: goDriver("kgo")},
		{Name: "librdkafka", prepare: pythonDriver("driver.py")},
		{Name: "sarama", prepare: goDriver("sarama")},
		{Name: "aiokafka", prepare: pythonDriver("aiokafka_driver.py")},
		{Name: "kafka-python", prepare: pythonDriver("kafka_python_driver.py")},
		{Name: "kafkajs", prepare: nodeDriver("driver.js")},
	}
}

// ClientNames lists the names Clients has.
func ClientNames() []string {
	var ns []string
	for _, c := range Clients() {
		ns = append(ns, c.Name)
	}
	return ns
}

// LookupClients returns the clients named, in the order given; an unknown
// name is an error listing the known ones. NAME@VERSION or NAME@PATH names
// a build of a stock client (package builds): a path must exist, and is
// hashed here; the build is made by Prepare.
func LookupClients(names []string) ([]Client, error) {
	all := Clients()
	var out []Client
	for _, n := range names {
		if builds.IsBuild(n) {
			c, err := buildClient(n)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
			continue
		}
		found := false
		for _, c := range all {
			if c.Name == n {
				out = append(out, c)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown client %q (known: %s; or a build, NAME@VERSION or NAME@PATH, of %s)",
				n, strings.Join(ClientNames(), ", "), strings.Join(builds.Clients(), ", "))
		}
	}
	return out, nil
}

// buildClient is the client NAME@SPEC names: its path checked and hashed.
func buildClient(given string) (Client, error) {
	s, err := builds.Parse(given)
	if err != nil {
		return Client{}, err
	}
	if s, err = s.Resolve(); err != nil {
		return Client{}, err
	}
	return Client{Name: s.Name(), Base: s.Base(), Given: given, key: s.Key(),
		prepare: func(ctx context.Context, env *Env) ([]string, error) {
			cache := env.Cache
			if cache == "" {
				if cache, err = kafka.DefaultCache(); err != nil {
					return nil, err
				}
			}
			return builds.Build(ctx, builds.Env{Root: env.Root, Cache: cache, Log: os.Stderr}, s)
		}}, nil
}

// family is the name the client's family is looked up by
// (Scenario.Family): a build's Base, else its Name. A defined client's
// family is not looked up (Client.fam).
func (c Client) family() string {
	if c.Base != "" {
		return c.Base
	}
	return c.Name
}

// fileName names the client in a cell's file and topic names.
func (c Client) fileName() string {
	if c.key != "" {
		return c.key
	}
	return c.Name
}

// Prepare builds or installs c and returns the command that runs it,
// before its workload flags.
func (c Client) Prepare(ctx context.Context, env *Env) ([]string, error) {
	if c.Ours {
		return []string{env.Kcheck, "run"}, nil
	}
	argv, err := c.prepare(ctx, env)
	if err != nil {
		if c.Given != "" && c.Given != c.Name {
			return nil, fmt.Errorf("building %s (%s): %w", c.Given, c.Name, err)
		}
		return nil, fmt.Errorf("preparing %s: %w", c.Name, err)
	}
	return argv, nil
}

// script runs one of the drivers' setup scripts, which print what they
// made on standard output.
func script(ctx context.Context, env *Env, path string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(env.Root, path), args...)
	cmd.Dir = env.Root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", path, strings.Join(args, " "), err)
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return "", fmt.Errorf("%s printed nothing", path)
	}
	return s, nil
}

func javaDriver(version string) func(context.Context, *Env) ([]string, error) {
	return func(ctx context.Context, env *Env) ([]string, error) {
		jar, err := script(ctx, env, "drivers/java/build.sh", version)
		if err != nil {
			return nil, err
		}
		return []string{"java", "-jar", jar}, nil
	}
}

func goDriver(name string) func(context.Context, *Env) ([]string, error) {
	return func(ctx context.Context, env *Env) ([]string, error) {
		out := filepath.Join(env.Bin, "kcheck-"+name+"-driver")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./drivers/"+name)
		cmd.Dir, cmd.Stdout, cmd.Stderr = env.Root, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go build ./drivers/%s: %w", name, err)
		}
		return []string{out}, nil
	}
}

func pythonDriver(file string) func(context.Context, *Env) ([]string, error) {
	return func(ctx context.Context, env *Env) ([]string, error) {
		py, err := script(ctx, env, "drivers/python/setup.sh")
		if err != nil {
			return nil, err
		}
		return []string{py, filepath.Join(env.Root, "drivers/python", file)}, nil
	}
}

func nodeDriver(file string) func(context.Context, *Env) ([]string, error) {
	return func(ctx context.Context, env *Env) ([]string, error) {
		node, err := script(ctx, env, "drivers/kafkajs/setup.sh")
		if err != nil {
			return nil, err
		}
		return []string{node, filepath.Join(env.Root, "drivers/kafkajs", file)}, nil
	}
}

// Shape is a workload: how many partitions, records and bytes, how records
// are batched, and an idle phase.
type Shape struct {
	Name         string
	Partitions   int
	Records      int
	ValueBytes   int
	BatchRecords string // "one" or "many" (drivers' --batch-records)
	// IdleAfter > 0: after that many records are answered, nothing is
	// produced for Idle.
	IdleAfter int
	Idle      time.Duration
	// TxnRecords > 0: a transactional shape, for the transactional
	// scenarios: the client produces in transactions of TxnRecords records,
	// every TxnAbortEvery-th aborted on purpose (0: none), with its own
	// transactional API (drivers/WORKLOADS.md, "Transactions").
	TxnRecords, TxnAbortEvery int
}

// For reports whether the shape runs scenario s: a transactional shape
// runs the transactional scenarios, every other shape the rest, and every
// shape the Baseline.
func (s Shape) For(sc *Scenario) bool {
	return sc.Name == Baseline || (s.TxnRecords > 0) == (sc.TxnVersion > 0)
}

// Shapes are the workloads a scenario runs with unless told otherwise: one
// partition with one record per batch, and 16 partitions with many.
func Shapes() []Shape {
	return []Shape{
		{Name: "1p-one", Partitions: 1, Records: 200, ValueBytes: 1024, BatchRecords: "one"},
		{Name: "16p-many", Partitions: 16, Records: 1600, ValueBytes: 100, BatchRecords: "many"},
	}
}

// MoreShapes are workloads run only when named (--shapes): 2p-deep puts
// 10,000 records of 100 bytes on each of two partitions, produced at once
// and batched as "many" does, so that each partition has several batches
// in flight and waiting (a 256 KiB batch holds about 2,300 of them).
func MoreShapes() []Shape {
	return []Shape{
		{Name: "2p-deep", Partitions: 2, Records: 20000, ValueBytes: 100, BatchRecords: "many"},
	}
}

// TxnShapes are the workloads of the transactional scenarios (and a
// transactional Baseline): 1p-txn is the counterexamples' one partition,
// a record a batch, in transactions of two records (a transaction's first
// batch and one after it), every third aborted on purpose, so that aborted
// records are in the log to be misread.
func TxnShapes() []Shape {
	return []Shape{
		{Name: "1p-txn", Partitions: 1, Records: 40, ValueBytes: 1024, BatchRecords: "one", TxnRecords: 2, TxnAbortEvery: 3},
	}
}

// Timeouts are a client's request and delivery timeouts.
type Timeouts struct{ Request, Delivery time.Duration }

// DefaultTimeouts are what every client runs with on one node: a request
// timeout above every hold a schedule makes (at most 1.5 s), and a delivery
// timeout that ends a stall.
var DefaultTimeouts = Timeouts{Request: 2 * time.Second, Delivery: 5 * time.Second}

// clientOpts is what a cell's brokers ask of every client: the topic's
// replication factor, and timeouts other than DefaultTimeouts.
type clientOpts struct {
	replication int
	timeouts    Timeouts // zero: DefaultTimeouts
}

// timeouts are o's timeouts, DefaultTimeouts unless set.
func (o clientOpts) timeoutsOrDefault() Timeouts {
	if o.timeouts == (Timeouts{}) {
		return DefaultTimeouts
	}
	return o.timeouts
}

// command returns the command line that runs c, prepared as argv, with
// shape s on topic, against the proxy's {bootstrap}: argv and c's flags,
// or for a defined client its template filled in (expand).
func (c Client) command(argv []string, s Shape, topic, brokerVersion, own string, o clientOpts) []string {
	if c.Def != "" {
		return expand(argv, topic, workloadFlags(s, o.timeoutsOrDefault(), o.replication))
	}
	return append(slices.Clone(argv), c.args(s, topic, brokerVersion, own, o)...)
}

// args returns the flags that run c with shape s on topic, against the
// proxy's {bootstrap}. own is where our producer writes its own trace.
func (c Client) args(s Shape, topic, brokerVersion, own string, o clientOpts) []string {
	to := o.timeoutsOrDefault()
	if !c.Ours {
		return append([]string{"--bootstrap", "{bootstrap}", "--topic", topic}, workloadFlags(s, to, o.replication)...)
	}
	mode := "off"
	if c.FirstAck {
		mode = "on"
	}
	a := []string{"--brokers", "{bootstrap}", "--broker-version", brokerVersion, "--topic", topic,
		"--partitions", strconv.Itoa(s.Partitions), "--records", strconv.Itoa(s.Records),
		"--value-bytes", strconv.Itoa(s.ValueBytes), "--keys", "1024", "--compression", "gzip",
		"--batch-records", s.BatchRecords,
		"--first-ack", mode, "--hold-while-retrying", mode,
		"--delivery-timeout", to.Delivery.String(), "--request-timeout", to.Request.String(), "--trace", own}
	if c.NoRearm {
		a = append(a, "--idle-rearm", "off")
	}
	a = append(a, txnFlags(s)...)
	if s.IdleAfter > 0 {
		a = append(a, "--idle-after", strconv.Itoa(s.IdleAfter), "--idle", s.Idle.String())
	}
	if o.replication > 1 {
		a = append(a, "--replication-factor", strconv.Itoa(o.replication))
	}
	return a
}

// workloadFlags are a driver's flags for shape s (drivers/WORKLOADS.md),
// with timeouts to and the topic's replication factor (given only when
// above 1), and a transactional shape's flags: what a defined client's
// {workload} stands for.
func workloadFlags(s Shape, to Timeouts, replication int) []string {
	a := []string{"--partitions", strconv.Itoa(s.Partitions), "--records", strconv.Itoa(s.Records),
		"--value-bytes", strconv.Itoa(s.ValueBytes), "--keys", "1024", "--compression", "gzip",
		"--batch-records", s.BatchRecords,
		"--delivery-timeout-ms", strconv.FormatInt(to.Delivery.Milliseconds(), 10),
		"--request-timeout-ms", strconv.FormatInt(to.Request.Milliseconds(), 10)}
	if s.IdleAfter > 0 {
		a = append(a, "--idle-after", strconv.Itoa(s.IdleAfter), "--idle-ms", strconv.FormatInt(s.Idle.Milliseconds(), 10))
	}
	if replication > 1 {
		a = append(a, "--replication-factor", strconv.Itoa(replication))
	}
	return append(a, txnFlags(s)...)
}

// txnFlags are the transactional flags of shape s (kcheck run's and the
// drivers' alike), none for a shape that is not transactional.
func txnFlags(s Shape) []string {
	if s.TxnRecords <= 0 {
		return nil
	}
	return []string{"--transactional", "--txn-records", strconv.Itoa(s.TxnRecords), "--txn-abort-every", strconv.Itoa(s.TxnAbortEvery)}
}
