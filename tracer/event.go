package tracer

// Version is the trace format version the writer writes. Version 2 added
// Told, what the client told its application about each record; version 3
// ToldRun, the Told events of a batch's records in one line; version 4
// ToldBatch, the same naming the batch instead of listing its records;
// version 5 transactions (AddPartitionsToTxn, EndTxn, EndTxnReceive,
// TxnTold, InitProducerId's txn and ReadBack's ctl); version 6
// ReadCommitted, a partition as a read_committed consumer sees it; version 7
// Poll and PollEnd, a read_committed consumer's polls while the run goes on
// and after it; version 8 SendNew's and Resend's bts, the batch's
// timestamp. A reader reads every version from MinVersion to Version.
const Version = 8

// MinVersion is the oldest format version the reader reads.
const MinVersion = 1

// Kind names an event. Kinds that match an action of spec/IdempotentProducer.tla
// carry that action's name.
type Kind string

// Client actions of the spec, emitted by the producer.
const (
	SendNew          Kind = "SendNew"          // a new batch got its sequence and was sent
	Resend           Kind = "Resend"           // a batch was sent again with its sequence
	Receive          Kind = "Receive"          // the producer read a batch's response
	Bump             Kind = "Bump"             // KIP-360 local epoch bump for a partition
	ExpireBatch      Kind = "ExpireBatch"      // delivery.timeout.ms failed a batch
	ResolveSequences Kind = "ResolveSequences" // an unresolved sequence was resolved (or a bump requested)
	Disconnect       Kind = "Disconnect"       // a connection was lost with requests outstanding
)

// Events outside the spec's actions.
const (
	InitProducerID Kind = "InitProducerId" // the producer id and epoch the broker assigned
	Fault          Kind = "Fault"          // the fault injector acted (which spec action it forced)
	Fail           Kind = "Fail"           // a batch failed to the application for a reason the spec has no action for
	ReadBack       Kind = "ReadBack"       // one partition's log as read back at the end of the run
	ReadBackShort  Kind = "ReadBackShort"  // a partition's high watermark never passed the offset the run acknowledged
	ReadCommitted  Kind = "ReadCommitted"  // one partition's records as a read_committed consumer returned them after the run (format version 6)
	Told           Kind = "Told"           // what the client told its application about one record (format version 2)
	// ToldRun is the Told events of records told the same thing at once (a
	// batch's, at consecutive offsets) in one line (format version 3). The
	// Reader never returns one: it returns its Told events, one per record.
	ToldRun Kind = "ToldRun"
	// ToldBatch is a ToldRun that names its batch (b) instead of listing
	// its records: they are the records of that batch's SendNew (format
	// version 4). The Reader returns its Told events, as for a ToldRun.
	ToldBatch Kind = "ToldBatch"
)

// Transactional steps (format version 5).
const (
	AddPartitionsToTxn Kind = "AddPartitionsToTxn" // TV1: the coordinator's answer for one partition added to transaction tx
	EndTxn             Kind = "EndTxn"             // the producer sent EndTxn for transaction tx (commit or abort)
	EndTxnReceive      Kind = "EndTxnReceive"      // the coordinator's answer to EndTxn; TV2: the epoch it returned
	TxnTold            Kind = "TxnTold"            // what the application was told of transaction tx
)

// A read_committed consumer's polls (format version 7, tracer/poll).
const (
	Poll    Kind = "Poll"    // poller poll's records of partition p, fetched from offset off
	PollEnd Kind = "PollEnd" // poller poll reached offset off of partition p (err NONE), or gave up on it
)

// The results a Told event reports.
const (
	Delivered = "delivered" // the client reported the record written, at Offset (-1: no offset reported)
	Failed    = "failed"    // the client reported the record failed: Err (a Kafka error name, "" if none) and Reason (the client's words)
	NoAnswer  = "none"      // the client had not reported on the record by the end of the run

	// TxnTold only (Failed and NoAnswer too).
	Committed = "committed" // the application was told its transaction committed
	Aborted   = "aborted"   // the application was told its transaction aborted
)

// Event is one line of a trace. Which fields a kind carries is in FORMAT.md;
// the writer emits exactly those, and the reader requires them.
type Event struct {
	I    int64 // position in the trace, 1 for the first event; strictly increasing by one
	T    int64 // nanoseconds since the trace started (monotonic clock)
	Kind Kind

	Partition int32       // partition
	Batch     int64       // the producer's batch id, unique in the run
	PID       int64       // producer id
	Epoch     int16       // producer epoch
	Seq       int32       // base sequence
	N         int32       // records in the batch
	Req       int32       // correlation id of the request the batch rode in
	Node      int32       // broker node id
	Err       string      // Kafka error name, "NONE" for success
	Offset    int64       // base offset in a response, -1 when none
	LogStart  int64       // log start offset in a response, -1 when none
	Records   []int64     // SendNew: the ids of the batch's records, in order; ToldRun, ToldBatch: the records told (a ToldBatch's are not written: they are its batch's SendNew's)
	Bumped    bool        // ResolveSequences: an epoch bump was requested
	Fault     string      // Fault: RejectBeforeAppend, AppendThenFail, ExpireProducerState, DropConnection, DropResponse, TimeoutBeforeAppend, Delay
	Reason    string      // Fail: why
	Log       []LogRecord // ReadBack: the partition's records in offset order; ReadCommitted: those a read_committed consumer returned
	HWM       int64       // ReadBackShort: the high watermark the leader reported last
	WaitedMs  int64       // ReadBackShort: how long the read-back waited, in milliseconds
	RecordID  int64       // Told: the record's kcheck id
	Result    string      // Told: Delivered, Failed or NoAnswer; TxnTold: Committed, Aborted, Failed or NoAnswer
	Tx        int64       // AddPartitionsToTxn, EndTxn, EndTxnReceive, TxnTold: the transaction's number, 1 for the producer's first
	Commit    bool        // EndTxn, EndTxnReceive, TxnTold: a commit (false: an abort)
	NewEpoch  int16       // EndTxnReceive: the epoch the coordinator returned (TV2), -1 for none
	TxnID     string      // InitProducerId: the transactional id, "" for an idempotent producer
	Ctl       []Marker    // ReadBack: the partition's control records (transaction markers), in offset order
	Poller    int32       // Poll, PollEnd: the poller's number, from 1
	// BatchTime, SendNew and Resend (format version 8, optional; 0: not
	// known): the batch's max record timestamp (its CreateTime), as trace
	// time: what the broker's producer-state expiry counts from.
	BatchTime int64
}

// Marker is one control record read back from a partition: a transaction
// marker that ended producer PID's transaction on the partition (Kafka's
// ControlRecordType: ABORT 0, COMMIT 1).
type Marker struct {
	Offset int64
	PID    int64
	Epoch  int16
	Commit bool
}

// LogRecord is one record read back from a partition.
type LogRecord struct {
	Offset int64
	PID    int64
	Epoch  int16
	Seq    int32
	ID     int64 // the record's kcheck id header; -1 for a record kcheck did not write
}

// ProxyWriter is the header's writer for traces kcheck proxy writes: they
// show a client's attempts on the wire, not its internal steps.
const ProxyWriter = "kcheck-proxy"

// Header is the first line of a trace: who wrote it and under which
// configuration, so the checker knows which rules to hold the run to.
type Header struct {
	Version           int               `json:"kcheck_trace"`
	Writer            string            `json:"writer"` // "kcheck-producer", later "kcheck-proxy"
	Client            string            `json:"client"` // the client under test, e.g. "kcheck/producer"
	Topic             string            `json:"topic"`
	Partitions        int32             `json:"partitions"`
	FirstAck          bool              `json:"first_ack"`           // the first-ack rule (KAFKA-14359) was on
	HoldWhileRetrying bool              `json:"hold_while_retrying"` // no new sequence while a retried batch is unacknowledged
	MaxInFlight       int               `json:"max_in_flight"`
	IdleRearmMs       int64             `json:"idle_rearm_ms,omitempty"`   // the idle re-arm rule's bound (0: off)
	IdleRearmFrom     string            `json:"idle_rearm_from,omitempty"` // where the bound came from (the broker's producer.id.expiration.ms, a default, ...)
	DeliveryTimeoutMs int64             `json:"delivery_timeout_ms"`
	Broker            Broker            `json:"broker"`
	Faults            []string          `json:"faults,omitempty"`           // the faults injected, as given to kcheck run
	TransactionalID   string            `json:"transactional_id,omitempty"` // format version 5: the producer is transactional, with this id
	TxnVersion        int               `json:"txn_version,omitempty"`      // format version 5, with transactional_id: the transaction version it spoke, 1 (AddPartitionsToTxn) or 2 (KIP-890 part 2)
	Seed              int64             `json:"seed"`
	Config            map[string]string `json:"config,omitempty"` // anything else worth knowing
}

// Broker describes the broker the run was against.
type Broker struct {
	Kind        string `json:"kind"`          // "kfake" or "kafka"
	Version     string `json:"version"`       // the version it is (or emulates)
	NoStateRule string `json:"no_state_rule"` // the spec's NoStateRule: pre25, v25to44, v45, kafka19880
}
