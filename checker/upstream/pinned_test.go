package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPinnedVersions holds the versions the reports give the stock clients
// to the files that pin them: a pin moved without the table fails here.
func TestPinnedVersions(t *testing.T) {
	for name, c := range stockClients {
		data, err := os.ReadFile(filepath.Join("..", "..", c.pin))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(string(data), c.needle) {
			t.Errorf("%s: %s does not say %q: the version the report gives (%s) is not the one kcheck pins", name, c.pin, c.needle, c.version)
		}
		if !strings.Contains(c.needle, c.version) && name != "librdkafka" {
			t.Errorf("%s: the pin %q does not name the version %s", name, c.needle, c.version)
		}
	}
}
