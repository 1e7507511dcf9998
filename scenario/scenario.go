package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kcheck/kcheck/fault"
)

// Scenario is one TLC counterexample as a fault schedule, with what a run of
// it needs besides the faults and what each client family's rules predict.
type Scenario struct {
	Name      string // Config + "." + Invariant
	Config    string // the source configuration, spec/<Config>.cfg
	Expect    string // the configuration's expected outcome in expect.tsv, such as invariant:NoGap
	Invariant string // the invariant, or temporal property, the counterexample violates
	Liveness  bool   // Invariant is a temporal property: the counterexample is a lasso

	// Steps is the counterexample after its initial state, one step per
	// state, numbered as TLC numbers its states (the initial state is 1).
	Steps []Step
	// Loop is the state a lasso returns to after its last step; 0 if none.
	Loop int
	// Stutter reports that the behaviour stutters forever after its last step.
	Stutter bool

	// Schedule is the faults, one line each in the form fault.Parse reads,
	// in the order of the steps they come from.
	Schedule []string
	Needs    Needs
	// Notes say, one line each, what the counterexample does that is no
	// fault: the steps only the client or the application can take.
	Notes []string
	// Predictions maps a family's name (Families) to TLC's outcome on Config
	// with the family's rules: "pass", "invariant:<Name>", "liveness", or
	// NotModelled.
	Predictions map[string]string
	// On maps a broker variant's name (Variants) to its predictions, as
	// Predictions: TLC's outcome on Config with the family's rules and the
	// variant's broker.
	On map[string]map[string]string

	file       string // where it was read, for messages
	nameLine   int    // the line of its scenario line in file
	faultLines []int  // the line of each Schedule entry in file
}

// NotModelled is the prediction for a family whose rules the spec does not
// declare constants for.
const NotModelled = "not modelled"

// Needs is what a run of the scenario needs besides its faults.
type Needs struct {
	// Partitions is the number of partitions the model has (the schedule
	// names partitions 0 to Partitions-1).
	Partitions int
	// NoStateRule is the broker's answer to a producer it holds no state
	// for, as the source configuration models it: v25to44 is every Kafka
	// from 2.5 to 4.4 (every broker kcheck runs), v45 Kafka 4.5, kafka19880
	// a broker with the KAFKA-19880 proposal, pre25 one before 2.5.
	NoStateRule string
	// PreWritten: the partition's log must already hold another producer's
	// record when the run starts.
	PreWritten bool
	// MaxInFlight is the client's max.in.flight.requests.per.connection the
	// counterexample assumes; DedupWindow the batches the broker retains per
	// producer (Kafka retains 5, fixed).
	MaxInFlight, DedupWindow int
	// ExpiryMs is the broker's producer.id.expiration.ms the schedule's
	// state-expiry needs, and ExpiryCheckMs its
	// producer.id.expiration.check.interval.ms; 0 when there is none.
	ExpiryMs, ExpiryCheckMs int64
	// Idle: the workload must leave a partition idle (longer than ExpiryMs)
	// for the broker to forget the producer.
	Idle bool
	// DeliveryTimeout: the client's delivery timeout must fail a batch that
	// is waiting to be retried (the spec's ExpireBatch).
	DeliveryTimeout bool
	// AppResends: the application must produce a failed batch again (the
	// spec's ResendByApp).
	AppResends bool

	// TxnVersion: a transactional scenario (spec/TransactionalProducer.tla):
	// "tv1" or "tv2", the transaction version the counterexample assumes;
	// "" for an idempotent one.
	TxnVersion string
	// TxnVerification: the brokers verify a partition is in the transaction
	// before its first transactional append (KIP-890 part 1, TV1 on 3.6+).
	TxnVerification bool
	// TxnTimeout: the coordinator must abort the transaction left open past
	// the client's transaction.timeout.ms (the spec's CoordTimeout).
	TxnTimeout bool
	// NewInstance: a second producer with the same transactional.id must
	// start and fence the first (the spec's NewInstanceInit).
	NewInstance bool
}

// Step is one step of a counterexample: its TLC state number, the spec
// action, and the fields of the event it recorded (without act), in a fixed
// order (fieldOrder).
type Step struct {
	State  int
	Action string
	Fields []Field
}

// Field is one field of an event: its name and its value, a string without
// its quotes.
type Field struct {
	Name, Value string
}

// Get returns the value of the event's field name, or "".
func (s Step) Get(name string) string {
	for _, f := range s.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// String returns the step as a scenario file writes it after "step N ":
// the action, then name=value for each field.
func (s Step) String() string {
	var b strings.Builder
	b.WriteString(s.Action)
	for _, f := range s.Fields {
		b.WriteString(" " + f.Name + "=" + quoteField(f.Value))
	}
	return b.String()
}

// quoteField writes a field's value bare when it is a plain word, quoted
// (Go syntax) otherwise.
func quoteField(v string) string {
	if v != "" && strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:+-", r))
	}) < 0 {
		return v
	}
	return strconv.Quote(v)
}

// Faults parses the schedule, each line with fault.Parse. An error names
// the scenario file and line the fault was read from.
func (s *Scenario) Faults() ([]fault.Fault, error) {
	var out []fault.Fault
	for i, line := range s.Schedule {
		f, err := fault.Parse(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.faultPos(i), err)
		}
		out = append(out, f)
	}
	return out, nil
}

func (s *Scenario) faultPos(i int) string {
	if s.file != "" && i < len(s.faultLines) {
		return fmt.Sprintf("%s:%d", s.file, s.faultLines[i])
	}
	return fmt.Sprintf("scenario %s: fault %d", s.Name, i+1)
}

// PredictionsOn returns the predictions for a broker: the variant's
// (On[variant]) for a broker variant, Predictions for variant "" (Apache
// Kafka's rules); nil when the scenario has none for it.
func (s *Scenario) PredictionsOn(variant string) map[string]string {
	if variant == "" {
		return s.Predictions
	}
	return s.On[variant]
}

// Predict returns the prediction for client (a name as bench/race.sh
// spells it, such as java-4.3.1), from its family; "" if the client is in
// no family or the scenario predicts nothing for it.
func (s *Scenario) Predict(client string) string {
	return s.Predictions[FamilyOf(client)]
}
