package fault

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseRoundTrip(t *testing.T) {
	for _, s := range []string{
		"seed-race", "seed-race:delay=100ms", "not-enough-replicas:rate=0.1,count=5",
		"timeout-after-append:partitions=0+3", "drop-connection:count=-1", "slow:delay=1s",
	} {
		f, err := Parse(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if got := f.String(); got != s {
			t.Errorf("Parse(%q).String() = %q", s, got)
		}
	}
	f, _ := Parse("seed-race:delay=100ms,partitions=2")
	if want := (Fault{Kind: SeedRace, Count: -1, Delay: 100 * time.Millisecond, Partitions: []int32{2}}); !reflect.DeepEqual(f, want) {
		t.Fatalf("got %+v, want %+v", f, want)
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"teleport":                `unknown fault "teleport"; known faults: drop-connection`,
		"seed-race:delay":         `parameter "delay" is not key=value`,
		"seed-race:delay=-1s":     "must not be negative",
		"not-leader:rate=2":       "must be within 0..1",
		"not-leader:count=-2":     "must be -1",
		"not-leader:partitions=a": `"a" is not a partition number`,
		"not-leader:colour=blue":  "unknown parameter",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}
