package brokers

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, name, words, err string
	}{
		{in: "4.1.0", name: "4.1.0", words: "Kafka 4.1.0"},
		{in: "kafka-3.9.1", name: "3.9.1", words: "Kafka 3.9.1"},
		{in: "kfake", name: "kfake-4.1", words: "kfake 4.1"},
		{in: "kfake-4.4", name: "kfake-4.4", words: "kfake 4.4"},
		{in: "tansu", name: "tansu-0.6.0", words: "tansu 0.6.0"},
		{in: "tansu-0.6.0", name: "tansu-0.6.0", words: "tansu 0.6.0"},
		{in: "crabka", name: "crabka", words: "crabka"},
		{in: "tansu-0.5.0", err: "kcheck builds tansu 0.6.0"},
		{in: "kafka", err: "kafka-VERSION names an Apache Kafka release"},
		{in: "redpanda-24.1", err: `broker "redpanda-24.1": want a Kafka version`},
		{in: "", err: `broker "": want`},
	} {
		s, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %v, %v; want error %q", tc.in, s, err, tc.err)
			}
			continue
		}
		if err != nil || s.Name() != tc.name || s.String() != tc.words {
			t.Errorf("Parse(%q) = %q (%q), %v; want %q (%q)", tc.in, s.Name(), s.String(), err, tc.name, tc.words)
		}
		if again, err := Parse(s.Name()); err != nil || again != s {
			t.Errorf("Parse(%q).Name() = %q does not parse back: %v, %v", tc.in, s.Name(), again, err)
		}
	}
}
