package tracer

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// renamed are the codes whose name in Kafka's Errors enum changed after
// kerr took it; traces use Kafka's current names, as the spec does.
var renamed = map[int16]string{
	kerr.NotLeaderForPartition.Code: "NOT_LEADER_OR_FOLLOWER", // KIP-392
}

// ErrorName returns Kafka's name for an error code (org.apache.kafka.common.
// protocol.Errors), "NONE" for 0: the form errors take in a trace.
func ErrorName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if n, ok := renamed[code]; ok {
		return n
	}
	if err, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return err.Message
	}
	return fmt.Sprintf("UNKNOWN_ERROR_CODE_%d", code)
}

// errorsByName maps every name ErrorName returns back to its kerr error.
var errorsByName = func() map[string]*kerr.Error {
	m := make(map[string]*kerr.Error)
	for code := int16(-1); code < 200; code++ {
		if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok && (e.Code == code) {
			m[ErrorName(code)] = e
		}
	}
	return m
}()

// ErrorByName returns the Kafka error a trace names, and whether it knows it.
func ErrorByName(name string) (*kerr.Error, bool) {
	e, ok := errorsByName[name]
	return e, ok
}
