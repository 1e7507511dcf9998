package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/matrix"
	"github.com/kcheck/kcheck/scenario"
)

const scenariosRunDescription = `Takes every client through every scenario on every broker: each cell is one run
of a real client, unchanged, through kcheck proxy with the scenario's fault
schedule, on a real Kafka broker started here (fetched from Maven Central into
the cache), then kcheck verify on its trace. Scenarios with the same schedule
run once, as the first of them; a "Baseline" with no faults runs first, to
show what each client does on its own.

Each cell says:
   - whether the client reached the scenario's dangerous state (every step of
     the schedule acted, and every held answer's condition was met: the
     client sent the later batch while the earlier one was unanswered), was
     held back by its rules (a hold ran out), or never sent what a step
     selects ("not reached");
   - what happened to its records: its own read-back (lost, lost though
     acknowledged, duplicated, reordered, failed) and what it told its
     application (lost though acknowledged to the application), and stalls;
   - what the model predicts for the client's family of rules (TLC on the
     scenario's configuration with the family's constants; spec/scenarios);
   - kcheck verify's verdict, and whether it agrees with the read-back: it
     must flag every run that lost an acknowledged record, duplicated or
     reordered, and no run in which nothing went wrong.
A cell where the client did worse than the model predicts for its rules is
listed: the spec lacks a rule the client has.

With --cluster DIR the scenarios are DIR's schedule files instead (one
fault a line, as kcheck proxy --schedule reads them, named by the file; the
faults on a cluster's nodes among them), each run on a cluster of 3 nodes
(replication factor 3, min.insync.replicas 2, no unclean leader election)
whose nodes the proxy pauses, kills, stops and cuts off (kcheck proxy
--cluster), with request and delivery timeouts of 5 s and 30 s; the
Baseline runs on the same cluster. The model predicts nothing for them
(they are not derived by TLC): a cell says what happened, and whether
kcheck verify agrees.

--brokers lists the brokers (without it: Kafka 4.1.0 and 4.4.0): an
Apache Kafka release by its version (4.1.0, or kafka-4.1.0: 2.8.x on
ZooKeeper, 3.3 and later in KRaft mode, fetched from Maven Central), kfake-V
(kfake in this process, emulating Kafka V: 2.4, 3.9, 4.0 to 4.5) or
tansu-0.6.0 (built once with cargo into the cache, about 15 minutes on 2
cores; kcheck broker --help). A broker other than Apache Kafka runs as one
node with no producer-state expiry setting: the scenarios that need a
cluster or an expiry are listed as skipped on it, with why. tansu's cells
take the predictions of the spec's tansu variant (each scenario file's
predict-on tansu lines: TLC on the scenario's configuration with the
family's rules and tansu's producer-state rules), while kcheck verify holds
tansu's answers to Apache Kafka's rules (a nonconformance is the broker's).
crabka cannot be had from crates.io: exit 2, with the registry's
answer.

A client can also be a build of one of them, NAME@VERSION or NAME@PATH
(--clients java@4.0.0,kgo@../franz-go), built or installed in its own
ecosystem's way into the cache (--cache, under builds/; Java's beside the
stock jars), once per version or content (package builds):
   java@VERSION          the driver against org.apache.kafka:kafka-clients
                         VERSION from Maven Central (drivers/java/build.sh)
   java@PATH             ... against a local kafka-clients jar, such as a
                         build of apache/kafka (build.sh --jar PATH)
   kgo@DIR, sarama@DIR   the driver built with its client's module replaced
                         by the checkout DIR (go.mod replace, in a copy of
                         kcheck's go.mod: go build -modfile)
   librdkafka@VERSION    confluent-kafka==VERSION from PyPI, whose wheel
                         bundles librdkafka VERSION, in a virtualenv of its own
   librdkafka@DIR        confluent-kafka built from source against the
                         librdkafka build DIR (src/ after make, or an
                         install prefix), in a virtualenv of its own
   kafkajs@VERSION|PATH  npm install of kafkajs from npm, or of a checkout
                         or npm pack tarball, in a directory of its own
   aiokafka@VERSION|PATH, kafka-python@VERSION|PATH
                         pip install from PyPI, or of a source tree, sdist
                         or wheel, in a virtualenv of its own
SPEC is a path if it has a / or starts with . or ~ (write ./NAME for a
relative one) or ends in .jar, .tgz, .tar.gz, .whl or .zip; it cannot hold
a comma (--clients splits on them). The cells name
the build exactly: java@4.0.0, kgo@/src/franz-go#sha256:HASH (the path made
absolute, HASH the first 12 hex digits of its content's sha256, every .git
left out; a jar's is sha256sum's). A build is in its stock client's family,
and has its predictions. An unknown NAME, a version the registry does not
serve, a path that does not exist or does not build: exit 2, with the
registry's answer or the build's last lines of stderr.

A client kcheck has never seen is defined by a file, --client-def FILE
(repeatable): a driver of that client that follows drivers/DRIVERS.md (the
flags of drivers/WORKLOADS.md, the outcomes report of drivers/OUTCOMES.md,
the JSON line on standard output, exit 0, 1 or 2). The file has three
lines, "KEYWORD VALUE" (# starts a comment):
   name NAME             the client's name in the cells (letters, digits,
                         . _ -; not a stock client's, nor a family's)
   family FAMILY         the family whose rules it claims, and so whose
                         predictions its cells get: ours, ours-norearm,
                         java, ours-off, kgo, sarama, aiokafka,
                         one-in-flight, kafkajs, librdkafka; or unknown
   command PROGRAM ARGS  the command that runs one cell, fields separated
                         by spaces ("..." quotes one with a space, as a Go
                         string); PROGRAM a path if it has a / (relative to
                         FILE's directory), else found on $PATH
with these placeholders in ARGS:
   {bootstrap}   the proxy's address, HOST:PORT (required)
   {topic}       the cell's topic, which the client creates (required)
   {workload}    the workload's flags, each its own argument (required, a
                 field of its own): --partitions N --records N
                 --value-bytes N --keys 1024 --compression gzip
                 --batch-records one|many --delivery-timeout-ms N
                 --request-timeout-ms N, then --idle-after N --idle-ms N
                 with an idle phase, --replication-factor N on a cluster,
                 and --transactional --txn-records N --txn-abort-every K
                 on a transactional shape
   {outcomes}    the file to write the outcomes report to (also
                 $KCHECK_OUTCOMES)
For example:
   name    my-kgo
   family  unknown
   command ./kcheck-kgo-driver --bootstrap {bootstrap} --topic {topic} {workload}
Without --clients only the defined clients run; --clients adds stock ones.
A client of family unknown is judged by no family: each of its cells shows
every family's prediction and "behaves like" the families whose prediction
matches what it did (pass: no anomaly; invariant:NoDuplicate: a duplicate;
and so on, drivers/DRIVERS.md), and the Markdown ends with how many of its
cells matched each family. A client that crashes (exits other than 0 or 1)
is "could not run" in that cell, its stderr kept in --keep. A definition
that does not parse, an unknown keyword, family or placeholder, a program
that is not there or not executable, a missing line, or a name that is
taken: exit 2, naming FILE:LINE, before any broker starts.

Every cell's trace, stderr and output are kept in --keep. --results writes the
matrix in Markdown, --json the cells as JSON, --html as one self-contained
HTML page, --junit as JUnit XML (a testsuite per scenario, a testcase per
cell: classname the scenario, name CLIENT/SHAPE/BROKER; a failure for a cell
that fails the gate below, an error for one that could not run, skipped for
one that did not reach the scenario's state; its system-out has what the
cell did, the prediction, its trace and its stderr). Each is written whole
or not at all, also when the run is interrupted (then with the cells that
finished).

For a client's own CI, one command:
   kcheck scenarios run --quick --clients mine@DIR --junit junit.xml --html matrix.html
--quick runs the Baseline and the scenarios a rule on spec/scenarios
chooses, none named by hand: a few that between them cover every
invariant (or temporal property) whose TLC counterexample the brokers here
can give (none with a caveat), chosen one at a time: each the one that
covers the most invariants not covered yet; of those, the one TLC predicts a
violation for in the most client families (the most likely to hurt), then
the one with the fewest faults, then the first by name. It prints them, and
what each covers, on standard error (with --list, and nothing run, too).
It runs them on one broker, Kafka 4.4.0 (the newest here) unless --brokers
names another, and one shape, 1p-one (the counterexamples' one partition,
a record a batch) unless --shapes. The Baseline stays (one cell a client:
an anomaly with no fault at all is the client's own, and fails the gate);
--baseline=false leaves it out. It gates (--gate). Not with --cluster,
--scenario, --from or two brokers: exit 2.

--gate judges the client, not kcheck: the exit status is 1 when a cell lost
a record acknowledged to the application (lost though acknowledged, by the
client's read-back or by what it told its application), whatever the model
predicts, or showed an anomaly (a duplicate, a reorder) the model does not
predict for the client's family: where TLC predicts pass for it, the
Baseline, or a family or cluster scenario the model predicts nothing for.
Else 2 when a cell could not run (no verdict is no pass), else 0. Each
such cell is listed on standard error. Whether kcheck verify agreed, and
ours-on, do not decide it (the matrix and the tally still say).

With --shard K/N it runs only the Kth of N parts of the cells (K counted
from 1), so that N machines, such as CI runners, run one matrix between them
without talking to each other: every machine computes the same split from
the matrix alone (its scenarios, clients, shapes, brokers and runs). The
cells, in the order one run of the whole matrix takes them (by broker
version, then by what a scenario needs of the brokers, then scenario,
client, shape and run), are cut into N runs of consecutive cells whose
sizes differ by at most one (by cells, not time: a cluster's cell, or one
waiting out an expiry, takes longer). A shard prepares only the clients and
starts only the brokers its cells need: the N shards together start at most
N-1 brokers more than the whole matrix. Each shard's --json
records its K/N, its cells and the matrix's identity (a hash of its
definition and of every cell in order); "kcheck scenarios merge" joins the
shards' JSON into the whole matrix's RESULTS.md and results.json. A shard
of a matrix with fewer cells than N may have no cells.

Shapes: 1p-one (1 partition, 200 records of 1 KiB, one record a batch) and
16p-many (16 partitions, 1,600 records of 100 bytes, many a batch); a
scenario that needs the broker to forget the producer runs on a broker with
its producer.id.expiration.ms and an idle phase past it.

The transactional scenarios (spec/TransactionalProducer.tla, Txn*) run on
the transactional shape 1p-txn instead: 1 partition, 40 records of 1 KiB,
one record a batch, in transactions of 2 records, every third aborted on
purpose (the drivers' and kcheck run's --transactional --txn-records 2
--txn-abort-every 3, drivers/WORKLOADS.md), each client with its own
transactional API; the Baseline runs on it too. Their brokers are set as
the counterexample assumes: a TV1 scenario lowers the cluster's
transaction.version to 1 (UpdateFeatures, a safe downgrade: 4.x
finalizes 2), so that every client speaks TV1, and partition
verification (transaction.partition.verification.enable, KIP-890 part 1,
3.6.0) is on exactly when the scenario needs it; a scenario that needs it
is skipped on Kafka before 3.6, and every transactional one on brokers
other than Apache Kafka. A transactional cell also says what became of
each transaction, from the trace but apart from kcheck verify's checks:
records of a transaction its application was told committed that a
read_committed read after the run did not return (lost though committed);
records read committed (by a poll, or after the run) though the
application was told their transaction aborted, or the client had asked
to abort it (aborted yet read committed); records a poll returned before
the client asked to end their transaction (read committed before their
commit); records one marker closes with another transaction's; records of
a transaction the markers both commit and abort (torn); and records no
marker closes though their transaction's EndTxn was answered (hanging).
kcheck verify must flag exactly the runs with one of these (or with a
loss, duplicate or reorder). --quick leaves the transactional scenarios
out.

With --bootstrap HOST:PORT the cells run on a cluster kcheck did not start
(yours: started with kcheck kafka, or any Kafka reachable from here), one
Kafka version, --broker-version or, when not given, the release its
ApiVersions answer matches (franz-go's kversion). The scenarios that need
kcheck's own brokers are skipped, and the matrix says why: a producer-state
expiry needs brokers set to forget an idle producer, and the cluster faults
(--cluster) need the nodes' processes. Each topic is named kcheck-RUNID-...
(RUNID the start time, UTC) with replication factor 3, or the number of
brokers if fewer, and every topic the run made is deleted at its end.

Exit status without --gate or --quick: 0 if every cell ran, kcheck
verify agreed with every read-back and our producer with the rule on
(ours-on) was clean; 1 otherwise; 2 on bad usage, a scenario file that
does not parse, or a client or broker that could not be set up.`

func scenariosRunCommand() *cli.Command {
	return &cli.Command{
		Name:        "run",
		Usage:       "run every scenario against every client on real Kafka brokers, and tabulate",
		UsageText:   "kcheck scenarios run [--dir DIR] [--scenario NAME]... [--clients LIST] [--client-def FILE]... [--brokers LIST] [--shapes LIST] [--runs N] [--shard K/N] [--keep DIR] [--results FILE] [--json FILE] [--junit FILE] [--html FILE] [--quick] [--gate]",
		Description: scenariosRunDescription,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Value: "spec/scenarios", Usage: "`DIR` of the scenario files", TakesFile: true},
			&cli.StringFlag{Name: "cluster", Usage: "run the cluster scenarios of `DIR` (*.schedule) on 3 nodes instead, e.g. traces/scenarios/cluster", TakesFile: true},
			&cli.StringSliceFlag{Name: "scenario", Usage: "run only the scenario `NAME` (repeatable; comma-separated); Baseline is the run without faults"},
			&cli.BoolFlag{Name: "baseline", Value: true, Usage: "also run the Baseline, no faults, first"},
			&cli.StringSliceFlag{Name: "clients", Usage: "the clients `LIST` (default all: " + strings.Join(matrix.ClientNames(), ",") + "), or builds of them, NAME@VERSION or NAME@PATH (see below)"},
			&cli.StringSliceFlag{Name: "client-def", Usage: "also run the client `FILE` defines: its name, family and command (repeatable; see below, and drivers/DRIVERS.md)", TakesFile: true},
			&cli.StringSliceFlag{Name: "brokers", Value: cli.NewStringSlice(scenarioBrokers...), Usage: "the `BROKERS` to start: Kafka versions (4.1.0 or kafka-4.1.0), kfake-V, tansu-0.6.0 (see above)"},
			&cli.StringFlag{Name: "bootstrap", Usage: "run on the cluster at `HOST:PORT`, which kcheck did not start, instead (see below)"},
			&cli.StringFlag{Name: "broker-version", Usage: "with --bootstrap: the Kafka `VERSION` the cluster runs (default: read from its ApiVersions)"},
			&cli.StringSliceFlag{Name: "shapes", Usage: "workload `SHAPES` (default: " + strings.Join(shapeNames(matrix.Shapes()), ",") + "; also " + strings.Join(shapeNames(matrix.MoreShapes()), ",") + ")"},
			&cli.IntFlag{Name: "runs", Value: 1, Usage: "`N` runs of each cell"},
			&cli.StringFlag{Name: "shard", Usage: "run only the Kth of N parts of the cells, `K/N` (K from 1); kcheck scenarios merge joins the parts"},
			&cli.StringFlag{Name: "keep", Value: filepath.Join(os.TempDir(), "kcheck-scenarios"), Usage: "`DIR` where every cell's trace, output and stderr are kept", TakesFile: true},
			&cli.StringFlag{Name: "results", Usage: "write the matrix in Markdown to `FILE`", TakesFile: true},
			&cli.StringFlag{Name: "json", Usage: "write the cells as JSON to `FILE`", TakesFile: true},
			&cli.StringFlag{Name: "junit", Usage: "write the cells as JUnit XML to `FILE`, a failure for each that fails the gate (see below)", TakesFile: true},
			&cli.StringFlag{Name: "html", Usage: "write the matrix as one self-contained HTML page to `FILE`", TakesFile: true},
			&cli.BoolFlag{Name: "quick", Usage: "for a client's CI: the scenarios that cover every invariant, on one broker and shape, gated (see below)"},
			&cli.BoolFlag{Name: "gate", Usage: "exit 1 only for a record acknowledged to the application lost, or an anomaly the model does not predict for the client's family (see below)"},
			&cli.DurationFlag{Name: "cell-timeout", Value: 3 * time.Minute, Usage: "give up a cell after `DURATION` (recorded, not fatal)"},
			&cli.StringFlag{Name: "from", Usage: "run nothing: tabulate the cells of a previous run's --json `FILE` again, with the predictions of the scenario files as they are now", TakesFile: true},
			&cli.BoolFlag{Name: "list", Usage: "print the scenarios it would run (same schedules as one), their schedules and caveats, and run nothing"},
			&cli.StringFlag{Name: "root", Value: ".", Usage: "`DIR` of the kcheck repository, for drivers/", TakesFile: true},
			&cli.StringFlag{Name: "cache", EnvVars: []string{"KCHECK_CACHE"}, Usage: "download cache `DIR` (default ~/.cache/kcheck)", TakesFile: true},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("scenarios run: unexpected argument %q (see kcheck scenarios run --help)", c.Args().First())
			}
			return runScenariosRun(c)
		},
	}
}

// familyNames are the families a client definition may claim.
func familyNames() []string {
	var ns []string
	for _, f := range scenario.Families {
		ns = append(ns, f.Name)
	}
	return ns
}

func shapeNames(shapes []matrix.Shape) []string {
	var ns []string
	for _, s := range shapes {
		ns = append(ns, s.Name)
	}
	return ns
}

// splitList flattens repeated and comma-separated flag values.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func runScenariosRun(c *cli.Context) error {
	shard, err := shardFlag(c)
	if err != nil {
		return err
	}
	if err := checkReportPaths(c, "scenarios run"); err != nil {
		return err
	}
	if err := checkQuick(c); err != nil {
		return err
	}
	defs, err := matrix.ReadClientDefs(c.StringSlice("client-def"), familyNames())
	if err != nil {
		return usageErrorf("scenarios run: --client-def: %w", err)
	}
	runs := c.Int("runs")
	if runs < 1 {
		return usageErrorf("scenarios run: --runs %d: want 1 or more", runs)
	}
	dir := c.String("dir")
	var groups []*matrix.Scenario
	if cdir := c.String("cluster"); cdir != "" {
		dir = cdir
		scs, err := matrix.ReadClusterScenarios(cdir, scenario.FamilyOf)
		if err != nil {
			return usageErrorf("scenarios run: --cluster: %w", err)
		}
		if c.Bool("baseline") {
			groups = append(groups, matrix.ClusterBaseline(scenario.FamilyOf))
		}
		groups = append(groups, scs...)
	} else {
		scs, err := scenario.ReadDir(dir)
		if err != nil {
			return usageErrorf("scenarios run: %w", err)
		}
		if groups, err = scenarioGroups(scs, c.Bool("baseline")); err != nil {
			return usageErrorf("scenarios run: %w", err)
		}
	}
	if c.Bool("quick") {
		if groups, err = quickGroups(c, groups); err != nil {
			return err
		}
	}
	if want := splitList(c.StringSlice("scenario")); len(want) > 0 {
		var picked []*matrix.Scenario
		for _, n := range want {
			g := findGroup(groups, n)
			if g == nil {
				return usageErrorf("scenarios run: --scenario %s: no such scenario in %s (Baseline, or a file's name without its extension)", n, dir)
			}
			if !slices.Contains(picked, g) {
				picked = append(picked, g)
			}
		}
		groups = picked
	}
	if c.Bool("list") {
		for _, g := range groups {
			fmt.Fprintf(c.App.Writer, "%s\n", g.Name)
			for _, l := range g.Schedule {
				fmt.Fprintf(c.App.Writer, "    fault %s\n", l)
			}
			if len(g.Also) > 0 {
				fmt.Fprintf(c.App.Writer, "    also %s\n", strings.Join(g.Also, ", "))
			}
			for _, l := range g.Caveats {
				fmt.Fprintf(c.App.Writer, "    caveat %s\n", l)
			}
		}
		return nil
	}
	if from := c.String("from"); from != "" {
		return retabulate(c, from, groups)
	}
	names := splitList(c.StringSlice("clients"))
	if len(names) == 0 && len(defs) == 0 {
		names = matrix.ClientNames()
	}
	clients, err := matrix.LookupClients(names)
	if err != nil {
		return usageErrorf("scenarios run: --clients: %w", err)
	}
	clients = append(clients, defs...)
	var shapes []matrix.Shape
	if want := splitList(c.StringSlice("shapes")); len(want) > 0 {
		for _, n := range want {
			known := slices.Concat(matrix.Shapes(), matrix.TxnShapes(), matrix.MoreShapes())
			i := slices.IndexFunc(known, func(s matrix.Shape) bool { return s.Name == n })
			if i < 0 {
				return usageErrorf("scenarios run: --shapes: unknown shape %q (known: %s)", n, strings.Join(shapeNames(known), ", "))
			}
			shapes = append(shapes, known[i])
		}
	} else {
		shapes = slices.Concat(matrix.Shapes(), matrix.TxnShapes())
		if c.Bool("quick") {
			shapes = slices.DeleteFunc(shapes, func(s matrix.Shape) bool { return s.Name != quickShape })
		}
	}
	brokers := splitList(c.StringSlice("brokers"))
	if c.Bool("quick") {
		brokers = quickBrokers(c)
	}
	if c.String("cluster") != "" && !c.IsSet("brokers") {
		brokers = []string{"4.1.0", "4.4.0"}
	}
	var ext cluster
	bootstrap := c.String("bootstrap")
	switch {
	case bootstrap != "" && c.IsSet("brokers"):
		return usageErrorf("scenarios run: --brokers starts Kafka versions, --bootstrap runs on a cluster already running: give one (with --bootstrap, --broker-version says what it runs)")
	case bootstrap == "" && c.IsSet("broker-version"):
		return usageErrorf("scenarios run: --broker-version is for --bootstrap (use --brokers to start Kafka versions)")
	case bootstrap != "":
		if ext, err = probeCluster(c.Context, bootstrap, c.String("broker-version")); err != nil {
			return usageErrorf("scenarios run: %w", err)
		}
		brokers = []string{ext.version}
		fmt.Fprintf(c.App.ErrWriter, "kcheck scenarios run: the cluster at %s: Kafka %s (ApiVersions: %s), %s, topics of replication factor %d\n",
			bootstrap, ext.version, ext.guess, ext.count(), ext.replication())
	}
	if len(brokers) == 0 {
		return usageErrorf("scenarios run: --brokers: no Kafka version given")
	}
	kcheck, err := os.Executable()
	if err != nil {
		return usageErrorf("scenarios run: finding kcheck's own executable: %w", err)
	}
	root, err := filepath.Abs(c.String("root"))
	if err != nil {
		return usageErrorf("scenarios run: --root: %w", err)
	}
	if _, err := os.Stat(filepath.Join(root, "drivers")); err != nil {
		return usageErrorf("scenarios run: --root %s: no drivers/ there (run from the kcheck repository, or give --root)", root)
	}
	bin, err := os.MkdirTemp("", "kcheck-scenarios-bin-")
	if err != nil {
		return usageErrorf("scenarios run: %w", err)
	}
	defer os.RemoveAll(bin)
	res, err := matrix.Run(c.Context, matrix.Config{
		Env:       matrix.Env{Root: root, Bin: bin, Kcheck: kcheck},
		Scenarios: groups, Clients: clients, Brokers: brokers, Shapes: shapes, Runs: runs,
		Dir: c.String("keep"), CellTimeout: c.Duration("cell-timeout"), Cache: c.String("cache"), Log: c.App.ErrWriter,
		Shard: shard, Bootstrap: bootstrap, RunID: matrix.RunID(time.Now()), Replication: ext.replication(),
	})
	if err != nil && res != nil && errors.Is(err, context.Canceled) {
		// Interrupted: the cells that finished are kept, marked so.
		var ee *exitError
		if werr := writeResults(c, res); werr != nil && (!errors.As(werr, &ee) || ee.code != exitMismatch) {
			return werr
		}
		return usageErrorf("scenarios run: %s after %d cells; the finished cells are written", res.Interrupted, len(res.Cells))
	}
	if err != nil {
		return usageErrorf("scenarios run: %w", err)
	}
	return writeResults(c, res)
}

// retabulate writes a previous run's cells again, their predictions read
// from the scenario files as they are now.
func retabulate(c *cli.Context, from string, groups []*matrix.Scenario) error {
	f, err := os.Open(from)
	if err != nil {
		return usageErrorf("scenarios run: --from: %w", err)
	}
	defer f.Close()
	res, err := matrix.ReadResults(f, from)
	if err != nil {
		return usageErrorf("scenarios run: --from: %w", err)
	}
	predict := func(name, broker string) (map[string]string, bool) {
		g := findGroup(groups, name)
		if g == nil {
			return nil, false
		}
		return g.PredictionsFor(broker), true
	}
	if err := res.Repredict(predict, time.Now().UTC().Format("2006-01-02 15:04 UTC")); err != nil {
		return usageErrorf("scenarios run: --from: %w", err)
	}
	return writeResults(c, res)
}

// writeResults writes --results and --json (or the Markdown to standard
// output) and the tally; exit 1 when kcheck did not judge every cell right.
func writeResults(c *cli.Context, res *matrix.Results) error {
	cmd := "scenarios " + c.Command.Name // run or merge
	if p := c.String("results"); p != "" {
		if err := writeFileAtomic(p, res.WriteMarkdown); err != nil {
			return usageErrorf("%s: --results: %w", cmd, err)
		}
	}
	if p := c.String("json"); p != "" {
		if err := writeFileAtomic(p, res.WriteJSON); err != nil {
			return usageErrorf("%s: --json: %w", cmd, err)
		}
	}
	if err := writeReports(c, cmd, res); err != nil {
		return err
	}
	if c.String("results") == "" {
		if err := res.WriteMarkdown(c.App.Writer); err != nil {
			return err
		}
	}
	t := res.Tally()
	fmt.Fprintf(c.App.ErrWriter, "kcheck %s: %d cells in %.0f s: %d reached, %d held back, %d not reached, %d could not run; %d anomalies, %d worse than the model; verify missed %d, false alarms %d; ours-on flagged %d\n",
		cmd, t.Cells, res.Total, t.Reached, t.HeldBack, t.NotReached, t.Errors, t.Anomalies, t.Worse, t.Missed, t.FalseAlarms, t.OursOn)
	if gated(c) {
		return gateExit(c, cmd, res)
	}
	if under := splitList(c.StringSlice("under-test")); len(under) > 0 {
		return underTest(c, res, under)
	}
	keep := c.String("keep")
	if keep == "" {
		keep = "each shard's --keep"
	}
	if !t.OK() {
		return &exitError{code: exitMismatch, err: fmt.Errorf("%s: kcheck did not judge every cell right, a cell could not run, or our producer with the rule on was not clean (see the matrix; traces in %s)", cmd, keep)}
	}
	return nil
}

func findGroup(groups []*matrix.Scenario, name string) *matrix.Scenario {
	for _, g := range groups {
		if g.Name == name || slices.Contains(g.Also, name) {
			return g
		}
	}
	return nil
}

// scenarioGroups makes one matrix scenario of every set of scenarios with
// the same schedule (and broker settings), named for the first; with
// baseline, the Baseline first.
func scenarioGroups(scs []*scenario.Scenario, baseline bool) ([]*matrix.Scenario, error) {
	var out []*matrix.Scenario
	if baseline {
		out = append(out, &matrix.Scenario{Name: matrix.Baseline, Family: scenario.FamilyOf, Predictions: map[string]string{}})
	}
	// A group is named for its first scenario whose counterexample the
	// brokers here can give (no caveats), else its first.
	scs = slices.Clone(scs)
	slices.SortStableFunc(scs, func(a, b *scenario.Scenario) int { return min(len(caveats(a)), 1) - min(len(caveats(b)), 1) })
	byKey := map[string]*matrix.Scenario{}
	for _, s := range scs {
		fs, err := s.Faults()
		if err != nil {
			return nil, err
		}
		tv, err := txnVersion(s)
		if err != nil {
			return nil, err
		}
		key := fmt.Sprintf("%q %d %d %d %v %v", s.Schedule, s.Needs.ExpiryMs, s.Needs.ExpiryCheckMs, tv, s.Needs.TxnVerification, s.Needs.TxnTimeout)
		g, ok := byKey[key]
		if ok {
			g.Also = append(g.Also, s.Name)
		} else {
			g = &matrix.Scenario{Name: s.Name, Schedule: s.Schedule, Steps: matrix.StepsOf(fs),
				Expiry: time.Duration(s.Needs.ExpiryMs) * time.Millisecond, ExpiryCheck: time.Duration(s.Needs.ExpiryCheckMs) * time.Millisecond,
				Caveats: caveats(s), Predictions: s.Predictions, On: s.On, Family: scenario.FamilyOf,
				TxnVersion: tv, TxnVerification: s.Needs.TxnVerification, TxnTimeout: s.Needs.TxnTimeout}
			byKey[key] = g
			out = append(out, g)
		}
		if len(caveats(s)) == 0 && !slices.Contains(g.Violates, s.Invariant) {
			g.Violates = append(g.Violates, s.Invariant)
		}
	}
	return out, nil
}

// txnVersion is the transaction version a transactional scenario needs
// ("tv1": 1, "tv2": 2), 0 for an idempotent one.
func txnVersion(s *scenario.Scenario) (int, error) {
	switch s.Needs.TxnVersion {
	case "":
		return 0, nil
	case "tv1":
		return 1, nil
	case "tv2":
		return 2, nil
	}
	return 0, fmt.Errorf("scenario %s: need transactional %q: want tv1 or tv2", s.Name, s.Needs.TxnVersion)
}

// caveats says what a scenario's counterexample needs that the brokers and
// drivers here do not give it: the cells still run its schedule, and the
// predictions are for the brokers here (NoStateRule v25to44).
func caveats(s *scenario.Scenario) []string {
	var cs []string
	n := s.Needs
	if n.NoStateRule != "" && n.NoStateRule != "v25to44" {
		cs = append(cs, fmt.Sprintf("The counterexample needs a broker whose no-state rule is %s; Kafka 4.1.0-4.4.0 are v25to44.", n.NoStateRule))
	}
	if n.PreWritten {
		cs = append(cs, "The counterexample needs a log that already holds a record; each run here starts on a new topic.")
	}
	if n.DedupWindow != 0 && n.DedupWindow != 5 {
		cs = append(cs, fmt.Sprintf("The counterexample needs a broker retaining %d batches per producer; Kafka retains 5.", n.DedupWindow))
	}
	if n.AppResends {
		cs = append(cs, "The counterexample needs the application to produce a failed batch again; the drivers do not.")
	}
	return cs
}
