package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/tracer"
)

// excerptOf is what bench/excerpt.py writes into config.excerpt: the
// partition taken, then where the run came from, here the command, which
// may end in the partition again.
var (
	excerptOf    = regexp.MustCompile(`^partition (\d+) alone, renumbered 0: (.*?)(: partition \d+)?$`)
	topicUnsafe  = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)
	scenarioCell = "sc-" // kcheck scenarios run's topics: sc-SCENARIO.BROKER.CLIENT.SHAPE.RUN (matrix, runCell)
)

// Repro returns the one command that reproduces the run a trace's header
// describes, and a note on it (or, with no command, why there is none):
// opts.Repro as given; else the command the header's config.excerpt names
// (bench/excerpt.py); else, for a cell of kcheck scenarios run (its topic
// names the scenario, broker, client and shape), the command that runs
// that cell again, on a cluster with --cluster naming the one of
// opts.ClusterDirs that holds the scenario's schedule.
func Repro(h tracer.Header, opts Options) (cmd, note string) {
	if opts.Repro != "" {
		return opts.Repro, ""
	}
	if m := excerptOf.FindStringSubmatch(h.Config["excerpt"]); m != nil && strings.HasPrefix(m[2], "kcheck ") {
		return m[2], ""
	}
	scenario, shape, ok := cellOf(h)
	if !ok {
		return "", "No command: the trace's header names none (config.excerpt) and its topic is not a kcheck scenarios run cell's (`kcheck report --repro CMD` gives one)."
	}
	args := []string{"kcheck", "scenarios", "run"}
	if onCluster(h.Faults) {
		dir := ""
		for _, d := range opts.ClusterDirs {
			if _, err := os.Stat(filepath.Join(d, scenario+".schedule")); err == nil {
				dir = d
				break
			}
		}
		if dir == "" {
			dir = "DIR"
			note = fmt.Sprintf("DIR is the directory holding %s.schedule, the faults above one a line.", scenario)
		}
		args = append(args, "--cluster", dir)
	}
	args = append(args, "--scenario", scenario, "--clients", h.Client, "--brokers", h.Broker.Version, "--shapes", shape)
	if scenario != "Baseline" {
		args = append(args, "--baseline=false")
	}
	return strings.Join(args, " "), note
}

// cellOf reads the scenario and shape of a kcheck scenarios run cell from
// its topic, sc-SCENARIO.BROKER.CLIENT.SHAPE.RUN, the broker and client
// being the header's.
func cellOf(h tracer.Header) (scenario, shape string, ok bool) {
	rest, ok := strings.CutPrefix(h.Topic, scenarioCell)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return "", "", false
	}
	if _, err := strconv.Atoi(rest[i+1:]); err != nil {
		return "", "", false
	}
	rest = rest[:i]
	i = strings.LastIndexByte(rest, '.')
	if i < 0 {
		return "", "", false
	}
	rest, shape = rest[:i], rest[i+1:]
	scenario, ok = strings.CutSuffix(rest, "."+h.Broker.Version+"."+topicUnsafe.ReplaceAllString(h.Client, "-"))
	return scenario, shape, ok && scenario != "" && shape != ""
}

// onCluster reports whether a schedule has a fault on a cluster's nodes.
func onCluster(faults []string) bool {
	for _, s := range faults {
		if f, err := fault.Parse(s); err == nil && f.Effect().Scope == fault.OnCluster {
			return true
		}
	}
	return false
}

// faultText says what a schedule's step does, after its text: ": ..." (""
// for a step it cannot read).
func faultText(s string) string {
	f, err := fault.Parse(s)
	if err != nil {
		return ""
	}
	e := f.Effect()
	errName := ""
	if er := f.Err(); er != nil {
		errName = tracer.ErrorName(er.Code)
	}
	held := ""
	if e.Holds && (f.Delay > 0 || f.Until()) {
		held = ", its answer held"
	}
	switch {
	case f.Kind == fault.StateExpiry:
		return ": the broker forgets the producer's state once it has been idle that long (producer.id.expiration.ms)"
	case e.Scope == fault.OnCluster:
		what, _, _ := strings.Cut(fault.Kinds()[f.Kind], "; ")
		return ": " + strings.TrimSuffix(what, ".")
	case e.Cut == fault.CutBefore:
		return ": the connection is closed as the attempt arrives, nothing of its request forwarded to the broker"
	case e.Cut == fault.CutAfter:
		return ": the attempt is forwarded and handled, and its connection closed when the broker's answer arrives, instead of delivering it"
	case e.ErrAnswer && e.Written:
		return ": the broker appends the attempt, and the client is answered " + errName + held
	case e.ErrAnswer:
		return ": the attempt is answered " + errName + " before the append (the broker never sees it)" + held
	case e.Holds:
		return ": the broker handles the attempt as usual, and its answer is held"
	}
	return ""
}
