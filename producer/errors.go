package producer

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

var (
	// ErrClosed: Produce after Close, or a record still buffered when Close gave up.
	ErrClosed = errors.New("producer: closed")
	// ErrDeliveryTimeout: the record was not acknowledged within DeliveryTimeout.
	// It may or may not have been written (as Java's TimeoutException).
	ErrDeliveryTimeout = errors.New("producer: delivery timeout")
	// ErrUnknownTopic: the topic is not in the cluster's metadata.
	ErrUnknownTopic = errors.New("producer: unknown topic")
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

// errName returns Kafka's name for an error code, "NONE" for 0.
func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if err := kerr.ErrorForCode(code); err != nil {
		if ke, ok := err.(*kerr.Error); ok {
			return ke.Message
		}
		return err.Error()
	}
	return fmt.Sprintf("ERROR_%d", code)
}
