package matrix

import (
	"context"
	"fmt"
	"io"
	"time"

	bk "github.com/kcheck/kcheck/brokers"
	"github.com/kcheck/kcheck/kafka"
	"github.com/kcheck/kcheck/topics"
	"github.com/kcheck/kcheck/wire"
)

// Skipped is a scenario a matrix did not run, and why.
type Skipped struct {
	Scenario string `json:"scenario"`
	Broker   string `json:"broker,omitempty"` // the broker it cannot run on; "": any of this matrix
	Why      string `json:"why"`
}

// NeedsOwnBrokers says why s cannot run on a cluster kcheck did not start
// (Config.Bootstrap), or "" when it can: a producer-state expiry needs the
// brokers' settings, and a cluster fault needs their processes.
func NeedsOwnBrokers(s *Scenario) string {
	switch {
	case s.Nodes > 1:
		return fmt.Sprintf("its faults pause, kill or restart the cluster's nodes, which only a cluster kcheck starts (%d nodes) lets it do", s.Nodes)
	case s.Expiry > 0:
		return fmt.Sprintf("it needs brokers set to forget an idle producer after %v (producer.id.expiration.ms), which only brokers kcheck starts are", s.Expiry)
	case s.TxnVersion > 0:
		return "it needs the cluster's transaction.version and transaction.partition.verification.enable set for it, which kcheck sets only on brokers it starts"
	}
	return ""
}

// CannotRun says why scenario s cannot run on broker b, or "" when it can:
// a broker other than Apache Kafka runs as one node here, with no setting
// for producer-state expiry; Kafka before 3.4 has no expiry check interval
// to set (kafka.ExpiryCheckable).
func CannotRun(b bk.Spec, s *Scenario) string {
	if s.TxnTimeout {
		return "it needs the coordinator to abort a transaction left open past the client's transaction.timeout.ms, and no driver sets transaction.timeout.ms (each client keeps its own default, 60 s)"
	}
	if b.Kind == bk.Kafka {
		switch {
		case s.Expiry > 0 && !kafka.ExpiryCheckable(b.Version):
			return fmt.Sprintf("it needs brokers set to forget an idle producer after %v, and Kafka %s has no producer.id.expiration.check.interval.ms (KIP-854, 3.4.0): it looks for idle producers every ten minutes", s.Expiry, b.Version)
		case s.TxnVerification && !kafka.TxnVerifiable(b.Version):
			return fmt.Sprintf("it needs brokers that verify a partition is in the transaction before its first transactional append (KIP-890 part 1, 3.6.0), and Kafka %s does not", b.Version)
		case s.TxnVersion > 1 && !kafka.TV2Capable(b.Version):
			return fmt.Sprintf("it needs transaction version %d (KIP-890 part 2, Kafka 4.0), and Kafka %s has only 1", s.TxnVersion, b.Version)
		}
		return ""
	}
	switch {
	case s.TxnVersion > 0:
		return fmt.Sprintf("it needs the cluster's transaction.version and partition verification set for it, which kcheck sets only on Apache Kafka; %s runs as it is", b)
	case s.Nodes > 1:
		return fmt.Sprintf("its faults pause, kill or restart the nodes of an Apache Kafka cluster of %d kcheck starts; %s runs as one broker here", s.Nodes, b)
	case s.Expiry > 0:
		return fmt.Sprintf("it needs brokers set to forget an idle producer after %v (producer.id.expiration.ms), a setting kcheck cannot give %s", s.Expiry, b)
	}
	return ""
}

// BrokerWords is a broker of a matrix (Config.Brokers) in words: "Kafka
// 4.1.0", "tansu 0.6.0".
func BrokerWords(name string) string {
	if s, err := bk.Parse(name); err == nil {
		return s.String()
	}
	return name
}

// external splits scenarios into those a cluster kcheck did not start can
// run and those it skips.
func external(scenarios []*Scenario) (run []*Scenario, skipped []Skipped) {
	for _, s := range scenarios {
		if why := NeedsOwnBrokers(s); why != "" {
			skipped = append(skipped, Skipped{Scenario: s.Name, Why: why})
			continue
		}
		run = append(run, s)
	}
	return run, skipped
}

// RunID names one run of a matrix on a cluster kcheck did not start, in its
// topics' names: the start time, to the second, in UTC.
func RunID(t time.Time) string { return t.UTC().Format("20060102t150405") }

// deleteTopics deletes the topics a matrix made on the cluster at addr,
// saying on log what it could not delete.
func deleteTopics(addr string, names []string, log io.Writer) {
	if len(names) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := wire.Dial(ctx, addr, "kcheck-scenarios")
	if err == nil {
		defer conn.Close()
		err = topics.Delete(ctx, conn, names...)
	}
	if err != nil {
		fmt.Fprintf(log, "matrix: deleting the %d topics this run made on %s: %v\n", len(names), addr, err)
		return
	}
	fmt.Fprintf(log, "matrix: deleted the %d topics this run made on %s\n", len(names), addr)
}
