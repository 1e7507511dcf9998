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
		"reject:err=INVALID_RECORD", "reject:count=2,attempt=1,err=NOT_LEADER_OR_FOLLOWER,partitions=0",
		"append-then-error:seq=5,err=REQUEST_TIMED_OUT", "not-leader:err=NOT_ENOUGH_REPLICAS,partitions=1",
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
		"teleport":                            `unknown fault "teleport"; known faults: append-then-error, drop-connection`,
		"reject":                              "err=NAME is required",
		"reject:err=BOGUS":                    `"BOGUS" is not a Kafka error name`,
		"reject:err=NONE":                     "NONE is no error",
		"reject:err=INVALID_RECORD,attempt=0": "must be 1 or more",
		"reject:err=INVALID_RECORD,seq=-2":    "must not be negative",
		"drop-connection:err=INVALID_RECORD":  "answers no error of its own",
		"slow:attempt=2":                      "attempt and seq select a partition's attempts",
		"seed-race:delay":                     `parameter "delay" is not key=value`,
		"seed-race:delay=-1s":                 "must not be negative",
		"not-leader:rate=2":                   "must be within 0..1",
		"not-leader:count=-2":                 "must be -1",
		"not-leader:partitions=a":             `"a" is not a partition number`,
		"not-leader:colour=blue":              "unknown parameter",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}
