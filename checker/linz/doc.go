// Package linz checks that each partition of one kcheck trace is
// linearizable, with Porcupine (github.com/anishathalye/porcupine v1.3.1).
//
// In kcheck verify it sits beside checker/replay (the spec's actions) and
// checker/order (loss, duplicates, reordering): a tracer.Reader yields the
// trace's events, each goes to Checker.Add with its line, and Checker.Check
// turns every partition into a Porcupine history, checks them in parallel and
// returns a Result: a Verdict per partition and overall, and for each Illegal
// partition a checker.Violation of kind checker.NotLinearizable. Result's
// Visualize, VisualizePartition and WriteIllegal render Porcupine's HTML.
//
// # Objects
//
// Each partition's log is one object: records at offsets 0, 1, 2, … that
// only ever grow at the end. Linearizability is local (a history is
// linearizable if and only if each object's subhistory is), so the model's
// Partition splits a history by Kafka partition, in increasing order, and
// Check runs Porcupine on each partition on its own, so that every
// partition gets its own verdict and a large run is many small searches.
//
// # Operations
//
// A produce operation is one batch, named by its batch id b. Its input is the
// batch as its SendNew gives it: partition, producer id, epoch, base
// sequence and record ids (recs). Its call is the SendNew's t. Its output and
// return come from the first event that settles it:
//
//   - Receive with err NONE and off ≥ 0: acknowledged at base offset off,
//     returning at the Receive's t. A retry the broker finds to be a duplicate
//     is answered NONE with the offset of the original append: it is the same
//     operation, and that offset is its output.
//   - Receive with err DUPLICATE_SEQUENCE_NUMBER (or NONE with off -1):
//     acknowledged, offset unknown.
//   - Fail, other than "producer closed": failed definitely, never written;
//     returning at the Fail's t.
//   - ExpireBatch, Fail "producer closed", or nothing by the end of the
//     trace: unknown. It returns at the end of the history (the t of the
//     trace's last event): it may have been appended at any time after its
//     call, or never.
//
// A Receive with any other error is not an outcome: the producer retries the
// batch (Resend), or fails it later (Fail), and the operation goes on.
// Answers after the first outcome are ignored. Resend, Bump and
// ResolveSequences change nothing here: a batch keeps its records whatever
// sequence a bump gives it. A Fail for a batch never sent (no SendNew) is no
// operation: nothing of it can have been written.
//
// The read is one operation per partition, from its ReadBack: its output is
// the log read back, [offset, pid, epoch, seq, id] per record. It is called
// at end+1 and returns at end+2, after every other operation returned
// (Porcupine's intervals are closed).
//
// # State and steps
//
// The state of a log is (n, h1, h2): its length, which is the offset the next
// append lands at, and two 64-bit polynomial hashes of its record ids in
// offset order. Appending k records is O(1) whatever the log's length:
// h' = h·B^k + H(recs), with B^k and H(recs) computed once per batch. The
// state is never a copy of the log (KAFKA-16229's lesson: nothing quadratic).
// Equal is ==; Hash mixes the three fields. The model is nondeterministic:
// Porcupine follows the set of states a prefix of the history can reach, a
// stateSet, built as NondeterministicModel.ToModel's power-set construction
// builds it, without boxing every state. Step is pure:
//
//   - acknowledged at off: legal only if n = off; appends recs.
//   - acknowledged, offset unknown: appends recs.
//   - failed definitely: the log is unchanged.
//   - unknown: two next states, the log unchanged and recs appended.
//   - read: legal only if the state is the read-back log's (length and both
//     hashes).
//
// Pruning. An append is also legal only if the read-back holds recs at
// offsets [n, n+k). This changes no verdict: logs only grow, so a state that
// is not a prefix of the read-back can never become equal to it; but it
// keeps the set of states to one or two, and a wrong append fails where it
// happens instead of at the read.
//
// Two different logs with equal states would need a 128-bit hash collision.
// Only record ids and offsets are compared: a read-back record's pid, epoch
// and seq are shown, not checked (checker/order checks them).
//
// # Segments
//
// Porcupine's cache keeps a bitset of the history per cached state, so one
// search costs time and memory quadratic in its operations. Check therefore
// cuts a long partition into segments, each a Porcupine partition of its own.
// With pruning, an operation that appends can do so only at the offset where
// the read-back holds its records, so appends happen in offset order. A cut
// at offset B, between two appending operations, is made only when every
// operation appending at B or above was called no sooner than every one
// appending below B: then the segments' linearizations join into one for
// the whole partition, and a linearization of the whole splits into one per
// segment, so the verdict is the same (TestSegmentsAgree checks it against one
// search). A segment closes at the first such cut after 1,024 appends. A segment after the first
// opens with an operation that sets the log to the read-back's first B
// records; every segment ends with a read of the read-back up to its own end,
// the last one's being the ReadBack. Operations that never append (failed,
// or unknown and absent from the read-back) go to the segment of their call.
// An idempotent producer writes in send order, so its traces cut everywhere.
//
// # Sparing the search
//
// For most partitions the linearization is plain: the operations placed in
// the read-back append in offset order, tiling it, and the others leave the
// log as it is. Before Porcupine searches, Check tries that one order in
// each segment (certify, in check.go): if the placed operations tile the
// segment's part of the read-back, every acknowledged one is among them at
// its offset, and real time allows their offset order (no placed operation
// returned before one placed below it was called), it is a linearization,
// so Porcupine, which is complete, would find the partition Ok; Check says
// Ok without running it. Any other partition goes to Porcupine as before,
// so every Illegal verdict and its explanation are Porcupine's. The
// history of a partition spared the search is built, and Porcupine run on
// it, only when a visualization asks.
//
// # Verdicts
//
// A partition is Ok when Porcupine (or certify) linearizes it, Illegal when Porcupine
// finds it cannot, and Inconclusive when the model cannot decide it:
// Porcupine ran out of the time Check was given (a timeout is never Ok); the
// read-back holds records kcheck did not write (id -1, or a producer id that
// no InitProducerId or SendNew of the trace has), which no operation can
// explain; its offsets are not 0, 1, 2, … (retention, compaction, transaction
// markers); there is no ReadBack; or an event names a batch no SendNew sent.
// The Result is Illegal if any partition is, else Inconclusive if any is,
// else Ok.
//
// For an Illegal partition the violation replays Porcupine's longest partial
// linearization of the first segment it could not linearize, and names the
// operation that could come next in real time but that no state reached
// allows, with why: an acknowledged batch that cannot be placed, or the read
// (the read-back holds a record twice, a record of a batch that failed
// definitely, ...). Its Lines are that operation's SendNew and outcome, the
// lines the reason cites, and the ReadBack.
//
// # What linearizability does not catch
//
// Only acknowledged and definitely failed batches constrain the log. A batch
// that expired (delivery.timeout.ms) has an unknown outcome, so a log without
// it is legal even when later batches of the same producer epoch are in it:
// the loss KAFKA-14359 causes is linearizable (traces/first-ack-off.jsonl is
// Ok here), and checker/order reports it as a gap. Conversely, linz finds
// what order does not model: acknowledgements that real time forbids.
package linz
