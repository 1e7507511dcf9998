// Package wire is a Kafka protocol connection on kmsg: dial, ApiVersions
// negotiation, and requests written back to back on one TCP connection with
// their responses read in order (a Kafka connection is serial, so responses
// come back in the order the requests were sent).
//
// The producer sends its produce requests through it, pipelined up to
// max.in.flight; the read-back and the admin steps of `kcheck run` use its
// synchronous Request.
package wire
