package matrix

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcheck/kcheck/scenario"
)

// A build in --clients is named exactly in its cells, in its stock
// client's family, and has a short name in its files and topic.
func TestLookupClientsBuilds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "franz-go")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module github.com/twmb/franz-go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := LookupClients([]string{"ours-on", "java@4.0.0", "kgo@" + dir, "kafka-python@2.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	sc := &Scenario{Name: "SeedGap.NoGap", Schedule: []string{"x"}, Family: scenario.FamilyOf,
		Predictions: map[string]string{"java": "invariant:NoGap", "kgo": "pass", "one-in-flight": "pass"}}
	for i, want := range []struct{ name, family, predicted, file string }{
		{"ours-on", "ours", "not modelled", "ours-on"},
		{"java@4.0.0", "java", "invariant:NoGap", "java-at-4.0.0"},
		{"kgo@" + dir + "#sha256:", "kgo", "pass", "kgo-at-"},
		{"kafka-python@2.2.3", "one-in-flight", "pass", "kafka-python-at-2.2.3"},
	} {
		c := cs[i]
		cell := cellSpec{scenario: sc, client: c}.cell()
		if !strings.HasPrefix(cell.Client, want.name) || cell.Family != want.family || cell.Predicted != want.predicted ||
			!strings.HasPrefix(c.fileName(), want.file) || strings.ContainsAny(c.fileName(), "/@#:") {
			t.Errorf("%s: cell client %q, family %q, predicted %q, file name %q; want %q, %q, %q, %q",
				want.name, cell.Client, cell.Family, cell.Predicted, c.fileName(), want.name, want.family, want.predicted, want.file)
		}
	}
	if _, err := LookupClients([]string{"kgo@" + filepath.Join(dir, "none")}); err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("a path that does not exist: %v", err)
	}
}
