package kafkaerr

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// specFatal parses the spec's "Fatal == {...}" out of IdempotentProducer.tla.
func specFatal(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("../../spec/IdempotentProducer.tla")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^Fatal\s*==\s*\{([^}]*)\}`).FindSubmatch(src)
	if m == nil {
		t.Fatal(`spec/IdempotentProducer.tla has no "Fatal == {...}"`)
	}
	var set []string
	for _, q := range regexp.MustCompile(`"([^"]*)"`).FindAllSubmatch(m[1], -1) {
		set = append(set, string(q[1]))
	}
	if len(set) == 0 {
		t.Fatalf("the spec's Fatal set parsed empty from %q", m[1])
	}
	slices.Sort(set)
	return set
}

// The spec's Fatal set is SpecFatal, element for element.
func TestSpecFatalMatchesSpec(t *testing.T) {
	if got, want := SpecFatal(), specFatal(t); !slices.Equal(got, want) {
		t.Errorf("SpecFatal() = %q\nthe spec's Fatal = %q", got, want)
	}
	if !slices.IsSorted(SpecFatal()) {
		t.Error("SpecFatal() is not sorted")
	}
}

// The spec's Fatal errors are the ones the Go mirror and the ordering check
// take as failing a batch for good (Fatal), and no retriable one is.
func TestSpecFatalIsFatal(t *testing.T) {
	for _, err := range SpecFatal() {
		if !Fatal(err) || !InSpecFatal(err) {
			t.Errorf("%s is in the spec's Fatal set: Fatal %v, InSpecFatal %v", err, Fatal(err), InSpecFatal(err))
		}
		if c := Classify(err); c != Refused && c != Fenced {
			t.Errorf("Classify(%s) = %d, want Refused or Fenced", err, c)
		}
	}
	for _, err := range []string{"NONE", "DUPLICATE_SEQUENCE_NUMBER", "OUT_OF_ORDER_SEQUENCE_NUMBER", "UNKNOWN_PRODUCER_ID",
		"NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT", "NOT_ENOUGH_REPLICAS", "NETWORK_EXCEPTION", "NO_SUCH_ERROR"} {
		if Fatal(err) || InSpecFatal(err) {
			t.Errorf("Fatal(%s) = %v, InSpecFatal = %v", err, Fatal(err), InSpecFatal(err))
		}
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  string
		want Answer
		own  bool // OwnBrokerError
	}{
		{"NONE", Acked, false},
		{"DUPLICATE_SEQUENCE_NUMBER", Acked, false},
		{"OUT_OF_ORDER_SEQUENCE_NUMBER", OutOfOrder, false},
		{"UNKNOWN_PRODUCER_ID", UnknownProducer, false},
		{"INVALID_PRODUCER_EPOCH", Fenced, false},
		{"MESSAGE_TOO_LARGE", Refused, false},
		{"CLUSTER_AUTHORIZATION_FAILED", Refused, false},
		{"NOT_LEADER_OR_FOLLOWER", Retry, true},
		{"REQUEST_TIMED_OUT", Retry, true},
		{"NETWORK_EXCEPTION", Retry, true},
		{"NO_SUCH_ERROR", Unknown, false},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%s) = %d, want %d", tc.err, got, tc.want)
		}
		if got := IsAck(tc.err); got != (tc.want == Acked) {
			t.Errorf("IsAck(%s) = %v", tc.err, got)
		}
		if got := OwnBrokerError(tc.err); got != tc.own {
			t.Errorf("OwnBrokerError(%s) = %v, want %v", tc.err, got, tc.own)
		}
		if got := Retriable(tc.err); got != (tc.want == Retry) {
			t.Errorf("Retriable(%s) = %v", tc.err, got)
		}
	}
	if NotRetriable("NO_SUCH_ERROR") || NotRetriable("REQUEST_TIMED_OUT") || !NotRetriable("OUT_OF_ORDER_SEQUENCE_NUMBER") {
		t.Error("NotRetriable: an unknown or retriable error is not; a known one Kafka does not retry is")
	}
}
