package upstream

import "github.com/kcheck/kcheck/checker"

// Property is what a finding of kcheck verify breaks: a property of
// spec/IdempotentProducer.tla (spec/README.md, "Properties") or, for
// findings the spec's properties do not name, what does.
type Property struct {
	Name    string // the spec's name for it (NoDuplicate, AckedInLog, ...), or what names it
	Meaning string // what it says, in one line
	Summary string // what breaking it looks like, for a title: "a record written twice"
}

// The spec's properties, as spec/IdempotentProducer.tla defines them.
var (
	noDuplicate     = Property{"NoDuplicate", "each batch is in the log at most once", "a record written twice"}
	noReorder       = Property{"NoReorder", "batches are in the log in the order the application sent them", "records written out of order"}
	noGap           = Property{"NoGap", "a sequence of an epoch in the log implies every lower sequence of that epoch is there", "a record lost behind a later one"}
	ackedInLog      = Property{"AckedInLog", "an acknowledged batch is in the log at the offset it was acknowledged with; one acknowledged with no offset is in the log somewhere", "a record acknowledged and never written"}
	ackedAtOffset   = Property{"AckedInLog", ackedInLog.Meaning, "a record acknowledged at an offset that holds another"}
	eventuallyAcked = Property{"EventuallyAcked", "every batch is eventually acknowledged: none is retried forever (liveness)", "a batch retried on OUT_OF_ORDER_SEQUENCE_NUMBER without end"}
	followsSpec     = Property{"Spec", "every event of the trace is a step of the spec (trace validation)", "a step the spec does not allow"}
	failedPresent   = Property{"(none: the spec's properties are over acknowledged batches; Jepsen's G1a)", "a record the application was told definitely failed is not in the log", "a record told failed that was written"}
	linearizable    = Property{"(linearizability, checked by Porcupine)", "each partition's history of produces and their answers has a linearization", "a partition's history that is not linearizable"}
)

// The transactional properties, as spec/TransactionalProducer.tla defines them.
var (
	noAbortedRead       = Property{"NoAbortedRead", "a read_committed consumer never returns a record of an aborted transaction", "a read_committed read of an aborted record"}
	committedVisible    = Property{"Visible", "a read_committed consumer returns every committed record below the last stable offset", "a committed record a read_committed read skipped"}
	abortNotCommitted   = Property{"NoAbortedRead", noAbortedRead.Meaning, "an aborted transaction's record committed"}
	committedAtomically = Property{"CommittedAtomically", "a transaction's records are all committed, on every partition, or none is", "a transaction committed in part"}
	noWriteInOtherTxn   = Property{"NoWriteInOtherTxn", "records one marker closes belong to one transaction of the application", "a delayed batch written into a later transaction"}
	ackedCommitInLog    = Property{"AckedCommitInLog", "every record of a transaction the application was told committed is in the log, committed", "a transaction told committed whose records are lost or aborted"}
	lsoAdvances         = Property{"LSOAdvances", "a transaction open on a partition is eventually closed by a marker (liveness)", "a hanging transaction"}
)

// PropertyOf returns the property a violation of kind k breaks: the one
// place kcheck maps verify's finding kinds (checker.Kind) to the spec's
// properties. acknowledged tells, for a lost-write, whether its records
// were acknowledged (on the wire or to the application): AckedInLog if so,
// else the loss is a gap behind a later sequence of the epoch (NoGap, the
// KAFKA-14359 loss).
func PropertyOf(k checker.Kind, acknowledged bool) Property {
	switch k {
	case checker.Lost:
		if acknowledged {
			return ackedInLog
		}
		return noGap
	case checker.Duplicate:
		return noDuplicate
	case checker.Reorder:
		return noReorder
	case checker.Gap:
		return noGap
	case checker.InconsistentOffset:
		return ackedAtOffset
	case checker.FailedPresent:
		return failedPresent
	case checker.Stall:
		return eventuallyAcked
	case checker.NonConformance:
		return followsSpec
	case checker.NotLinearizable:
		return linearizable
	case checker.AbortedRead:
		return noAbortedRead
	case checker.CommittedUnread:
		return committedVisible
	case checker.AbortCommitted:
		return abortNotCommitted
	case checker.TornTxn:
		return committedAtomically
	case checker.WriteInOtherTxn:
		return noWriteInOtherTxn
	case checker.LostCommit:
		return ackedCommitInLog
	case checker.HangingTxn:
		return lsoAdvances
	}
	return Property{Name: string(k), Meaning: "a finding kcheck verify has no property for", Summary: string(k)}
}
