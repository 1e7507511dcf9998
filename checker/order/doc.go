// Package order checks exactly-once ordering end to end in one trace: every
// record the producer sent, matched by its kcheck id against the partition's
// log as read back after the run.
//
// It sits at the end of kcheck's data flow:
//
//	spec/IdempotentProducer.tla -> producer/ -> tracer/ (traces/*.jsonl) -> checker/order
//
// beside checker/replay (are the protocol steps the spec's?) and checker/linz
// (is each partition's log linearizable?). Where those two look at the
// protocol, order looks at the outcome the application cares about, in the
// words of Jepsen's Kafka checker: lost-write, duplicate, nonmonotonic-send,
// inconsistent-offsets, failed-but-present (G1a), plus the spec's gap and the
// KAFKA-14359 stall.
//
// A Checker is fed one event at a time (Add) and does the matching in Finish,
// once the outcome of every batch and the read-back are known:
//
//	c := order.New(r.Header())
//	for {
//		e, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		...
//		c.Add(r.Line(), e)
//	}
//	res := c.Finish()
//
// Each batch has one outcome, decided from the client's events alone:
// acknowledged (a Receive with NONE or DUPLICATE_SEQUENCE_NUMBER), definitely
// failed (never sent, or failed to the application right after a
// non-retriable error; in a trace of the wire, which shows no application, a
// fatal answer to the batch's only attempt that the client never sent again),
// or unknown (a delivery timeout, the producer closed with it in flight, or
// no outcome by the end of the trace). An unknown outcome is neither
// acknowledged nor failed: its records may or may not be written.
//
// Time is O(events + records) and memory O(records). Nothing is searched:
// ids are looked up in slices indexed by id (kcheck numbers records and
// batches densely; a map takes any id beyond), and each partition's batches,
// records and log are walked in order. The only sorts are over what is
// already out of place: records out of order, a log whose sequences are not
// ascending, and the violations found.
package order
