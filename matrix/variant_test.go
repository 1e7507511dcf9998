package matrix

import (
	"testing"

	"github.com/kcheck/kcheck/scenario"
)

// A cell on tansu takes the scenario's predictions on the spec's tansu
// variant; one on Apache Kafka or kfake (which emulates it) the scenario's
// own; a scenario with none for tansu predicts nothing there.
func TestPredictionsByBroker(t *testing.T) {
	sc := &Scenario{Name: "SeedGap.NoGap", Schedule: []string{"x"}, Family: scenario.FamilyOf,
		Predictions: map[string]string{"java": "invariant:NoGap", "librdkafka": "invariant:NoGap"},
		On:          map[string]map[string]string{"tansu": {"java": "pass", "librdkafka": "liveness"}}}
	bare := &Scenario{Name: "SeedGap.NoGap", Schedule: []string{"x"}, Family: scenario.FamilyOf,
		Predictions: map[string]string{"java": "invariant:NoGap"}}
	cs, err := LookupClients([]string{"java-4.4.0", "librdkafka"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		sc             *Scenario
		broker, client string
		variant, want  string
	}{
		{sc, "4.4.0", "java-4.4.0", "", "invariant:NoGap"},
		{sc, "kafka-3.9.1", "librdkafka", "", "invariant:NoGap"},
		{sc, "kfake-4.1", "java-4.4.0", "", "invariant:NoGap"},
		{sc, "tansu-0.6.0", "java-4.4.0", "tansu", "pass"},
		{sc, "tansu-0.6.0", "librdkafka", "tansu", "liveness"},
		{bare, "tansu-0.6.0", "java-4.4.0", "tansu", "not modelled"},
	} {
		if v := Variant(tt.broker); v != tt.variant {
			t.Errorf("Variant(%q) = %q, want %q", tt.broker, v, tt.variant)
		}
		var c Client
		for _, x := range cs {
			if x.Name == tt.client {
				c = x
			}
		}
		cell := cellSpec{scenario: tt.sc, client: c, broker: tt.broker}.cell()
		if cell.Predicted != tt.want {
			t.Errorf("%s on %s: predicted %q, want %q", tt.client, tt.broker, cell.Predicted, tt.want)
		}
	}
	// A previous run's cells repredicted choose the same way.
	r := &Results{Cells: []Cell{
		{Scenario: sc.Name, Broker: "tansu-0.6.0", Client: "librdkafka", Family: "librdkafka", Verdict: "valid"},
		{Scenario: sc.Name, Broker: "4.4.0", Client: "librdkafka", Family: "librdkafka", Verdict: "valid"},
	}}
	if err := r.Repredict(func(_, broker string) (map[string]string, bool) { return sc.PredictionsFor(broker), true }, "now"); err != nil {
		t.Fatal(err)
	}
	if got := []string{r.Cells[0].Predicted, r.Cells[1].Predicted}; got[0] != "liveness" || got[1] != "invariant:NoGap" {
		t.Errorf("repredicted: %q, want liveness on tansu, invariant:NoGap on Kafka", got)
	}
}
