// Package scenario turns a TLC counterexample into a fault schedule, and
// reads and writes the scenario files that hold one (spec/scenarios).
//
// A counterexample of spec/IdempotentProducer.tla is a sequence of spec
// actions, each recorded in the spec's variable event. The broker's and the
// network's faults among them (RejectBeforeAppend, AppendThenFail,
// Disconnect, ExpireProducerState) are what kcheck can force on a real
// client, through the proxy and the broker's configuration; the client's own
// steps are what a schedule waits for. [Derive] maps one to the other (the
// design is ../shared/design/scenarios.md): each fault keyed by the
// partition, relative epoch and base sequence of the attempt it hits, its
// answer held until the client's sends that came before it was read in the
// counterexample. Steps nothing outside the client can force (its delivery
// timeout, the application producing a batch again) become needs and notes.
//
// [DeriveSpec] runs TLC on every configuration of spec/expect.tsv that
// expects a violation, one invariant (or temporal property) at a time, so
// that every invariant's shortest counterexample is found and not only the
// first; it derives a [Scenario] from each, and predicts, per client family
// ([Families]), what the family's rules allow on the same configuration,
// and the same on each broker variant of the spec ([Variants]: tansu).
// Configurations of a module in [NotDerivable] (spec/TransactionalProducer.tla,
// whose faults the proxy cannot force yet), and those that model a broker
// variant themselves, are left out; [Skipped] names them.
//
// The file format is line-based text: one keyword a line, the
// counterexample one step a line (see [Read] and spec/scenarios/README.md).
// `kcheck scenarios derive` writes the files; with --check it fails when a
// file no longer matches what the spec derives ([CheckDir]).
package scenario
