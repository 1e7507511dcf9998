package matrix

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kcheck/kcheck/fault"
)

// ClusterExt is the extension of a cluster scenario's file: a schedule
// (fault.ReadSchedule) run on a cluster of ClusterNodes.
const ClusterExt = ".schedule"

// ReadClusterScenarios reads every cluster scenario in dir, named by its
// file without ClusterExt, in name order; family maps a client to its
// family. Cluster scenarios are written by hand, not derived by TLC: the
// model predicts nothing for them.
func ReadClusterScenarios(dir string, family func(string) string) ([]*Scenario, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*"+ClusterExt))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("cluster scenarios: %w", err)
		}
		return nil, fmt.Errorf("cluster scenarios: no *%s file in %s", ClusterExt, dir)
	}
	slices.Sort(paths)
	var out []*Scenario
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("cluster scenarios: %w", err)
		}
		fs, err := fault.ReadSchedule(f, p)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("cluster scenarios: %w", err)
		}
		if len(fs) == 0 {
			return nil, fmt.Errorf("cluster scenarios: %s: no fault in it", p)
		}
		s := &Scenario{Name: strings.TrimSuffix(filepath.Base(p), ClusterExt), Steps: StepsOf(fs), Nodes: ClusterNodes,
			Predictions: map[string]string{}, Family: family}
		for _, f := range fs {
			if f.Effect().Scope == fault.OnBroker {
				return nil, fmt.Errorf("cluster scenarios: %s: %s needs a broker with its own producer.id.expiration.ms, which cluster scenarios do not set", p, f)
			}
			s.Schedule = append(s.Schedule, f.String())
		}
		out = append(out, s)
	}
	return out, nil
}

// ClusterBaseline is the cluster's Baseline: no faults, on ClusterNodes.
func ClusterBaseline(family func(string) string) *Scenario {
	return &Scenario{Name: Baseline, Nodes: ClusterNodes, Predictions: map[string]string{}, Family: family}
}
