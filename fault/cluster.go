package fault

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// ClusterHelp says what every fault on a cluster's nodes takes, for --help.
const ClusterHelp = "A fault on a real cluster (kcheck proxy --cluster): it fires once, at=D after the client's first produce request (default at=0), " +
	"records=N once N records are acknowledged, or random=D at a moment within D drawn from the proxy's seed; every fault ends, and the cluster heals, before the client reads back (its first Fetch or ListOffsets) or exits"

// Cluster is what a fault on a cluster's nodes (Scope OnCluster) acts on,
// for how long, and when it fires.
type Cluster struct {
	// Which node a fault whose Effect has Target acts on: node Node when
	// ByNode, the client's transaction coordinator (as its FindCoordinator
	// was answered) when Coordinator (node=coordinator), else the leader of
	// partition Leader when the fault fires (-1, the default: partition 0).
	ByNode      bool
	Node        int32
	Coordinator bool
	Leader      int32
	// For is how long it lasts (Effect.Lasts); Every repeats move-leaders
	// every Every during For.
	For, Every time.Duration
	Trigger    Trigger
}

// Trigger is when a fault on the cluster fires: At after the client's
// first produce request, once Records records are acknowledged, or at a
// moment within Random drawn from the seed.
type Trigger struct {
	At      time.Duration
	Records int
	Random  time.Duration
}

// Moment returns when t fires, after the first produce request, for the
// triggers by time (At, or Random drawn from rng), and ok false for one by
// progress (Records).
func (t Trigger) Moment(rng *rand.Rand) (d time.Duration, ok bool) {
	switch {
	case t.Records > 0:
		return 0, false
	case t.Random > 0:
		return time.Duration(rng.Int64N(int64(t.Random))), true
	}
	return t.At, true
}

func (t Trigger) String() string {
	switch {
	case t.Records > 0:
		return "records=" + strconv.Itoa(t.Records)
	case t.Random > 0:
		return "random=" + t.Random.String()
	case t.At > 0:
		return "at=" + t.At.String()
	}
	return ""
}

// clusterDefaults are the defaults of the faults on the cluster.
func clusterDefaults(k Kind) Cluster {
	switch k {
	case Pause, Isolate:
		return Cluster{Leader: -1, For: 3 * time.Second}
	case Kill, KillController:
		return Cluster{Leader: -1, For: 2 * time.Second}
	case SlowNode:
		return Cluster{Leader: -1, For: 5 * time.Second}
	}
	return Cluster{Leader: -1}
}

// LeaderOf returns the partition whose leader a fault on one node acts on
// when it does not name the node.
func (c Cluster) LeaderOf() int32 { return max(c.Leader, 0) }

// parseCluster reads key=val into f when key is one of the cluster's
// parameters, and reports whether it was.
func (f *Fault) parseCluster(key, val string) (bool, error) {
	switch key {
	case "node", "leader", "for", "every", "at", "random", "records":
	default:
		return false, nil
	}
	if f.Effect().Scope != OnCluster {
		return true, fmt.Errorf("node, leader, for, every, at, records and random are for faults on a cluster's nodes, not %s", f.Kind)
	}
	c := &f.Cluster
	trigger := func(set func() error) error {
		if c.Trigger != (Trigger{}) {
			return fmt.Errorf("a fault has one trigger (at, records or random); it already has %s", c.Trigger)
		}
		return set()
	}
	dur := func(dst *time.Duration, positive bool) error {
		d, err := time.ParseDuration(val)
		switch {
		case err != nil:
			return err
		case d < 0 || positive && d == 0:
			return fmt.Errorf("must be positive")
		}
		*dst = d
		return nil
	}
	switch key {
	case "node":
		if val == "coordinator" {
			if c.Leader >= 0 {
				return true, fmt.Errorf("the fault already acts on the leader of partition %d: give node or leader", c.Leader)
			}
			c.Coordinator = true
			return true, nil
		}
		n, err := strconv.ParseInt(val, 10, 32)
		if err != nil || n < 0 {
			return true, fmt.Errorf("%q is not a node id", val)
		}
		if c.Leader >= 0 {
			return true, fmt.Errorf("the fault already acts on the leader of partition %d: give node or leader", c.Leader)
		}
		c.ByNode, c.Node = true, int32(n)
		return true, nil
	case "leader":
		n, err := strconv.ParseInt(val, 10, 32)
		if err != nil || n < 0 {
			return true, fmt.Errorf("%q is not a partition number", val)
		}
		if c.ByNode {
			return true, fmt.Errorf("the fault already acts on node %d: give node or leader", c.Node)
		}
		if c.Coordinator {
			return true, fmt.Errorf("the fault already acts on the transaction coordinator: give node or leader")
		}
		c.Leader = int32(n)
		return true, nil
	case "for":
		return true, dur(&c.For, true)
	case "every":
		return true, dur(&c.Every, true)
	case "at":
		return true, trigger(func() error {
			if err := dur(&c.Trigger.At, false); err != nil {
				return err
			}
			if c.Trigger.At == 0 {
				c.Trigger = Trigger{} // at=0 is the default
			}
			return nil
		})
	case "random":
		return true, trigger(func() error { return dur(&c.Trigger.Random, true) })
	case "records":
		return true, trigger(func() error {
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return fmt.Errorf("%q: want 1 or more records acknowledged", val)
			}
			c.Trigger.Records = n
			return nil
		})
	}
	return false, nil
}

// checkCluster holds f's cluster parameters to what its kind takes.
func (f *Fault) checkCluster(s string) error {
	eff, c, d := f.Effect(), f.Cluster, clusterDefaults(f.Kind)
	if eff.Scope != OnCluster {
		if c != (Cluster{}) {
			return fmt.Errorf("fault %q: node, leader, for, every, at, records and random are for faults on a cluster's nodes, not %s", s, f.Kind)
		}
		return nil
	}
	def := defaultFor(f.Kind)
	switch {
	case f.Rate != def.Rate || f.Count != def.Count || f.Partitions != nil || f.Error != nil || f.Until() || f.CutAfter:
		return fmt.Errorf("fault %q: %s acts on the cluster once: it takes only %s", s, f.Kind, clusterParams(f.Kind))
	case f.Delay != def.Delay && f.Kind != SlowNode:
		return fmt.Errorf("fault %q: delay: %s holds no answer (for=D is how long it lasts)", s, f.Kind)
	case f.Kind == SlowNode && f.Delay <= 0:
		return fmt.Errorf("fault %q: delay=D must be positive: how long each answer is held", s)
	case !eff.Target && (c.ByNode || c.Coordinator || c.Leader != d.Leader):
		return fmt.Errorf("fault %q: %s picks its own node; node and leader are for pause, kill, isolate and slow-node", s, f.Kind)
	case !eff.Lasts && c.For != d.For:
		return fmt.Errorf("fault %q: for: %s lasts as long as it takes", s, f.Kind)
	case c.Every != 0 && f.Kind != MoveLeaders:
		return fmt.Errorf("fault %q: every repeats move-leaders only", s)
	case c.Every != 0 && c.For == 0:
		return fmt.Errorf("fault %q: every=D repeats the moves during for=D: set it", s)
	}
	return nil
}

// clusterParams names the parameters kind takes, for errors.
func clusterParams(k Kind) string {
	eff := k.Effect()
	p := "at, records, random"
	if eff.Lasts {
		p = "for, " + p
	}
	if eff.Target {
		p = "node or leader, " + p
	}
	switch k {
	case SlowNode:
		p = "delay, " + p
	case MoveLeaders:
		p = "every, " + p
	}
	return p
}

// clusterString appends f's cluster parameters that differ from the
// defaults, in the form Parse reads.
func (f *Fault) clusterString(ps []string) []string {
	if f.Effect().Scope != OnCluster {
		return ps
	}
	c, d := f.Cluster, clusterDefaults(f.Kind)
	if c.ByNode {
		ps = append(ps, "node="+strconv.Itoa(int(c.Node)))
	} else if c.Coordinator {
		ps = append(ps, "node=coordinator")
	} else if c.Leader != d.Leader {
		ps = append(ps, "leader="+strconv.Itoa(int(c.Leader)))
	}
	if c.For != d.For {
		ps = append(ps, "for="+c.For.String())
	}
	if c.Every != 0 {
		ps = append(ps, "every="+c.Every.String())
	}
	if t := c.Trigger.String(); t != "" {
		ps = append(ps, t)
	}
	return ps
}
