// Package tracer holds kcheck's trace: the events a producer run emits, one
// per step of spec/IdempotentProducer.tla, and the versioned JSONL writer and
// reader for them.
//
// A trace is the contract between the parts of kcheck: producer/ (and later the
// proxy) writes it, checker/ reads it. FORMAT.md documents every line.
package tracer
