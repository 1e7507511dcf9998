package main

import (
	"fmt"

	"github.com/kcheck/kcheck/producer"
	"github.com/kcheck/kcheck/recordbatch"
)

// unit is what the ceiling sends between two waits: the warm-up or the
// timed part of an idempotent run, or one transaction. Its rounds go out
// in order, each one Produce request, pipelined.
type unit struct {
	Timed   bool
	Records int
	Epoch   int16     // the producer epoch its batches carry
	Rounds  [][]batch // round r holds the r-th batch of each partition that has one
}

// batch is one sealed record batch for one partition.
type batch struct {
	Partition int32
	Seq       int32 // its base sequence
	N         int   // records
	Bytes     []byte
}

// planSpec is what the batches are made of.
type planSpec struct {
	Partitions    int32
	BatchBytes    int    // a batch's size limit, as batch.size (its first record always fits)
	Value         []byte // every record's value
	PID           int64
	Epoch         int16 // the first unit's epoch
	Transactional bool  // the batches carry the transactional bit; each unit is a transaction of its own epoch (TV2 bumps it at every commit), sequences from 0
	Timestamp     int64 // the batches' base timestamp, ms
}

// plan builds every unit's batches before the clock starts: keys[u] are
// unit u's records' keys in send order, partitioned as the Java client's
// default partitioner does (murmur2), cut into batches of at most
// BatchBytes per partition in order, the sequences precomputed (an
// idempotent run's continue across its units; a transaction's start at 0
// with the next epoch). timed[u] says whether unit u is timed.
func plan(s planSpec, keys [][][]byte, timed []bool) ([]unit, error) {
	next := make([]int32, s.Partitions) // the next sequence per partition
	epoch := s.Epoch
	var units []unit
	for u, ks := range keys {
		if s.Transactional {
			clear(next)
		}
		per := make([][][]byte, s.Partitions)
		for _, k := range ks {
			p := producer.KeyPartition(k, s.Partitions)
			per[p] = append(per[p], k)
		}
		un := unit{Timed: timed[u], Records: len(ks), Epoch: epoch}
		for p, pk := range per {
			r := 0
			for i := 0; i < len(pk); r++ {
				b := recordbatch.NewBuilder(recordbatch.Params{ProducerID: s.PID, ProducerEpoch: epoch, BaseSequence: next[p], BaseTimestamp: s.Timestamp})
				n := 0
				for ; i < len(pk) && b.TryAppend(recordbatch.Record{Key: pk[i], Value: s.Value}, s.BatchBytes); i++ {
					n++
				}
				raw, err := b.AppendTo(nil)
				if err != nil {
					return nil, fmt.Errorf("unit %d, partition %d: %w", u, p, err)
				}
				if s.Transactional {
					raw[22] |= 0x10 // the attributes' transactional bit (the low byte of the int16 at 21)
					recordbatch.Seal(raw)
				}
				if r == len(un.Rounds) {
					un.Rounds = append(un.Rounds, nil)
				}
				un.Rounds[r] = append(un.Rounds[r], batch{Partition: int32(p), Seq: next[p], N: n, Bytes: raw})
				next[p] = recordbatch.NextSequence(next[p], int32(n))
			}
		}
		units = append(units, un)
		if s.Transactional {
			epoch++
		}
	}
	return units, nil
}
