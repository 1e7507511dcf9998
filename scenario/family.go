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

// TxnFamilies is every transactional client family, predicted on the
// configurations of spec/TransactionalProducer.tla in this order (after the
// names Families already wrote). A family's Rules there are the transaction
// version it speaks to Kafka 4.4.0 (TV, read from the wire by kcheck proxy:
// drivers/WORKLOADS.md, "Transactions"; TV1 on a configuration whose
// cluster is at TV1: spokenTV) and the module's client-family
// constants, each cited in the spec from the client's source: whether an
// abort after a failed batch bumps the epoch (TxnBumpOnExpiry,
// TxnBumpOnError), whether an expired batch makes the transaction abortable
// (ExpiryAborts), what a lost or timed-out EndTxn does (EndTxnLost), and
// whether a sent batch can expire at all (DeliveryTimeout). MaxInFlight is
// the source configuration's: the transactional models keep it small.
var TxnFamilies = []Family{
	{
		Name: "ours", Doc: "kcheck's producer: the Java client's transactional rules with the first-ack rule, TV2",
		Clients: []string{"ours-on"},
		Rules:   txnRules("TV2", true, true, true, true, "resend", true),
	},
	{
		Name: "java", Doc: "the Java client 4.x: TV2; any failed batch aborts the transaction and (TV1) bumps the epoch after the abort; a lost EndTxn is sent again",
		Clients: []string{"java-4.3.1", "java-4.4.0"},
		Rules:   txnRules("TV2", false, true, true, true, "resend", true),
	},
	{
		Name: "kgo", Doc: "franz-go: TV2 (EndTxn v5 bumps the epoch); a failed batch fails the producer id, so the commit is refused; a lost EndTxn is retried (its spent retries reload the producer id: not modelled)",
		Clients: []string{"kgo"},
		Rules:   txnRules("TV2", false, true, true, true, "resend", true),
	},
	{
		Name: "sarama", Doc: "sarama 1.61.1: TV1; any failed message makes the transaction abortable and asks for an epoch bump after the abort (Version >= 2.5); EndTxn retried on a network error",
		Clients: []string{"sarama"},
		Rules:   txnRules("TV1", false, true, true, true, "resend", true),
	},
	{
		Name: "librdkafka", Doc: "librdkafka 2.16.0: TV1; a message timeout aborts with an epoch bump, another permanent produce error without one; EndTxn retried on a transport error or timeout",
		Clients: []string{"librdkafka"},
		Rules:   txnRules("TV1", false, true, false, true, "resend", true),
	},
	{
		Name: "aiokafka", Doc: "aiokafka 0.14.0: TV1; no epoch bump ever, and no sent batch of a transactional producer expires; EndTxn retried",
		Clients: []string{"aiokafka"},
		Rules:   txnRules("TV1", false, false, false, true, "resend", false),
	},
	{
		Name: "one-in-flight", Doc: "kafka-python 3.0.12: TV1; an expired batch fails alone (no abortable error, no bump) and the driver commits the rest; a sequence or epoch error bumps; EndTxn reenqueued",
		Clients: []string{"kafka-python"},
		Rules:   txnRules("TV1", false, false, true, false, "resend", true),
	},
	{
		Name: "kafkajs", Doc: "kafkajs 2.2.4: TV1; no abortable state and no epoch bump: a failed send() fails its records alone and the driver commits the rest; a lost or timed-out EndTxn fails the commit and ends the producer's transactions",
		Clients: []string{"kafkajs"},
		Rules:   txnRules("TV1", false, false, false, false, "fail", true),
	},
}

// txnRules returns a transactional family's constants (TxnFamilies).
func txnRules(tv string, firstAck, bumpOnExpiry, bumpOnError, expiryAborts bool, endTxnLost string, deliveryTimeout bool) []Constant {
	b := func(v bool) string {
		if v {
			return "TRUE"
		}
		return "FALSE"
	}
	return []Constant{{"TV", `"` + tv + `"`}, {"FirstAckRule", b(firstAck)},
		{"TxnBumpOnExpiry", b(bumpOnExpiry)}, {"TxnBumpOnError", b(bumpOnError)}, {"ExpiryAborts", b(expiryAborts)},
		{"EndTxnLost", `"` + endTxnLost + `"`}, {"DeliveryTimeout", b(deliveryTimeout)}}
}

// spokenTV lowers a transactional family's TV to the configuration's
// (cluster) when that is "TV1": a client that can speak TV2 reads the
// cluster's finalized transaction.version and speaks TV1 to a cluster at
// 1 (Java 4.x, kgo and ours do: the trace headers' txn_version 1 on
// Kafka 3.x and on 4.x lowered to 1), so the family's rules are predicted
// under TV1 there.
func spokenTV(set []Constant, cluster string) []Constant {
	if cluster != `"TV1"` {
		return set
	}
	out := slices.Clone(set)
	for i := range out {
		if out[i].Name == "TV" {
			out[i].Value = `"TV1"`
		}
	}
	return out
}

// txnModule is the module whose configurations take TxnFamilies.
const txnModule = "TransactionalProducer"

// familiesFor returns the families predicted on a configuration of module.
func familiesFor(module string) []Family {
	if module == txnModule {
		return TxnFamilies
	}
	return Families
}

// familyOrder is every family name, in the order scenario files list their
// predictions: Families, then the names only TxnFamilies has.
func familyOrder() []string {
	var names []string
	for _, fs := range [][]Family{Families, TxnFamilies} {
		for _, f := range fs {
			if !slices.Contains(names, f.Name) {
				names = append(names, f.Name)
			}
		}
	}
	return names
}

// rulesOff are client-rule constants a family leaves off unless its Rules
// set them; each is set only when the spec declares it, so that a spec
// without the rule still models every family that does not need it.
var rulesOff = []Constant{{"HandBackOnError", "FALSE"}, {"ImplicitAck", "FALSE"}, {"PipelineAfterOk", "FALSE"}, {"AppSerial", "FALSE"}, {"RearmAfterIdle", "FALSE"}, {"BumpRule", `"java"`}, {"LateAnswerFails", "FALSE"}}

// predictionBroker is what a prediction sets for the broker: every real
// broker kcheck runs (Kafka 4.1.0, 4.3.1, 4.4.0) is in 2.5-4.4, on a new log.
var predictionBroker = []Constant{{"NoStateRule", `"v25to44"`}, {"PreWritten", "FALSE"}}

// A Variant is a broker the spec models with rules other than Apache
// Kafka's; its predictions set Broker in place of predictionBroker.
type Variant struct {
	Name   string     // as broker kinds are named (brokers.Kind)
	Doc    string     // what the variant models
	Broker []Constant // the constants that select it
	// Unmodelled are the families the variant does not model, each with
	// why: their prediction on it is NotModelled.
	Unmodelled map[string]string
	// NoExpiry: the broker never forgets a producer, so a source
	// configuration with producer-state expiry predicts nothing on it.
	NoExpiry bool
}

// Variants are the broker variants of spec/IdempotentProducer.tla, in the
// order scenario files list their predictions.
var Variants = []Variant{
	{
		Name: "tansu", Doc: "tansu 0.6.0 (TansuVerdict): the next sequence only, any lower one DUPLICATE_SEQUENCE_NUMBER with no offset, any epoch but InitProducerId's PRODUCER_FENCED",
		Broker: []Constant{{"NoStateRule", `"tansu"`}, {"PreWritten", "FALSE"}},
		Unmodelled: map[string]string{
			"one-in-flight": "kafka-python renews its producer id with InitProducerId, which tansu answers UNKNOWN_SERVER_ERROR for a producer that has an id",
		},
		NoExpiry: true,
	},
}

// VariantOf returns the variant named name, and whether there is one.
func VariantOf(name string) (Variant, bool) {
	for _, v := range Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// variantRule reports whether a NoStateRule value (as a .cfg writes it,
// quoted) selects a broker variant rather than a Kafka version.
func variantRule(value string) bool {
	for _, v := range Variants {
		for _, k := range v.Broker {
			if k.Name == "NoStateRule" && k.Value == value {
				return true
			}
		}
	}
	return false
}

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
	for _, fs := range [][]Family{Families, TxnFamilies} {
		for _, f := range fs {
			if f.Name == name {
				return f, true
			}
		}
	}
	return Family{}, false
}

// variantConstants returns the constants a prediction for f on the broker
// variant v sets, given the constants the module declares and the source
// configuration's StateExpiry; false if v or the module does not model f
// there.
func variantConstants(f Family, v Variant, declared []string, expiry bool) ([]Constant, bool) {
	if _, no := v.Unmodelled[f.Name]; no || v.NoExpiry && expiry {
		return nil, false
	}
	set, ok := familyConstants(f, declared)
	if !ok {
		return nil, false
	}
	return append(set[:len(set)-len(predictionBroker)], v.Broker...), true
}

// familyConstants returns the constants a prediction for f sets, given
// the constants the module declares; false if f's rules name one it does
// not declare. predictionBroker comes last.
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
