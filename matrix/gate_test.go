package matrix

import (
	"strings"
	"testing"
)

func TestGate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell Cell
		want Gate
		why  string // a part of the reason
	}{
		{"clean where a violation is predicted", Cell{Predicted: "invariant:NoGap", What: "clean"}, GatePass, "clean"},
		{"clean where pass is predicted", Cell{Predicted: "pass", What: "clean"}, GatePass, "clean"},
		{"failed records are no anomaly", Cell{Predicted: "pass", Happened: Happened{Lost: 3, Failed: 3, Stalls: 1}}, GatePass, ""},
		{"a duplicate the model predicts", Cell{Family: "java", Predicted: "invariant:NoDuplicate", Happened: Happened{Duplicated: 1}, What: "duplicated 1"},
			GatePass, "as the model predicts for family java"},
		{"a reorder where a lasso is predicted", Cell{Predicted: "liveness", Happened: Happened{Reordered: 1}}, GatePass, "as the model predicts"},
		{"a duplicate where pass is predicted", Cell{Family: "kgo", Predicted: "pass", Happened: Happened{Duplicated: 1}, What: "duplicated 1"},
			GateFail, "an anomaly the model does not predict (it predicts pass for family kgo)"},
		{"a reorder on the Baseline", Cell{Family: "kafkajs", Predicted: "no faults", Happened: Happened{Reordered: 1}}, GateFail, "does not predict"},
		{"a duplicate in a scenario the model does not model", Cell{Predicted: "not modelled", Happened: Happened{Duplicated: 2}}, GateFail, "family (none)"},
		{"lost though acknowledged, predicted", Cell{Family: "librdkafka", Predicted: "invariant:NoGap", Happened: Happened{Lost: 1, LostTold: 1}},
			GateFail, "a record acknowledged to the application lost (the model predicts invariant:NoGap"},
		{"lost though acknowledged by the read-back alone", Cell{Predicted: "invariant:AckedInLog", Happened: Happened{Lost: 1, LostAcked: 1}}, GateFail, "acknowledged"},
		{"unknown family, a duplicate some family predicts", Cell{Family: Unknown, Predicted: "pass (kgo); invariant:NoDuplicate (java)", Like: []string{"java"}, Happened: Happened{Duplicated: 1}, What: "duplicated 1"},
			GatePass, "as the model predicts for java (family unknown)"},
		{"unknown family, a reorder no family predicts", Cell{Family: Unknown, Predicted: "pass (java, kgo)", Happened: Happened{Reordered: 1}, What: "reordered 1"},
			GateFail, "no family's model predicts"},
		{"unknown family, lost though acknowledged", Cell{Family: Unknown, Predicted: "invariant:AckedInLog (librdkafka)", Like: []string{"librdkafka"}, Happened: Happened{LostTold: 1}},
			GateFail, "acknowledged to the application lost"},
		{"could not run", Cell{Predicted: "pass", Err: "timed out after 3m0s"}, GateError, "could not run: timed out"},
		{"could not run outranks what it recorded", Cell{Predicted: "pass", Happened: Happened{LostAcked: 1}, Err: "interrupted"}, GateError, "interrupted"},
	} {
		g, why := tc.cell.Gate()
		if g != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%s: Gate() = %s, %q; want %s, with %q", tc.name, g, why, tc.want, tc.why)
		}
	}
}

func TestGateTally(t *testing.T) {
	r := &Results{Cells: []Cell{
		{Predicted: "pass"},
		{Predicted: "pass", Happened: Happened{Reordered: 1}},
		{Predicted: "invariant:NoReorder", Happened: Happened{Reordered: 1}},
		{Predicted: "invariant:AckedInLog", Happened: Happened{LostTold: 1}},
		{Err: "timed out"},
	}}
	if got, want := r.GateTally(), (GateTally{Cells: 5, Fail: 2, Error: 1}); got != want {
		t.Errorf("GateTally() = %+v, want %+v", got, want)
	}
}
