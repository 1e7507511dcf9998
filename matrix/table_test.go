package matrix

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestTallyAndMarkdown(t *testing.T) {
	lost := Happened{Lost: 1, LostAcked: 1, Stalls: 1}
	r := &Results{Brokers: []string{"4.1.0", "4.4.0"}, Seconds: map[string]float64{"SeedGap.NoGap": 12},
		Schedule: map[string][]string{"SeedGap.NoGap": {"reject:err=NOT_LEADER_OR_FOLLOWER,attempt=1,until=next,delay=1500ms,partitions=0"}},
		Cells: []Cell{
			{Scenario: "SeedGap.NoGap", Broker: "4.1.0", Client: "java-4.3.1", Family: "java", Shape: "1p-one", Predicted: "invariant:NoGap",
				Reach: Reach{Status: Reached}, Happened: lost, What: lost.String(), Verdict: "violations", Kinds: []string{"lost-write", "stall"}, Agreement: Agrees},
			{Scenario: "SeedGap.NoGap", Broker: "4.4.0", Client: "java-4.3.1", Family: "java", Shape: "1p-one", Predicted: "invariant:NoGap",
				Reach: Reach{Status: HeldBack}, What: "clean", Verdict: "valid", Agreement: Agrees},
			{Scenario: "SeedGap.NoGap", Broker: "4.1.0", Client: "kafkajs", Family: "one-in-flight", Shape: "1p-one", Predicted: "pass",
				Reach: Reach{Status: Reached}, Happened: Happened{Reordered: 2}, What: "reordered 2", Verdict: "valid", Agreement: Missed, Worse: true},
			{Scenario: "SeedGap.NoGap", Broker: "4.1.0", Client: "ours-on", Family: "ours", Shape: "1p-one", Err: "timed out"},
			{Scenario: "Expiry.NoGap", Broker: "4.1.0", Client: "ours-on", Family: "ours", Shape: "1p-one", Predicted: "invariant:NoGap",
				Reach: Reach{Status: Reached}, Happened: Happened{Reordered: 1}, Verdict: "violations", Agreement: Agrees},
			{Scenario: "Expiry.NoGap", Broker: "4.1.0", Client: "ours-on", Family: "ours", Shape: "16p-many", Predicted: "pass",
				Reach: Reach{Status: Reached}, Happened: Happened{Stalls: 1}, Verdict: "violations", Agreement: Agrees},
		}}
	tl := r.Tally()
	// ours-on flagged where predicted to pass counts; where predicted to fail, not.
	want := Tally{Cells: 6, Errors: 1, Reached: 4, HeldBack: 1, Anomalies: 3, Worse: 1, Missed: 1, OursOn: 1}
	if tl != want {
		t.Errorf("Tally: got %+v, want %+v", tl, want)
	}
	if tl.OK() {
		t.Error("OK with a missed anomaly and a cell that could not run")
	}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, s := range []string{
		"### SeedGap.NoGap", "    reject:err=NOT_LEADER_OR_FOLLOWER", "| client | model predicts | shape | Kafka 4.1.0 | Kafka 4.4.0 |",
		"| java-4.3.1 | java: invariant:NoGap | 1p-one | reached: lost though acknowledged 1, stalled batches 1; verify: lost-write, stall | held back: clean; verify: valid |",
		"reached: reordered 2; verify: valid (**missed**) **worse than the model**", "could not run: timed out",
		"### Worse than the model predicts", "- kafkajs on Kafka 4.1.0, SeedGap.NoGap, 1p-one: reordered 2 (family one-in-flight predicts pass)",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("the Markdown lacks %q:\n%s", s, md)
		}
	}
	b.Reset()
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Results
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Cells) != 6 || back.Cells[0].Reach.Status != Reached {
		t.Errorf("the JSON does not read back: %v %+v", err, back.Cells)
	}
}

// An interrupted run says so in both forms, so that a table of the cells
// that finished is never taken for the whole matrix.
func TestInterruptedSaysSo(t *testing.T) {
	r := &Results{Brokers: []string{"4.1.0"}, Seconds: map[string]float64{}, Schedule: map[string][]string{},
		Interrupted: "interrupted during kill-leader, java-4.3.1, 16p-many, run 2, on Kafka 4.1.0",
		Cells:       []Cell{{Scenario: "kill-leader", Broker: "4.1.0", Client: "ours-on", Family: "ours", Shape: "1p-one", Predicted: "pass", What: "clean", Verdict: "valid", Agreement: Agrees}}}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "This run was stopped before its end (interrupted during kill-leader, java-4.3.1, 16p-many, run 2, on Kafka 4.1.0)") {
		t.Errorf("the Markdown does not say the run was interrupted:\n%s", b.String())
	}
	b.Reset()
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Results
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Interrupted != r.Interrupted {
		t.Errorf("the JSON loses the interruption: %v %q", err, back.Interrupted)
	}
}
