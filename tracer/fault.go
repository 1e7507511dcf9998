package tracer

// LateSent is the Fault event of a late request (fault.LateProduce,
// fault.LateTxn) going to the broker once its condition held: p, ep and
// seq name the attempt a late Produce carries (-1 for a request to the
// transaction coordinator, whose epoch ep is). Its keeping was traced as a
// Delay. The broker handles it on a connection of the proxy's own, whose
// answer nobody gets.
const LateSent = "LateSent"

// ActsThroughClient reports whether a Fault event's fault forces no spec
// action itself: what the client sees of it (a Disconnect, a late answer,
// nothing) is what counts. A cut as a request arrived (DropConnection) is
// not among them: it names an attempt the broker never saw.
func ActsThroughClient(fault string) bool {
	switch fault {
	case "DropResponse", "TimeoutBeforeAppend", "Delay", LateSent:
		return true
	}
	return false
}
