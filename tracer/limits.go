package tracer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Limits on what a trace may hold (FORMAT.md, "Limits"). The reader refuses
// a trace beyond them with a *SyntaxError, so that what kcheck keeps of a
// trace follows the trace's size and never a number the trace only claims.
const (
	// MaxPartitions bounds the header's partitions: far above any real
	// topic (Kafka has no per-topic limit of its own, but a whole cluster
	// holds a few hundred thousand to a few million partitions).
	MaxPartitions = 1_000_000
	// MaxBatchRecords bounds a batch's records (SendNew's recs and n,
	// Resend's n): a 1 MiB batch (Kafka's default max.message.bytes) holds
	// at most about 150,000 records of the smallest kind, 7 bytes each.
	MaxBatchRecords = 1_000_000
	// MaxLineBytes bounds one line without its newline: a ReadBack of a
	// partition of about 7 million records, the longest line a run writes.
	MaxLineBytes = 256 << 20
)

// checkHeader holds a decoded header to the limits, and returns the key it
// breaks and why; "" if none.
func checkHeader(h *Header) (key string, err error) {
	if h.Partitions < 1 || h.Partitions > MaxPartitions {
		return "partitions", fmt.Errorf("%d is not a partition count kcheck reads: 1 to %d (tracer/FORMAT.md, Limits)", h.Partitions, MaxPartitions)
	}
	switch {
	case (h.TransactionalID != "" || h.TxnVersion != 0) && h.Version < 5:
		return "transactional_id", fmt.Errorf("transactions are in format version 5; this header says version %d", h.Version)
	case h.TransactionalID != "" && h.TxnVersion != 1 && h.TxnVersion != 2:
		return "txn_version", fmt.Errorf("%d: a transactional trace's transaction version is 1 or 2", h.TxnVersion)
	case h.TransactionalID == "" && h.TxnVersion != 0:
		return "txn_version", fmt.Errorf("%d without a transactional_id", h.TxnVersion)
	}
	return "", nil
}

// checkPartition holds an event's p to the header's partitions: 0 to
// partitions-1, or -1 for a Fault that hit no partition or a Told of a
// record the client did not say the partition of.
func (r *Reader) checkPartition(e *Event) error {
	p := e.Partition
	if p >= 0 && p < r.header.Partitions || p == -1 && (e.Kind == Fault || e.Kind == Told || e.Kind == ToldRun) {
		return nil
	}
	return r.errorf("p", "partition %d is not one of the header's %d partitions (0 to %d)", p, r.header.Partitions, r.header.Partitions-1)
}

// duplicateKey returns the first key that a JSON object in line (a header,
// already decoded, so well formed and shallow) has twice, as a path such as
// "broker.kind"; "" if none. encoding/json would take the last of them, and
// matches keys to fields case-insensitively, so keys are compared that way,
// except in the config map, whose keys are its own.
func duplicateKey(line []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	var walk func(path string) (string, error)
	walk = func(path string) (string, error) {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return "", err
				}
				k, _ := kt.(string)
				full, fold := k, strings.ToLower(k)
				if path != "" {
					full = path + "." + k
				}
				if path == "config" {
					fold = k
				}
				if seen[fold] {
					return full, nil
				}
				seen[fold] = true
				if d, err := walk(full); d != "" || err != nil {
					return d, err
				}
			}
		case json.Delim('['):
			for dec.More() {
				if d, err := walk(path); d != "" || err != nil {
					return d, err
				}
			}
		default:
			return "", nil
		}
		_, err = dec.Token() // the closing delimiter
		return "", err
	}
	return walk("")
}
