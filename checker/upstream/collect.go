package upstream

import (
	"slices"

	"github.com/kcheck/kcheck/checker/kafkaerr"
	"github.com/kcheck/kcheck/tracer"
)

// batchKey names a batch: its partition and id.
type batchKey struct {
	p int32
	b int64
}

// told is what the application was told about a record (a Told event).
type told struct {
	line   int
	p      int32
	off    int64
	result string
	err    string
	reason string
}

// batch is what the pass saw of one batch: the lines of its events, and
// whether the wire acknowledged it.
type batch struct {
	lines []int
	acked bool
}

// attemptKey is what a Fault names of the attempt it hit.
type attemptKey struct {
	p   int32
	ep  int16
	seq int32
}

// open is an attempt sent and not answered yet, on its connection.
type open struct {
	key batchKey
	req int32
}

// readBack is a partition's log as read back, and the line that gave it.
type readBack struct {
	line int
	i, t int64
	log  []tracer.LogRecord
}

// Collector gathers, in kcheck verify's one pass over a trace, what an
// issue body shows of the anomalies verify finds: give it to verify as an
// Observer (verify.Options.Observers), then to New with the report. It
// keeps a few numbers per record and per event line of a batch, and the
// read-back: which records the anomalies name is known only once the pass
// is over.
type Collector struct {
	told     map[int64]told
	recBatch map[int64]batchKey // the batch that first sent each record
	batches  map[batchKey]*batch
	last     map[attemptKey]batchKey // the batch last sent as each attempt, for its Faults
	open     map[int32][]open        // by node (a proxy's connection)
	global   []int                   // Fault lines that name no partition (a cluster's nodes)
	logs     map[int32]readBack
	sent     map[int32][]int64 // each partition's batches, in the order first sent
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{told: map[int64]told{}, recBatch: map[int64]batchKey{}, batches: map[batchKey]*batch{},
		last: map[attemptKey]batchKey{}, open: map[int32][]open{}, logs: map[int32]readBack{}, sent: map[int32][]int64{}}
}

func (c *Collector) batch(k batchKey) *batch {
	b := c.batches[k]
	if b == nil {
		b = &batch{}
		c.batches[k] = b
	}
	return b
}

// add notes line as one of batch k's, once.
func (c *Collector) add(k batchKey, line int) {
	b := c.batch(k)
	if n := len(b.lines); n == 0 || b.lines[n-1] != line {
		b.lines = append(b.lines, line)
	}
}

// Observe implements verify.Observer.
func (c *Collector) Observe(line int, e *tracer.Event) {
	k := batchKey{e.Partition, e.Batch}
	switch e.Kind {
	case tracer.SendNew, tracer.Resend:
		if e.Kind == tracer.SendNew {
			if _, seen := c.batches[k]; !seen {
				c.sent[e.Partition] = append(c.sent[e.Partition], e.Batch)
			}
		}
		c.add(k, line)
		if e.Kind == tracer.SendNew {
			for _, id := range e.Records {
				if _, ok := c.recBatch[id]; !ok {
					c.recBatch[id] = k
				}
			}
		}
		c.last[attemptKey{e.Partition, e.Epoch, e.Seq}] = k
		c.open[e.Node] = append(c.open[e.Node], open{k, e.Req})
	case tracer.Receive:
		c.add(k, line)
		if kafkaerr.IsAck(e.Err) {
			c.batch(k).acked = true
		}
		c.open[e.Node] = slices.DeleteFunc(c.open[e.Node], func(o open) bool { return o.key == k && o.req == e.Req })
	case tracer.Disconnect:
		for _, o := range c.open[e.Node] {
			c.add(o.key, line)
		}
		delete(c.open, e.Node)
	case tracer.Fault:
		if e.Partition < 0 {
			c.global = append(c.global, line)
		} else if b, ok := c.last[attemptKey{e.Partition, e.Epoch, e.Seq}]; ok {
			c.add(b, line)
		}
	case tracer.ExpireBatch, tracer.Fail:
		c.add(k, line)
	case tracer.Told:
		c.told[e.RecordID] = told{line: line, p: e.Partition, off: e.Offset, result: e.Result, err: e.Err, reason: e.Reason}
	case tracer.ReadBack:
		c.logs[e.Partition] = readBack{line: line, i: e.I, t: e.T, log: e.Log}
	}
}

// next returns the batch its partition sent after k, if any.
func (c *Collector) next(k batchKey) (batchKey, bool) {
	bs := c.sent[k.p]
	if i := slices.Index(bs, k.b); i >= 0 && i+1 < len(bs) {
		return batchKey{k.p, bs[i+1]}, true
	}
	return batchKey{}, false
}
