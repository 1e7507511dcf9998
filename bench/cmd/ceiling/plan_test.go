package main

import (
	"testing"

	"github.com/kcheck/kcheck/producer"
	"github.com/kcheck/kcheck/recordbatch"
)

// TestPlan: the batches hold every record once, in send order per
// partition, under the size limit; a round holds at most one batch per
// partition; an idempotent run's sequences continue across its units, a
// transaction's start at 0 with the next epoch and carry the
// transactional bit.
func TestPlan(t *testing.T) {
	keys := func(from, n int) [][]byte {
		var ks [][]byte
		for i := from; i < from+n; i++ {
			ks = append(ks, []byte{byte(i), byte(i >> 8)})
		}
		return ks
	}
	value := make([]byte, 100)
	for _, txn := range []bool{false, true} {
		s := planSpec{Partitions: 4, BatchBytes: 600, Value: value, PID: 7, Epoch: 3, Transactional: txn}
		units, err := plan(s, [][][]byte{keys(0, 50), keys(50, 50)}, []bool{false, true})
		if err != nil {
			t.Fatal(err)
		}
		if len(units) != 2 || units[0].Timed || !units[1].Timed {
			t.Fatalf("txn %v: units %+v", txn, units)
		}
		next := map[int32]int32{}
		for u, un := range units {
			wantEpoch := int16(3)
			if txn {
				wantEpoch += int16(u)
				clear(next)
			}
			if un.Epoch != wantEpoch {
				t.Errorf("txn %v, unit %d: epoch %d, want %d", txn, u, un.Epoch, wantEpoch)
			}
			var got [][]byte
			perPart := map[int32][][]byte{}
			for r, round := range un.Rounds {
				seen := map[int32]bool{}
				for _, b := range round {
					if seen[b.Partition] {
						t.Errorf("txn %v, unit %d, round %d: partition %d twice", txn, u, r, b.Partition)
					}
					seen[b.Partition] = true
					if b.N > 1 && len(b.Bytes) > s.BatchBytes {
						t.Errorf("batch of %d bytes over the limit %d", len(b.Bytes), s.BatchBytes)
					}
					dec, err := recordbatch.DecodeBatch(b.Bytes)
					if err != nil {
						t.Fatal(err)
					}
					if dec.BaseSequence != next[b.Partition] || dec.ProducerEpoch != wantEpoch || dec.ProducerID != 7 || dec.Transactional() != txn || len(dec.Records) != b.N {
						t.Errorf("txn %v, unit %d, partition %d: batch seq %d epoch %d txn %v n %d, want seq %d epoch %d",
							txn, u, b.Partition, dec.BaseSequence, dec.ProducerEpoch, dec.Transactional(), len(dec.Records), next[b.Partition], wantEpoch)
					}
					next[b.Partition] += int32(b.N)
					for _, r := range dec.Records {
						perPart[b.Partition] = append(perPart[b.Partition], r.Key)
					}
				}
			}
			for p := range int32(4) {
				got = append(got, perPart[p]...)
			}
			var want [][]byte
			for p := range int32(4) {
				for _, k := range keys(50*u, 50) {
					if producer.KeyPartition(k, 4) == p {
						want = append(want, k)
					}
				}
			}
			if len(got) != len(want) {
				t.Fatalf("txn %v, unit %d: %d records in the batches, want %d", txn, u, len(got), len(want))
			}
			for i := range got {
				if string(got[i]) != string(want[i]) {
					t.Fatalf("txn %v, unit %d: record %d is key %x, want %x (per partition in send order)", txn, u, i, got[i], want[i])
				}
			}
		}
	}
}
