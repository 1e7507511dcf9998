// Package readback reads a topic's partitions back after a run, from offset 0
// to the high watermark, and turns each into a tracer.ReadBack event: the
// offset, producer id, epoch, sequence and kcheck id of every record. It is
// the end of every trace, whoever wrote the records.
//
// A read-back must not be fooled by a cluster that is still moving: a broker
// that has just become a partition's leader can report a high watermark below
// offsets the old leader acknowledged, until its followers fetch again. So
// before a partition is read its leader must be stable across two metadata
// reads and its in-sync replicas must be all of its replicas; fetches carry
// the leader epoch the metadata gave, and an answer from a broker that is no
// longer the leader (or a lost connection) sends the read back to the
// metadata; and a partition is read until its high watermark is the same in
// two reads and passes the highest offset the trace acknowledged on it. A
// shortfall stands only after Config.CatchUp, and then the Partition says
// what the read-back waited for and saw (Shortfall), which the trace records
// as a ReadBackShort event beside the partition's ReadBack.
package readback

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/wire"
)

// Config is one read-back.
type Config struct {
	Bootstrap []string
	Topic     string
	// Acked is, per partition, the highest offset the run acknowledged (the
	// last record of an acknowledged batch); the read-back waits for the
	// partition's high watermark to pass it. A partition not in Acked has no
	// known bound.
	Acked map[int32]int64
	// Settle bounds the wait for a stable leader and a full ISR, for the
	// topic at the start and for a partition after its leader moved (60 s
	// when zero).
	Settle time.Duration
	// CatchUp bounds the wait for a partition's high watermark to pass its
	// Acked offset (60 s when zero).
	CatchUp time.Duration
}

// DefaultBound is Settle's and CatchUp's default.
const DefaultBound = 60 * time.Second

// Partition is one partition's log as read back.
type Partition struct {
	ID    int32
	Log   []tracer.LogRecord
	Ctl   []tracer.Marker // the control records (transaction markers), kept apart from Log: they are no records of the run
	Short *Shortfall      // the high watermark never passed the acknowledged offset; nil when it did
	// Committed is the partition read again as read_committed, for a
	// partition with markers (committed.go); nil for one without.
	Committed *Committed
}

// Shortfall is what a read-back waited for and saw when a partition's high
// watermark stayed at or below the highest offset the run acknowledged.
type Shortfall struct {
	Acked  int64         // the highest acknowledged offset
	HWM    int64         // the high watermark the leader reported last
	Leader int32         // the leader that reported it
	Waited time.Duration // how long the read-back waited for it to pass Acked
}

// Events returns the trace events for p: its ReadBackShort, if it has one,
// then its ReadBack, then, for a partition read again as read_committed,
// its ReadCommitted.
func (p *Partition) Events() []tracer.Event {
	var out []tracer.Event
	if s := p.Short; s != nil {
		out = append(out, tracer.Event{Kind: tracer.ReadBackShort, Partition: p.ID, Offset: s.Acked,
			HWM: s.HWM, WaitedMs: s.Waited.Milliseconds(), Node: s.Leader})
	}
	out = append(out, tracer.Event{Kind: tracer.ReadBack, Partition: p.ID, Log: p.Log, Ctl: p.Ctl})
	if c := p.Committed; c != nil {
		out = append(out, tracer.Event{Kind: tracer.ReadCommitted, Partition: p.ID, Log: c.Log})
	}
	return out
}

// Topic reads every partition of cfg.Topic. An error names the partition and
// what the read-back waited for; no partial result comes with it.
func Topic(ctx context.Context, cfg Config) ([]Partition, error) {
	r := newReader(cfg)
	defer r.close()
	leaders, err := r.settle(ctx, nil)
	if err != nil {
		return nil, err
	}
	ids := make([]int32, 0, len(leaders))
	for p := range leaders {
		ids = append(ids, p)
	}
	slices.Sort(ids)
	// Two passes: the first reads each partition up to its high watermark,
	// the second reads each again at its end, a whole pass later, and
	// stops only where the high watermark is the same as the first saw.
	reads := make([]*pread, len(ids))
	for i, p := range ids {
		reads[i] = &pread{part: Partition{ID: p}, l: leaders[p], lastHWM: -1}
	}
	for _, confirm := range []bool{false, true} {
		for _, pr := range reads {
			if pr.part.Short != nil {
				continue
			}
			if err := r.read(ctx, pr, confirm); err != nil {
				return nil, err
			}
		}
	}
	for _, pr := range reads {
		if len(pr.part.Ctl) > 0 && pr.part.Short == nil {
			if err := r.readCommitted(ctx, pr); err != nil {
				return nil, err
			}
		}
	}
	out := make([]Partition, len(reads))
	for i, pr := range reads {
		out[i] = pr.part
	}
	return out, nil
}

// Settle waits, up to cfg.Settle, until every partition of cfg.Topic has a
// leader, the same leader and leader epoch in two metadata reads in a row,
// and every replica in sync: a cluster healed after its faults. Topic does
// this itself; Settle is for a caller that heals a cluster and wants to
// know when it has.
func Settle(ctx context.Context, cfg Config) error {
	r := newReader(cfg)
	defer r.close()
	_, err := r.settle(ctx, nil)
	return err
}

// leader is a partition's leader as the metadata named it.
type leader struct {
	node, epoch int32
}

// reader is one read-back's connections and metadata.
type reader struct {
	cfg   Config
	boot  *wire.Conn
	addrs map[int32]string // broker addresses, from the last metadata
	conns map[int32]*wire.Conn
	// short is when the first partition found its high watermark short of
	// its acknowledged offset: the partitions share one CatchUp bound from
	// then, so that a loss on many partitions costs one wait, not one each.
	short time.Time
}

// newReader returns a reader of cfg, its zero bounds made DefaultBound.
func newReader(cfg Config) *reader {
	if cfg.Settle <= 0 {
		cfg.Settle = DefaultBound
	}
	if cfg.CatchUp <= 0 {
		cfg.CatchUp = DefaultBound
	}
	return &reader{cfg: cfg, conns: map[int32]*wire.Conn{}}
}

func (r *reader) close() {
	if r.boot != nil {
		r.boot.Close()
	}
	for _, c := range r.conns {
		c.Close()
	}
}

// drop forgets a connection that failed.
func (r *reader) drop(node int32) {
	if c := r.conns[node]; c != nil {
		c.Close()
		delete(r.conns, node)
	}
}

// conn returns a connection to node, dialled on first use.
func (r *reader) conn(ctx context.Context, node int32) (*wire.Conn, error) {
	if c := r.conns[node]; c != nil && c.Err() == nil {
		return c, nil
	}
	addr, ok := r.addrs[node]
	if !ok {
		return nil, fmt.Errorf("node %d is not in the metadata", node)
	}
	c, err := wire.Dial(ctx, addr, "kcheck-readback")
	if err != nil {
		return nil, err
	}
	r.conns[node] = c
	return c, nil
}

// metadata asks any reachable broker for the topic's metadata.
func (r *reader) metadata(ctx context.Context) (*kmsg.MetadataResponse, error) {
	if r.boot == nil || r.boot.Err() != nil {
		var errs []error
		for _, addr := range r.cfg.Bootstrap {
			c, err := wire.Dial(ctx, addr, "kcheck-readback")
			if err == nil {
				r.boot = c
				break
			}
			errs = append(errs, err)
		}
		if r.boot == nil || r.boot.Err() != nil {
			r.boot = nil
			return nil, fmt.Errorf("no broker reachable: %w", errors.Join(errs...))
		}
	}
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(r.cfg.Topic)
	req.Topics = append(req.Topics, mt)
	kresp, err := r.boot.Request(ctx, req)
	if err != nil {
		r.boot.Close()
		r.boot = nil
		return nil, fmt.Errorf("metadata: %w", err)
	}
	meta := kresp.(*kmsg.MetadataResponse)
	if len(meta.Topics) != 1 {
		return nil, fmt.Errorf("metadata for %q has %d topics", r.cfg.Topic, len(meta.Topics))
	}
	addrs := make(map[int32]string, len(meta.Brokers))
	for _, b := range meta.Brokers {
		addrs[b.NodeID] = fmt.Sprintf("%s:%d", b.Host, b.Port)
	}
	r.addrs = addrs
	return meta, nil
}

// settled reports whether the metadata shows p settled: a known leader and
// every replica in sync. When it does not, why says what is missing.
func settled(mp *kmsg.MetadataResponseTopicPartition, addrs map[int32]string) (ok bool, why string) {
	if err := kerr.ErrorForCode(mp.ErrorCode); err != nil {
		return false, err.Error()
	}
	if _, known := addrs[mp.Leader]; mp.Leader < 0 || !known {
		return false, fmt.Sprintf("no leader (leader %d)", mp.Leader)
	}
	isr := slices.Clone(mp.ISR)
	slices.Sort(isr)
	reps := slices.Clone(mp.Replicas)
	slices.Sort(reps)
	if !slices.Equal(isr, reps) {
		return false, fmt.Sprintf("leader %d (epoch %d), in-sync replicas %v of %v", mp.Leader, mp.LeaderEpoch, isr, reps)
	}
	return true, ""
}

// settle waits, up to cfg.Settle, until the metadata shows every partition
// (only, when not nil) settled with the same leader and leader epoch in two
// reads in a row, and returns the leaders.
func (r *reader) settle(ctx context.Context, only *int32) (map[int32]leader, error) {
	start := time.Now()
	deadline := start.Add(r.cfg.Settle)
	var prev map[int32]leader
	backoff := 50 * time.Millisecond
	why := "no metadata yet"
	where := r.cfg.Topic
	if only != nil {
		where = fmt.Sprintf("%s[%d]", r.cfg.Topic, *only)
	}
	for {
		meta, err := r.metadata(ctx)
		var cur map[int32]leader
		switch {
		case err != nil:
			why = err.Error()
		default:
			cur, why = r.leaders(meta, only)
		}
		if cur != nil && prev != nil && sameLeaders(cur, prev) {
			return cur, nil
		}
		prev = cur
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("readback: %s did not settle within %v (waited for a stable leader and every replica in sync): %s",
				where, r.cfg.Settle, why)
		}
		if err := sleep(ctx, backoff); err != nil {
			return nil, fmt.Errorf("readback: %s: waiting for the cluster to settle: %w (last: %s)", where, err, why)
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// leaders returns the partitions' leaders when every one (or only *only)
// is settled; otherwise nil and why not.
func (r *reader) leaders(meta *kmsg.MetadataResponse, only *int32) (map[int32]leader, string) {
	mt := meta.Topics[0]
	if err := kerr.ErrorForCode(mt.ErrorCode); err != nil {
		return nil, fmt.Sprintf("topic %q: %v", r.cfg.Topic, err)
	}
	if len(mt.Partitions) == 0 {
		return nil, fmt.Sprintf("topic %q has no partitions", r.cfg.Topic)
	}
	out := make(map[int32]leader, len(mt.Partitions))
	parts := mt.Partitions
	sort.Slice(parts, func(i, j int) bool { return parts[i].Partition < parts[j].Partition })
	for i := range parts {
		mp := &parts[i]
		if only != nil && mp.Partition != *only {
			continue
		}
		if ok, why := settled(mp, r.addrs); !ok {
			return nil, fmt.Sprintf("%s[%d]: %s", r.cfg.Topic, mp.Partition, why)
		}
		out[mp.Partition] = leader{mp.Leader, mp.LeaderEpoch}
	}
	if only != nil && len(out) == 0 {
		return nil, fmt.Sprintf("%s[%d] is not in the metadata", r.cfg.Topic, *only)
	}
	return out, ""
}

func sameLeaders(a, b map[int32]leader) bool {
	if len(a) != len(b) {
		return false
	}
	for p, l := range a {
		if b[p] != l {
			return false
		}
	}
	return true
}

// moved reports whether a fetch error means the read must go back to the
// metadata: the broker is not (or no longer, or not yet) the leader at the
// epoch the read-back holds.
func moved(err error) bool {
	return errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.FencedLeaderEpoch) ||
		errors.Is(err, kerr.UnknownLeaderEpoch) || errors.Is(err, kerr.LeaderNotAvailable) ||
		errors.Is(err, kerr.ReplicaNotAvailable)
}

// pread is one partition's read-back in progress.
type pread struct {
	part    Partition
	l       leader
	offset  int64     // the next offset to read
	lastHWM int64     // the high watermark when the read last caught up, -1 before
	stuck   time.Time // since when the read has been waiting without progress; zero while it progresses
}

// waited returns how long pr has waited without progress, starting the
// clock on the first call after progress.
func (pr *pread) waited() time.Duration {
	if pr.stuck.IsZero() {
		pr.stuck = time.Now()
	}
	return time.Since(pr.stuck)
}

// read reads pr's partition on from pr.offset, at its leader, until it has
// caught up with the high watermark and the high watermark has passed
// cfg.Acked; when confirm is set, until the high watermark is also the one
// the last catch-up saw. Past cfg.CatchUp a high watermark short of
// cfg.Acked is a Shortfall.
func (r *reader) read(ctx context.Context, pr *pread, confirm bool) error {
	p := pr.part.ID
	acked, bounded := r.cfg.Acked[p]
	backoff := 20 * time.Millisecond
	where := func() string { return fmt.Sprintf("%s[%d] at offset %d", r.cfg.Topic, p, pr.offset) }
	// wait backs off before the next fetch; past the bound it fails with
	// what the read waited for.
	wait := func(what string) error {
		if pr.waited() > r.cfg.CatchUp {
			return fmt.Errorf("readback: %s: gave up after %v: %s", where(), r.cfg.CatchUp, what)
		}
		if err := sleep(ctx, backoff); err != nil {
			return fmt.Errorf("readback: %s: %w (waiting: %s)", where(), err, what)
		}
		backoff = min(2*backoff, 500*time.Millisecond)
		return nil
	}
	refresh := func() error {
		ls, err := r.settle(ctx, &p)
		if err != nil {
			return err
		}
		pr.l = ls[p]
		return nil
	}
	for {
		c, err := r.conn(ctx, pr.l.node)
		if err != nil {
			if werr := wait(fmt.Sprintf("leader %d unreachable: %v", pr.l.node, err)); werr != nil {
				return werr
			}
			if err := refresh(); err != nil {
				return err
			}
			continue
		}
		fp, err := fetch(ctx, c, r.cfg.Topic, p, pr.offset, pr.l.epoch)
		if err != nil {
			var lost bool
			if lost = c.Err() != nil; lost {
				r.drop(pr.l.node)
			}
			if !lost && !moved(err) && !kerr.IsRetriable(err) && !errors.Is(err, kerr.OffsetOutOfRange) {
				return fmt.Errorf("readback: fetching %s from leader %d: %w", where(), pr.l.node, err)
			}
			if werr := wait(fmt.Sprintf("leader %d answered %v", pr.l.node, err)); werr != nil {
				return werr
			}
			if lost || moved(err) || kerr.IsRetriable(err) {
				if err := refresh(); err != nil {
					return err
				}
			}
			continue
		}
		hwm := fp.HighWatermark
		batches, err := recordbatch.Decode(fp.RecordBatches)
		if err != nil {
			return fmt.Errorf("readback: %s: %w", where(), err)
		}
		before := pr.offset
		for _, b := range batches {
			for _, rec := range b.Records {
				if rec.Offset < pr.offset {
					continue // a batch can start before the offset asked for
				}
				if b.Control() {
					// A transaction marker: its key is a version and a
					// type, ABORT 0 or COMMIT 1 (Kafka's ControlRecordType).
					commit := len(rec.Key) >= 4 && binary.BigEndian.Uint16(rec.Key[2:4]) == 1
					pr.part.Ctl = append(pr.part.Ctl, tracer.Marker{Offset: rec.Offset, PID: rec.ProducerID, Epoch: rec.ProducerEpoch, Commit: commit})
					pr.offset = rec.Offset + 1
					continue
				}
				pr.part.Log = append(pr.part.Log, tracer.LogRecord{Offset: rec.Offset, PID: rec.ProducerID, Epoch: rec.ProducerEpoch,
					Seq: rec.Sequence, ID: recordbatch.RecordID(rec.Headers)})
				pr.offset = rec.Offset + 1
			}
			if b.Control() {
				pr.offset = max(pr.offset, b.BaseOffset+int64(b.LastOffsetDelta)+1)
			}
		}
		if pr.offset > before {
			pr.stuck = time.Time{}
		}
		switch {
		case pr.offset > hwm:
			// A new leader whose high watermark has not caught up with
			// what the old one let the read-back see.
			if err := wait(fmt.Sprintf("leader %d reports the high watermark %d, below offsets already read", pr.l.node, hwm)); err != nil {
				return err
			}
			pr.lastHWM = -1
		case pr.offset < hwm:
			if pr.offset == before {
				return fmt.Errorf("readback: %s: no progress below the high watermark %d", where(), hwm)
			}
			continue
		case bounded && hwm <= acked:
			// The leader has not (yet) got what the run was told is there.
			if r.short.IsZero() {
				r.short = time.Now()
			}
			if w := pr.waited(); w > r.cfg.CatchUp || time.Since(r.short) > r.cfg.CatchUp {
				pr.part.Short = &Shortfall{Acked: acked, HWM: hwm, Leader: pr.l.node, Waited: w}
				return nil
			}
			if err := sleep(ctx, backoff); err != nil {
				return fmt.Errorf("readback: %s: %w (waiting for the high watermark %d to pass the acknowledged offset %d)", where(), err, hwm, acked)
			}
			backoff = min(2*backoff, 500*time.Millisecond)
			if err := refresh(); err != nil {
				return err
			}
			pr.lastHWM = -1
		case confirm && hwm == pr.lastHWM:
			return nil // the same high watermark in two reads, a pass apart
		default:
			pr.lastHWM = hwm
			if !confirm {
				return nil // caught up; the confirming pass reads it again
			}
		}
	}
}

// fetch reads partition p of topic at offset from c, as a consumer at the
// leader epoch epoch.
func fetch(ctx context.Context, c *wire.Conn, topic string, p int32, offset int64, epoch int32) (*kmsg.FetchResponseTopicPartition, error) {
	return fetchAt(ctx, c, topic, p, offset, epoch, 0)
}

// fetchAt is fetch at an isolation level: 0 read_uncommitted, 1
// read_committed (up to the last stable offset, with the aborted
// transactions).
func fetchAt(ctx context.Context, c *wire.Conn, topic string, p int32, offset int64, epoch int32, isolation int8) (*kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = 16 << 20
	req.IsolationLevel = isolation
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.LogStartOffset = p, offset, -1
	rp.PartitionMaxBytes = 8 << 20
	rp.CurrentLeaderEpoch = epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := c.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, errors.New("unexpected response shape")
	}
	fp := &resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(fp.ErrorCode); err != nil {
		return nil, err
	}
	return fp, nil
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	return nil
}
