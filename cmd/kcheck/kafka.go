package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/kafka"
	"github.com/kcheck/kcheck/nemesis"
)

const kafkaDescription = `Runs a real Apache Kafka cluster on 127.0.0.1 with no manual step, for
"kcheck run --bootstrap": fetches Kafka --version from Maven Central with mvn
(once: the jars are kept in the cache, $KCHECK_CACHE or ~/.cache/kcheck),
starts --nodes nodes in KRaft mode, each both broker and controller, prints
the bootstrap address(es) and the time to start, and runs until interrupted
(Ctrl-C or SIGTERM); then it stops every node and removes their data.

Versions: 4.0.0 or later; 3.3.0 to 3.9.x (KRaft); 2.8.x, which runs on
ZooKeeper: kcheck starts one ZooKeeper server (the jar Kafka depends on) in
--dir's zookeeper/, on --zookeeper-port, before the brokers. Before 3.4,
--producer-id-expiration sets transactional.id.expiration.ms, which expired
producer ids then, and --producer-id-expiration-check cannot be set.

Each node has its directory in --dir, node-<id>/, with its server.properties,
its log node.log, the JVM's pauses in gc.log (wall-clock times) and its data
data/ (removed on exit). Without --dir, a
temporary directory is used and removed on exit. Ports are free ones chosen
at start unless given with --port and --controller-port.

With --control HOST:PORT (on loopback; port 0: a free one) it also serves
the nodes to kcheck proxy --cluster, which pauses, kills, stops and starts
them for the faults on a cluster (kcheck proxy --help), and prints
"control: ADDR".

"kcheck kafka fetch --version V" only fetches.

Needs java (17 or later) and, to fetch, mvn. Exit status: 0 after a clean
stop; 2 on bad usage, or when Kafka could not be fetched or started.`

// kafkaCommand returns the "kcheck kafka" command.
func kafkaCommand() *cli.Command {
	return &cli.Command{
		Name:        "kafka",
		Usage:       "fetch Apache Kafka from Maven Central and run a local cluster (KRaft, or ZooKeeper for 2.8) until interrupted",
		UsageText:   "kcheck kafka [--version V] [--nodes 1|3] [--dir DIR] [flags]\nkcheck kafka fetch [--version V]",
		Description: kafkaDescription,
		Flags: []cli.Flag{
			kafkaVersionFlag(),
			kafkaCacheFlag(),
			&cli.IntFlag{Name: "nodes", Value: 1, Usage: "`N` nodes, each a broker and a KRaft controller (1 or 3)"},
			&cli.StringFlag{Name: "dir", Usage: "`DIR` for the nodes' configuration, logs and data (default: a temporary directory)", TakesFile: true},
			&cli.StringSliceFlag{Name: "port", Usage: "client `PORT` of node 1, 2, ... (repeat, or separate with commas; default: free ports)"},
			&cli.StringSliceFlag{Name: "controller-port", Usage: "controller `PORT` of node 1, 2, ... (as --port; KRaft only)"},
			&cli.IntFlag{Name: "zookeeper-port", Usage: "client `PORT` of the ZooKeeper server of a version on ZooKeeper (2.8; default: a free port)"},
			&cli.StringFlag{Name: "heap", Value: kafka.DefaultHeap, Usage: "`SIZE` of each node's heap (-Xms, -Xmx)"},
			&cli.DurationFlag{Name: "producer-id-expiration", Usage: "producer.id.expiration.ms, as a `DURATION`; 0 keeps Kafka's (one day)"},
			&cli.DurationFlag{Name: "producer-id-expiration-check", Usage: "producer.id.expiration.check.interval.ms, as a `DURATION`; 0 keeps Kafka's (ten minutes)"},
			&cli.StringSliceFlag{Name: "set", Usage: "another server.properties setting `KEY=VALUE` for every node (repeatable)"},
			&cli.DurationFlag{Name: "timeout", Value: kafka.DefaultStartTimeout, Usage: "give up starting after `DURATION` (fetching not counted)"},
			&cli.StringFlag{Name: "java", Value: "java", Usage: "`PATH` or name of the java executable"},
			&cli.StringFlag{Name: "control", Usage: "serve the nodes to kcheck proxy --cluster on `HOST:PORT` (loopback; port 0: a free one)"},
			&cli.BoolFlag{Name: "request-log", Usage: "log every request a node completes, with its queue, handling and answer times, in node.log (kafka.request.logger at DEBUG)"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("kafka: unexpected argument %q (see kcheck kafka --help)", c.Args().First())
			}
			cfg, err := kafkaConfig(c)
			if err != nil {
				return err
			}
			control := c.String("control")
			if control != "" {
				if err := loopback(control); err != nil {
					return usageErrorf("kafka: --control %q: %v", control, err)
				}
			}
			return runKafka(c.Context, cfg, control, c.App.Writer, c.App.ErrWriter)
		},
		Subcommands: []*cli.Command{{
			Name:      "fetch",
			Usage:     "fetch Kafka --version from Maven Central into the cache, and start nothing",
			UsageText: "kcheck kafka fetch [--version V] [--cache DIR]",
			Description: "Fetches org.apache.kafka:kafka_2.13:<version> and its runtime dependencies with mvn\n" +
				"into <cache>/kafka-<version>/libs, unless a complete copy is there already, and\n" +
				"prints the directory. Exit status: 0 when fetched, 2 when it could not be.",
			Flags: []cli.Flag{kafkaVersionFlag(), kafkaCacheFlag()},
			Action: func(c *cli.Context) error {
				if c.Args().Present() {
					return usageErrorf("kafka fetch: unexpected argument %q (see kcheck kafka fetch --help)", c.Args().First())
				}
				_, err := fetchKafka(c.Context, c.String("version"), c.String("cache"), c.App.Writer)
				return err
			},
			OnUsageError: onUsageError,
		}},
	}
}

func kafkaVersionFlag() cli.Flag {
	return &cli.StringFlag{Name: "version", Value: "4.1.0", Usage: "the Kafka `VERSION` (2.8.x, 3.3.0 to 3.9.x, 4.0.0 or later)"}
}

func kafkaCacheFlag() cli.Flag {
	return &cli.StringFlag{Name: "cache", EnvVars: []string{"KCHECK_CACHE"}, Usage: "download cache `DIR` (default ~/.cache/kcheck)", TakesFile: true}
}

// kafkaConfig turns flags into a cluster configuration.
func kafkaConfig(c *cli.Context) (kafka.Config, error) {
	ports, err := portsFlag(c, "port")
	if err != nil {
		return kafka.Config{}, err
	}
	controllerPorts, err := portsFlag(c, "controller-port")
	if err != nil {
		return kafka.Config{}, err
	}
	props := map[string]string{}
	for _, kv := range c.StringSlice("set") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return kafka.Config{}, usageErrorf("--set %q: want KEY=VALUE", kv)
		}
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if p := c.Int("zookeeper-port"); p < 0 || p > 65535 {
		return kafka.Config{}, usageErrorf("--zookeeper-port %d: not a port", p)
	}
	if n := c.Int("nodes"); n < 1 {
		return kafka.Config{}, usageErrorf("--nodes %d: want 1 or more (1 or 3 are usual)", n)
	}
	for _, n := range []string{"producer-id-expiration", "producer-id-expiration-check", "timeout"} {
		if c.Duration(n) < 0 {
			return kafka.Config{}, usageErrorf("--%s %v: must not be negative", n, c.Duration(n))
		}
	}
	return kafka.Config{
		Version: c.String("version"), Cache: c.String("cache"), Nodes: c.Int("nodes"), Dir: c.String("dir"),
		Ports: ports, ControllerPorts: controllerPorts, ZooKeeperPort: c.Int("zookeeper-port"), Java: c.String("java"), Heap: c.String("heap"),
		ProducerIDExpiration: c.Duration("producer-id-expiration"), ProducerIDExpirationCheck: c.Duration("producer-id-expiration-check"),
		Properties: props, StartTimeout: c.Duration("timeout"), RequestLog: c.Bool("request-log"),
	}, nil
}

// portsFlag reads a list of ports.
func portsFlag(c *cli.Context, name string) ([]int, error) {
	var ports []int
	for _, s := range listFlag(c, name) {
		p, err := strconv.Atoi(s)
		if err != nil || p < 0 || p > 65535 {
			return nil, usageErrorf("--%s %q: not a port", name, s)
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// fetchKafka fetches version into cache, saying what it did and how long it took.
func fetchKafka(ctx context.Context, version, cache string, w io.Writer) (classpath string, err error) {
	start := time.Now()
	cached := kafka.Fetched(version, cache)
	if classpath, err = kafka.Fetch(ctx, version, cache); err != nil {
		return "", &exitError{code: exitUsage, err: err}
	}
	how := "fetched with mvn"
	if cached {
		how = "found in the cache"
	}
	fmt.Fprintf(w, "kcheck kafka: Kafka %s %s in %v: %s\n", version, how, time.Since(start).Round(time.Millisecond), strings.TrimSuffix(classpath, "/*"))
	return classpath, nil
}

// loopback checks that addr is host:port on a loopback address.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address (127.0.0.1, ::1 or localhost)", host)
	}
	return nil
}

// runKafka fetches and starts a cluster, serves it on control when set,
// runs it until ctx is done, and stops it.
func runKafka(ctx context.Context, cfg kafka.Config, control string, stdout, stderr io.Writer) error {
	if err := cfg.Validate(); err != nil { // before a fetch
		return &exitError{code: exitUsage, err: err}
	}
	classpath, err := fetchKafka(ctx, cfg.Version, cfg.Cache, stderr)
	if err != nil {
		return err
	}
	cfg.Classpath = classpath
	cl, err := kafka.Start(ctx, cfg)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &exitError{code: exitUsage, err: errors.New("kafka: interrupted during start; nothing left running")}
		}
		return &exitError{code: exitUsage, err: err}
	}
	nodes := "1 node"
	if n := len(cl.Nodes()); n != 1 {
		nodes = fmt.Sprintf("%d nodes", n)
	}
	fmt.Fprintf(stdout, "kcheck kafka: Kafka %s, %s, started in %v\n", cl.Version(), nodes, cl.StartDuration().Round(time.Millisecond))
	fmt.Fprintf(stdout, "bootstrap: %s\n", cl.Bootstrap())
	if zk, ok := cl.ZooKeeper(); ok {
		fmt.Fprintf(stdout, "  zookeeper: %s, pid %d, log %s\n", zk.Addr, zk.PID, zk.Log())
	}
	for _, n := range cl.Nodes() {
		if n.ControllerAddr == "" {
			fmt.Fprintf(stdout, "  node %d: %s, pid %d, log %s\n", n.ID, n.Addr, n.PID, n.Log())
			continue
		}
		fmt.Fprintf(stdout, "  node %d: %s (controller %s), pid %d, log %s\n", n.ID, n.Addr, n.ControllerAddr, n.PID, n.Log())
	}
	if control != "" {
		l, err := net.Listen("tcp", control)
		if err != nil {
			cl.Stop()
			return &exitError{code: exitUsage, err: fmt.Errorf("kafka: --control: %w", err)}
		}
		srv := nemesis.Serve(l, cl)
		defer srv.Close()
		fmt.Fprintf(stdout, "control: %s\n", l.Addr())
	}
	fmt.Fprintf(stdout, "try: kcheck run --bootstrap %s --topic kcheck-%d\n", cl.Bootstrap(), time.Now().Unix())
	fmt.Fprintln(stdout, "running until interrupted (Ctrl-C)")
	<-ctx.Done()
	fmt.Fprintln(stderr, "kcheck kafka: stopping")
	// The nodes stop whatever a fault did to them (a paused one is
	// continued first: kafka.Cluster.Stop); an action in progress on one
	// ends with it.
	stopped := time.Now()
	if err := cl.Stop(); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	fmt.Fprintf(stderr, "kcheck kafka: stopped in %v, data removed\n", time.Since(stopped).Round(time.Millisecond))
	return nil
}
