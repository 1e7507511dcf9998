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
	via     string // how the driver reaches it, when not directly
	pin     string // the file that pins it ("" for kcheck's own)
	needle  string // what the pin says, in that file
}

var stockClients = map[string]stockClient{
	"java-4.3.1":   {what: "Apache Kafka Java client (kafka-clients)", version: "4.3.1", pin: "matrix/clients.go", needle: `javaDriver("4.3.1")`},
	"java-4.4.0":   {what: "Apache Kafka Java client (kafka-clients)", version: "4.4.0", pin: "matrix/clients.go", needle: `javaDriver("4.4.0")`},
	"kgo":          {what: "franz-go (kgo)", version: "v1.22.3", pin: "go.mod", needle: "github.com/twmb/franz-go v1.22.3"},
	"sarama":       {what: "IBM/sarama", version: "v1.61.1", pin: "go.mod", needle: "github.com/IBM/sarama v1.61.1"},
	"librdkafka":   {what: "librdkafka", version: "2.16.0", via: "through confluent-kafka-python 2.16.1, whose wheel bundles it", pin: "drivers/python/requirements.txt", needle: "confluent-kafka==2.16.1"},
	"aiokafka":     {what: "aiokafka", version: "0.14.0", pin: "drivers/python/requirements.txt", needle: "aiokafka==0.14.0"},
	"kafka-python": {what: "kafka-python", version: "3.0.12", pin: "drivers/python/requirements.txt", needle: "kafka-python==3.0.12"},
	"kafkajs":      {what: "KafkaJS", version: "2.2.4", pin: "drivers/kafkajs/package.json", needle: `"kafkajs": "2.2.4"`},
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
		via := ""
		if c.via != "" {
			via = ", " + c.via
		}
		return fmt.Sprintf("%s %s%s (the version kcheck's driver pins: %s)", c.what, c.version, via, c.pin)
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
