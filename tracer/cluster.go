package tracer

// The Fault events of faults on a real cluster's nodes (fault/, kcheck proxy
// --cluster): what was done to the node in the event's node field (-1: to
// none in particular). They force no spec action: the client meets them as
// the errors, delays and lost connections its own events show.
const (
	PauseBroker   = "PauseBroker"   // the node's process was stopped (SIGSTOP)
	ResumeBroker  = "ResumeBroker"  // the paused node's process was continued (SIGCONT)
	KillBroker    = "KillBroker"    // the node's process was killed (SIGKILL)
	StopBroker    = "StopBroker"    // the node was stopped cleanly (SIGTERM), for a restart
	StartBroker   = "StartBroker"   // the node was started again on its data and answers
	MoveLeaders   = "MoveLeaders"   // every partition's leader moved to its next replica
	IsolateBroker = "IsolateBroker" // the proxy stopped answering the client's connections to the node
	RejoinBroker  = "RejoinBroker"  // the isolation ended: the node's connections were cut, new ones answered
	SlowBroker    = "SlowBroker"    // the proxy began delaying the node's answers
	SlowBrokerEnd = "SlowBrokerEnd" // the proxy stopped delaying them
)

// IsClusterFault reports whether a Fault event's fault is one done to a
// cluster's node.
func IsClusterFault(fault string) bool {
	switch fault {
	case PauseBroker, ResumeBroker, KillBroker, StopBroker, StartBroker, MoveLeaders,
		IsolateBroker, RejoinBroker, SlowBroker, SlowBrokerEnd:
		return true
	}
	return false
}
