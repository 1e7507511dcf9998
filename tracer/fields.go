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
	{fRecordID, "id"}, {fResult, "res"},
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
	ReadBackShort:    fPartition | fNode | fOffset | fHWM | fWaited,
	Told:             fPartition | fErr | fOffset | fReason | fRecordID | fResult,
	ToldRun:          fPartition | fErr | fOffset | fReason | fRecords | fResult,
	ToldBatch:        fPartition | fBatch | fErr | fOffset | fReason | fResult,
}

// Kinds lists every event kind, in the order FORMAT.md documents them.
func Kinds() []Kind {
	return []Kind{SendNew, Resend, Receive, Bump, ExpireBatch, ResolveSequences, Disconnect,
		InitProducerID, Fault, Fail, Told, ToldRun, ToldBatch, ReadBackShort, ReadBack}
}
