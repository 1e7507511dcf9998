// Package kafkaerr is the one classification of Kafka's answers to a produce
// request that kcheck's checks share (checker/replay, order, linz, tv and the
// reports): which answers acknowledge a batch, which errors a producer
// retries, which fail a batch for good, and the spec's Fatal set
// (spec/IdempotentProducer.tla).
package kafkaerr

import (
	"slices"

	"github.com/kcheck/kcheck/tracer"
)

// The answers the idempotent producer handles itself, by Kafka's names.
const (
	None                 = "NONE"
	DuplicateSequence    = "DUPLICATE_SEQUENCE_NUMBER"
	OutOfOrderSequence   = "OUT_OF_ORDER_SEQUENCE_NUMBER"
	UnknownProducerID    = "UNKNOWN_PRODUCER_ID"
	InvalidProducerEpoch = "INVALID_PRODUCER_EPOCH"
	NetworkException     = "NETWORK_EXCEPTION"
	// ConcurrentTransactions is retriable though kerr says not: the Java
	// client's ConcurrentTransactionsException extends RetriableException,
	// and Kafka 4.x answers it to a TV2 Produce (which adds the partition
	// to the transaction) while the previous transaction's markers are
	// being written.
	ConcurrentTransactions = "CONCURRENT_TRANSACTIONS"
)

// Answer is what a produce answer (a Receive's err) means for its batch.
type Answer uint8

const (
	Acked           Answer = iota // NONE or DUPLICATE_SEQUENCE_NUMBER: the batch is in the log
	OutOfOrder                    // OUT_OF_ORDER_SEQUENCE_NUMBER
	UnknownProducer               // UNKNOWN_PRODUCER_ID
	Fenced                        // INVALID_PRODUCER_EPOCH: the batch fails
	Refused                       // any other error Kafka does not retry (Fatal): the batch fails
	Retry                         // an error Kafka retries (Retriable)
	Unknown                       // an error name kcheck does not know
)

// Classify returns what the answer err means for its batch.
func Classify(err string) Answer {
	switch err {
	case None, DuplicateSequence:
		return Acked
	case OutOfOrderSequence:
		return OutOfOrder
	case UnknownProducerID:
		return UnknownProducer
	case InvalidProducerEpoch:
		return Fenced
	}
	if _, known := tracer.ErrorByName(err); !known && err != NetworkException {
		return Unknown
	}
	if Retriable(err) {
		return Retry
	}
	return Refused
}

// IsAck reports whether the answer err acknowledges its batch: NONE, or
// DUPLICATE_SEQUENCE_NUMBER (appended before, with no offset given).
func IsAck(err string) bool { return err == None || err == DuplicateSequence }

// Retriable reports whether Kafka retries the error name (kerr's Retriable,
// NETWORK_EXCEPTION, which kcheck's fault injector answers, and
// CONCURRENT_TRANSACTIONS, which the Java client retries): the request
// may or may not have been written.
func Retriable(name string) bool {
	if name == NetworkException || name == ConcurrentTransactions {
		return true
	}
	ke, ok := tracer.ErrorByName(name)
	return ok && ke.Retriable
}

// NotRetriable reports whether name is an error kcheck knows and Kafka does
// not retry; an unknown name could be anything, so it is not.
func NotRetriable(name string) bool {
	_, known := tracer.ErrorByName(name)
	return known && !Retriable(name)
}

// Fatal reports whether a produce answer err fails its batch for good: a
// known error Kafka does not retry, other than the answers the idempotent
// producer handles itself (NONE, DUPLICATE_SEQUENCE_NUMBER,
// OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID). The spec's Fatal set
// (SpecFatal) is of these; an error name kcheck does not know is not fatal.
func Fatal(err string) bool {
	switch err {
	case None, DuplicateSequence, OutOfOrderSequence, UnknownProducerID:
		return false
	}
	return NotRetriable(err)
}

// OwnBrokerError reports whether err is an answer a real broker may give on
// its own that is not one of the spec's verdicts: a retriable error (a leader
// election, replicas out of sync, a timeout).
func OwnBrokerError(err string) bool {
	switch err {
	case None, OutOfOrderSequence, UnknownProducerID, InvalidProducerEpoch, DuplicateSequence:
		return false
	}
	return Retriable(err)
}

// SpecFatal returns the spec's Fatal set (spec/IdempotentProducer.tla,
// "Fatal == {...}"), sorted: the errors a produce can get that the client
// does not retry. A test holds it to the spec.
func SpecFatal() []string {
	return []string{"INVALID_PRODUCER_EPOCH", "INVALID_RECORD", "INVALID_REQUIRED_ACKS", "MESSAGE_TOO_LARGE",
		"RECORD_LIST_TOO_LARGE", "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_SERVER_ERROR"}
}

// InSpecFatal reports whether err is in the spec's Fatal set.
func InSpecFatal(err string) bool { return slices.Contains(SpecFatal(), err) }
