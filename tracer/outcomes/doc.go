// Package outcomes holds the drivers' report of what a client told its
// application about each record (drivers/OUTCOMES.md): the writer the Go
// drivers and kcheck run use, and the reader kcheck proxy merges a report
// into its trace with, as Told events (tracer/FORMAT.md).
package outcomes
