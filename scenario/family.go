package scenario

import "slices"

// Family is a group of clients whose rules the spec models with the same
// constants.
type Family struct {
	Name    string
	Doc     string
	Clients []string // the clients in it, as bench/race.sh names them
	// Rules are the constants that model the family's rules, set on the
	// source configuration for a prediction. A family whose rules name a
	// constant the spec does not declare is not modelled.
	Rules []Constant
}

// Constant is a TLC constant and its value, as a .cfg file writes it.
type Constant struct {
	Name, Value string
}

// Families is every client family, in the order scenario files list their
// predictions. Each family's Rules are set on top of rulesOff. Each sets
// MaxInFlight to its clients' own (5 for the pipelining ones: Java's,
// librdkafka's and kgo's default with idempotence, and ours), not the
// source configuration's: SeedGapKafkajs models kafkajs's one request in
// flight, and predicted librdkafka safe there until its own 5 were set.
var Families = []Family{
	{
		Name: "ours", Doc: "kcheck's producer with its rules on",
		Clients: []string{"ours-on"},
		Rules:   []Constant{{"FirstAckRule", "TRUE"}, {"HoldWhileRetrying", "TRUE"}, {"RearmAfterIdle", "TRUE"}, {"MaxInFlight", "5"}},
	},
	{
		Name: "ours-norearm", Doc: "kcheck's producer with the first-ack rule and HoldWhileRetrying on but the idle re-arm off",
		Clients: []string{"ours-norearm"},
		Rules:   []Constant{{"FirstAckRule", "TRUE"}, {"HoldWhileRetrying", "TRUE"}, {"RearmAfterIdle", "FALSE"}, {"MaxInFlight", "5"}},
	},
	{
		Name: "java", Doc: "the Java client 4.x (no first-ack rule), with its late answer that fails a batch and bumps at once (LateAnswerFails)",
		Clients: []string{"java-4.3.1", "java-4.4.0"},
		Rules:   []Constant{{"FirstAckRule", "FALSE"}, {"HoldWhileRetrying", "FALSE"}, {"LateAnswerFails", "TRUE"}, {"MaxInFlight", "5"}},
	},
	{
		Name: "ours-off", Doc: "kcheck's producer with its rules off: the Java client's rules but the late answer (a late answer is retried, then expires)",
		Clients: []string{"ours-off"},
		Rules:   []Constant{{"FirstAckRule", "FALSE"}, {"HoldWhileRetrying", "FALSE"}, {"MaxInFlight", "5"}},
	},
	{
		Name: "kgo", Doc: "franz-go: its okOnSink gate (PipelineAfterOk): nothing more in flight behind a partition's oldest batch unless its last answer was a success; a batch pinned to the epoch it was first sent with, renumbered only once refused for it (BumpRule pin)",
		Clients: []string{"kgo"},
		Rules:   []Constant{{"FirstAckRule", "FALSE"}, {"HoldWhileRetrying", "FALSE"}, {"PipelineAfterOk", "TRUE"}, {"BumpRule", `"pin"`}, {"MaxInFlight", "5"}},
	},
	{
		Name: "sarama", Doc: "sarama: one batch per partition in flight; a failed batch bumps the epoch at once, nothing renumbered (BumpRule failbump)",
		Clients: []string{"sarama"},
		Rules:   []Constant{{"FirstAckRule", "FALSE"}, {"HoldWhileRetrying", "FALSE"}, {"BumpRule", `"failbump"`}, {"MaxInFlight", "1"}},
	},
	{
		Name: "aiokafka", Doc: "aiokafka: one batch per partition in flight; no epoch bump, a sent batch retried until answered, any other error fails it alone (BumpRule none)",
		Clients: []string{"aiokafka"},
		Rules:   []Constant{{"FirstAckRule", "FALSE"}, {"HoldWhileRetrying", "FALSE"}, {"BumpRule", `"none"`}, {"MaxInFlight", "1"}},
	},
	{
		Name: "one-in-flight", Doc: "kafka-python: one batch per partition in flight; a sequence or producer-id error renews the producer id with no wait, a batch of the old id gets one more try (BumpRule renew)",
		Clients: []string{"kafka-python"},
		Rules:   []Constant{{"FirstAckRule", "FALSE"}, {"HoldWhileRetrying", "FALSE"}, {"BumpRule", `"renew"`}, {"MaxInFlight", "1"}},
	},
	{
		Name: "kafkajs", Doc: "kafkajs: a failed request's sequences handed back, one request in flight",
		Clients: []string{"kafkajs"},
		Rules:   []Constant{{"FirstAckRule", "FALSE"}, {"HoldWhileRetrying", "FALSE"}, {"HandBackOnError", "TRUE"}, {"MaxInFlight", "1"}},
	},
	{
		Name: "librdkafka", Doc: "librdkafka: a batch acknowledged implicitly by a later one's success (rd_kafka_dr_implicit_ack); epoch bumps after a producer-wide drain, every unacknowledged batch renumbered (BumpRule drain)",
		Clients: []string{"librdkafka"},
		Rules:   []Constant{{"FirstAckRule", "FALSE"}, {"HoldWhileRetrying", "FALSE"}, {"ImplicitAck", "TRUE"}, {"BumpRule", `"drain"`}, {"MaxInFlight", "5"}},
	},
}

// rulesOff are client-rule constants a family leaves off unless its Rules
// set them; each is set only when the spec declares it, so that a spec
// without the rule still models every family that does not need it.
var rulesOff = []Constant{{"HandBackOnError", "FALSE"}, {"ImplicitAck", "FALSE"}, {"PipelineAfterOk", "FALSE"}, {"AppSerial", "FALSE"}, {"RearmAfterIdle", "FALSE"}, {"BumpRule", `"java"`}, {"LateAnswerFails", "FALSE"}}

// predictionBroker is what a prediction sets for the broker: every real
// broker kcheck runs (Kafka 4.1.0, 4.3.1, 4.4.0) is in 2.5-4.4, on a new log.
var predictionBroker = []Constant{{"NoStateRule", `"v25to44"`}, {"PreWritten", "FALSE"}}

// FamilyOf returns the name of the family client is in (client as
// bench/race.sh names it, such as java-4.3.1 or kafka-python), or "" if none.
func FamilyOf(client string) string {
	for _, f := range Families {
		for _, c := range f.Clients {
			if c == client {
				return f.Name
			}
		}
	}
	return ""
}

func family(name string) (Family, bool) {
	for _, f := range Families {
		if f.Name == name {
			return f, true
		}
	}
	return Family{}, false
}

// familyConstants returns the constants a prediction for f sets, given
// the constants the module declares; false if f's rules name one it does
// not declare.
func familyConstants(f Family, declared []string) ([]Constant, bool) {
	var set []Constant
	for _, k := range rulesOff {
		if slices.Contains(declared, k.Name) && !slices.ContainsFunc(f.Rules, func(r Constant) bool { return r.Name == k.Name }) {
			set = append(set, k)
		}
	}
	for _, k := range f.Rules {
		if !slices.Contains(declared, k.Name) {
			return nil, false
		}
		set = append(set, k)
	}
	return append(set, predictionBroker...), true
}
