package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/brokers"
	"github.com/kcheck/kcheck/kafka"
	"github.com/kcheck/kcheck/workload"
)

const brokerDescription = `Runs a Kafka-compatible broker that is not Apache Kafka (for that: kcheck
kafka) on 127.0.0.1, for "kcheck run --bootstrap" and "kcheck proxy
--bootstrap", until interrupted (Ctrl-C or SIGTERM); then stops it.

  --kind kfake   franz-go's kfake, in this process, emulating the Kafka
                 --version given (major.minor: 2.4, 3.9, 4.0 to 4.5; default
                 4.1), with --nodes brokers.
  --kind tansu   tansu ` + brokers.TansuVersion + ` from crates.io, built the first time with
                 "cargo install tansu --version ` + brokers.TansuVersion + ` --locked --features
                 ` + brokers.TansuFeatures + `" into the cache ($KCHECK_CACHE or ~/.cache/kcheck;
                 about 15 minutes on 2 cores), then started with its in-memory
                 storage (memory://), one broker. Needs cargo (Rust).
  --kind crabka  not runnable: crates.io has no crabka-broker with a broker in it
                 (every such release is yanked); kcheck says so and exits 2.

It prints how long the build (or finding it in the cache) and the start
took, and "bootstrap: ADDR". Exit status: 0 after a clean stop; 2 on bad
usage, or when the broker could not be built or started (the message names
the broker, with its build output's or log's end).`

// brokerCommand returns the "kcheck broker" command.
func brokerCommand() *cli.Command {
	return &cli.Command{
		Name:        "broker",
		Usage:       "run a Kafka-compatible broker other than Apache Kafka (kfake, tansu) until interrupted",
		UsageText:   "kcheck broker --kind kfake|tansu|crabka [--version V] [--port P] [--dir DIR]",
		Description: brokerDescription,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kind", Usage: "the broker: `KIND` kfake, tansu or crabka (required)"},
			&cli.StringFlag{Name: "version", Usage: "kfake: the Kafka `VERSION` it emulates (default " + brokers.DefaultKfake + "); tansu: " + brokers.TansuVersion + " only"},
			&cli.IntFlag{Name: "nodes", Value: 1, Usage: "kfake: `N` brokers"},
			&cli.StringSliceFlag{Name: "port", Usage: "client `PORT` of each broker (default: free ports)"},
			&cli.StringFlag{Name: "dir", Usage: "tansu: `DIR` for its log (default: a temporary directory, removed on exit)", TakesFile: true},
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "give up starting after `DURATION` (building not counted)"},
			kafkaCacheFlag(),
		},
		Subcommands: []*cli.Command{probeCommand(), tableCommand()},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("broker: unexpected argument %q (see kcheck broker --help)", c.Args().First())
			}
			kind := c.String("kind")
			if kind == "" {
				return usageErrorf("broker: --kind is required: kfake, tansu or crabka (Apache Kafka: kcheck kafka)")
			}
			spec, err := brokers.Parse(strings.TrimSuffix(kind+"-"+c.String("version"), "-"))
			if err != nil {
				return usageErrorf("broker: %v", err)
			}
			ports, err := portsFlag(c, "port")
			if err != nil {
				return err
			}
			dir := c.String("dir")
			if dir == "" && spec.Kind == brokers.Tansu {
				tmp, err := os.MkdirTemp("", "kcheck-tansu-")
				if err != nil {
					return &exitError{code: exitUsage, err: fmt.Errorf("broker: %w", err)}
				}
				defer os.RemoveAll(tmp)
				dir = tmp
			}
			r, err := startBroker(c.Context, spec, c.Int("nodes"), ports, dir, c.String("cache"), c.Duration("timeout"), c.App.ErrWriter)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "bootstrap: %s\n", strings.Join(r.Addrs, ","))
			fmt.Fprintf(c.App.Writer, "try: kcheck proxy --bootstrap %s --broker-kind %s --broker-version %s --trace T.jsonl -- CLIENT {bootstrap} ...\n", r.Addrs[0], spec.Kind, spec.Version)
			fmt.Fprintln(c.App.Writer, "running until interrupted (Ctrl-C)")
			select {
			case <-c.Context.Done():
			case <-r.Exited:
				return &exitError{code: exitUsage, err: fmt.Errorf("broker: %s exited; the end of %s:\n%s", spec, r.Log, r.Tail())}
			}
			fmt.Fprintf(c.App.ErrWriter, "kcheck broker: stopping %s\n", spec)
			return r.Stop()
		},
	}
}

// startBroker builds (tansu, once) and starts the broker spec names,
// saying on log what it did and how long each step took.
func startBroker(ctx context.Context, spec brokers.Spec, nodes int, ports []int, dir, cache string, timeout time.Duration, log io.Writer) (*brokers.Running, error) {
	fail := func(err error) (*brokers.Running, error) { return nil, &exitError{code: exitUsage, err: err} }
	switch spec.Kind {
	case brokers.Kafka:
		return fail(fmt.Errorf("broker: %s is Apache Kafka: run it with kcheck kafka --version %s", spec, spec.Version))
	case brokers.Crabka:
		return fail(errors.New("broker: " + brokers.CrabkaRefused))
	case brokers.Kfake:
		em, ok := workload.Emulations[spec.Version]
		if !ok {
			return fail(fmt.Errorf("broker: kfake emulates no Kafka %q (want major.minor: 2.4, 3.9, 4.0 to 4.5)", spec.Version))
		}
		if nodes < 1 {
			return fail(fmt.Errorf("broker: --nodes %d: want 1 or more", nodes))
		}
		start := time.Now()
		r, err := brokers.StartKfake(spec.Version, em.Versions, nodes, ports)
		if err != nil {
			return fail(fmt.Errorf("broker: %w", err))
		}
		fmt.Fprintf(log, "kcheck broker: kfake (Kafka %s) started in %v\n", spec.Version, time.Since(start).Round(time.Millisecond))
		return r, nil
	case brokers.Tansu:
		if nodes != 1 || len(ports) > 1 {
			return fail(errors.New("broker: tansu runs one broker here (--nodes 1, one --port)"))
		}
		if cache == "" {
			var err error
			if cache, err = kafka.DefaultCache(); err != nil {
				return fail(err)
			}
		}
		start := time.Now()
		fmt.Fprintf(log, "kcheck broker: tansu %s: looking in the cache, building it with cargo if absent (about 15 min on 2 cores)\n", spec.Version)
		bin, built, err := brokers.BuildTansu(ctx, cache, io.Discard)
		if err != nil {
			return fail(fmt.Errorf("broker: %w", err))
		}
		how := "found in the cache"
		if built {
			how = "built with cargo"
		}
		fmt.Fprintf(log, "kcheck broker: tansu %s %s in %v: %s\n", spec.Version, how, time.Since(start).Round(time.Millisecond), bin)
		port := 0
		if len(ports) == 1 {
			port = ports[0]
		}
		start = time.Now()
		r, err := brokers.StartTansu(ctx, bin, dir, port, timeout)
		if err != nil {
			return fail(fmt.Errorf("broker: %w", err))
		}
		fmt.Fprintf(log, "kcheck broker: tansu %s started in %v, log %s\n", spec.Version, time.Since(start).Round(time.Millisecond), r.Log)
		return r, nil
	}
	return fail(fmt.Errorf("broker: unknown kind %q", spec.Kind))
}
