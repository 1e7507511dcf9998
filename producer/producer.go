package producer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/producer/core"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/wire"
)

// Message is a record to produce. Partition and Offset are set when it is
// acknowledged. The producer encodes it when its batch is sent: it must not
// be modified between Produce and the outcome.
type Message struct {
	Topic     string
	Key       []byte // nil: spread over partitions; otherwise murmur2 as the Java client
	Value     []byte
	Headers   []kmsg.Header
	Timestamp time.Time // zero: the time Produce was called

	Partition int32
	Offset    int64
	ID        int64 // the kcheck id, when tracing (or RecordIDs)
}

// Producer is an idempotent Kafka producer. It is safe for concurrent use.
type Producer struct {
	cfg   cfg
	trace tracer.Sink
	ids   bool // records get kcheck ids and the kcheck-id header (tracing, or RecordIDs)

	meta  atomic.Pointer[snapshot]
	mloop *metadataLoop

	pid   int64 // the current producer id and epoch, owned by the sender after New
	epoch int16

	startPID   int64 // the producer id and epoch New got, for ProducerID
	startEpoch int16
	rearmFrom  string // where the idle re-arm bound came from (IdleRearm)

	gate     *gate // MaxBufferedRecords; Flush waits on it
	flushing atomic.Int32
	closed   atomic.Bool
	nextID   atomic.Int64
	nextB    atomic.Int64
	rr       atomic.Uint32 // round robin for records without a key

	stats   stats
	bufs    *bufPool
	batches *batchStore // the producer's batches: Produce fills them, sender.release gives them back

	wake     chan struct{}
	nextWake atomic.Int64 // the sender's next timer (unix ns); 0 while it is busy, -1 for none
	touchMu  sync.Mutex
	touched  []*partition // partitions Produce opened or sealed a batch of since the sender last looked
	inbox    inbox
	cancel   context.CancelFunc
	done     chan struct{} // the sender has exited
	mdone    chan struct{} // the metadata loop has exited
	s        *sender

	// Transactions (txn.go): the coordinator's connection (the sender's
	// after New), its node, the transaction version spoken, the cluster's
	// transaction.version, and whether the application has a transaction
	// open (Produce refuses records outside one).
	coord      *wire.Conn
	coordNode  int32
	tv2        bool
	txnFeature int16
	inTxn      atomic.Bool
}

// partition is one topic partition's buffer of batches being filled.
type partition struct {
	topic string
	id    int32

	mu     sync.Mutex // guards open and sealed; never held across partitions
	open   *batch
	sealed []*batch

	touched atomic.Bool // queued in Producer.touched

	// Owned by the sender.
	cp     core.Part // the partition's name in the sender's core; -1 before the sender registers it
	leader int32     // the partition's leader in the sender's snapshot; -1 if none (yet)
}

func newPartition(topic string, id int32) *partition {
	return &partition{topic: topic, id: id, cp: -1, leader: -1}
}

// New connects to the bootstrap brokers, gets a producer id with
// InitProducerId, and starts the sender. It fails with a clear error when no
// broker can be reached.
func New(ctx context.Context, opts ...Opt) (*Producer, error) {
	c := defaults()
	for _, o := range opts {
		o.apply(&c)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	p := &Producer{
		cfg:   c,
		trace: c.trace, ids: c.trace != nil || c.recordIDs,
		gate:    newGate(c.maxBuffered),
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		mdone:   make(chan struct{}),
		bufs:    newBufPool(c.batchBytes + c.batchBytes/4 + recordbatch.HeaderSize),
		batches: newBatchStore(c.maxBuffered),
	}
	p.meta.Store(&snapshot{brokers: map[int32]string{}, topics: map[string]*topicInfo{}})
	p.mloop = &metadataLoop{p: p, want: make(chan struct{}, 1), topics: map[string]bool{}, gen: make(chan struct{})}

	if c.txnID != "" {
		if err := p.initTransactions(ctx); err != nil {
			if p.coord != nil {
				p.coord.Close()
			}
			return nil, err
		}
	} else if err := p.initProducerID(ctx); err != nil {
		return nil, err
	}
	p.startPID, p.startEpoch = p.pid, p.epoch
	bc := p.readBrokerConfig(ctx, expirationKey, messageMaxKey)
	if err := p.resolveRearm(bc); err != nil {
		return nil, err
	}
	if err := p.cfg.fitRequestCap(bc); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		defer close(p.mdone)
		p.mloop.run(runCtx)
	}()
	p.s = newSender(p)
	go p.s.run(runCtx)
	select {
	case <-p.mloop.refresh(""):
	case <-ctx.Done():
		p.shutdown()
		return nil, fmt.Errorf("producer: first metadata: %w", ctx.Err())
	}
	if err := p.mloop.lastErr(); err != nil {
		p.shutdown()
		return nil, err
	}
	return p, nil
}

// dialAny connects to the first bootstrap broker that answers.
func (p *Producer) dialAny(ctx context.Context) (*wire.Conn, error) {
	var errs []error
	addrs := p.cfg.brokers
	if snap := p.meta.Load(); snap != nil {
		for _, a := range snap.brokers {
			addrs = append(addrs, a)
		}
	}
	for _, addr := range addrs {
		dctx, cancel := context.WithTimeout(ctx, p.cfg.dialTimeout)
		c, err := wire.Dial(dctx, addr, p.cfg.clientID)
		cancel()
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("producer: no broker reachable: %w", errors.Join(errs...))
}

func (p *Producer) initProducerID(ctx context.Context) error {
	c, err := p.dialAny(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	// A broker that has just started answers COORDINATOR_LOAD_IN_PROGRESS
	// (or another retriable error) until the controller hands it a block of
	// producer ids: retry those with a backoff, as the Java client does,
	// until ctx ends.
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.ProducerID, req.ProducerEpoch = -1, -1
		req.TransactionTimeoutMillis = 60000
		rctx, cancel := context.WithTimeout(ctx, p.cfg.requestTimeout)
		kresp, err := c.Request(rctx, req)
		cancel()
		if err != nil {
			return fmt.Errorf("producer: InitProducerId: %w", err)
		}
		resp := kresp.(*kmsg.InitProducerIDResponse)
		err = kerr.ErrorForCode(resp.ErrorCode)
		if err == nil {
			p.pid, p.epoch = resp.ProducerID, resp.ProducerEpoch
			break
		}
		if !kerr.IsRetriable(err) {
			return fmt.Errorf("producer: InitProducerId: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("producer: InitProducerId: still %w when giving up: %w", err, ctx.Err())
		case <-time.After(backoff):
		}
	}
	if p.trace != nil {
		p.trace.Emit(&tracer.Event{Kind: tracer.InitProducerID, PID: p.pid, Epoch: p.epoch, Node: -1})
	}
	return nil
}

// ProducerID returns the producer id and the epoch it started with.
func (p *Producer) ProducerID() (int64, int16) { return p.startPID, p.startEpoch }

func (p *Producer) wakeSender() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Produce buffers m for its topic and calls done (from the sender goroutine;
// it must not block for long) once m is acknowledged or has failed. It blocks
// while MaxBufferedRecords records are buffered, until ctx ends. Records are
// encoded when their batch is sent, so m, its Key, Value and Headers must not
// be modified until done is called.
func (p *Producer) Produce(ctx context.Context, m *Message, done func(*Message, error)) {
	if done == nil {
		done = func(*Message, error) {}
	}
	if p.closed.Load() {
		done(m, ErrClosed)
		return
	}
	if p.cfg.txnID != "" && !p.inTxn.Load() {
		done(m, ErrNoTransaction)
		return
	}
	if err := p.gate.acquire(ctx); err != nil {
		done(m, err)
		return
	}
	part, err := p.partitionFor(ctx, m)
	if err != nil {
		p.finish(pendingRecord{m, done}, err)
		return
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = time.Now()
	}
	m.Partition = part.id
	traced := p.ids
	var id int64
	if traced {
		id = p.nextID.Add(1)
		m.ID = id
	}
	ms := m.Timestamp.UnixMilli()

	part.mu.Lock()
	b := part.open
	wake := false
	touch := false // the sender must look at part: a batch was opened or sealed
	var size int
	var tooLarge error // the record alone is a batch above MaxRequestBytes
	if b != nil {
		// Like the Java producer's batch.size, the limit does not apply to a
		// batch's first record, which always goes in.
		body := messageBodySize(m, ms-b.baseTs, int32(len(b.recs)), traced, id)
		size = recordbatch.VarintLen(int64(body)) + body
		if b.size+size > p.cfg.batchBytes {
			part.sealed = append(part.sealed, b)
			part.open = nil
			b, wake, touch = nil, true, true
		}
	}
	if b == nil {
		body := messageBodySize(m, 0, 0, traced, id)
		size = recordbatch.VarintLen(int64(body)) + body
		if mr := p.cfg.maxRequestBytes; mr > 0 && recordbatch.HeaderSize+size > mr {
			tooLarge = fmt.Errorf("%w: %d bytes as a batch, above %d", ErrRecordTooLarge, recordbatch.HeaderSize+size, p.cfg.maxRequestBytes)
		}
	}
	if tooLarge == nil && b == nil {
		// Room for as many records as batch.size holds of this one's size.
		est := max(1, p.cfg.batchBytes/max(size, 1)) + 1
		b = p.batches.get(est)
		ids := b.ids[:0] // kept by the store with the batch, as recs
		*b = batch{
			id:      p.nextB.Add(1),
			part:    part,
			recs:    b.recs,
			created: time.Now(),
			baseTs:  ms,
			maxTs:   ms,
			size:    recordbatch.HeaderSize,
			seq:     -1,
			epoch:   -1,
		}
		if traced {
			if cap(ids) < cap(b.recs) {
				ids = make([]int64, 0, cap(b.recs))
			}
			b.ids = ids
		}
		part.open = b
		touch = true
		// Wake the sender to arm the linger timer, unless its timer already
		// fires before this batch's linger ends.
		if nw := p.nextWake.Load(); nw <= 0 || nw > b.created.Add(p.cfg.linger).UnixNano() {
			wake = true
		}
	}
	if tooLarge == nil {
		b.recs = append(b.recs, pendingRecord{m, done})
		b.size += size
		b.maxTs = max(b.maxTs, ms)
		if traced {
			b.ids = append(b.ids, id)
		}
		if b.size >= p.cfg.batchBytes {
			part.sealed = append(part.sealed, b)
			part.open = nil
			wake, touch = true, true
		}
	}
	part.mu.Unlock()
	if tooLarge != nil {
		p.finish(pendingRecord{m, done}, tooLarge) // a batch it found full was sealed all the same (below)
	}
	if touch && part.touched.CompareAndSwap(false, true) {
		p.touchMu.Lock()
		p.touched = append(p.touched, part)
		p.touchMu.Unlock()
	}
	if wake {
		p.wakeSender()
	}
}

// partitionFor picks m's partition from the metadata snapshot, fetching
// metadata for a topic it has not seen.
func (p *Producer) partitionFor(ctx context.Context, m *Message) (*partition, error) {
	t := p.meta.Load().topics[m.Topic]
	if t == nil || len(t.parts) == 0 {
		select {
		case <-p.mloop.refresh(m.Topic):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		t = p.meta.Load().topics[m.Topic]
		if t == nil || len(t.parts) == 0 {
			if t != nil && t.err != nil {
				return nil, fmt.Errorf("%w %q: %w", ErrUnknownTopic, m.Topic, t.err)
			}
			if err := p.mloop.lastErr(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w %q", ErrUnknownTopic, m.Topic)
		}
	}
	n := int32(len(t.parts))
	if m.Key != nil {
		return t.parts[KeyPartition(m.Key, n)], nil
	}
	return t.parts[p.rr.Add(1)%uint32(n)], nil
}

// finish delivers a record's outcome and frees its buffer slot.
func (p *Producer) finish(r pendingRecord, err error) {
	r.done(r.msg, err)
	p.gate.release(1)
}

// Flush sends every buffered record without waiting for the linger and
// waits until each has its outcome, or ctx ends.
func (p *Producer) Flush(ctx context.Context) error {
	p.flushing.Add(1)
	defer p.flushing.Add(-1)
	p.wakeSender()
	for {
		ch := p.gate.idleChan()
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("producer: flush: %d records still buffered: %w", p.gate.buffered(), ctx.Err())
		}
	}
}

// Close flushes (until ctx ends), fails whatever is still buffered with
// ErrClosed, stops the sender and closes every connection. It leaves no
// goroutine behind.
func (p *Producer) Close(ctx context.Context) error {
	if p.closed.Swap(true) {
		return nil
	}
	err := p.Flush(ctx)
	p.shutdown()
	return err
}

func (p *Producer) shutdown() {
	p.closed.Store(true)
	if p.cancel != nil {
		p.cancel()
		<-p.done
		<-p.mdone
	}
	if p.coord != nil {
		p.coord.Close()
	}
}
