package linz

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/anishathalye/porcupine"

	"github.com/kcheck/kcheck/tracer"
)

// Visualize writes Porcupine's HTML visualization of every partition Check
// ran Porcupine on, annotated with the trace's broker and client events.
// Porcupine's results cannot be merged, so it runs Porcupine once more on all
// those partitions together, within the Timeout Check had.
func (r *Result) Visualize(w io.Writer) error {
	var ops []porcupine.Operation
	var notes []porcupine.Annotation
	row := 0
	for i := range r.Partitions {
		run := r.Partitions[i].run
		if run == nil {
			continue
		}
		run.build()
		for _, o := range run.ops {
			o.ClientId += row
			ops = append(ops, o)
		}
		notes = append(notes, run.annotations()...)
		row += run.clients
	}
	if len(ops) == 0 {
		return errors.New("linz: nothing to visualize: Porcupine ran on no partition")
	}
	_, info := porcupine.CheckOperationsVerbose(r.model, ops, r.Timeout)
	info.AddAnnotations(append(notes, annotations(r.global)...))
	if err := porcupine.Visualize(r.model, info, w); err != nil {
		return fmt.Errorf("linz: visualizing %d partitions: %w", len(r.Partitions), err)
	}
	return nil
}

// VisualizePartition writes Porcupine's HTML visualization of one partition
// from Check's own run: its linearization, or its longest partial ones and the
// operations that could not come next.
func (r *Result) VisualizePartition(w io.Writer, partition int32) error {
	var run *partRun
	for i := range r.Partitions {
		if r.Partitions[i].Partition == partition {
			run = r.Partitions[i].run
		}
	}
	if run != nil && run.linearized {
		// certify spared the search: Porcupine runs now, as Check would have.
		run.infoOnce.Do(func() {
			run.build()
			_, run.info = porcupine.CheckOperationsVerbose(r.model, run.ops, r.Timeout)
		})
	}
	if run == nil || run.info.PartialLinearizations() == nil {
		return fmt.Errorf("linz: partition %d: Porcupine did not run on it", partition)
	}
	info := run.info // a copy: the annotations go on it only
	info.AddAnnotations(append(run.annotations(), annotations(r.global)...))
	if err := porcupine.Visualize(r.model, info, w); err != nil {
		return fmt.Errorf("linz: visualizing partition %d: %w", partition, err)
	}
	return nil
}

// WriteIllegal writes the visualization of each Illegal partition to
// dir/partition-<p>.html, creating dir if needed, and returns the files'
// paths.
func (r *Result) WriteIllegal(dir string) ([]string, error) {
	var paths []string
	for i := range r.Partitions {
		pr := &r.Partitions[i]
		if pr.Verdict != Illegal {
			continue
		}
		if len(paths) == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("linz: %w", err)
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("partition-%d.html", pr.Partition))
		if err := writeFile(path, func(w io.Writer) error { return r.VisualizePartition(w, pr.Partition) }); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("linz: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("linz: %w", err)
	}
	return nil
}

// annotations are the partition's marks as Porcupine annotations, each on a
// row of its own tag: "p3 faults" (the fault injector), "p3 answers"
// (retriable errors the broker answered) and "p3 producer" (epoch bumps and
// resolved sequences).
func (run *partRun) annotations() []porcupine.Annotation {
	out := annotations(run.p.marks)
	for i := range out {
		out[i].Tag = fmt.Sprintf("p%d %s", run.p.id, out[i].Tag)
	}
	return out
}

// annotations renders marks; the partition-less ones (Disconnect, a Fault
// with p -1) get the tags "node N" and "faults".
func annotations(marks []mark) []porcupine.Annotation {
	out := make([]porcupine.Annotation, 0, len(marks))
	for _, m := range marks {
		e := m.e
		a := porcupine.Annotation{Start: m.t, End: m.t}
		switch m.kind {
		case tracer.Fault:
			a.Tag, a.Description = "faults", e.Fault
			a.Details = fmt.Sprintf("line %d: Fault %s (epoch %d, seq %d) on node %d, answered %q", m.line, e.Fault, e.Epoch, e.Seq, e.Node, e.Err)
			a.BackgroundColor = "#fde2c8"
		case tracer.Disconnect:
			a.Tag, a.Description = fmt.Sprintf("node %d", e.Node), "Disconnect"
			a.Details = fmt.Sprintf("line %d: the connection to node %d was lost; its outstanding batches are retried", m.line, e.Node)
			a.BackgroundColor = "#f8d7da"
		case tracer.Receive:
			a.Tag, a.Description = "answers", fmt.Sprintf("b%d %s", e.Batch, e.Err)
			a.Details = fmt.Sprintf("line %d: Receive for batch %d (epoch %d, seq %d), request %d from node %d: %s; the batch is retried", m.line, e.Batch, e.Epoch, e.Seq, e.Req, e.Node, e.Err)
			a.BackgroundColor = "#fff3cd"
		case tracer.Bump:
			a.Tag, a.Description = "producer", fmt.Sprintf("Bump → epoch %d", e.Epoch)
			a.Details = fmt.Sprintf("line %d: KIP-360 epoch bump to %d; in-flight batches renumbered", m.line, e.Epoch)
		case tracer.ResolveSequences:
			a.Tag, a.Description = "producer", "ResolveSequences"
			a.Details = fmt.Sprintf("line %d: unresolved sequence settled (bump requested: %v)", m.line, e.Bumped)
		default:
			continue
		}
		out = append(out, a)
	}
	return out
}
