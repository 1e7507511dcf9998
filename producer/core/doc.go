// Package core is the idempotent producer's protocol as a state machine with
// no I/O, no clock, no goroutines and no locks, in the manner of etcd raft's
// RawNode: the sender loop (package producer) feeds it what happened
// (batches, answers, lost connections, the time, a new producer id) and
// takes from Ready what to do (requests to send, outcomes to deliver, trace
// events to emit, connections to dial, when to wake it again).
//
// It holds the decisions of the Java client's RecordAccumulator, Sender and
// TransactionManager for the idempotent producer, as spec/IdempotentProducer.tla
// models them: sequence assignment at drain time (SendNew), one retry at a
// time as the lowest sequence in flight (Resend), TransactionManager.canRetry's
// verdicts (Receive), producer-wide epoch bumps that renumber a partition's
// batches (Bump), delivery.timeout.ms (ExpireBatch, and batches never sent),
// unresolved sequences (ResolveSequences), the new producer id at the
// maximum epoch (resetIdempotentProducerId), and kcheck's rules: the
// first-ack rule (KAFKA-14359, FirstAckRule), its idle re-arm
// (RearmAfterIdle) and HoldWhileRetrying (KAFKA-18905).
//
// Driving it:
//
//	c := core.New(cfg, pid, epoch)
//	p := c.AddPartition(0, leader)    // once per partition
//	c.Connected(leader)               // after a dial succeeded
//	c.Tick(now, flushing, buf)        // buf: the partition buffers (Buffer)
//	rd := c.Ready()                   // emit rd.Events, deliver rd.Outcomes, send rd.Requests
//	c.Respond(req, corr, results, now) // an answer; or c.Disconnect(node, now)
//
// Like raft's Storage, Buffer is the one interface the core reads through:
// the partitions' unsent batches stay in the loop's buffers (Produce keeps
// appending to the open one) until the core drains them.
//
// A step looks only at candidate partitions: those a batch, an answer, a
// lost connection or ScanAll named since the last step, and those whose
// node could not take what they had; every deadline of a partition it looks
// at lowers the next full scan (Ready.Wake), at which every partition is a
// candidate. So a step costs what happened, not the number of partitions.
package core
