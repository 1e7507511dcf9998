package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/nemesis"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/outcomes"
	"github.com/kcheck/kcheck/tracer/poll"
	"github.com/kcheck/kcheck/tracer/proxy"
	"github.com/kcheck/kcheck/workload"
)

const proxyDescription = `Traces any Kafka client without changing it: a Kafka-protocol proxy between
the client and a cluster. The client bootstraps from --listen; the proxy
rewrites the broker addresses in metadata so every connection goes through
it (one listener per broker, on the same host as --listen, free ports), and
writes every produce request and response to --topic into --trace, in the
trace format kcheck run writes (writer "kcheck-proxy"). At the end it reads
the topic back from the cluster, so "kcheck verify FILE" can check the run.

Records are matched across retries by their "kcheck-id" header (the drivers
in drivers/ set it); records without one are known by producer id, epoch and
sequence, which an epoch bump changes.

With a command after "--", the proxy runs it with "{bootstrap}" in its
arguments (and $KCHECK_BOOTSTRAP) set to the proxy's address, and stops when
it exits: the exit status is the command's (0 or 1), or 2 when it could not
start or was killed.

What the client told its application: the command is given a file to write
its report to, one line per record (drivers/OUTCOMES.md; every driver in
drivers/ writes it), as "{outcomes}" in its arguments and $KCHECK_OUTCOMES.
When the command exits, the proxy merges the report into the trace as Told
events (tracer/FORMAT.md), which kcheck verify holds to the read-back: a
record the application was told was delivered and that is not in the log is
a lost-write however the wire looked. A transactional client's report also
has a line per transaction's end, merged as TxnTold events numbered as the
wire's transaction its records went in. --outcomes FILE names the file instead
(and, without a command, is read when the proxy stops). A report with a
malformed line, a record twice, a delivery of a record no produce request
carried, a transaction's end out of order, or a commit of a transaction
none of whose records reached the wire is refused (exit 2, file and line,
no trace left). A client
that writes no report leaves a trace of the wire only; one that crashed
(exit 2 or a signal) has its report ignored. Without one, it prints "bootstrap: ADDR" and runs until
interrupted (Ctrl-C or SIGTERM).

Faults (--fault, and --schedule FILE, one a line; as kcheck run --help
lists them; per partition: seed-race, not-leader, not-enough-replicas,
timeout-after-append, and a schedule's steps: reject and append-then-error
(err=NAME), hold (delay=D) and cut (when=before or after), which select
attempts with partitions=0+3, attempt=N, epoch=E, seq=K, try=N, idle=D,
after=answer and count=N, and hold their answers with delay=D and
until=next or until=seq:K; per request: drop-connection,
timeout-before-append, slow). A fault means the same here as on kcheck
run's embedded broker (fault.Effect), which cannot do every one of them.
state-expiry:delay=D is the broker's own producer.id.expiration.ms: the
proxy names it in the trace's header and says the upstream must run with it
(kcheck kafka --producer-id-expiration).

Faults on a cluster's nodes act on a real cluster kcheck started with
"kcheck kafka --nodes 3 --control ADDR", given to the proxy as --cluster ADDR;
each fires once at its trigger, writes Fault events naming the node
(tracer/FORMAT.md), and is ended once the client's produce phase is over:
at its first read (Fetch or ListOffsets, its own read-back), which waits
until every fault has ended (a paused node resumed, a killed one started
again) and the cluster has healed (every partition led, every replica in
sync), or when it exits. A fault
that cannot act (no such node, no leader, a node that does not come back
within --heal) fails the run: exit 2, no trace.

A transactional client (its first produce to the topic carries a
transactional id) is also polled: a read_committed consumer of the proxy's
own (franz-go's, tracer/poll), straight from the cluster, polls every
partition while the client runs and, once it has exited, until it reaches
each partition's end offset, before the read-back; each poll is a Poll event,
which kcheck verify holds to the markers (--poll=false: no poller). A
partition whose polls fail --poll-retries times in a row (5), or that is not
at its end offset --poll-bound (60 s) after the client exited, is given up (a
PollEnd naming why): verify then calls the poll checks inconclusive.

It listens on loopback unless --listen says otherwise.`

// proxyHelp is the proxy's description with the faults on a cluster listed.
func proxyHelp() string {
	var kinds []string
	for k, d := range fault.Kinds() {
		if k.Effect().Scope == fault.OnCluster {
			kinds = append(kinds, fmt.Sprintf("   %-22s %s", k, d))
		}
	}
	sort.Strings(kinds)
	return proxyDescription + "\n\nFaults on a cluster's nodes (--fault, --schedule; with --cluster):\n" + strings.Join(kinds, "\n") +
		"\n" + fault.ClusterHelp + "."
}

// proxyCommand returns the "kcheck proxy" command.
func proxyCommand() *cli.Command {
	return &cli.Command{
		Name:        "proxy",
		Usage:       "trace any Kafka client through a protocol proxy, injecting faults",
		UsageText:   "kcheck proxy --bootstrap HOST:PORT --trace FILE [--listen HOST:PORT] [flags] [-- COMMAND {bootstrap} ...]",
		Description: proxyHelp(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:0", Usage: "bootstrap `HOST:PORT` clients connect to (port 0: a free one)"},
			&cli.StringFlag{Name: "bootstrap", Aliases: []string{"upstream"}, Usage: "a broker of the cluster, `HOST:PORT` (required; --upstream is the same)"},
			&cli.StringFlag{Name: "trace", Usage: "write the trace to `FILE`; without it the proxy only forwards", TakesFile: true},
			&cli.StringFlag{Name: "topic", Usage: "trace produce requests to `TOPIC` (default: the first topic produced to)"},
			&cli.StringFlag{Name: "client", Usage: "`NAME` of the client under test, for the trace header (default: its client id)"},
			&cli.StringFlag{Name: "broker-kind", Value: "kafka", Usage: "what the upstream is: kafka, kfake or tansu"},
			&cli.StringFlag{Name: "broker-version", Usage: "the Kafka `VERSION` the upstream runs (or, for kfake, emulates), e.g. 4.1.0"},
			&cli.StringSliceFlag{Name: "fault", Usage: "a fault to inject, `KIND[:k=v,...]` (repeatable; see kcheck run --help)"},
			scheduleFlag,
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed for fault choices"},
			&cli.StringFlag{Name: "cluster", Usage: "the control `HOST:PORT` of a cluster kcheck kafka --control serves, for the faults on its nodes"},
			&cli.DurationFlag{Name: "heal", Value: proxy.DefaultHealBound, Usage: "bound on each step that ends a fault on the cluster (a node back, replicas in sync), a `DURATION`"},
			&cli.StringFlag{Name: "outcomes", Usage: "read what the client told its application from `FILE` (drivers/OUTCOMES.md; default: a temporary file given to the command as {outcomes} and $KCHECK_OUTCOMES)", TakesFile: true},
			&cli.BoolFlag{Name: "poll", Value: true, Usage: "poll a transactional client's topic as read_committed while it runs and after it (see above)"},
			&cli.IntFlag{Name: "poll-retries", Value: poll.DefaultRetries, Usage: "with --poll: failed polls of a partition in a row, `N`, before the poller gives up on it"},
			&cli.DurationFlag{Name: "poll-bound", Value: poll.DefaultBound, Usage: "with --poll: bound on the final polls after the client exits, a `DURATION`"},
			&cli.BoolFlag{Name: "readback", Value: true, Usage: "read the topic back at the end (--readback=false: the trace ends without it; kcheck readback adds it later)"},
		},
		Action: doProxy,
	}
}

func proxyConfig(c *cli.Context) (proxy.Config, error) {
	cfg := proxy.Config{Listen: c.String("listen"), Upstream: c.String("bootstrap"), Topic: c.String("topic"),
		Client: c.String("client"), Seed: int64(c.Uint64("seed")),
		Poll: c.Bool("poll"), PollRetries: c.Int("poll-retries"), PollBound: c.Duration("poll-bound")}
	if cfg.PollRetries < 1 {
		return cfg, usageErrorf("proxy: --poll-retries %d: must be at least 1", cfg.PollRetries)
	}
	if cfg.PollBound <= 0 {
		return cfg, usageErrorf("proxy: --poll-bound %v: want a positive duration", cfg.PollBound)
	}
	if cfg.Upstream == "" {
		return cfg, usageErrorf("proxy: --bootstrap HOST:PORT (the upstream cluster) is required")
	}
	b, err := proxyBroker(c.String("broker-kind"), c.String("broker-version"))
	if err != nil {
		return cfg, usageErrorf("proxy: %v", err)
	}
	cfg.Broker = b
	faults, err := faultFlags(c)
	if err != nil {
		return cfg, usageErrorf("proxy: %v", err)
	}
	cfg.Faults = faults
	cfg.HealBound = c.Duration("heal")
	if cfg.HealBound <= 0 {
		return cfg, usageErrorf("proxy: --heal %v: want a positive duration", cfg.HealBound)
	}
	if addr := c.String("cluster"); addr != "" {
		ctx, cancel := context.WithTimeout(c.Context, 10*time.Second)
		defer cancel()
		r, err := nemesis.Dial(ctx, addr)
		if err != nil {
			return cfg, usageErrorf("proxy: --cluster: %v", err)
		}
		cfg.Cluster = r
	}
	return cfg, nil
}

func doProxy(c *cli.Context) error {
	cfg, err := proxyConfig(c)
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	cfg.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	command := c.Args().Slice()
	tracePath := c.String("trace")
	ok := false
	if tracePath != "" {
		f, err := os.Create(tracePath)
		if err != nil {
			return usageErrorf("proxy: --trace: %v", err)
		}
		defer f.Close()
		// A proxy run that fails leaves no trace behind.
		defer func() {
			if !ok {
				f.Close()
				os.Remove(tracePath)
			}
		}()
		cfg.Trace = f
	}
	p, err := proxy.Start(c.Context, cfg)
	if err != nil {
		return usageErrorf("%v", err)
	}
	defer p.Close()
	addr := p.Addr()
	fmt.Fprintf(stderr, "kcheck proxy: %s -> %s\n", addr, cfg.Upstream)

	outcomes, given := c.String("outcomes"), c.IsSet("outcomes")
	if !given && tracePath != "" && len(command) > 0 {
		dir, err := os.MkdirTemp("", "kcheck-outcomes-")
		if err != nil {
			return usageErrorf("proxy: a file for the client's report: %v", err)
		}
		defer os.RemoveAll(dir)
		outcomes = filepath.Join(dir, "outcomes.jsonl")
	}
	var cmdErr error
	if len(command) == 0 {
		fmt.Fprintf(c.App.Writer, "bootstrap: %s\n", addr)
		<-c.Context.Done()
	} else {
		cmdErr = runClient(c, command, addr, outcomes)
	}
	if tracePath != "" && outcomes != "" {
		if err := tell(c, p, outcomes, given, cmdErr); err != nil {
			return err
		}
	}

	if c.Bool("readback") || cfg.Trace == nil {
		// The read-back waits up to 60 s for the cluster to settle and up
		// to 60 s for high watermarks to catch up (tracer/readback).
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := p.Finish(ctx); err != nil {
			if cmdErr != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("%v; and %w", cmdErr, err)}
			}
			return &exitError{code: exitUsage, err: err}
		}
	} else {
		p.Close()
	}
	st := p.Stats()
	fmt.Fprintf(stderr, "kcheck proxy: %d connections, %d produce requests traced, %d batch attempts, %d faults injected\n",
		st.Connections, st.Produces, st.Batches, st.Faults)
	if st.Polls+st.PollGaveUp > 0 {
		gave := "reached every partition's end"
		if st.PollGaveUp > 0 {
			gave = fmt.Sprintf("GAVE UP on %d partitions (verify: the poll checks inconclusive)", st.PollGaveUp)
		}
		fmt.Fprintf(stderr, "kcheck proxy: read_committed poller: %d polls, %d records returned; %s\n", st.Polls, st.PollRecords, gave)
	}
	if tracePath != "" {
		fmt.Fprintf(stderr, "kcheck proxy: trace %s\n", tracePath)
	}
	ok = true
	return cmdErr
}

// tell merges the client's report at path into the proxy's trace, unless
// the client crashed (cmdErr of exit status 2). A report the client did not
// write is an error only when the user named it (given).
func tell(c *cli.Context, p *proxy.Proxy, path string, given bool, cmdErr error) error {
	stderr := c.App.ErrWriter
	var ee *exitError
	if errors.As(cmdErr, &ee) && ee.code == exitUsage {
		fmt.Fprintf(stderr, "kcheck proxy: the client failed: its report of what it told its application is not merged\n")
		return nil
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !given:
		fmt.Fprintf(stderr, "kcheck proxy: the client wrote no report of what it told its application ({outcomes}, $KCHECK_OUTCOMES; drivers/OUTCOMES.md): the trace shows the wire only\n")
		return nil
	case err != nil:
		return usageErrorf("proxy: --outcomes: %v", err)
	}
	defer f.Close()
	outs, err := outcomes.Read(f, path)
	if err == nil {
		var st proxy.TellStats
		if st, err = p.Tell(outs, path); err == nil {
			fmt.Fprintf(stderr, "kcheck proxy: merged what the client told its application about %d records (%d more never reached the wire)\n", st.Merged, st.Unsent)
			if st.TxnMerged+st.TxnUnsent > 0 {
				fmt.Fprintf(stderr, "kcheck proxy: and about %d transactions' ends (%d more of transactions that never reached the wire)\n", st.TxnMerged, st.TxnUnsent)
			}
			return nil
		}
	}
	return usageErrorf("proxy: the client's report: %v", err)
}

// runClient runs the client command through the proxy at addr, with
// outcomes as where it writes its report, and returns its failure as
// kcheck's exit status.
func runClient(c *cli.Context, command []string, addr, outcomes string) error {
	args := make([]string, len(command))
	for i, a := range command {
		args[i] = strings.ReplaceAll(strings.ReplaceAll(a, "{bootstrap}", addr), "{outcomes}", outcomes)
	}
	cmd := exec.CommandContext(c.Context, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = c.App.Writer, c.App.ErrWriter
	cmd.Env = append(os.Environ(), "KCHECK_BOOTSTRAP="+addr)
	if outcomes != "" {
		cmd.Env = append(cmd.Env, "KCHECK_OUTCOMES="+outcomes)
	}
	// Interrupted: ask the client to stop, then make sure it has.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("proxy: starting the client %q: %w", args[0], err)}
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.Exited() && ee.ExitCode() == 1:
		return &exitError{code: exitMismatch, err: fmt.Errorf("proxy: the client %q exited with status 1 (it saw something wrong)", args[0])}
	case errors.As(err, &ee) && ee.Exited():
		return &exitError{code: exitUsage, err: fmt.Errorf("proxy: the client %q exited with status %d", args[0], ee.ExitCode())}
	default:
		return &exitError{code: exitUsage, err: fmt.Errorf("proxy: the client %q: %w", args[0], err)}
	}
}

// proxyBroker is the trace header's broker for --broker-kind kind and
// --broker-version v.
func proxyBroker(kind, v string) (tracer.Broker, error) {
	switch kind {
	case "kafka":
		return workload.KafkaBroker(v), nil
	case "kfake":
		if v == "" {
			v = "4.1"
		}
		mm := v // major.minor
		if parts := strings.SplitN(v, ".", 3); len(parts) > 1 {
			mm = parts[0] + "." + parts[1]
		}
		em, ok := workload.Emulations[mm]
		if !ok {
			return tracer.Broker{}, fmt.Errorf("--broker-version %q: kfake emulates no such version", v)
		}
		return tracer.Broker{Kind: "kfake", Version: mm, NoStateRule: em.Rule}, nil
	case "tansu":
		// A Kafka-compatible broker is held to the rules clients expect
		// of Apache Kafka 2.5 to 4.4: where it follows others, verify
		// says so (a broker finding, issue 31).
		return tracer.Broker{Kind: "tansu", Version: v, NoStateRule: "v25to44"}, nil
	}
	return tracer.Broker{}, fmt.Errorf("--broker-kind %q: want kafka, kfake or tansu", kind)
}
