package producer

import "sync/atomic"

// Stats counts what the producer did.
type Stats struct {
	Requests          int64 // produce requests sent
	Batches           int64 // batches sent, retries included
	Retries           int64 // batches sent again
	OutOfOrderAnswers int64 // OUT_OF_ORDER_SEQUENCE_NUMBER answers (the KAFKA-14359 stall shows here)
	Bumps             int64 // KIP-360 epoch bumps
	NewProducerIDs    int64 // new producer ids taken because the epoch could go no higher
	Disconnects       int64
	Steps             int64 // times the sender woke up and looked for work
	TxnDescribes      int64 // DescribeTransactions asked while waiting for a transaction's markers (WaitForMarkers)
}

type stats struct {
	requests, batches, retries, ooo, bumps, renewals, disconnects, steps, describes atomic.Int64
}

// Stats returns the producer's counters so far.
func (p *Producer) Stats() Stats {
	s := &p.stats
	return Stats{
		Requests: s.requests.Load(), Batches: s.batches.Load(), Retries: s.retries.Load(),
		OutOfOrderAnswers: s.ooo.Load(), Bumps: s.bumps.Load(), NewProducerIDs: s.renewals.Load(),
		Disconnects: s.disconnects.Load(),
		Steps:       s.steps.Load(), TxnDescribes: s.describes.Load(),
	}
}
