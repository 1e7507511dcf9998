package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/outcomes"
	"github.com/kcheck/kcheck/tracer/poll"
	"github.com/kcheck/kcheck/workload"
)

func runDescription() string {
	var kinds []string
	for k, d := range fault.Kinds() {
		if k.Effect().Scope != fault.OnCluster { // kcheck proxy --help lists those
			kinds = append(kinds, fmt.Sprintf("   %-22s %s", k, d))
		}
	}
	sort.Strings(kinds)
	var versions []string
	for v := range workload.Emulations {
		versions = append(versions, v)
	}
	sort.Strings(versions)
	return `Runs kcheck's idempotent producer against a broker, injecting faults, writes a
trace of every protocol step (--trace), reads every partition back at the end,
and prints a summary: records sent, acknowledged, failed, read back, lost,
duplicated, out of order, OUT_OF_ORDER_SEQUENCE_NUMBER stalls, and time.

Without --bootstrap the broker is an embedded kfake cluster of 3 brokers that
emulates --kfake-version (` + strings.Join(versions, ", ") + `; 4.1 by default, the seed's
broker: it accepts any first sequence from a producer it has no state for).

Transactions: --transactional makes the producer transactional
(--transactional-id, default kcheck-TOPIC) and groups the records into
transactions of --txn-records records (across the partitions); every
--txn-abort-every-th transaction is aborted on purpose once its records are
written, the others committed. The producer speaks the cluster's transaction
version (TV2 when the finalized transaction.version feature is 2, KIP-890
part 2; TV1 otherwise), or --txn-version 1 or 2; a broker without
transactions, or below the version asked, is bad input (exit 2). The summary
then counts each record as the read-back's markers decide it: committed,
aborted or still open.

With --trace, a read_committed consumer (franz-go's, tracer/poll) polls every
partition while the transactions run and, once they have ended, until it
reaches each partition's end offset; each poll is a Poll event of the trace,
which kcheck verify holds to the markers (--poll=false: no poller). A
partition whose polls fail --poll-retries times in a row (5), or that is not
at its end offset --poll-bound (60 s) after the run, is given up (a PollEnd
naming why): verify then calls the poll checks inconclusive.

Workload shapes (drivers/WORKLOADS.md), as every driver in drivers/ takes
them: --batch-records one (a record a batch) or many (a 20 ms linger, 256 KiB
batches); --idle-after N --idle D produces N records, waits until each has
its outcome, produces nothing for D, then produces the rest (the summary
gives the idle phase's times).

Faults (--fault, repeatable; parameters after a colon, e.g.
"not-enough-replicas:rate=0.05,count=10", "seed-race:delay=100ms,partitions=0+1"):
` + strings.Join(kinds, "\n") + `

Exit status: 0 when every record was acknowledged and read back once and in
order; 1 when the read-back shows a loss, a duplicate or a reorder (or records
failed); 2 on bad usage or a broker that cannot be reached.`
}

// runCommand returns the "kcheck run" command.
func runCommand() *cli.Command {
	return &cli.Command{
		Name:        "run",
		Usage:       "run the producer under faults, write a trace, read back and summarise",
		UsageText:   "kcheck run [--bootstrap HOST:PORT,...] [--fault KIND[:k=v,...]]... [--trace FILE] [flags]",
		Description: runDescription(),
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "bootstrap", Aliases: []string{"brokers"}, Usage: "bootstrap brokers `HOST:PORT` (--brokers is the same); none: an embedded kfake cluster of 3 brokers"},
			&cli.StringFlag{Name: "kfake-version", Value: "4.1", Usage: "the Kafka `VERSION` the embedded broker emulates"},
			&cli.StringFlag{Name: "broker-version", Usage: "with --bootstrap: the Kafka `VERSION` they run (e.g. 4.1.0), for the trace's header and the broker rules kcheck verify applies"},
			&cli.StringFlag{Name: "topic", Value: "kcheck", Usage: "the `TOPIC` to create and produce to (it must not exist)"},
			&cli.IntFlag{Name: "partitions", Value: 8, Usage: "partitions of the new topic"},
			&cli.IntFlag{Name: "replication-factor", Value: -1, Usage: "the replication factor `N` of the new topic; -1: the brokers' default.replication.factor (3 on the embedded kfake cluster and on kcheck kafka --nodes 3)"},
			&cli.IntFlag{Name: "records", Value: 2000, Usage: "records to produce"},
			&cli.IntFlag{Name: "value-bytes", Value: 1024, Usage: "bytes per record value"},
			&cli.IntFlag{Name: "keys", Value: 1024, Usage: "distinct keys, partitioned as the Java client does (0: no keys)"},
			&cli.StringFlag{Name: "compression", Value: "none", Usage: "`CODEC`: none, gzip, snappy, lz4 or zstd"},
			&cli.StringFlag{Name: "first-ack", Value: "on", Usage: "the KAFKA-14359 first-ack rule: on or off"},
			&cli.StringFlag{Name: "hold-while-retrying", Value: "on", Usage: "no new sequence while a retried batch is unacknowledged (KAFKA-18905): on or off"},
			&cli.StringFlag{Name: "idle-rearm", Value: "on", Usage: "with --first-ack on: a partition with no acknowledgement for --idle-rearm-after awaits its first ack again, in case the broker expired the producer's state: on or off"},
			&cli.DurationFlag{Name: "idle-rearm-after", Usage: "the idle re-arm bound; 0: half the brokers' producer.id.expiration.ms (read with DescribeConfigs; 12h if refused)"},
			&cli.IntFlag{Name: "max-in-flight", Value: 5, Usage: "produce requests outstanding per connection (1..5)"},
			&cli.DurationFlag{Name: "linger", Value: 5 * time.Millisecond, Usage: "linger.ms"},
			&cli.IntFlag{Name: "batch-bytes", Value: 16 << 10, Usage: "batch.size in bytes"},
			&cli.IntFlag{Name: "max-request-bytes", Usage: "max.request.size: the most bytes of record batches in one produce request, 0 for no cap (at least --batch-bytes, at most the brokers' message.max.bytes)"},
			&cli.StringFlag{Name: "batch-records", Value: workload.BatchDefault, Usage: "the batch shape (drivers/WORKLOADS.md): `SHAPE` one (--batch-bytes 1: a record a batch), many (--linger 20ms --batch-bytes 262144) or default (--linger and --batch-bytes as given)"},
			&cli.IntFlag{Name: "idle-after", Usage: "an idle phase after `N` records: once each has its outcome, produce nothing for --idle, then the rest (with --idle)"},
			&cli.DurationFlag{Name: "idle", Usage: "how long the idle phase lasts (with --idle-after)"},
			&cli.DurationFlag{Name: "delivery-timeout", Value: 3 * time.Second, Usage: "delivery.timeout.ms"},
			&cli.DurationFlag{Name: "request-timeout", Value: time.Second, Usage: "request.timeout.ms"},
			&cli.StringSliceFlag{Name: "fault", Usage: "a fault to inject, `KIND[:k=v,...]` (repeatable; see above)"},
			scheduleFlag,
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed for keys, values and fault choices"},
			&cli.StringFlag{Name: "trace", Usage: "write the trace to `FILE`", TakesFile: true},
			&cli.BoolFlag{Name: "transactional", Usage: "produce in transactions (see above)"},
			&cli.IntFlag{Name: "txn-records", Value: 100, Usage: "with --transactional: records a transaction `N`"},
			&cli.IntFlag{Name: "txn-abort-every", Usage: "with --transactional: abort every `K`th transaction on purpose (0: none)"},
			&cli.StringFlag{Name: "transactional-id", Usage: "with --transactional: the transactional.id `ID` (default kcheck-TOPIC)"},
			&cli.BoolFlag{Name: "poll", Value: true, Usage: "with --transactional and --trace: a read_committed consumer polls while the run goes on and after it (see above)"},
			&cli.IntFlag{Name: "poll-retries", Value: poll.DefaultRetries, Usage: "with --poll: failed polls of a partition in a row, `N`, before the poller gives up on it"},
			&cli.DurationFlag{Name: "poll-bound", Value: poll.DefaultBound, Usage: "with --poll: bound on the final polls after the run, a `DURATION`"},
			&cli.IntFlag{Name: "txn-version", Usage: "with --transactional: the transaction version `V` to speak: 0 the cluster's, 1 (AddPartitionsToTxn) or 2 (KIP-890 part 2; the cluster must have it)"},
			&cli.StringFlag{Name: "outcomes", Usage: "write what each record's callback was told to `FILE` (drivers/OUTCOMES.md; default $KCHECK_OUTCOMES, which kcheck proxy sets; the trace has it as Told events either way)", TakesFile: true},
		},
		Action: func(c *cli.Context) error {
			cfg, err := runConfig(c)
			if err != nil {
				return err
			}
			return doRun(c, cfg)
		},
	}
}

// runConfig turns flags into a workload configuration.
func runConfig(c *cli.Context) (workload.Config, error) {
	if c.Args().Present() {
		return workload.Config{}, usageErrorf("run takes no arguments, got %q", c.Args().First())
	}
	codec, err := recordbatch.ParseCodec(c.String("compression"))
	if err != nil {
		return workload.Config{}, usageErrorf("--compression: %v", err)
	}
	firstAck, err := onOff(c, "first-ack")
	if err != nil {
		return workload.Config{}, err
	}
	hold, err := onOff(c, "hold-while-retrying")
	if err != nil {
		return workload.Config{}, err
	}
	rearm, err := onOff(c, "idle-rearm")
	if err != nil {
		return workload.Config{}, err
	}
	if rearm && !firstAck && c.IsSet("idle-rearm") {
		return workload.Config{}, usageErrorf("--idle-rearm on needs --first-ack on (it re-arms the first-ack rule)")
	}
	if c.IsSet("idle-rearm-after") && !(rearm && firstAck) {
		return workload.Config{}, usageErrorf("--idle-rearm-after %v: the rule is off (--idle-rearm off or --first-ack off)", c.Duration("idle-rearm-after"))
	}
	faults, err := faultFlags(c)
	if err != nil {
		return workload.Config{}, err
	}
	for _, n := range []string{"linger", "delivery-timeout", "request-timeout", "idle-rearm-after"} {
		if c.Duration(n) < 0 {
			return workload.Config{}, usageErrorf("--%s %v: must not be negative", n, c.Duration(n))
		}
	}
	if p := c.Int("partitions"); p > tracer.MaxPartitions {
		return workload.Config{}, usageErrorf("--partitions %d: at most %d, the most a trace holds (tracer/FORMAT.md, Limits)", p, tracer.MaxPartitions)
	}
	if rf := c.Int("replication-factor"); rf != -1 && (rf < 1 || rf > math.MaxInt16) {
		return workload.Config{}, usageErrorf("--replication-factor %d: must be 1..%d, or -1 for the brokers' default.replication.factor", rf, math.MaxInt16)
	}
	if c.Int("batch-bytes") < 1 {
		return workload.Config{}, usageErrorf("--batch-bytes %d: must be positive", c.Int("batch-bytes"))
	}
	if mr := c.Int("max-request-bytes"); mr < 0 {
		return workload.Config{}, usageErrorf("--max-request-bytes %d: must not be negative (0: no cap)", mr)
	} else if mr > 0 && c.Int("batch-bytes") > mr {
		return workload.Config{}, usageErrorf("--batch-bytes %d is above --max-request-bytes %d: a full batch could never be sent in a request; lower one or raise the other",
			c.Int("batch-bytes"), mr)
	}
	shape := c.String("batch-records")
	linger := c.Duration("linger")
	switch shape {
	case workload.BatchDefault:
	case workload.BatchOne, workload.BatchMany:
		if c.IsSet("batch-bytes") {
			return workload.Config{}, usageErrorf("--batch-records %s sets --batch-bytes: give one or the other", shape)
		}
		if shape == workload.BatchMany {
			if c.IsSet("linger") {
				return workload.Config{}, usageErrorf("--batch-records many sets --linger: give one or the other")
			}
			linger = workload.ManyLinger
		}
	default:
		return workload.Config{}, usageErrorf("--batch-records %q: want one, many or default", shape)
	}
	if c.Duration("delivery-timeout") < linger+c.Duration("request-timeout") {
		return workload.Config{}, usageErrorf("--delivery-timeout %v: must be at least --linger (%v) + --request-timeout", c.Duration("delivery-timeout"), linger)
	}
	var idle *workload.Idle
	switch after, d := c.IsSet("idle-after"), c.IsSet("idle"); {
	case after && !d:
		return workload.Config{}, usageErrorf("--idle-after needs --idle (how long the idle phase lasts)")
	case d && !after:
		return workload.Config{}, usageErrorf("--idle needs --idle-after (how many records come before the idle phase)")
	case after:
		idle = &workload.Idle{After: c.Int("idle-after"), For: c.Duration("idle")}
		if idle.After < 0 || idle.After > c.Int("records") {
			return workload.Config{}, usageErrorf("--idle-after %d: must be 0..--records (%d)", idle.After, c.Int("records"))
		}
		if idle.For < 0 {
			return workload.Config{}, usageErrorf("--idle %v: must not be negative", idle.For)
		}
	}
	var txn *workload.Txn
	if c.Bool("transactional") {
		txn = &workload.Txn{ID: c.String("transactional-id"), Records: c.Int("txn-records"), AbortEvery: c.Int("txn-abort-every"), Version: c.Int("txn-version")}
		if txn.ID == "" {
			txn.ID = "kcheck-" + c.String("topic")
		}
		switch {
		case txn.Records < 1:
			return workload.Config{}, usageErrorf("--txn-records %d: must be at least 1", txn.Records)
		case txn.AbortEvery < 0:
			return workload.Config{}, usageErrorf("--txn-abort-every %d: must not be negative (0: none aborted)", txn.AbortEvery)
		case txn.Version < 0 || txn.Version > 2:
			return workload.Config{}, usageErrorf("--txn-version %d: want 0 (the cluster's), 1 or 2", txn.Version)
		case idle != nil:
			return workload.Config{}, usageErrorf("--idle-after with --transactional: a transactional run has no idle phase")
		case c.Int("poll-retries") < 1:
			return workload.Config{}, usageErrorf("--poll-retries %d: must be at least 1", c.Int("poll-retries"))
		case c.Duration("poll-bound") <= 0:
			return workload.Config{}, usageErrorf("--poll-bound %v: want a positive duration", c.Duration("poll-bound"))
		}
	} else {
		for _, n := range []string{"txn-records", "txn-abort-every", "transactional-id", "txn-version", "poll", "poll-retries", "poll-bound"} {
			if c.IsSet(n) {
				return workload.Config{}, usageErrorf("--%s needs --transactional", n)
			}
		}
	}
	return workload.Config{
		Brokers: listFlag(c, "bootstrap"), KfakeVersion: c.String("kfake-version"), BrokerVersion: c.String("broker-version"),
		Topic: c.String("topic"), Partitions: int32(c.Int("partitions")), ReplicationFactor: int16(c.Int("replication-factor")), Records: c.Int("records"),
		ValueBytes: c.Int("value-bytes"), Keys: c.Int("keys"), Codec: codec, FirstAck: firstAck, HoldWhileRetrying: hold,
		IdleRearm: rearm && firstAck, IdleRearmAfter: c.Duration("idle-rearm-after"),
		MaxInFlight: c.Int("max-in-flight"), Linger: c.Duration("linger"), BatchBytes: c.Int("batch-bytes"), MaxRequestBytes: c.Int("max-request-bytes"),
		DeliveryTimeout: c.Duration("delivery-timeout"), RequestTimeout: c.Duration("request-timeout"),
		Faults: faults, Seed: c.Uint64("seed"), TracePath: c.String("trace"), Progress: c.App.ErrWriter,
		OutcomesPath: outcomes.Path(c.String("outcomes")), BatchRecords: shape, Idle: idle, Txn: txn,
		Poll: txn != nil && c.Bool("poll"), PollRetries: c.Int("poll-retries"), PollBound: c.Duration("poll-bound"),
	}, nil
}

// onOff reads a flag whose value is on or off.
func onOff(c *cli.Context, name string) (bool, error) {
	switch v := c.String(name); v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	default:
		return false, usageErrorf("--%s %q: want on or off", name, v)
	}
}

// doRun runs the workload and prints its summary.
func doRun(c *cli.Context, cfg workload.Config) error {
	sum, err := workload.Run(c.Context, cfg)
	if err != nil {
		if _, ok := err.(*workload.UsageError); ok {
			return usageErrorf("%v", err)
		}
		return &exitError{code: exitUsage, err: fmt.Errorf("run failed: %w", err)}
	}
	printSummary(c.App.Writer, cfg, sum)
	if !sum.Clean() {
		return &exitError{code: exitMismatch}
	}
	return nil
}

func printSummary(w io.Writer, cfg workload.Config, s *workload.Summary) {
	verdict := "clean: every record acknowledged and read back once, in order"
	if s.TxnVersion > 0 {
		printTxnSummary(w, cfg, s)
		return
	}
	switch {
	case s.Anomalies():
		verdict = "NOT CLEAN: the read-back shows lost, duplicated or reordered records"
	case !s.Clean():
		verdict = "NOT CLEAN: records failed"
	}
	fmt.Fprintf(w, "kcheck run: %s\n", verdict)
	fmt.Fprintf(w, "  sent %d, acknowledged %d, failed %d, read back %d\n", s.Sent, s.Acked, s.Failed, s.ReadBack)
	fmt.Fprintf(w, "  lost %d (%d of them acknowledged), duplicated %d, out of order %d\n", s.Lost, s.LostAcked, s.Duplicated, s.OutOfOrder)
	fmt.Fprintf(w, "  OUT_OF_ORDER_SEQUENCE_NUMBER answers %d (kcheck verify tells which were retried into a stall)\n", s.OutOfOrderAnswers)
	fmt.Fprintf(w, "  time %v\n", s.Duration.Round(time.Millisecond))
	if cfg.BatchRecords != "" && cfg.BatchRecords != workload.BatchDefault {
		fmt.Fprintf(w, "  batch records %s\n", cfg.BatchRecords)
	}
	if cfg.Idle != nil {
		fmt.Fprintf(w, "  idle %v after %d records: from %d to %d (unix ms), %d of them unanswered when it began\n",
			cfg.Idle.For, cfg.Idle.After, s.IdleStart.UnixMilli(), s.IdleEnd.UnixMilli(), s.IdleUnanswered)
	}
	for _, e := range s.FirstErrors {
		fmt.Fprintf(w, "  error: %s\n", e)
	}
	for _, p := range s.Short {
		fmt.Fprintf(w, "  read-back: partition %d: leader %d reported the high watermark %d, at or below the acknowledged offset %d, after %.1f s\n",
			p.ID, p.Short.Leader, p.Short.HWM, p.Short.Acked, p.Short.Waited.Seconds())
	}
	if cfg.TracePath != "" {
		fmt.Fprintf(w, "  trace %s (%d events)\n", cfg.TracePath, s.TraceEvents)
	}
}

// scheduleFlag is --schedule FILE, for run and proxy.
var scheduleFlag = &cli.StringFlag{Name: "schedule", TakesFile: true,
	Usage: "read faults from `FILE`, one a line as --fault takes them (# comments), before any --fault"}

// faultFlags returns the faults of --schedule FILE, then of every --fault.
func faultFlags(c *cli.Context) ([]fault.Fault, error) {
	var faults []fault.Fault
	if path := c.String("schedule"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usageErrorf("--schedule: %v", err)
		}
		defer f.Close()
		if faults, err = fault.ReadSchedule(f, path); err != nil {
			return nil, usageErrorf("--schedule: %v", err)
		}
	}
	for _, s := range c.StringSlice("fault") {
		f, err := fault.Parse(s)
		if err != nil {
			return nil, usageErrorf("--fault: %v", err)
		}
		faults = append(faults, f)
	}
	return faults, nil
}

// printTxnSummary is printSummary for a transactional run.
func printTxnSummary(w io.Writer, cfg workload.Config, s *workload.Summary) {
	verdict := "clean: every transaction ended as asked, its records read back once, in order, as it ended"
	switch {
	case s.Anomalies():
		verdict = "NOT CLEAN: the read-back contradicts the transactions' ends (or shows duplicates or reorders)"
	case s.TxnFailed > 0:
		verdict = "NOT CLEAN: transactions failed"
	case s.ReadOpen > 0:
		verdict = "NOT CLEAN: records of no ended transaction in the log"
	case len(s.CommittedDisagree) > 0:
		verdict = "NOT CLEAN: read_committed disagrees with the markers"
	}
	fmt.Fprintf(w, "kcheck run: %s\n", verdict)
	fmt.Fprintf(w, "  transactional, TV%d (the cluster's transaction.version: %d), %d records a transaction\n", s.TxnVersion, s.TxnFeature, cfg.Txn.Records)
	fmt.Fprintf(w, "  transactions committed %d, aborted %d (as asked), failed %d\n", s.TxnCommitted, s.TxnAborted, s.TxnFailed)
	fmt.Fprintf(w, "  sent %d, acknowledged %d, failed %d, read back %d: committed %d, aborted %d, open %d\n",
		s.Sent, s.Acked, s.Failed, s.ReadBack, s.ReadCommitted, s.ReadAborted, s.ReadOpen)
	fmt.Fprintf(w, "  of committed transactions lost or aborted %d; of aborted ones committed %d; duplicated %d, out of order %d\n",
		s.CommitLost, s.AbortCommitted, s.Duplicated, s.OutOfOrder)
	agree := "agrees with the markers"
	if len(s.CommittedDisagree) > 0 {
		agree = "DISAGREES with the markers: " + strings.Join(s.CommittedDisagree, "; ")
	}
	fmt.Fprintf(w, "  read_committed sees %d records: %s\n", s.CommittedVisible, agree)
	if cfg.Poll && cfg.TracePath != "" {
		gave := "reached every partition's end"
		if s.PollGaveUp > 0 {
			gave = fmt.Sprintf("GAVE UP on %d partitions (verify: the poll checks inconclusive)", s.PollGaveUp)
		}
		fmt.Fprintf(w, "  read_committed poller: %d polls, %d records returned; %s (final polls %v)\n", s.Polls, s.PollRecords, gave, s.PollFinal.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "  OUT_OF_ORDER_SEQUENCE_NUMBER answers %d\n", s.OutOfOrderAnswers)
	fmt.Fprintf(w, "  time %v\n", s.Duration.Round(time.Millisecond))
	for _, e := range s.FirstErrors {
		fmt.Fprintf(w, "  error: %s\n", e)
	}
	if cfg.TracePath != "" {
		fmt.Fprintf(w, "  trace %s (%d events)\n", cfg.TracePath, s.TraceEvents)
	}
}
