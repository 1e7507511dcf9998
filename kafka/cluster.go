package kafka

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/wire"
)

// host is the only address a cluster binds to.
const host = "127.0.0.1"

// Defaults of Config.
const (
	DefaultHeap         = "512m"
	DefaultStartTimeout = 60 * time.Second
	DefaultStopTimeout  = 15 * time.Second
)

// Config is a local Kafka cluster.
type Config struct {
	// Version is the Kafka release to run, such as "4.1.0".
	Version string
	// Classpath is the Java classpath that runs Version, as Fetch returns
	// it. Empty: Start calls Fetch(ctx, Version, Cache).
	Classpath string
	// Cache is Fetch's download cache; empty: DefaultCache.
	Cache string
	// Nodes is the number of nodes, each both a broker and a KRaft
	// controller, all of them voters; on a release that runs on ZooKeeper
	// (2.8), each a broker, with one ZooKeeper server for all. 0 means 1.
	Nodes int
	// Dir holds a directory per node, Dir/node-<id>, with its
	// server.properties, its output (node.log, format.log) and its data
	// (data/, removed by Stop). A node's data must not exist yet. Empty: a
	// new temporary directory, removed whole by Stop.
	Dir string
	// Ports are the client (PLAINTEXT) ports of nodes 1, 2, ...; empty, or
	// 0 for a node: a free port. A port that is taken is an error naming it.
	Ports []int
	// ControllerPorts are the CONTROLLER ports, as Ports. A release on
	// ZooKeeper has none.
	ControllerPorts []int
	// ZooKeeperPort is the client port of the ZooKeeper server of a release
	// on ZooKeeper; 0: a free port. A KRaft release has no ZooKeeper.
	ZooKeeperPort int
	// Java is the java executable, looked up in PATH; empty: "java".
	Java string
	// Heap is each node's heap (-Xms and -Xmx); empty: DefaultHeap.
	Heap string
	// ProducerIDExpiration is producer.id.expiration.ms, how long a broker
	// keeps the state of an idle producer; 0: Kafka's default (one day).
	// Before 3.4 (KIP-854) it is transactional.id.expiration.ms, which
	// expired producer ids then, and transactional ids too.
	ProducerIDExpiration time.Duration
	// ProducerIDExpirationCheck is producer.id.expiration.check.interval.ms,
	// how often brokers expire producer state; 0: Kafka's default (ten
	// minutes). Set it too when ProducerIDExpiration is short. Before 3.4
	// it cannot be set: Start refuses it.
	ProducerIDExpirationCheck time.Duration
	// Properties are more server.properties for every node; they override
	// kcheck's (see Start).
	Properties map[string]string
	// StartTimeout bounds formatting and starting, not fetching; 0:
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// StopTimeout is how long Stop waits for a node after SIGTERM before
	// it kills it; 0: DefaultStopTimeout.
	StopTimeout time.Duration
	// RequestLog has each node log every request it completes, with the
	// time it spent queued, handled and answering (kafka.request.logger at
	// DEBUG, in node.log): the broker's side of a client's stall. Costly
	// at high request rates; off by default.
	RequestLog bool
}

// Node is a node of a Cluster.
type Node struct {
	ID             int    // node.id, from 1
	Addr           string // host:port of the PLAINTEXT listener, for clients
	ControllerAddr string // host:port of the CONTROLLER listener; "" on ZooKeeper
	PID            int    // the java process; 0 if it was not started
	Dir            string // server.properties, node.log, format.log and data/
}

// Log returns the path of the node's output: what Kafka logs, and anything
// the JVM prints; for the ZooKeeper server (ID 0), zookeeper.log.
func (n Node) Log() string {
	if n.ID == 0 {
		return filepath.Join(n.Dir, "zookeeper.log")
	}
	return filepath.Join(n.Dir, "node.log")
}

// node is a node and its process.
type node struct {
	Node
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited and been reaped
	err    error         // how the process exited, once exited is closed
}

// Cluster is a running Kafka cluster, started by Start. Stop it with Stop.
type Cluster struct {
	version string
	rel     release
	zk      *node // the ZooKeeper server of a release on ZooKeeper; nil on KRaft
	dir     string
	tempDir bool // dir was made by Start: Stop removes it
	nodes   []*node
	took    time.Duration
	grace   time.Duration

	java     string        // the java executable, for restarts
	opts     []string      // its arguments but the node's properties file
	anyExit  chan struct{} // closed when some process exits
	exitOnce sync.Once
	stopOnce sync.Once
	stopErr  error
}

// Start starts a Kafka cluster on 127.0.0.1 and returns once every node
// answers a Metadata request listing every node, and an InitProducerId
// request (a new broker refuses it until the controller has given it
// producer ids), polling with a short backoff. Its nodes run until Stop;
// ctx bounds only the start. If Start fails, nothing it started is left
// running and no data is left behind; the error shows the end of the failing
// node's log.
//
// Each node runs "java <opts> -cp <Classpath> kafka.Kafka server.properties"
// in its own process group, with the roles broker and controller, listeners
// PLAINTEXT and CONTROLLER, every node a voter of the quorum
// (controller.quorum.voters), sized for a small machine: a heap of Heap,
// two network and four I/O threads; replication factors of new and internal
// topics min(3, Nodes); transaction.state.log.min.isr min(2, Nodes);
// num.partitions 1, group.initial.rebalance.delay.ms 0,
// auto.create.topics.enable false, and log.index.interval.bytes at its
// largest (no index entries: see serverProperties). Config.Properties
// override any of these.
//
// A release on ZooKeeper (2.8) has brokers only, with a PLAINTEXT listener
// and zookeeper.connect; Start first starts one ZooKeeper server (Kafka's
// ZooKeeper jar, "java QuorumPeerMain zookeeper.properties", in
// Dir/zookeeper) and waits until it answers ZooKeeper's srvr command.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	rel, err := cfg.check()
	if err != nil {
		return nil, err
	}
	java, err := exec.LookPath(cfg.Java)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w: %w (Kafka needs a Java runtime, 17 or later)", ErrNoJava, err)
	}
	if cfg.Classpath == "" {
		if cfg.Classpath, err = Fetch(ctx, cfg.Version, cfg.Cache); err != nil {
			return nil, err
		}
	}
	begin := time.Now()
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.StartTimeout, errStartTimeout)
	defer cancel()

	c := &Cluster{version: cfg.Version, rel: rel, grace: cfg.StopTimeout, anyExit: make(chan struct{})}
	if cfg.Dir == "" {
		if c.dir, err = os.MkdirTemp("", "kcheck-kafka-"); err != nil {
			return nil, fmt.Errorf("kafka: %w", err)
		}
		c.tempDir = true
	} else {
		if c.dir, err = filepath.Abs(cfg.Dir); err != nil {
			return nil, fmt.Errorf("kafka: directory %q: %w", cfg.Dir, err)
		}
		dirs := []string{zooKeeperDirName}
		for id := 1; id <= cfg.Nodes; id++ {
			dirs = append(dirs, nodeDirName(id))
		}
		for _, d := range dirs {
			data := filepath.Join(c.dir, d, "data")
			if _, err := os.Stat(data); err == nil {
				return nil, fmt.Errorf("kafka: %s exists: the data of an earlier cluster; remove it, or choose another directory", data)
			}
		}
	}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()

	client, controller, err := choosePorts(cfg, rel)
	if err != nil {
		return nil, err
	}
	if rel.zooKeeper {
		c.zk = &node{Node: Node{
			Addr: net.JoinHostPort(host, strconv.Itoa(controller[0])),
			Dir:  filepath.Join(c.dir, zooKeeperDirName),
		}, exited: make(chan struct{})}
		if err := os.MkdirAll(c.zk.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("kafka: %w", err)
		}
	}
	for i := range cfg.Nodes {
		id := i + 1
		n := &node{Node: Node{
			ID:   id,
			Addr: net.JoinHostPort(host, strconv.Itoa(client[i])),
			Dir:  filepath.Join(c.dir, nodeDirName(id)),
		}, exited: make(chan struct{})}
		if !rel.zooKeeper {
			n.ControllerAddr = net.JoinHostPort(host, strconv.Itoa(controller[i]))
		}
		if err := os.MkdirAll(n.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("kafka: %w", err)
		}
		c.nodes = append(c.nodes, n)
	}
	logName, logText, logOpt := "log4j2.properties", log4jConfig(cfg.RequestLog), "-Dlog4j2.configurationFile="
	if rel.log4j1 {
		logName, logText, logOpt = "log4j.properties", log4j1Config(cfg.RequestLog), "-Dlog4j.configuration=file:"
	}
	logConfig := filepath.Join(c.dir, logName)
	if err := os.WriteFile(logConfig, []byte(logText), 0o644); err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	logOpt += logConfig
	for _, n := range c.nodes {
		if err := os.WriteFile(n.properties(), []byte(serverProperties(cfg, rel, c.nodes, n, c.zk)), 0o644); err != nil {
			return nil, fmt.Errorf("kafka: %w", err)
		}
	}

	if rel.zooKeeper {
		if err := c.startZooKeeper(ctx, java, cfg.Classpath, logOpt); err != nil {
			return nil, err
		}
	} else {
		id, err := clusterID()
		if err != nil {
			return nil, err
		}
		if err := c.format(ctx, java, cfg.Classpath, logOpt, id); err != nil {
			return nil, err
		}
	}
	opts := append(jvmOptions(cfg.Heap, logOpt), "-cp", cfg.Classpath, "kafka.Kafka")
	c.java, c.opts = java, opts
	for _, n := range c.nodes {
		if err := c.startNode(java, opts, n); err != nil {
			return nil, err
		}
	}
	if err := c.waitReady(ctx, cfg.StartTimeout); err != nil {
		return nil, err
	}
	c.took = time.Since(begin)
	ok = true
	return c, nil
}

var errStartTimeout = errors.New("start timed out")

// Validate reports what Start would refuse in cfg before it runs anything:
// a release kcheck does not run, settings it does not have, bad ports.
func (cfg Config) Validate() error {
	_, err := cfg.check()
	return err
}

func (cfg *Config) check() (release, error) {
	rel, err := parseRelease(cfg.Version)
	if err != nil {
		return release{}, err
	}
	if err := cfg.checkRelease(rel); err != nil {
		return release{}, err
	}
	return rel, cfg.checkRest()
}

// checkRelease checks what depends on the release: its settings.
func (cfg *Config) checkRelease(rel release) error {
	if rel.zooKeeper && len(cfg.ControllerPorts) > 0 {
		return fmt.Errorf("kafka: Kafka %s runs on ZooKeeper: its brokers have no controller port (ZooKeeper has a port of its own: --zookeeper-port)", rel.version)
	}
	if !rel.zooKeeper && cfg.ZooKeeperPort != 0 {
		return fmt.Errorf("kafka: Kafka %s runs in KRaft mode, without ZooKeeper: no ZooKeeper port (ZooKeeper runs for 2.8 only)", rel.version)
	}
	if !rel.producerIDExpiry && cfg.ProducerIDExpirationCheck > 0 {
		return fmt.Errorf("kafka: Kafka %s has no producer.id.expiration.check.interval.ms (KIP-854, 3.4.0): it expires producer ids every ten minutes", rel.version)
	}
	return nil
}

// checkRest checks what does not depend on the release, and sets defaults.
func (cfg *Config) checkRest() error {
	if cfg.Nodes == 0 {
		cfg.Nodes = 1
	}
	if cfg.Nodes < 1 || cfg.Nodes > 9 {
		return fmt.Errorf("kafka: %d nodes: want 1 to 9 (1 or 3 are usual)", cfg.Nodes)
	}
	if cfg.Java == "" {
		cfg.Java = "java"
	}
	if cfg.Heap == "" {
		cfg.Heap = DefaultHeap
	}
	if !regexpHeap.MatchString(cfg.Heap) {
		return fmt.Errorf("kafka: heap %q: want a size such as 512m or 1g", cfg.Heap)
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.ProducerIDExpiration < 0 || cfg.ProducerIDExpirationCheck < 0 {
		return errors.New("kafka: producer id expiration: must not be negative")
	}
	if cfg.ZooKeeperPort < 0 || cfg.ZooKeeperPort > 65535 {
		return fmt.Errorf("kafka: the ZooKeeper port: %d is not a port", cfg.ZooKeeperPort)
	}
	seen := map[int]string{}
	if cfg.ZooKeeperPort != 0 {
		seen[cfg.ZooKeeperPort] = "the ZooKeeper port"
	}
	for _, ports := range []struct {
		what  string
		ports []int
	}{{"client", cfg.Ports}, {"controller", cfg.ControllerPorts}} {
		if len(ports.ports) > cfg.Nodes {
			return fmt.Errorf("kafka: %d %s ports for %d nodes", len(ports.ports), ports.what, cfg.Nodes)
		}
		for i, p := range ports.ports {
			what := fmt.Sprintf("the %s port of node %d", ports.what, i+1)
			if p < 0 || p > 65535 {
				return fmt.Errorf("kafka: %s: %d is not a port", what, p)
			}
			if p == 0 {
				continue
			}
			if other, dup := seen[p]; dup {
				return fmt.Errorf("kafka: port %d is both %s and %s", p, other, what)
			}
			seen[p] = what
		}
	}
	for k, v := range cfg.Properties {
		if k == "" || strings.ContainsAny(k, "=: \t\r\n\\#!") || strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("kafka: property %q=%q: want a plain key and a one-line value", k, v)
		}
	}
	return nil
}

var regexpHeap = regexp.MustCompile(`^[0-9]+[kKmMgG]$`)

func nodeDirName(id int) string { return fmt.Sprintf("node-%d", id) }

// zooKeeperDirName is the directory of the ZooKeeper server, in the
// cluster's.
const zooKeeperDirName = "zookeeper"

func (n *node) properties() string { return filepath.Join(n.Dir, "server.properties") }
func (n *node) data() string       { return filepath.Join(n.Dir, "data") }

// choosePorts returns the client and controller port of each node: the
// configured one if it is free, else a free one. Every port is held open
// until all are chosen, so that no two are the same. On ZooKeeper,
// controller holds one port, ZooKeeper's.
func choosePorts(cfg Config, rel release) (client, controller []int, err error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	choose := func(ports []int, what string, n int) ([]int, error) {
		out := make([]int, n)
		for i := range out {
			want := 0
			if i < len(ports) {
				want = ports[i]
			}
			l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(want)))
			if err != nil {
				if want != 0 && what == "ZooKeeper" {
					return nil, fmt.Errorf("kafka: the ZooKeeper port, %s:%d, is taken: %w", host, want, err)
				}
				if want != 0 {
					return nil, fmt.Errorf("kafka: the %s port of node %d, %s:%d, is taken: %w", what, i+1, host, want, err)
				}
				return nil, fmt.Errorf("kafka: no free port on %s: %w", host, err)
			}
			held = append(held, l)
			out[i] = l.Addr().(*net.TCPAddr).Port
		}
		return out, nil
	}
	if client, err = choose(cfg.Ports, "client", cfg.Nodes); err != nil {
		return nil, nil, err
	}
	if rel.zooKeeper {
		controller, err = choose([]int{cfg.ZooKeeperPort}, "ZooKeeper", 1)
	} else {
		controller, err = choose(cfg.ControllerPorts, "controller", cfg.Nodes)
	}
	if err != nil {
		return nil, nil, err
	}
	return client, controller, nil
}

// clusterID returns a random cluster id, as kafka-storage random-uuid does:
// 16 bytes in URL-safe base64, not starting with a dash.
func clusterID() (string, error) {
	for {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("kafka: cluster id: %w", err)
		}
		if id := base64.RawURLEncoding.EncodeToString(b[:]); id[0] != '-' {
			return id, nil
		}
	}
}

// jvmOptions are a node's JVM options, as kafka-server-start.sh has them but
// for the heap. Every pause the JVM takes is logged, with the wall-clock
// time, to gc.log in the node's directory (its working directory), so that
// a client's stall can be laid beside the broker's pauses. logOpt names the
// logging configuration.
func jvmOptions(heap, logOpt string) []string {
	return []string{
		"-Xms" + heap, "-Xmx" + heap,
		"-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
		"-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true",
		"-Xlog:gc,safepoint:file=gc.log:time,uptime:filecount=0",
		logOpt,
	}
}

// log4jProperties has Kafka log to its standard output, which Start sends
// to node.log.
const log4jProperties = `# Written by kcheck: a node logs to its standard output, node-<id>/node.log.
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.request.name = kafka.request.logger
logger.request.level = WARN
`

// log4jConfig is log4jProperties, with the request logger at DEBUG when
// requests is set: a line per completed request with its timings.
func log4jConfig(requests bool) string {
	if !requests {
		return log4jProperties
	}
	return strings.Replace(log4jProperties, "logger.request.level = WARN", "logger.request.level = DEBUG", 1)
}

// log4j1Properties is log4jProperties for log4j 1 (reload4j), which
// Kafka before 4.0 logs to.
const log4j1Properties = `# Written by kcheck: a node logs to its standard output, node-<id>/node.log.
log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
`

// log4j1Config is log4j1Properties as log4jConfig is log4jProperties.
func log4j1Config(requests bool) string {
	if !requests {
		return log4j1Properties
	}
	return strings.Replace(log4j1Properties, "kafka.request.logger=WARN", "kafka.request.logger=DEBUG", 1)
}

// serverProperties returns the server.properties of n, for a release rel;
// zk is the ZooKeeper server of a release on ZooKeeper.
func serverProperties(cfg Config, rel release, nodes []*node, n *node, zk *node) string {
	rf := min(3, len(nodes))
	var voters, props []string
	for _, m := range nodes {
		voters = append(voters, fmt.Sprintf("%d@%s", m.ID, m.ControllerAddr))
	}
	set := func(k string, v any) { props = append(props, fmt.Sprintf("%s=%v", k, v)) }
	if rel.zooKeeper {
		set("broker.id", n.ID)
		set("zookeeper.connect", zk.Addr)
		// A killed broker stays registered this long, and StartNode waits
		// that long to start it again: 6 s, not Kafka's 18 s.
		set("zookeeper.session.timeout.ms", 6000)
		set("listeners", "PLAINTEXT://"+n.Addr)
		set("advertised.listeners", "PLAINTEXT://"+n.Addr)
		set("inter.broker.listener.name", "PLAINTEXT")
	} else {
		set("process.roles", "broker,controller")
		set("node.id", n.ID)
		set("controller.quorum.voters", strings.Join(voters, ","))
		set("listeners", "PLAINTEXT://"+n.Addr+",CONTROLLER://"+n.ControllerAddr)
		set("advertised.listeners", "PLAINTEXT://"+n.Addr)
		set("controller.listener.names", "CONTROLLER")
		set("inter.broker.listener.name", "PLAINTEXT")
		set("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT")
	}
	set("log.dirs", n.data())
	set("num.network.threads", 2)
	set("num.io.threads", 4)
	set("num.recovery.threads.per.data.dir", 1)
	set("num.partitions", 1)
	set("default.replication.factor", rf)
	set("offsets.topic.replication.factor", rf)
	set("offsets.topic.num.partitions", 8)
	set("transaction.state.log.replication.factor", rf)
	set("transaction.state.log.min.isr", min(2, rf))
	set("transaction.state.log.num.partitions", 8)
	set("group.initial.rebalance.delay.ms", 0)
	set("auto.create.topics.enable", false)
	// No offset- or time-index entry until a segment holds 2 GiB: a
	// partition's first entry is the first write to a page of its new,
	// sparse, memory-mapped index file, which on this kind of machine's disk,
	// with the cores busy, held a produce 57-85 ms per partition, seconds
	// for a request of many new partitions, and failed every client's
	// records by delivery timeout (producer/README.md, "A slow broker").
	// Index entries only speed up finding an offset in a segment; reads from
	// the start, as every read-back here, do not use them.
	set("log.index.interval.bytes", math.MaxInt32)
	switch {
	case cfg.ProducerIDExpiration > 0 && rel.producerIDExpiry:
		set("producer.id.expiration.ms", cfg.ProducerIDExpiration.Milliseconds())
	case cfg.ProducerIDExpiration > 0:
		set("transactional.id.expiration.ms", cfg.ProducerIDExpiration.Milliseconds())
	}
	if cfg.ProducerIDExpirationCheck > 0 {
		set("producer.id.expiration.check.interval.ms", cfg.ProducerIDExpirationCheck.Milliseconds())
	}
	keys := make([]string, 0, len(cfg.Properties))
	for k := range cfg.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		kv := k + "=" + cfg.Properties[k]
		if i := slices.IndexFunc(props, func(p string) bool { return strings.HasPrefix(p, k+"=") }); i >= 0 {
			props[i] = kv
		} else {
			props = append(props, kv)
		}
	}
	return "# Written by kcheck (package kafka): node " + strconv.Itoa(n.ID) + " of " + strconv.Itoa(len(nodes)) + ".\n" +
		strings.Join(props, "\n") + "\n"
}

// format formats every node's storage, in parallel.
func (c *Cluster) format(ctx context.Context, java, classpath, logOpt, clusterID string) error {
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() {
			args := []string{"-Xmx256m", "-XX:TieredStopAtLevel=1", logOpt,
				"-cp", classpath, "kafka.tools.StorageTool", "format", "--config", n.properties(), "--cluster-id", clusterID}
			errs[i] = runLogged(ctx, filepath.Join(n.Dir, "format.log"), java, args...)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("kafka: formatting the storage of node %d: %w", n.ID, errs[i])
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runLogged runs a command with its output in the file log; its error shows
// the end of the file.
func runLogged(ctx context.Context, log, name string, args ...string) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
		return fmt.Errorf("%w; the end of %s:\n%s", err, log, indent(Tail(log)))
	}
	return nil
}

// startNode starts n's java process, its output in n's log.
func (c *Cluster) startNode(java string, opts []string, n *node) error {
	return c.startProcess(n, fmt.Sprintf("node %d", n.ID), java, append(slices.Clip(opts), n.properties()))
}

// startProcess starts java with args for n, in n's directory, its output
// in n's log.
func (c *Cluster) startProcess(n *node, what, java string, args []string) error {
	// A restarted node's log goes on after its earlier life's.
	f, err := os.OpenFile(n.Log(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	defer f.Close() // the process has its own descriptor
	cmd := exec.Command(java, args...)
	cmd.Dir = n.Dir
	cmd.Stdout, cmd.Stderr = f, f
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("kafka: starting %s: %w", what, err)
	}
	n.cmd, n.PID = cmd, cmd.Process.Pid
	go func() {
		n.err = cmd.Wait()
		close(n.exited)
		c.exitOnce.Do(func() { close(c.anyExit) })
	}()
	return nil
}

// waitReady polls each node, with a short backoff, until it is ready (see
// probe).
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	for _, n := range c.nodes {
		for backoff := 20 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
			err := Probe(ctx, n.Addr, len(c.nodes))
			if err == nil {
				break
			}
			t := time.NewTimer(backoff)
			select {
			case <-c.anyExit:
				t.Stop()
				return c.exitError()
			case <-ctx.Done():
				t.Stop()
				if errors.Is(context.Cause(ctx), errStartTimeout) {
					return fmt.Errorf("kafka: node %d at %s did not answer within %v: %v; the end of %s:\n%s",
						n.ID, n.Addr, timeout, err, n.Log(), indent(Tail(n.Log())))
				}
				return fmt.Errorf("kafka: start interrupted: %w", context.Cause(ctx))
			case <-t.C:
			}
		}
	}
	return nil
}

// exitError describes the first node whose process has exited.
func (c *Cluster) exitError() error {
	if c.zk != nil {
		select {
		case <-c.zk.exited:
			return fmt.Errorf("kafka: ZooKeeper (for Kafka %s) exited during start (%v); the end of %s:\n%s",
				c.version, c.zk.err, c.zk.Log(), indent(Tail(c.zk.Log())))
		default:
		}
	}
	for _, n := range c.nodes {
		select {
		case <-n.exited:
			return fmt.Errorf("kafka: node %d exited during start (%v); the end of %s:\n%s",
				n.ID, n.err, n.Log(), indent(Tail(n.Log())))
		default:
		}
	}
	return errors.New("kafka: a node exited during start")
}

// Probe reports whether the broker at addr is ready: nil means it answered
// a Metadata request listing want brokers, and an InitProducerId request.
func Probe(ctx context.Context, addr string, want int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := wire.Dial(ctx, addr, "kcheck-kafka")
	if err != nil {
		return err
	}
	defer conn.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // none; nil would be all
	resp, err := conn.Request(ctx, req)
	if err != nil {
		return err
	}
	if got := len(resp.(*kmsg.MetadataResponse).Brokers); got != want {
		return fmt.Errorf("metadata lists %d of %d nodes", got, want)
	}
	// A new broker answers InitProducerId with COORDINATOR_LOAD_IN_PROGRESS
	// until the controller gave it a block of producer ids: wait for that
	// too, so that an idempotent producer can start at once. The id it
	// gives is never used.
	ireq := kmsg.NewPtrInitProducerIDRequest()
	ireq.ProducerID, ireq.ProducerEpoch = -1, -1
	ireq.TransactionTimeoutMillis = 60000
	iresp, err := conn.Request(ctx, ireq)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(iresp.(*kmsg.InitProducerIDResponse).ErrorCode); err != nil {
		return fmt.Errorf("InitProducerId: %w", err)
	}
	return nil
}

// Stop stops the nodes: SIGTERM, then SIGKILL for a node still running after
// Config.StopTimeout. It waits for every process, then removes the nodes'
// data, and the whole directory if Start made it. Only processes Start
// started are signalled. Stop may be called more than once.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	var started []*node
	for _, n := range c.nodes {
		if n.cmd == nil {
			continue
		}
		started = append(started, n)
		// os.Process signals exactly its process (a pidfd on Linux), even
		// once it has exited and its pid is reused.
		if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			n.cmd.Process.Kill() // a system without SIGTERM
		}
		// A paused node (Pause) takes its SIGTERM once continued.
		continueProcess(n.cmd.Process)
	}
	grace := time.NewTimer(c.grace)
	defer grace.Stop()
wait:
	for _, n := range started {
		select {
		case <-n.exited:
		case <-grace.C:
			break wait
		}
	}
	var killed []string
	for _, n := range started {
		select {
		case <-n.exited:
		default:
			n.cmd.Process.Kill()
			killed = append(killed, strconv.Itoa(n.ID))
			<-n.exited
		}
	}
	var errs []error
	if len(killed) > 0 {
		errs = append(errs, fmt.Errorf("kafka: node %s killed: still running %v after SIGTERM", strings.Join(killed, ", "), c.grace))
	}
	// ZooKeeper last: a broker on ZooKeeper shuts down through it.
	if err := c.stopZooKeeper(); err != nil {
		errs = append(errs, err)
	}
	if c.tempDir {
		if err := os.RemoveAll(c.dir); err != nil {
			errs = append(errs, fmt.Errorf("kafka: %w", err))
		}
	} else {
		nodes := c.nodes
		if c.zk != nil {
			nodes = append(slices.Clip(nodes), c.zk)
		}
		for _, n := range nodes {
			if err := os.RemoveAll(n.data()); err != nil {
				errs = append(errs, fmt.Errorf("kafka: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// Restart stops node id (SIGTERM, then SIGKILL after the stop timeout),
// starts it again on the same ports and data, and returns once it answers
// as at Start, or when ctx ends. It must not run concurrently with Stop or
// another Restart, Kill or StartNode.
func (c *Cluster) Restart(ctx context.Context, id int) error {
	if err := c.StopNode(id); err != nil {
		return err
	}
	return c.StartNode(ctx, id)
}

// StopNode stops node id cleanly (SIGTERM, then SIGKILL after the stop
// timeout), its data kept, and returns once it has exited. StartNode starts
// it again.
func (c *Cluster) StopNode(id int) error {
	n, err := c.node(id)
	if err != nil {
		return err
	}
	if n.cmd == nil {
		return nil
	}
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		n.cmd.Process.Kill()
	}
	continueProcess(n.cmd.Process) // a paused node takes its SIGTERM
	select {
	case <-n.exited:
	case <-time.After(c.grace):
		n.cmd.Process.Kill()
		<-n.exited
	}
	return nil
}

// Kill kills node id with SIGKILL, as a crash would: no shutdown, its data
// left as it was. StartNode starts it again.
func (c *Cluster) Kill(id int) error {
	n, err := c.node(id)
	if err != nil {
		return err
	}
	if n.cmd == nil {
		return fmt.Errorf("kafka: node %d is not running", id)
	}
	if err := n.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kafka: killing node %d: %w", id, err)
	}
	<-n.exited
	return nil
}

// Pause stops node id's process (SIGSTOP): a broker frozen, its sockets
// open and unanswered, until Resume. Stop continues a paused node first.
func (c *Cluster) Pause(id int) error {
	n, err := c.running(id)
	if err != nil {
		return err
	}
	if err := stopProcess(n.cmd.Process); err != nil {
		return fmt.Errorf("kafka: pausing node %d: %w", id, err)
	}
	return nil
}

// Resume continues node id's process after Pause (SIGCONT). A node that
// exited meanwhile (killed while paused) is an error saying so.
func (c *Cluster) Resume(id int) error {
	n, err := c.node(id)
	if err != nil {
		return err
	}
	if n.cmd == nil {
		return fmt.Errorf("kafka: node %d was never started", id)
	}
	select {
	case <-n.exited:
		return fmt.Errorf("kafka: node %d was paused and has exited meanwhile (%v): nothing to resume", id, n.err)
	default:
	}
	if err := continueProcess(n.cmd.Process); err != nil {
		return fmt.Errorf("kafka: resuming node %d: %w", id, err)
	}
	return nil
}

// Down lists the nodes whose process has exited (killed, stopped, or
// crashed) and that StartNode has not started again.
func (c *Cluster) Down() []int {
	var ids []int
	for _, n := range c.nodes {
		if n.cmd == nil {
			continue
		}
		select {
		case <-n.exited:
			ids = append(ids, n.ID)
		default:
		}
	}
	return ids
}

// running returns node id, which must be running.
func (c *Cluster) running(id int) (*node, error) {
	n, err := c.node(id)
	if err != nil {
		return nil, err
	}
	if n.cmd == nil {
		return nil, fmt.Errorf("kafka: node %d is not running", id)
	}
	select {
	case <-n.exited:
		return nil, fmt.Errorf("kafka: node %d is not running (it exited: %v)", id, n.err)
	default:
	}
	return n, nil
}

// StartNode starts node id, which has exited (Kill), on its ports and data,
// and returns once it answers as at Start, or when ctx ends. On ZooKeeper it
// first waits until the node's earlier registration is gone: up to
// zookeeper.session.timeout.ms (6 s) after a kill.
func (c *Cluster) StartNode(ctx context.Context, id int) error {
	n, err := c.node(id)
	if err != nil {
		return err
	}
	if n.cmd != nil {
		select {
		case <-n.exited:
		default:
			return fmt.Errorf("kafka: node %d is still running", id)
		}
	}
	if c.zk != nil {
		if err := c.waitUnregistered(ctx, id); err != nil {
			return err
		}
	}
	n.exited = make(chan struct{})
	if err := c.startNode(c.java, c.opts, n); err != nil {
		return err
	}
	for backoff := 20 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		err := Probe(ctx, n.Addr, len(c.nodes))
		if err == nil {
			return nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-n.exited:
			t.Stop()
			return fmt.Errorf("kafka: node %d exited after its restart (%v); the end of %s:\n%s", n.ID, n.err, n.Log(), indent(Tail(n.Log())))
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("kafka: node %d did not answer after its restart: %v", n.ID, err)
		case <-t.C:
		}
	}
}

// node returns node id.
func (c *Cluster) node(id int) (*node, error) {
	if id < 1 || id > len(c.nodes) {
		return nil, fmt.Errorf("kafka: no node %d (the cluster has %d)", id, len(c.nodes))
	}
	return c.nodes[id-1], nil
}

// Version returns the Kafka version the cluster runs.
func (c *Cluster) Version() string { return c.version }

// Dir returns the directory holding the nodes' directories.
func (c *Cluster) Dir() string { return c.dir }

// Addrs returns the client address, host:port, of each node.
func (c *Cluster) Addrs() []string {
	var addrs []string
	for _, n := range c.nodes {
		addrs = append(addrs, n.Addr)
	}
	return addrs
}

// Bootstrap returns the client addresses joined by commas, as
// bootstrap.servers and kcheck run --bootstrap take them.
func (c *Cluster) Bootstrap() string { return strings.Join(c.Addrs(), ",") }

// Nodes returns the cluster's nodes.
func (c *Cluster) Nodes() []Node {
	var nodes []Node
	for _, n := range c.nodes {
		nodes = append(nodes, n.Node)
	}
	return nodes
}

// StartDuration returns how long Start took, from formatting the storage
// until every node answered; fetching is not counted.
func (c *Cluster) StartDuration() time.Duration { return c.took }
