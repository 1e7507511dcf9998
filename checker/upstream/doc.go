// Package upstream turns an anomaly kcheck verify found in a trace into an
// issue body for the client's own tracker: who was run (the client and its
// version, the broker), what was done to it (the fault schedule of the
// trace's header), what the application was told against what the log
// holds, record by record, the few trace lines that show it, the property
// of spec/IdempotentProducer.tla it breaks, and the one command that
// reproduces the run.
//
// It reads the trace through kcheck verify (checker/verify), as one of its
// pass's observers (Collector), and takes the anomalies from verify's
// Report: it finds none of its own. kcheck report (cmd/kcheck) is its
// command; traces/scenarios/issues holds what it wrote for the anomalies
// the scenario matrix found.
package upstream
