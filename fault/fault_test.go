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

// A schedule file is faults a line, comments and blank lines skipped; a bad
// line is named by file and line.
func TestReadSchedule(t *testing.T) {
	good := "# SeedGap, partition 0\n\nreject:err=NOT_LEADER_OR_FOLLOWER,attempt=1,until=next,delay=1s,partitions=0\n  seed-race:partitions=1  \n"
	fs, err := ReadSchedule(strings.NewReader(good), "s.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 || fs[0].Kind != Reject || !fs[0].UntilNext || fs[0].Attempt != 1 || fs[1].Kind != SeedRace {
		t.Fatalf("got %+v", fs)
	}
	for in, want := range map[string]string{
		good + "reject\n":                         "s.txt:5: fault \"reject\": err=NAME is required",
		"seed-race\nteleport:x=1\n":               `s.txt:2: unknown fault "teleport"`,
		"seed-race\n" + strings.Repeat("x", 5000): "s.txt:2: a line longer than 4096 bytes",
	} {
		if _, err := ReadSchedule(strings.NewReader(in), "s.txt"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadSchedule(%.40q) = %v, want %q", in, err, want)
		}
	}
}
