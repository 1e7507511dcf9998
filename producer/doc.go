// Package producer is an idempotent Kafka producer written directly on the
// Kafka protocol (kmsg), with the first-ack rule of KAFKA-14359.
//
// It follows the Java client's rules for sequences, retries and epoch bumps
// (RecordAccumulator, Sender, TransactionManager), the same rules that
// spec/IdempotentProducer.tla models, and can write a trace of every step the
// spec has an action for (tracer.Sink), which checker/ validates.
//
//	p, err := producer.New(producer.Brokers("127.0.0.1:9092"))
//	p.Produce(ctx, &producer.Message{Topic: "t", Value: v}, func(m *producer.Message, err error) { ... })
//	p.Flush(ctx)
//	p.Close(ctx)
//
// Data flow: Produce appends a record to its partition's open batch (one
// mutex per partition; metadata is an immutable snapshot read atomically);
// it only sizes the record, which is encoded when its batch is written, so
// the message must not change until its outcome is delivered. One sender
// goroutine drains ready batches into produce requests, one pipelined
// connection per broker (package wire), assigns sequences at drain time,
// encodes each batch straight into the connection's write buffer, and handles
// responses, retries, delivery timeouts and epoch bumps. It looks only at the
// partitions something happened to (a batch opened or sealed, an answer, a
// deadline), not at every partition on every wake-up. The protocol's
// decisions (sequences, the first-ack rule, retries, bumps, expiries, the
// new producer id) are a pure state machine in package core; the sender is
// the loop around it that does the I/O (sender.go).
//
// Transactions: with TransactionalID the producer is transactional
// (producer/txn.go, core/txn.go):
//
//	p.BeginTransaction()
//	p.Produce(ctx, m, done) // ...
//	err := p.CommitTransaction(ctx) // or AbortTransaction
//
// New finds the transaction coordinator and speaks the cluster's
// transaction version: TV2 (KIP-890 part 2) when the finalized
// transaction.version feature is 2, TV1 otherwise, or TransactionVersion's.
// Under TV1 a partition's first batch of a transaction waits for
// AddPartitionsToTxn; under TV2 every EndTxn bumps the epoch, so each
// transaction starts every partition at sequence 0 and the first-ack rule
// re-arms per transaction. Batches are marked transactional; EndTxn goes
// once every batch of the transaction is answered.
//
// Epoch bumps are producer-wide, as in Java: each bump takes the next epoch.
// When a bump is needed at epoch 32767, the producer takes a new producer id
// instead (resetIdempotentProducerId): it drains nothing new until no
// request is outstanding and only the partitions waiting for the bump hold
// batches, asks InitProducerId again, and renumbers those from 0.
package producer
