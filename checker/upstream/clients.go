package upstream

import (
	"fmt"
	"strings"
)

// stockClient is a client kcheck's scenario matrix runs (matrix.Clients):
// what it is and the version kcheck's driver pins. A trace's header names
// the client, not its version; the version is the pin's at the commit that
// wrote the report (pinned_test.go holds the table to the pins).
type stockClient struct {
	what    string // the client, as its project names it
	version string
	pin     string // the file that pins it ("" for kcheck's own)
	needle  string // what the pin says, in that file
}

var stockClients = map[string]stockClient{
	"java-4.3.1":   {"Apache Kafka Java client (kafka-clients)", "4.3.1", "matrix/clients.go", `javaDriver("4.3.1")`},
	"java-4.4.0":   {"Apache Kafka Java client (kafka-clients)", "4.4.0", "matrix/clients.go", `javaDriver("4.4.0")`},
	"kgo":          {"franz-go (kgo)", "v1.22.3", "go.mod", "github.com/twmb/franz-go v1.22.3"},
	"sarama":       {"IBM/sarama", "v1.61.1", "go.mod", "github.com/IBM/sarama v1.61.1"},
	"librdkafka":   {"librdkafka, through confluent-kafka-python 2.16.1", "2.16.0", "drivers/python/requirements.txt", "confluent-kafka==2.16.1"},
	"aiokafka":     {"aiokafka", "0.14.0", "drivers/python/requirements.txt", "aiokafka==0.14.0"},
	"kafka-python": {"kafka-python", "3.0.12", "drivers/python/requirements.txt", "kafka-python==3.0.12"},
	"kafkajs":      {"KafkaJS", "2.2.4", "drivers/kafkajs/package.json", `"kafkajs": "2.2.4"`},
}

// ours names kcheck's own producer's rules in the matrix (matrix.Clients).
var ours = map[string]string{
	"ours-off":     "first-ack rule off (the Java client's rules)",
	"ours-on":      "first-ack rule and idle re-arm rule on",
	"ours-norearm": "first-ack rule on, idle re-arm rule off",
}

// ClientText says which client, at which version, a trace's header names
// (tracer.Header.Client): a stock client of the matrix with the version
// kcheck pins, a build (NAME@VERSION, NAME@PATH: package builds), kcheck's
// own producer, or else the name as it is.
func ClientText(name string) string {
	if c, ok := stockClients[name]; ok {
		return fmt.Sprintf("%s %s (the version kcheck's driver pins: %s)", c.what, c.version, c.pin)
	}
	if rules, ok := ours[name]; ok {
		return "kcheck's own producer (github.com/kcheck/kcheck/producer), " + rules
	}
	if name == "kcheck/producer" {
		return "kcheck's own producer (github.com/kcheck/kcheck/producer)"
	}
	if base, spec, ok := strings.Cut(name, "@"); ok {
		return fmt.Sprintf("%s at %s (a build: kcheck scenarios run --clients %s)", base, spec, name)
	}
	return name + " (its version is not in the trace)"
}
