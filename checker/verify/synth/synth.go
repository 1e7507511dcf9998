// Package synth writes synthetic traces, conformant and of any length, for
// the tests and benchmarks of verify and its reports.
package synth

import (
	"bufio"
	"fmt"
	"os"

	"github.com/kcheck/kcheck/tracer"
)

// Write writes to path a conformant trace of about n events: 16 partitions
// on 2 brokers, batches of 4 records pipelined 4 at a time per partition
// after the first ack, every batch acknowledged, then the read-back.
func Write(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w, err := tracer.NewWriter(bw, tracer.Header{Writer: "synth", Client: "synth", Topic: "t", Partitions: 16,
		FirstAck: true, HoldWhileRetrying: true, MaxInFlight: 5, DeliveryTimeoutMs: 120000,
		Broker: tracer.Broker{Kind: "kafka", Version: "4.1.0", NoStateRule: "v25to44"}})
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	const parts, per, pipe = 16, 4, 4
	pid := int64(1000)
	w.Emit(&tracer.Event{Kind: tracer.InitProducerID, PID: pid, Node: -1})
	type pstate struct {
		seq  int32
		off  int64
		logs []tracer.LogRecord
	}
	ps := make([]pstate, parts)
	var batch, rec int64
	req := map[int32]int32{}
	events := 1
	round := 0
	for events < n {
		for p := int32(0); p < parts && events < n; p++ {
			node := p % 2
			k := pipe
			if round == 0 {
				k = 1 // the first ack first
			}
			type sent struct {
				b, off int64
				seq    int32
				r      int32
			}
			var s []sent
			for i := 0; i < k; i++ {
				batch++
				ids := make([]int64, per)
				for j := range ids {
					rec++
					ids[j] = rec
					ps[p].logs = append(ps[p].logs, tracer.LogRecord{Offset: ps[p].off + int64(j), PID: pid, Seq: ps[p].seq + int32(j), ID: rec})
				}
				req[node]++
				w.Emit(&tracer.Event{Kind: tracer.SendNew, Partition: p, Batch: batch, PID: pid, Seq: ps[p].seq, N: per, Req: req[node], Node: node, Records: ids})
				s = append(s, sent{batch, ps[p].off, ps[p].seq, req[node]})
				ps[p].seq += per
				ps[p].off += per
				events++
			}
			for _, x := range s {
				w.Emit(&tracer.Event{Kind: tracer.Receive, Partition: p, Batch: x.b, PID: pid, Seq: x.seq, Req: x.r, Node: node, Err: "NONE", Offset: x.off, LogStart: 0})
				events++
			}
		}
		round++
	}
	for p := int32(0); p < parts; p++ {
		w.Emit(&tracer.Event{Kind: tracer.ReadBack, Partition: p, Log: ps[p].logs})
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	return nil
}
