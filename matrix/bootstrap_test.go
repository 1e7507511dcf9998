package matrix

import (
	"strings"
	"testing"
	"time"

	bk "github.com/kcheck/kcheck/brokers"
)

// On a cluster kcheck did not start, a scenario that needs producer-state
// expiry or the nodes' processes is skipped, with why; the rest run, and
// the Markdown says where and what was skipped.
func TestExternalSkipsWhatNeedsOwnBrokers(t *testing.T) {
	scs := []*Scenario{{Name: Baseline}, {Name: "Race"}, {Name: "Expiry", Expiry: 2 * time.Second}, {Name: "kill-leader", Nodes: 3}}
	run, skipped := external(scs)
	if len(run) != 2 || run[0].Name != Baseline || run[1].Name != "Race" {
		t.Errorf("run %v; want Baseline and Race", run)
	}
	if len(skipped) != 2 || skipped[0].Scenario != "Expiry" || !strings.Contains(skipped[0].Why, "producer.id.expiration.ms") ||
		skipped[1].Scenario != "kill-leader" || !strings.Contains(skipped[1].Why, "nodes") {
		t.Errorf("skipped %+v; want Expiry (for its expiry) and kill-leader (for its nodes)", skipped)
	}
	r := &Results{Brokers: []string{"4.1"}, Bootstrap: "127.0.0.1:9092", Skipped: skipped, Cells: []Cell{{Scenario: Baseline, Broker: "4.1", Client: "ours-on", Shape: "1p-one"}}}
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"On the cluster at 127.0.0.1:9092, which kcheck did not start (Kafka 4.1)", "- Skipped Expiry: it needs", "- Skipped kill-leader: its faults"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the Markdown does not say %q:\n%s", want, b.String())
		}
	}
}

// RunID names a run by its start, in UTC, in what a topic's name may hold.
func TestRunID(t *testing.T) {
	at := time.Date(2026, 12, 4, 4, 30, 5, 0, time.FixedZone("x", 3600))
	if got := RunID(at); got != "20261204t033005" || topicUnsafe.MatchString(got) {
		t.Errorf("RunID = %q; want 20261204t033005", got)
	}
}

// A broker that cannot act on a scenario's needs skips it, with why: an
// expiry scenario on Kafka before 3.4 (no expiry check interval), and on
// tansu; a cluster scenario on tansu; a transactional one that needs
// partition verification before 3.6, TV2 before 4.0, and any on a broker
// other than Apache Kafka; one that needs the coordinator's timeout
// anywhere (no driver sets it). Kafka from 3.4 runs the rest.
func TestCannotRun(t *testing.T) {
	expiry := &Scenario{Name: "Expiry", Expiry: 2 * time.Second}
	cluster := &Scenario{Name: "kill-leader", Nodes: 3}
	race := &Scenario{Name: "Race"}
	txn := &Scenario{Name: "TxnTV1", TxnVersion: 1}
	verify := &Scenario{Name: "TxnTV1Verify", TxnVersion: 1, TxnVerification: true}
	tv2 := &Scenario{Name: "TxnTV2", TxnVersion: 2}
	timeout := &Scenario{Name: "TxnTV2Timeout", TxnVersion: 2, TxnTimeout: true}
	for _, c := range []struct {
		broker string
		s      *Scenario
		want   string // a phrase of why; "" runs
	}{
		{"kafka-2.8.2", expiry, "KIP-854"},
		{"3.3.2", expiry, "KIP-854"},
		{"3.4.0", expiry, ""},
		{"4.4.0", expiry, ""},
		{"kafka-2.8.2", race, ""},
		{"4.4.0", cluster, ""},
		{"tansu-0.6.0", expiry, "producer.id.expiration.ms"},
		{"tansu-0.6.0", cluster, "nodes"},
		{"kfake-4.1", race, ""},
		{"kafka-2.8.2", txn, ""},
		{"3.5.2", txn, ""},
		{"3.5.2", verify, "KIP-890 part 1"},
		{"3.6.0", verify, ""},
		{"3.9.1", tv2, "KIP-890 part 2"},
		{"4.1.0", tv2, ""},
		{"4.4.0", timeout, "transaction.timeout.ms"},
		{"kfake-4.1", txn, "only on Apache Kafka"},
		{"tansu-0.6.0", txn, "only on Apache Kafka"},
	} {
		b, err := bk.Parse(c.broker)
		if err != nil {
			t.Fatal(err)
		}
		why := CannotRun(b, c.s)
		if c.want == "" && why != "" || c.want != "" && !strings.Contains(why, c.want) {
			t.Errorf("%s on %s: %q; want %q", c.s.Name, c.broker, why, c.want)
		}
	}
}
