// Package outcomes holds the drivers' report of what a client told its
// application about each record, and run transactionally about each
// transaction's end (drivers/OUTCOMES.md): the writer the Go drivers and
// kcheck run use, and the reader kcheck proxy merges a report into its
// trace with, as Told and TxnTold events (tracer/FORMAT.md).
package outcomes
