package matrix

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	bk "github.com/kcheck/kcheck/brokers"
)

// Shard is the part of a matrix one machine runs, so that N machines (CI
// runners) run a matrix between them without talking to each other: the
// Kth of N parts of the matrix's cells, K counted from 1.
//
// The split is a function of the matrix's definition alone (Plan's order
// of its cells), so every machine computes the same one: the cells, in the
// order one run of the whole matrix runs them, cut into N runs of
// consecutive cells whose sizes differ by at most one (Bounds). Run starts
// brokers once per broker version and need (producer-state expiry, nodes),
// and a run of consecutive cells crosses few of those groups: the N shards
// together start at most N-1 more than the whole matrix does. Shards are
// balanced by cells, not by time: a scenario on a cluster, or one that
// waits out the producer-state expiry, takes longer a cell than one that
// does not.
type Shard struct {
	K int `json:"k"`
	N int `json:"n"`
	// From and To are the shard's cells in the whole matrix's order,
	// From counted from 0 and To one past the last; Of is the number of
	// cells of the whole matrix. Set by Run.
	From int `json:"from"`
	To   int `json:"to"`
	Of   int `json:"of"`
}

// ParseShard reads "K/N": the Kth of N shards, 1 ≤ K ≤ N.
func ParseShard(s string) (Shard, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, kerr := strconv.Atoi(ks)
	n, nerr := strconv.Atoi(ns)
	switch {
	case !ok || kerr != nil || nerr != nil:
		return Shard{}, fmt.Errorf("want K/N, two whole numbers: the Kth of N shards, e.g. 2/3")
	case n < 1:
		return Shard{}, fmt.Errorf("N is %d: want 1 or more shards", n)
	case k < 1:
		return Shard{}, fmt.Errorf("K is %d: shards are counted from 1", k)
	case k > n:
		return Shard{}, fmt.Errorf("K is %d: there are only %d shards", k, n)
	}
	return Shard{K: k, N: n}, nil
}

// String is s as ParseShard reads it.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Bounds returns the shard's cells of a matrix of m cells: [from, to) in
// its order. The N shards' bounds tile [0, m), each from (K-1)·m/N to
// K·m/N, so that their sizes differ by at most one. The zero Shard is the
// whole matrix.
func (s Shard) Bounds(m int) (from, to int) {
	if s.N == 0 {
		return 0, m
	}
	return (s.K - 1) * m / s.N, s.K * m / s.N
}

// CellKey names a cell of a matrix before it runs.
type CellKey struct {
	Scenario, Broker, Client, Shape string
	Run                             int
}

// planned is a cell of a matrix before it runs: what Run needs to run it.
type planned struct {
	broker   string
	need     brokerNeed
	first    *Scenario // the first scenario of the need's group: its expiry check is the brokers'
	scenario *Scenario
	client   Client
	shape    Shape
	run      int
}

func (p planned) key() CellKey {
	return CellKey{Scenario: p.scenario.Name, Broker: p.broker, Client: p.client.Name, Shape: p.shape.Name, Run: p.run}
}

// plan lists cfg's cells in the order Run runs them: by broker version;
// within it by what the scenarios need of their brokers (producer-state
// expiry, nodes), in the order the scenarios first need it, so that each
// version and need starts brokers once; then by scenario, client, shape
// and run.
func plan(cfg Config) []planned {
	runs := max(cfg.Runs, 1)
	var needs []brokerNeed
	byNeed := map[brokerNeed][]*Scenario{}
	for _, s := range cfg.Scenarios {
		n := needOf(s)
		if _, ok := byNeed[n]; !ok {
			needs = append(needs, n)
		}
		byNeed[n] = append(byNeed[n], s)
	}
	var out []planned
	for _, v := range cfg.Brokers {
		spec, _ := bk.Parse(v) // Run has parsed them
		for _, need := range needs {
			scs := byNeed[need]
			for _, s := range scs {
				if CannotRun(spec, s) != "" {
					continue // Run lists it as skipped
				}
				for _, c := range cfg.Clients {
					for _, sh := range cfg.Shapes {
						if !sh.For(s) {
							continue
						}
						for run := 1; run <= runs; run++ {
							out = append(out, planned{broker: v, need: need, first: scs[0], scenario: s, client: c, shape: sh, run: run})
						}
					}
				}
			}
		}
	}
	return out
}

// Plan lists cfg's cells in the order Run runs them (and writes them).
func Plan(cfg Config) []CellKey {
	var out []CellKey
	for _, p := range plan(cfg) {
		out = append(out, p.key())
	}
	return out
}

// Identity names the matrix cfg runs: the SHA-256, in hex, of its
// definition (each scenario's name, schedule, producer-state expiry and
// nodes; each client's name and rules; each shape; the broker versions;
// the runs) and of every cell in order. The shards of one matrix have the
// same identity, which Merge checks; the directories, timeouts and
// predictions are not part of it.
func Identity(cfg Config) string {
	h := sha256.New()
	for _, s := range cfg.Scenarios {
		fmt.Fprintf(h, "scenario\t%q\t%q\t%d\t%d\t%d\n", s.Name, s.Schedule, s.Expiry, s.ExpiryCheck, max(s.Nodes, 1))
		if s.TxnVersion > 0 {
			fmt.Fprintf(h, "txn\t%q\t%d\t%v\t%v\n", s.Name, s.TxnVersion, s.TxnVerification, s.TxnTimeout)
		}
	}
	for _, c := range cfg.Clients {
		fmt.Fprintf(h, "client\t%q\t%v\t%v\t%v\n", c.Name, c.Ours, c.FirstAck, c.NoRearm)
		if c.Def != "" {
			fmt.Fprintf(h, "defined\t%q\t%q\n", c.Name, c.fam) // its family decides its predictions
		}
	}
	for _, s := range cfg.Shapes {
		fmt.Fprintf(h, "shape\t%q\t%d\t%d\t%d\t%q\t%d\t%d\n", s.Name, s.Partitions, s.Records, s.ValueBytes, s.BatchRecords, s.IdleAfter, s.Idle)
		if s.TxnRecords > 0 {
			fmt.Fprintf(h, "txnshape\t%q\t%d\t%d\n", s.Name, s.TxnRecords, s.TxnAbortEvery)
		}
	}
	fmt.Fprintf(h, "brokers\t%q\nruns\t%d\n", cfg.Brokers, max(cfg.Runs, 1))
	for _, p := range plan(cfg) {
		k := p.key()
		fmt.Fprintf(h, "cell\t%q\t%q\t%q\t%q\t%d\n", k.Scenario, k.Broker, k.Client, k.Shape, k.Run)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ShardRun is what a merged matrix keeps of each of its shards' runs.
type ShardRun struct {
	K           int     `json:"k"`
	Started     string  `json:"started"`
	Load        string  `json:"load"`
	Seconds     float64 `json:"seconds"`
	Cells       int     `json:"cells"`
	Interrupted string  `json:"interrupted,omitempty"`
}

// Merge joins the results of the N shards of one matrix (Run with
// Config.Shard) into the results one run of the whole matrix gives: the
// same cells in the same order, each scenario's wall time the sum of the
// shards', started when the first shard started, with the load average
// then, and Total the time from the first shard's start to the last one's
// end. Shards records each shard's run; a shard that was interrupted makes
// the merge interrupted. names name the shards (their files) in errors:
// a result that is no shard, shards of different matrices or splits, a
// shard given twice, a shard missing, and a shard holding other cells than
// its part of the matrix are errors.
func Merge(shards []*Results, names []string) (*Results, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("no shard to merge")
	}
	if len(names) != len(shards) {
		return nil, fmt.Errorf("merge: %d shards, %d names", len(shards), len(names))
	}
	byK := map[int]int{} // K → index in shards
	for i, r := range shards {
		s := r.Shard
		if s == nil {
			return nil, fmt.Errorf("%s: not a shard: it has no \"shard\" (written by kcheck scenarios run without --shard, or by merge)", names[i])
		}
		if r.Matrix == "" {
			return nil, fmt.Errorf("%s: shard %s names no matrix (no \"matrix\" identity)", names[i], s)
		}
		if s.N < 1 || s.K < 1 || s.K > s.N {
			return nil, fmt.Errorf("%s: shard %s is not a shard of a split (want 1 ≤ K ≤ N)", names[i], s)
		}
		if i > 0 {
			f := shards[0]
			if r.Matrix != f.Matrix {
				return nil, fmt.Errorf("%s: a shard of another matrix than %s (matrix %s, not %s): its scenarios, clients, shapes, brokers or runs differ",
					names[i], names[0], short(r.Matrix), short(f.Matrix))
			}
			if s.N != f.Shard.N {
				return nil, fmt.Errorf("%s: shard %s, but %s is shard %s: the matrix split %d ways and %d ways",
					names[i], s, names[0], f.Shard, s.N, f.Shard.N)
			}
		}
		if j, ok := byK[s.K]; ok {
			return nil, fmt.Errorf("%s: shard %s again (%s is shard %s too)", names[i], s, names[j], s)
		}
		byK[s.K] = i
		from, to := s.Bounds(s.Of)
		if s.From != from || s.To != to {
			return nil, fmt.Errorf("%s: shard %s holds cells %d-%d of %d, but its part of the matrix is %d-%d", names[i], s, s.From+1, s.To, s.Of, from+1, to)
		}
		if len(r.Cells) > to-from || (len(r.Cells) < to-from && r.Interrupted == "") {
			return nil, fmt.Errorf("%s: shard %s has %d cells, but its part of the matrix has %d", names[i], s, len(r.Cells), to-from)
		}
	}
	n := shards[0].Shard.N
	var missing []string
	for k := 1; k <= n; k++ {
		if _, ok := byK[k]; !ok {
			missing = append(missing, Shard{K: k, N: n}.String())
		}
	}
	if len(missing) > 0 {
		var have []string
		for k := 1; k <= n; k++ {
			if i, ok := byK[k]; ok {
				have = append(have, fmt.Sprintf("%s (%s)", Shard{K: k, N: n}, names[i]))
			}
		}
		what := "shard " + missing[0] + " is"
		if len(missing) > 1 {
			what = "shards " + strings.Join(missing, ", ") + " are"
		}
		return nil, fmt.Errorf("%s missing: given %s", what, strings.Join(have, ", "))
	}
	first := shards[byK[1]]
	out := &Results{Started: first.Started, Load: first.Load, Seconds: map[string]float64{},
		Brokers: first.Brokers, Clients: first.Clients, Shapes: first.Shapes, Schedule: first.Schedule, Notes: first.Notes,
		Matrix: first.Matrix, Bootstrap: first.Bootstrap, Skipped: first.Skipped}
	var end time.Time
	var repredicted, interrupted []string
	for k := 1; k <= n; k++ {
		r := shards[byK[k]]
		if r.Started.Before(out.Started) {
			out.Started, out.Load = r.Started, r.Load
		}
		if e := r.Started.Add(time.Duration(r.Total * float64(time.Second))); e.After(end) {
			end = e
		}
		out.Cells = append(out.Cells, r.Cells...)
		for s, secs := range r.Seconds {
			out.Seconds[s] += secs
		}
		if r.Repredicted != "" && !slices.Contains(repredicted, r.Repredicted) {
			repredicted = append(repredicted, r.Repredicted)
		}
		if r.Interrupted != "" {
			interrupted = append(interrupted, fmt.Sprintf("shard %s %s", r.Shard, r.Interrupted))
		}
		out.Shards = append(out.Shards, ShardRun{K: k, Started: r.Started.Format(time.RFC3339), Load: r.Load, Seconds: r.Total,
			Cells: len(r.Cells), Interrupted: r.Interrupted})
	}
	out.Total = end.Sub(out.Started).Seconds()
	out.Repredicted = strings.Join(repredicted, "; ")
	out.Interrupted = strings.Join(interrupted, "; ")
	return out, nil
}

// short is a matrix identity as messages show it.
func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// writeShards writes what a shard, or a merge of shards, says of itself
// in the Markdown.
func (r *Results) writeShards(w io.Writer) {
	if s := r.Shard; s != nil {
		fmt.Fprintf(w, "Shard %d of %d of the matrix %s (`kcheck scenarios run --shard %s`): its cells %d-%d of %d; "+
			"`kcheck scenarios merge` joins the shards' JSON into the whole matrix.\n\n", s.K, s.N, short(r.Matrix), s, s.From+1, s.To, s.Of)
	}
	if len(r.Shards) > 0 {
		var ps []string
		for _, s := range r.Shards {
			started := s.Started
			if t, err := time.Parse(time.RFC3339, s.Started); err == nil {
				started = t.UTC().Format("15:04")
			}
			ps = append(ps, fmt.Sprintf("shard %d started %s, load average %s, %d cells in %.0f s", s.K, started, s.Load, s.Cells, s.Seconds))
		}
		fmt.Fprintf(w, "Merged from %d shards of the matrix %s, each run on its own machine (`kcheck scenarios merge`): %s.\n\n",
			len(r.Shards), short(r.Matrix), strings.Join(ps, "; "))
	}
}
