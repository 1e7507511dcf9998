// Package recordbatch is Kafka's v2 record batch: building one, sealing it
// (length and CRC-32C), decoding the batches of a fetch or produce request,
// the compression codecs, and the kcheck-id header that names each record
// kcheck writes. The producer encodes with it; the read-back and the proxy
// decode with it.
package recordbatch
