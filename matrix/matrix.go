package matrix

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bk "github.com/kcheck/kcheck/brokers"
	"github.com/kcheck/kcheck/kafka"
	"github.com/kcheck/kcheck/nemesis"
	"github.com/kcheck/kcheck/workload"
)

// Baseline is the scenario with no faults, run first: what each client
// does to its records on its own, against which a scenario's cells read.
const Baseline = "Baseline"

// Scenario is what a matrix needs of one scenario (spec/scenarios).
type Scenario struct {
	Name     string
	Schedule []string // the fault lines, as kcheck proxy --schedule reads them
	Steps    []Step   // the same, for the reached check
	// Expiry > 0: the broker runs with producer.id.expiration.ms Expiry,
	// and every shape gets an idle phase longer than it.
	Expiry, ExpiryCheck time.Duration
	// Also names the scenarios with the same schedule, run as this one;
	// Caveats say what the counterexample needs that the brokers here lack.
	Also, Caveats []string
	Predictions   map[string]string // client family → TLC's outcome for its rules
	// On are the predictions on the spec's broker variants (broker kind →
	// client family → TLC's outcome: scenario.Scenario.On); PredictionsFor
	// chooses.
	On map[string]map[string]string
	// Violates are the invariants (and temporal properties) that the
	// counterexamples run as this scenario, its own and Also's, violate,
	// those whose counterexample needs nothing the brokers here lack (no
	// caveat); Quick covers them.
	Violates []string
	// Family maps a client to its family (scenario.FamilyOf).
	Family func(client string) string
	// TxnVersion > 0: a transactional scenario (spec/TransactionalProducer.tla),
	// run on the transactional shapes (Shape.TxnRecords) on brokers whose
	// transaction.version is lowered to TxnVersion where it is higher, and
	// which verify a transactional partition (KIP-890 part 1) exactly when
	// TxnVerification; TxnTimeout: the coordinator must time the
	// transaction out (no driver can be told to: CannotRun).
	TxnVersion      int
	TxnVerification bool
	TxnTimeout      bool
	// Nodes > 1: the scenario runs on a cluster of that many nodes
	// (ClusterNodes), its faults on the nodes done through the cluster's
	// control (nemesis.Serve), the topic replicated (ClusterReplication)
	// and the clients' timeouts ClusterTimeouts.
	Nodes int
}

// A cluster scenario's cluster: every node a broker and a controller, topics
// replicated to all three with two in sync needed for acks=all, and no
// unclean leader election, so that an acknowledged record survives any one
// node's fault.
const (
	ClusterNodes       = 3
	ClusterReplication = 3
)

// ClusterProperties are the brokers' settings for a cluster scenario.
func ClusterProperties() map[string]string {
	return map[string]string{"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}
}

// ClusterTimeouts are the clients' timeouts on a cluster: a leader's
// failover takes the broker session timeout (9 s) and a restart more, which
// the proxy's 2 s request timeout and 5 s delivery timeout would turn into
// failed records whatever the client does.
var ClusterTimeouts = Timeouts{Request: 5 * time.Second, Delivery: 30 * time.Second}

// Config is a matrix to run.
type Config struct {
	Env         Env
	Scenarios   []*Scenario
	Clients     []Client
	Brokers     []string // the brokers, as brokers.Parse reads them: Kafka versions ("4.1.0"), kfake-V, tansu-0.6.0
	Shapes      []Shape
	Runs        int
	Dir         string        // where every cell's trace, output and stderr are kept
	CellTimeout time.Duration // one cell's bound; 0: 3 minutes
	Cache       string        // kafka.Fetch's cache; empty: its default
	Log         io.Writer     // a line per cell as it ends; nil: none
	// Shard, when N > 0, runs only the Kth of N parts of the cells
	// (Shard.Bounds of Plan); the zero Shard runs them all.
	Shard Shard
	// Bootstrap, when set, is a cluster kcheck did not start, whose Kafka
	// version is Brokers' one: no broker is started, the scenarios that
	// need kcheck's own (NeedsOwnBrokers) are skipped, and the topics are
	// named with RunID and deleted at the end.
	Bootstrap string
	RunID     string
	// Replication is the replication factor of the topics on Bootstrap.
	Replication int
}

// Results are a matrix's cells and the wall time of each scenario.
type Results struct {
	Started  time.Time           `json:"started"`
	Load     string              `json:"load"` // /proc/loadavg at the start
	Cells    []Cell              `json:"cells"`
	Seconds  map[string]float64  `json:"scenario_seconds"`
	Total    float64             `json:"seconds"`
	Brokers  []string            `json:"brokers"`
	Clients  []string            `json:"clients"`
	Shapes   []Shape             `json:"shapes"`
	Schedule map[string][]string `json:"schedules"`
	Notes    map[string][]string `json:"notes,omitempty"`
	// Repredicted, when set, says when the predictions were read again
	// from the scenario files, after the cells ran (Repredict).
	Repredicted string `json:"repredicted,omitempty"`
	// Interrupted, when set, says the run was stopped before its last cell:
	// the cells here are those that finished.
	Interrupted string `json:"interrupted,omitempty"`
	// Matrix is the matrix's Identity: the shards of one matrix, and one
	// run of it whole, have the same.
	Matrix string `json:"matrix,omitempty"`
	// Shard, when set, says these are the cells of one shard of the
	// matrix (Config.Shard), to be merged with the others' (Merge).
	Shard *Shard `json:"shard,omitempty"`
	// Shards, when set, are the runs of the shards these results were
	// merged from (Merge).
	Shards []ShardRun `json:"shards,omitempty"`
	// Bootstrap, when set, is the cluster the cells ran on, one kcheck did
	// not start (Config.Bootstrap); Skipped are the scenarios it could not
	// run there.
	Bootstrap string    `json:"bootstrap,omitempty"`
	Skipped   []Skipped `json:"skipped,omitempty"`
}

// Repredict sets every cell's prediction, and whether it did worse (for a
// client of Unknown family, every family's prediction and which it
// matched), anew from predict, which gives a scenario's predictions by
// family as the scenario files are now: the model changes, the runs stand.
// A cell of a scenario predict does not know is an error.
func (r *Results) Repredict(predict func(scenario, broker string) (map[string]string, bool), when string) error {
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Scenario == Baseline {
			c.predict(nil, false)
			continue
		}
		ps, ok := predict(c.Scenario, c.Broker)
		if !ok {
			return fmt.Errorf("cell %d: scenario %q is not in the scenario files", i+1, c.Scenario)
		}
		c.predict(ps, true)
	}
	r.Repredicted = when
	return nil
}

// ReadResults reads a matrix's JSON (WriteJSON), name naming it in errors.
// Only a shard's may have no cells (a shard of a matrix with fewer cells
// than shards).
func ReadResults(rd io.Reader, name string) (*Results, error) {
	var r Results
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(r.Cells) == 0 && r.Shard == nil {
		return nil, fmt.Errorf("%s: no cells", name)
	}
	return &r, nil
}

// Variant is the broker variant of the spec that a broker (as --brokers
// names it) follows, named for its kind: "" for Apache Kafka and kfake
// (which emulates it), whose rules are the spec's own; "tansu" for tansu.
func Variant(broker string) string {
	spec, err := bk.Parse(broker)
	if err != nil || spec.Kind == bk.Kafka || spec.Kind == bk.Kfake {
		return ""
	}
	return string(spec.Kind)
}

// PredictionsFor returns s's predictions for a cell on broker: those on
// its variant of the spec (Variant, On) for a broker that follows other
// rules than Apache Kafka's, else Predictions; nil when s has none for
// that broker, so that every family's is "not modelled".
func (s *Scenario) PredictionsFor(broker string) map[string]string {
	if v := Variant(broker); v != "" {
		return s.On[v]
	}
	return s.Predictions
}

func (s *Scenario) also() []string {
	if len(s.Also) == 0 {
		return nil
	}
	return []string{"The same schedule as " + strings.Join(s.Also, ", ") + "."}
}

// Run runs every cell of cfg (with cfg.Shard, only its shard's, and only
// the brokers and clients they need), in Plan's order: each broker version
// is started once (once more for each producer-state expiry a scenario
// needs, and for a cluster), every client is prepared once. A cell that
// cannot run is recorded with its error, and the matrix goes on.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if cfg.Runs <= 0 {
		cfg.Runs = 1
	}
	if cfg.CellTimeout <= 0 {
		cfg.CellTimeout = 3 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if s := cfg.Shard; s != (Shard{}) && (s.N < 1 || s.K < 1 || s.K > s.N) {
		return nil, fmt.Errorf("shard %s: want 1 ≤ K ≤ N", s)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	var skipped []Skipped
	cfg.Brokers = slices.Clone(cfg.Brokers)
	for i, name := range cfg.Brokers {
		spec, err := bk.Parse(name)
		if err != nil {
			return nil, err
		}
		// One name per broker from here on: kafka-4.1.0 is 4.1.0, as the
		// cells, the tables and Kafka's fetch name it.
		name = spec.Name()
		cfg.Brokers[i] = name
		if spec.Kind == bk.Crabka {
			return nil, fmt.Errorf("broker %s: %s", name, bk.CrabkaRefused)
		}
		for _, s := range cfg.Scenarios {
			if why := CannotRun(spec, s); why != "" {
				skipped = append(skipped, Skipped{Scenario: s.Name, Broker: name, Why: why})
			}
		}
	}
	if cfg.Bootstrap != "" {
		if len(cfg.Brokers) != 1 {
			return nil, fmt.Errorf("a cluster kcheck did not start (%s) runs one Kafka version, not %d", cfg.Bootstrap, len(cfg.Brokers))
		}
		cfg.Scenarios, skipped = external(cfg.Scenarios)
	}
	cells := plan(cfg)
	from, to := cfg.Shard.Bounds(len(cells))
	res := &Results{Started: time.Now().UTC(), Load: loadAvg(), Seconds: map[string]float64{},
		Brokers: cfg.Brokers, Shapes: cfg.Shapes, Schedule: map[string][]string{}, Notes: map[string][]string{},
		Matrix: Identity(cfg), Bootstrap: cfg.Bootstrap, Skipped: skipped}
	if cfg.Shard.N > 0 {
		s := cfg.Shard
		s.From, s.To, s.Of = from, to, len(cells)
		res.Shard = &s
	}
	used := map[string]bool{}
	for _, p := range cells[from:to] {
		used[p.client.Name] = true
	}
	if cfg.Env.Cache == "" {
		cfg.Env.Cache = cfg.Cache
	}
	argvs := map[string][]string{}
	for _, c := range cfg.Clients {
		res.Clients = append(res.Clients, c.Name)
		if !used[c.Name] {
			continue // none of the shard's cells runs it
		}
		argv, err := c.Prepare(ctx, &cfg.Env)
		if err != nil {
			return nil, err
		}
		argvs[c.Name] = argv
	}
	schedules := map[string]string{}
	for _, s := range cfg.Scenarios {
		path := filepath.Join(cfg.Dir, topicUnsafe.ReplaceAllString(s.Name, "-")+".schedule")
		body := "# " + s.Name + " (spec/scenarios)\n" + strings.Join(s.Schedule, "\n") + "\n"
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return nil, err
		}
		schedules[s.Name] = path
		res.Schedule[s.Name] = s.Schedule
		if len(s.Also) > 0 || len(s.Caveats) > 0 {
			res.Notes[s.Name] = append(append([]string{}, s.Caveats...), s.also()...)
		}
	}
	start := time.Now()
	// The brokers running, for the cells of one version and need.
	var b *running
	var bv string
	var bneed brokerNeed
	var made []string // the topics of the cells run on cfg.Bootstrap
	stop := func() {
		if b != nil {
			b.stop(cfg.Log)
			b = nil
		}
		if cfg.Bootstrap != "" {
			deleteTopics(cfg.Bootstrap, made, cfg.Log)
			made = nil
		}
	}
	for _, p := range cells[from:to] {
		if b == nil || bv != p.broker || bneed != p.need {
			stop()
			var err error
			if b, err = startBrokers(ctx, cfg, p.broker, p.need, p.first); err != nil {
				return nil, err
			}
			bv, bneed = p.broker, p.need
		}
		s, c, sh := p.scenario, p.client, p.shape
		t0 := time.Now()
		if p.need.expiry > 0 {
			sh.IdleAfter, sh.Idle = sh.Records/2, p.need.expiry+2*b.expiryCheck+time.Second
		}
		spec := cellSpec{scenario: s, schedule: schedules[s.Name], client: c, argv: argvs[c.Name],
			shape: sh, broker: p.broker, addr: b.addr, control: b.control, run: p.run, dir: cfg.Dir,
			kcheck: cfg.Env.Kcheck, timeout: cfg.CellTimeout, opts: clientOpts{replication: 1}}
		if cfg.Bootstrap != "" {
			spec.topicPrefix = "kcheck-" + cfg.RunID
			spec.opts.replication = max(cfg.Replication, 1)
			made = append(made, spec.topic())
		}
		var cell Cell
		if p.need.nodes > 1 {
			spec.opts = clientOpts{replication: ClusterReplication, timeouts: ClusterTimeouts}
			if err := b.whole(ctx); err != nil {
				cell = spec.cantRun(err)
			}
		}
		if cell.Err == "" {
			cell = runCell(ctx, spec)
		}
		res.Seconds[s.Name] += time.Since(t0).Seconds()
		if ctx.Err() != nil {
			// The cell was cut short: its outcome is no result, so it is
			// left out.
			stop()
			res.Total = time.Since(start).Seconds()
			res.Interrupted = fmt.Sprintf("interrupted during %s, %s, %s, run %d, on %s", s.Name, c.Name, sh.Name, p.run, BrokerWords(p.broker))
			return res, ctx.Err()
		}
		res.Cells = append(res.Cells, cell)
		fmt.Fprintln(cfg.Log, cell.line())
	}
	stop()
	res.Total = time.Since(start).Seconds()
	return res, nil
}

// brokerNeed is what a group of scenarios needs of its brokers.
type brokerNeed struct {
	expiry time.Duration
	nodes  int
	// txn > 0: transaction.version at most txn, and partition
	// verification (KIP-890 part 1) on exactly when verify.
	txn    int
	verify bool
}

// needOf is what s needs of its brokers.
func needOf(s *Scenario) brokerNeed {
	n := brokerNeed{expiry: s.Expiry, nodes: max(s.Nodes, 1)}
	if s.TxnVersion > 0 {
		n.txn, n.verify = s.TxnVersion, s.TxnVerification
	}
	return n
}

// running are the brokers of a group of scenarios, running.
type running struct {
	addr string         // a broker of the cluster
	cl   *kafka.Cluster // nil: a cluster kcheck did not start

	expiryCheck time.Duration
	control     string       // the cluster's control address, for kcheck proxy --cluster
	other       *bk.Running  // a broker other than Apache Kafka (brokers/)
	srv         *http.Server // serving control
}

// startBrokers starts Kafka version v as need says (s, the group's first
// scenario, has its expiry check), and for a cluster serves its control on
// loopback.
func startBrokers(ctx context.Context, cfg Config, v string, need brokerNeed, s *Scenario) (*running, error) {
	if cfg.Bootstrap != "" {
		return &running{addr: cfg.Bootstrap}, nil
	}
	if spec, _ := bk.Parse(v); spec.Kind != bk.Kafka {
		return startOther(ctx, cfg, spec)
	}
	kc := kafka.Config{Version: v, Cache: cfg.Cache, Nodes: need.nodes}
	if need.expiry > 0 {
		kc.ProducerIDExpiration, kc.ProducerIDExpirationCheck = need.expiry, s.ExpiryCheck
		if kc.ProducerIDExpirationCheck <= 0 {
			kc.ProducerIDExpirationCheck = max(need.expiry/4, 100*time.Millisecond)
		}
	}
	if need.nodes > 1 {
		kc.Properties = ClusterProperties()
	}
	if need.txn > 0 && kafka.TxnVerifiable(v) {
		if kc.Properties == nil {
			kc.Properties = map[string]string{}
		}
		kc.Properties["transaction.partition.verification.enable"] = fmt.Sprint(need.verify)
	}
	cl, err := kafka.Start(ctx, kc)
	if err != nil {
		return nil, fmt.Errorf("starting Kafka %s (%d nodes): %w", v, need.nodes, err)
	}
	if need.txn > 0 {
		// A new 4.x cluster finalizes transaction.version 2; a TV1
		// scenario lowers it, so that every client speaks TV1.
		was, err := kafka.LowerFeature(ctx, cl.Addrs()[0], "transaction.version", int16(need.txn))
		if err != nil {
			cl.Stop()
			return nil, fmt.Errorf("Kafka %s: %w", v, err)
		}
		if was > int16(need.txn) {
			fmt.Fprintf(cfg.Log, "matrix: Kafka %s: transaction.version lowered from %d to %d\n", v, was, need.txn)
		}
	}
	b := &running{addr: cl.Addrs()[0], cl: cl, expiryCheck: kc.ProducerIDExpirationCheck}
	if need.nodes > 1 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			cl.Stop()
			return nil, fmt.Errorf("serving the cluster's control: %w", err)
		}
		b.srv, b.control = nemesis.Serve(l, cl), l.Addr().String()
	}
	return b, nil
}

// startOther starts a broker other than Apache Kafka: kfake emulating its
// Kafka version, or tansu (built into the cache the first time), one node.
func startOther(ctx context.Context, cfg Config, spec bk.Spec) (*running, error) {
	var r *bk.Running
	var err error
	switch spec.Kind {
	case bk.Kfake:
		em, ok := workload.Emulations[spec.Version]
		if !ok {
			return nil, fmt.Errorf("broker %s: kfake emulates no such Kafka version", spec.Name())
		}
		r, err = bk.StartKfake(spec.Version, em.Versions, 1, nil)
	case bk.Tansu:
		cache := cfg.Cache
		if cache == "" {
			if cache, err = kafka.DefaultCache(); err != nil {
				return nil, err
			}
		}
		var bin string
		if bin, _, err = bk.BuildTansu(ctx, cache, io.Discard); err != nil {
			return nil, err
		}
		r, err = bk.StartTansu(ctx, bin, filepath.Join(cfg.Dir, spec.Name()), 0, time.Minute)
	default:
		err = fmt.Errorf("broker %s: kcheck cannot start it", spec.Name())
	}
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec, err)
	}
	return &running{addr: r.Addrs[0], other: r}, nil
}

// whole starts again any node a cell left down (its fault's end failed),
// so that the next cell starts on the whole cluster.
func (b *running) whole(ctx context.Context) error {
	if b.cl == nil {
		return nil
	}
	for _, id := range b.cl.Down() {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := b.cl.StartNode(sctx, id)
		cancel()
		if err != nil {
			return fmt.Errorf("node %d, left down by an earlier cell, did not start again: %w", id, err)
		}
	}
	return nil
}

func (b *running) stop(log io.Writer) {
	if b.srv != nil {
		b.srv.Close()
	}
	if b.other != nil {
		if err := b.other.Stop(); err != nil {
			fmt.Fprintf(log, "matrix: stopping %s: %v\n", b.other.Spec, err)
		}
		return
	}
	if b.cl == nil {
		return
	}
	if err := b.cl.Stop(); err != nil {
		fmt.Fprintf(log, "matrix: stopping Kafka %s: %v\n", b.cl.Version(), err)
	}
}

// line is a cell's progress line.
func (c Cell) line() string {
	if c.Err != "" {
		return fmt.Sprintf("%s | %s | %s | %s | error: %s", c.Scenario, BrokerWords(c.Broker), c.Client, c.Shape, c.Err)
	}
	like := ""
	if w := c.likeWords(); w != "" {
		like = " | " + w
	}
	return fmt.Sprintf("%s | %s | %s | %s | %s | %s | verify %s (%s) | predicted %s%s | %.1f s",
		c.Scenario, BrokerWords(c.Broker), c.Client, c.Shape, c.Reach.Status, c.What, c.Verdict, c.Agreement, c.Predicted, like, c.Seconds)
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
