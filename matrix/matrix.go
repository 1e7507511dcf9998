package matrix

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kcheck/kcheck/kafka"
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
	// Family maps a client to its family (scenario.FamilyOf).
	Family func(client string) string
}

// Config is a matrix to run.
type Config struct {
	Env         Env
	Scenarios   []*Scenario
	Clients     []Client
	Brokers     []string // Kafka versions
	Shapes      []Shape
	Runs        int
	Dir         string        // where every cell's trace, output and stderr are kept
	CellTimeout time.Duration // one cell's bound; 0: 3 minutes
	Cache       string        // kafka.Fetch's cache; empty: its default
	Log         io.Writer     // a line per cell as it ends; nil: none
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
}

// Repredict sets every cell's prediction, and whether it did worse, anew
// from predict (the scenario files as they are now: the model changes, the
// runs stand). A cell of a scenario predict does not know is an error.
func (r *Results) Repredict(predict func(scenario, family string) (string, bool), when string) error {
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Scenario == Baseline {
			c.Predicted, c.Worse = "no faults", false
			continue
		}
		p, ok := predict(c.Scenario, c.Family)
		if !ok {
			return fmt.Errorf("cell %d: scenario %q is not in the scenario files", i+1, c.Scenario)
		}
		c.Predicted, c.Worse = p, c.Err == "" && Worse(p, c.Happened)
	}
	r.Repredicted = when
	return nil
}

// ReadResults reads a matrix's JSON (WriteJSON), name naming it in errors.
func ReadResults(rd io.Reader, name string) (*Results, error) {
	var r Results
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(r.Cells) == 0 {
		return nil, fmt.Errorf("%s: no cells", name)
	}
	return &r, nil
}

func (s *Scenario) also() []string {
	if len(s.Also) == 0 {
		return nil
	}
	return []string{"The same schedule as " + strings.Join(s.Also, ", ") + "."}
}

// Run runs every cell of cfg: each broker version is started once (once
// more for each producer-state expiry a scenario needs), every client is
// prepared once. A cell that cannot run is recorded with its error, and
// the matrix goes on.
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
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	res := &Results{Started: time.Now().UTC(), Load: loadAvg(), Seconds: map[string]float64{},
		Brokers: cfg.Brokers, Shapes: cfg.Shapes, Schedule: map[string][]string{}, Notes: map[string][]string{}}
	argvs := map[string][]string{}
	for _, c := range cfg.Clients {
		argv, err := c.Prepare(ctx, &cfg.Env)
		if err != nil {
			return nil, err
		}
		argvs[c.Name] = argv
		res.Clients = append(res.Clients, c.Name)
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
	// Scenarios by the broker setting they need.
	var expiries []time.Duration
	byExpiry := map[time.Duration][]*Scenario{}
	for _, s := range cfg.Scenarios {
		if _, ok := byExpiry[s.Expiry]; !ok {
			expiries = append(expiries, s.Expiry)
		}
		byExpiry[s.Expiry] = append(byExpiry[s.Expiry], s)
	}
	start := time.Now()
	for _, v := range cfg.Brokers {
		for _, exp := range expiries {
			kc := kafka.Config{Version: v, Cache: cfg.Cache}
			if exp > 0 {
				kc.ProducerIDExpiration, kc.ProducerIDExpirationCheck = exp, byExpiry[exp][0].ExpiryCheck
				if kc.ProducerIDExpirationCheck <= 0 {
					kc.ProducerIDExpirationCheck = max(exp/4, 100*time.Millisecond)
				}
			}
			cl, err := kafka.Start(ctx, kc)
			if err != nil {
				return nil, fmt.Errorf("starting Kafka %s: %w", v, err)
			}
			for _, s := range byExpiry[exp] {
				t0 := time.Now()
				for _, c := range cfg.Clients {
					for _, sh := range cfg.Shapes {
						if exp > 0 {
							sh.IdleAfter, sh.Idle = sh.Records/2, exp+2*kc.ProducerIDExpirationCheck+time.Second
						}
						for run := 1; run <= cfg.Runs; run++ {
							cell := runCell(ctx, cellSpec{scenario: s, schedule: schedules[s.Name], client: c, argv: argvs[c.Name],
								shape: sh, broker: v, addr: cl.Bootstrap(), run: run, dir: cfg.Dir, kcheck: cfg.Env.Kcheck, timeout: cfg.CellTimeout})
							res.Cells = append(res.Cells, cell)
							fmt.Fprintln(cfg.Log, cell.line())
							if ctx.Err() != nil {
								cl.Stop()
								return res, ctx.Err()
							}
						}
					}
				}
				res.Seconds[s.Name] += time.Since(t0).Seconds()
			}
			if err := cl.Stop(); err != nil {
				fmt.Fprintf(cfg.Log, "matrix: stopping Kafka %s: %v\n", v, err)
			}
		}
	}
	res.Total = time.Since(start).Seconds()
	return res, nil
}

// line is a cell's progress line.
func (c Cell) line() string {
	if c.Err != "" {
		return fmt.Sprintf("%s | Kafka %s | %s | %s | error: %s", c.Scenario, c.Broker, c.Client, c.Shape, c.Err)
	}
	return fmt.Sprintf("%s | Kafka %s | %s | %s | %s | %s | verify %s (%s) | predicted %s | %.1f s",
		c.Scenario, c.Broker, c.Client, c.Shape, c.Reach.Status, c.What, c.Verdict, c.Agreement, c.Predicted, c.Seconds)
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
