package producer

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed: Produce after Close, or a record still buffered when Close gave up.
	ErrClosed = errors.New("producer: closed")
	// ErrDeliveryTimeout: the record was not acknowledged within DeliveryTimeout.
	// It may or may not have been written (as Java's TimeoutException).
	ErrDeliveryTimeout = errors.New("producer: delivery timeout")
	// ErrUnknownTopic: the topic is not in the cluster's metadata.
	ErrUnknownTopic = errors.New("producer: unknown topic")
	// ErrRecordTooLarge: the record alone makes a batch larger than
	// MaxRequestBytes (as Java's RecordTooLargeException); it is not sent.
	ErrRecordTooLarge = errors.New("producer: record larger than MaxRequestBytes")
	// ErrTxnAborted: the record's transaction was aborted before it was
	// sent (as Java's TransactionAbortedException).
	ErrTxnAborted = errors.New("producer: transaction aborted before the record was sent")
)

// BrokerError is a produce that failed with a Kafka error the producer does
// not retry. Err is the kerr error for the code.
type BrokerError struct {
	Topic     string
	Partition int32
	Err       error
}

func (e *BrokerError) Error() string {
	return fmt.Sprintf("producer: %s[%d]: %v", e.Topic, e.Partition, e.Err)
}

func (e *BrokerError) Unwrap() error { return e.Err }
