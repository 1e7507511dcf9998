package tracer

// field is one JSON key of an event line.
type field uint32

const (
	fPartition field = 1 << iota
	fBatch
	fPID
	fEpoch
	fSeq
	fN
	fReq
	fNode
	fErr
	fOffset
	fLogStart
	fRecords
	fBumped
	fFault
	fReason
	fLog
	fHWM
	fWaited
	fRecordID
	fResult
	fTx        // format version 5: the transaction's number
	fCommit    // format version 5
	fNewEpoch  // format version 5
	fTxnID     // format version 5; optional on InitProducerId
	fCtl       // format version 5; optional on ReadBack
	fPoller    // format version 7: a poller's number
	fBatchTime // format version 8; optional on SendNew and Resend
)

// fieldNames are the JSON keys, in the order the writer emits them.
var fieldNames = []struct {
	f    field
	name string
}{
	{fPartition, "p"}, {fBatch, "b"}, {fPID, "pid"}, {fEpoch, "ep"}, {fSeq, "seq"},
	{fN, "n"}, {fReq, "req"}, {fNode, "node"}, {fErr, "err"}, {fOffset, "off"},
	{fLogStart, "lso"}, {fRecords, "recs"}, {fBumped, "bump"}, {fFault, "fault"},
	{fReason, "reason"}, {fLog, "log"}, {fHWM, "hwm"}, {fWaited, "ms"},
	{fRecordID, "id"}, {fResult, "res"}, {fTx, "tx"}, {fCommit, "commit"},
	{fNewEpoch, "nep"}, {fTxnID, "txn"}, {fCtl, "ctl"}, {fPoller, "poll"},
	{fBatchTime, "bts"},
}

const batchFields = fPartition | fBatch | fPID | fEpoch | fSeq

// kindFields is the one place that says which fields each kind carries; the
// writer emits exactly these and the reader requires exactly these.
var kindFields = map[Kind]field{
	SendNew:          batchFields | fN | fReq | fNode | fRecords,
	Resend:           batchFields | fN | fReq | fNode,
	Receive:          batchFields | fReq | fNode | fErr | fOffset | fLogStart,
	Bump:             fPartition | fPID | fEpoch,
	ExpireBatch:      batchFields,
	ResolveSequences: fPartition | fBumped,
	Disconnect:       fNode,
	InitProducerID:   fPID | fEpoch | fNode,
	Fault:            fFault | fPartition | fEpoch | fSeq | fNode | fErr,
	Fail:             batchFields | fReason,
	ReadBack:         fPartition | fLog,
	ReadCommitted:    fPartition | fLog, // format version 6
	ReadBackShort:    fPartition | fNode | fOffset | fHWM | fWaited,
	Told:             fPartition | fErr | fOffset | fReason | fRecordID | fResult,
	ToldRun:          fPartition | fErr | fOffset | fReason | fRecords | fResult,
	ToldBatch:        fPartition | fBatch | fErr | fOffset | fReason | fResult,
	// Format version 5: transactions.
	AddPartitionsToTxn: fPartition | fPID | fEpoch | fNode | fErr | fTx,
	EndTxn:             fPID | fEpoch | fNode | fCommit | fTx,
	EndTxnReceive:      fPID | fEpoch | fNode | fErr | fCommit | fNewEpoch | fTx,
	TxnTold:            fErr | fReason | fResult | fCommit | fTx,
	// Format version 7: a read_committed consumer's polls.
	Poll:    fPoller | fPartition | fOffset | fLog,
	PollEnd: fPoller | fPartition | fOffset | fErr | fReason,
}

// kindOptional are the fields a kind may carry or not (from the format
// version optionalSince says): the writer writes one when it is set (a
// transactional id, control records, a batch's timestamp), the reader
// takes it present or absent.
var kindOptional = map[Kind]field{
	InitProducerID: fTxnID,
	ReadBack:       fCtl,
	SendNew:        fBatchTime,
	Resend:         fBatchTime,
}

// optionalSince is the format version an optional field came with.
func optionalSince(f field) int {
	if f == fBatchTime {
		return 8
	}
	return 5
}

// optionalSet reports whether e has its optional field f set, so that the
// writer writes it.
func optionalSet(e *Event, f field) bool {
	switch f {
	case fTxnID:
		return e.TxnID != ""
	case fCtl:
		return len(e.Ctl) > 0
	case fBatchTime:
		return e.BatchTime != 0
	}
	return false
}

// Kinds lists every event kind, in the order FORMAT.md documents them.
func Kinds() []Kind {
	return []Kind{SendNew, Resend, Receive, Bump, ExpireBatch, ResolveSequences, Disconnect,
		InitProducerID, Fault, Fail, Told, ToldRun, ToldBatch, AddPartitionsToTxn, EndTxn, EndTxnReceive, TxnTold,
		Poll, PollEnd, ReadBackShort, ReadBack, ReadCommitted}
}
