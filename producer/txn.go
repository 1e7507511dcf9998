package producer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/producer/core"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/wire"
)

// Transactions: the I/O around producer/core's transactional decisions
// (core/txn.go). New finds the transaction coordinator (FindCoordinator,
// key type transaction), reads the cluster's transaction.version feature
// from its ApiVersions answer and asks InitProducerId with the
// transactional id; the sender sends AddPartitionsToTxn (TV1) and EndTxn to
// the coordinator when the core asks, on one connection, one request at a
// time (the Java client's TransactionManager also keeps one transactional
// request in flight), and tells the application each transaction's end.

// TransactionalID makes the producer transactional with this
// transactional.id: records are produced inside transactions
// (BeginTransaction, CommitTransaction, AbortTransaction), and a producer
// started with the same id fences this one.
func TransactionalID(id string) Opt { return optFunc(func(c *cfg) { c.txnID = id }) }

// TransactionTimeout sets transaction.timeout.ms, sent with InitProducerId:
// the coordinator aborts a transaction open longer. Default 60s.
func TransactionTimeout(d time.Duration) Opt { return optFunc(func(c *cfg) { c.txnTimeout = d }) }

// TransactionVersion sets the transaction version to speak: 0 (the default)
// TV2 when the cluster's finalized transaction.version feature is 2 and TV1
// otherwise, as the Java client does (TransactionManager
// .isTransactionV2Enabled); 1 TV1 whatever the cluster (AddPartitionsToTxn,
// EndTxn v4, Produce v11); 2 requires TV2 (New fails on a cluster below).
func TransactionVersion(v int) Opt { return optFunc(func(c *cfg) { c.txnVersion = v }) }

// WaitForMarkers, under TV2 (on by default): a transaction's first batch
// waits until the coordinator has written the previous transaction's
// markers, asking DescribeTransactions every 1 to 4 ms for at most 100 ms
// after the EndTxn answer. Sent earlier, the broker holds it about 20 ms
// (add.partitions.to.txn.retry.backoff.ms) while the coordinator is still
// in PrepareCommit (producer/core/txn.go, "Settling").
func WaitForMarkers(on bool) Opt { return optFunc(func(c *cfg) { c.waitMarkers = on }) }

// ErrNoTransaction is Produce outside a transaction of a transactional
// producer.
var ErrNoTransaction = errors.New("producer: transactional: Produce outside a transaction (BeginTransaction first)")

// TxnUnsupportedError is New's error for a cluster that cannot run the
// transactions asked: it names what the broker said.
type TxnUnsupportedError struct {
	Broker string
	Msg    string
}

func (e *TxnUnsupportedError) Error() string {
	return fmt.Sprintf("producer: broker %s: %s", e.Broker, e.Msg)
}

// TxnError is why a transaction did not end as the application asked.
type TxnError struct {
	Tx        int64
	Msg       string
	Fatal     bool  // the producer can do nothing more
	Abortable bool  // a commit that failed: abort the transaction
	Unknown   bool  // the call gave up before the coordinator answered: the outcome is not known yet
	Err       error // the Kafka error, if any
}

func (e *TxnError) Error() string { return fmt.Sprintf("producer: transaction %d: %s", e.Tx, e.Msg) }
func (e *TxnError) Unwrap() error { return e.Err }

// TxnVersion returns the transaction version the producer speaks (1 or
// 2), 0 for an idempotent producer.
func (p *Producer) TxnVersion() int {
	switch {
	case p.cfg.txnID == "":
		return 0
	case p.tv2:
		return 2
	}
	return 1
}

// TxnFeature returns the cluster's finalized transaction.version level as
// the coordinator told it (0 when it listed none), for a transactional
// producer.
func (p *Producer) TxnFeature() int16 { return p.txnFeature }

// txnCmd is a transactional call from the application to the sender.
type txnCmd struct {
	begin  bool
	commit bool
	reply  chan error
}

// BeginTransaction opens a transaction: records produced until
// CommitTransaction or AbortTransaction belong to it.
func (p *Producer) BeginTransaction() error {
	if p.cfg.txnID == "" {
		return errors.New("producer: BeginTransaction: not transactional (TransactionalID)")
	}
	if p.closed.Load() {
		return ErrClosed
	}
	cmd := &txnCmd{begin: true, reply: make(chan error, 1)}
	p.inbox.push(inboxItem{txn: cmd})
	p.wakeSender()
	select {
	case err := <-cmd.reply:
		if err == nil {
			p.inTxn.Store(true)
		}
		return err
	case <-p.done:
		return ErrClosed
	}
}

// CommitTransaction sends every record of the open transaction, waits for
// their answers, then commits it (EndTxn), and returns once the coordinator
// answered. A *TxnError tells why it did not commit: Abortable (call
// AbortTransaction), Fatal (close the producer) or Unknown (ctx ended
// first: the commit goes on, and its outcome is not known).
func (p *Producer) CommitTransaction(ctx context.Context) error { return p.endTxn(ctx, true) }

// AbortTransaction fails the open transaction's records not yet sent,
// waits for the answers to those sent, then aborts it (EndTxn).
func (p *Producer) AbortTransaction(ctx context.Context) error { return p.endTxn(ctx, false) }

func (p *Producer) endTxn(ctx context.Context, commit bool) error {
	if p.cfg.txnID == "" {
		return errors.New("producer: not transactional (TransactionalID)")
	}
	if p.closed.Load() {
		return ErrClosed
	}
	cmd := &txnCmd{commit: commit, reply: make(chan error, 1)}
	p.inTxn.Store(false)
	p.inbox.push(inboxItem{txn: cmd})
	p.wakeSender()
	select {
	case err := <-cmd.reply:
		return err
	case <-ctx.Done():
		return &TxnError{Tx: -1, Msg: fmt.Sprintf("gave up waiting for the coordinator's answer: %v", ctx.Err()), Unknown: true, Err: ctx.Err()}
	case <-p.done:
		return ErrClosed
	}
}

// initTransactions finds the coordinator, decides the transaction version
// and gets the producer id and epoch for the transactional id.
func (p *Producer) initTransactions(ctx context.Context) error {
	c, err := p.dialAny(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	// A broker with transactions speaks FindCoordinator v1+ (the key
	// type), InitProducerId, AddPartitionsToTxn and EndTxn (Kafka 0.11).
	for _, key := range []kmsg.Key{kmsg.InitProducerID, kmsg.AddPartitionsToTxn, kmsg.EndTxn} {
		if _, ok := c.MaxVersion(key.Int16()); !ok {
			return &TxnUnsupportedError{c.Addr(), fmt.Sprintf("no transaction support: its ApiVersions lists no %s (it answered as %s)", kmsg.NameForKey(key.Int16()), c.VersionGuess())}
		}
	}
	if v, _ := c.MaxVersion(kmsg.FindCoordinator.Int16()); v < 1 {
		return &TxnUnsupportedError{c.Addr(), fmt.Sprintf("no transaction support: FindCoordinator up to v%d, which has no key type (it answered as %s)", v, c.VersionGuess())}
	}
	coord, err := p.findCoordinator(ctx, c)
	if err != nil {
		return err
	}
	p.coord = coord
	p.txnFeature = coord.Feature("transaction.version")
	endMax, _ := coord.MaxVersion(kmsg.EndTxn.Int16())
	prodMax, _ := coord.MaxVersion(kmsg.Produce.Int16())
	canTV2 := p.txnFeature >= 2 && endMax >= 5 && prodMax >= 12
	switch p.cfg.txnVersion {
	case 2:
		if !canTV2 {
			return &TxnUnsupportedError{coord.Addr(), fmt.Sprintf("transaction version 2 asked, but the cluster's finalized transaction.version is %d (and the broker speaks EndTxn up to v%d, Produce up to v%d; TV2 needs 2, v5 and v12)",
				p.txnFeature, endMax, prodMax)}
		}
		p.tv2 = true
	case 1:
	default:
		p.tv2 = canTV2
	}
	// The trace's header says the run is transactional and which version
	// it spoke, when it is not written yet (tracer.NewDeferredWriter).
	if a, ok := p.trace.(tracer.Amender); ok {
		id, tv := p.cfg.txnID, p.TxnVersion()
		if err := a.Amend(func(h *tracer.Header) { h.TransactionalID, h.TxnVersion = id, tv }); err != nil && !errors.Is(err, tracer.ErrHeaderWritten) {
			return fmt.Errorf("producer: recording the transaction version in the trace header: %w", err)
		}
	}
	return p.initTxnProducerID(ctx, -1, -1)
}

// findCoordinator asks c for the transactional id's coordinator
// (FindCoordinator, key type 1) and dials it, retrying while the
// coordinator is loading or not available.
func (p *Producer) findCoordinator(ctx context.Context, c *wire.Conn) (*wire.Conn, error) {
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorType = p.cfg.txnID, 1
		req.CoordinatorKeys = []string{p.cfg.txnID}
		rctx, cancel := context.WithTimeout(ctx, p.cfg.requestTimeout)
		kresp, err := c.Request(rctx, req)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("producer: FindCoordinator: %w", err)
		}
		resp := kresp.(*kmsg.FindCoordinatorResponse)
		code, node, host, port := resp.ErrorCode, resp.NodeID, resp.Host, resp.Port
		if len(resp.Coordinators) > 0 {
			co := resp.Coordinators[0]
			code, node, host, port = co.ErrorCode, co.NodeID, co.Host, co.Port
		}
		if err := kerr.ErrorForCode(code); err != nil {
			if !kerr.IsRetriable(err) {
				return nil, fmt.Errorf("producer: FindCoordinator for transactional id %q: %w", p.cfg.txnID, err)
			}
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("producer: FindCoordinator: still %w when giving up: %w", err, ctx.Err())
			case <-time.After(backoff):
			}
			continue
		}
		p.coordNode = node
		dctx, cancel := context.WithTimeout(ctx, p.cfg.dialTimeout)
		defer cancel()
		return wire.Dial(dctx, fmt.Sprintf("%s:%d", host, port), p.cfg.clientID)
	}
}

// capped is a request whose version is capped below kmsg's newest.
type capped struct {
	kmsg.Request
	max int16
}

func (r capped) MaxVersion() int16 { return min(r.Request.MaxVersion(), r.max) }

// txnRequest sends req to the coordinator and waits for its answer,
// finding the coordinator again first if the connection is gone.
func (p *Producer) txnRequest(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if p.coord == nil || p.coord.Err() != nil {
		if p.coord != nil {
			p.coord.Close()
			p.coord = nil
		}
		c, err := p.dialAny(ctx)
		if err != nil {
			return nil, err
		}
		coord, err := p.findCoordinator(ctx, c)
		c.Close()
		if err != nil {
			return nil, err
		}
		p.coord = coord
	}
	rctx, cancel := context.WithTimeout(ctx, p.cfg.requestTimeout)
	defer cancel()
	return p.coord.Request(rctx, req)
}

// initTxnProducerID asks InitProducerId for the transactional id, with the
// current producer id and epoch to bump it (KIP-360; -1, -1 at the start),
// retrying the errors TransactionManager's InitProducerIdHandler retries.
func (p *Producer) initTxnProducerID(ctx context.Context, pid int64, epoch int16) error {
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &p.cfg.txnID
		req.TransactionTimeoutMillis = int32(p.cfg.txnTimeout / time.Millisecond)
		req.ProducerID, req.ProducerEpoch = pid, epoch
		kresp, err := p.txnRequest(ctx, req)
		if err != nil {
			return fmt.Errorf("producer: InitProducerId: %w", err)
		}
		resp := kresp.(*kmsg.InitProducerIDResponse)
		err = kerr.ErrorForCode(resp.ErrorCode)
		if err == nil {
			p.pid, p.epoch = resp.ProducerID, resp.ProducerEpoch
			break
		}
		if errors.Is(err, kerr.NotCoordinator) || errors.Is(err, kerr.CoordinatorNotAvailable) {
			p.coord.Close() // found again by the next txnRequest
		} else if !kerr.IsRetriable(err) && !errors.Is(err, kerr.ConcurrentTransactions) {
			return fmt.Errorf("producer: InitProducerId for transactional id %q: %w", p.cfg.txnID, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("producer: InitProducerId: still %w when giving up: %w", err, ctx.Err())
		case <-time.After(backoff):
		}
	}
	if p.trace != nil {
		p.trace.Emit(&tracer.Event{Kind: tracer.InitProducerID, PID: p.pid, Epoch: p.epoch, Node: p.coordNode, TxnID: p.cfg.txnID})
	}
	return nil
}

// addPartitions sends AddPartitionsToTxn (v3 at most: the client's
// versions; TV1) for the core's parts and gives the core the answer: the
// first error among the partitions, 0 if all were added.
func (s *sender) addPartitions(ctx context.Context, parts []core.Part, now time.Time) {
	p := s.p
	pid, epoch := s.core.ID()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = p.cfg.txnID, pid, epoch
	for _, cp := range parts {
		part := s.byPart[cp]
		i := len(req.Topics) - 1
		if i < 0 || req.Topics[i].Topic != part.topic {
			t := kmsg.NewAddPartitionsToTxnRequestTopic()
			t.Topic = part.topic
			req.Topics = append(req.Topics, t)
			i++
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, part.id)
	}
	code := kerr.NetworkException.Code
	codes := map[int32]int16{}
	if kresp, err := p.txnRequest(ctx, capped{req, 3}); err == nil {
		code = 0
		resp := kresp.(*kmsg.AddPartitionsToTxnResponse)
		for _, t := range resp.Topics {
			for _, pr := range t.Partitions {
				codes[pr.Partition] = pr.ErrorCode
				if pr.ErrorCode != 0 && (code == 0 || code == kerr.OperationNotAttempted.Code) {
					code = pr.ErrorCode
				}
			}
		}
		if code == kerr.NotCoordinator.Code || code == kerr.CoordinatorNotAvailable.Code {
			p.coord.Close()
		}
	}
	if p.trace != nil {
		tx := s.core.Tx()
		for _, cp := range parts {
			part := s.byPart[cp]
			c, ok := codes[part.id]
			if !ok {
				c = code
			}
			s.emit(&tracer.Event{Kind: tracer.AddPartitionsToTxn, Partition: part.id, PID: pid, Epoch: epoch, Node: p.coordNode, Err: tracer.ErrorName(c), Tx: tx})
		}
	}
	s.core.PartitionsAdded(parts, code, now)
}

// endTxn sends EndTxn (v4 at most under TV1, v5 under TV2, which answers
// the new epoch) and gives the core the answer.
func (s *sender) endTxn(ctx context.Context, r *core.EndTxnRequest, now time.Time) {
	p := s.p
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = p.cfg.txnID, r.PID, r.Epoch, r.Commit
	maxV := int16(4)
	if p.tv2 {
		maxV = 5
	}
	s.emit(&tracer.Event{Kind: tracer.EndTxn, PID: r.PID, Epoch: r.Epoch, Node: p.coordNode, Commit: r.Commit, Tx: r.Tx})
	code, pid, epoch := kerr.NetworkException.Code, r.PID, int16(-1)
	if kresp, err := p.txnRequest(ctx, capped{req, maxV}); err == nil {
		resp := kresp.(*kmsg.EndTxnResponse)
		code = resp.ErrorCode
		if code == 0 && resp.Version >= 5 {
			pid, epoch = resp.ProducerID, resp.ProducerEpoch
		}
		if code == kerr.NotCoordinator.Code || code == kerr.CoordinatorNotAvailable.Code {
			p.coord.Close()
		}
	}
	s.emit(&tracer.Event{Kind: tracer.EndTxnReceive, PID: r.PID, Epoch: r.Epoch, Node: p.coordNode, Err: tracer.ErrorName(code),
		Commit: r.Commit, NewEpoch: epoch, Tx: r.Tx})
	if code == 0 && epoch >= 0 {
		s.enc.pid = pid
	}
	s.core.EndTxnAnswered(code, pid, epoch, now)
}

// describeTxn asks the coordinator the transaction's state
// (DescribeTransactions, KIP-664) and gives the core the answer; a lost
// connection or a coordinator that does not know the request is an error,
// which ends the waiting for the markers.
func (s *sender) describeTxn(ctx context.Context) {
	p := s.p
	p.stats.describes.Add(1)
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{p.cfg.txnID}
	code, state := kerr.UnsupportedVersion.Code, ""
	if p.coord != nil {
		if _, ok := p.coord.MaxVersion(kmsg.DescribeTransactions.Int16()); !ok {
			s.core.TxnDescribed("", code, time.Now())
			return
		}
	}
	if kresp, err := p.txnRequest(ctx, req); err != nil {
		code = kerr.NetworkException.Code
	} else if resp := kresp.(*kmsg.DescribeTransactionsResponse); len(resp.TransactionStates) != 1 {
		code = kerr.UnknownServerError.Code
	} else {
		code, state = resp.TransactionStates[0].ErrorCode, resp.TransactionStates[0].State
	}
	s.core.TxnDescribed(state, code, time.Now())
}

// txnDone tells the application how its transaction ended, after the epoch
// bump it needs (TV1, after an abort that failed batches).
func (s *sender) txnDone(ctx context.Context, r *core.TxnResult) {
	p := s.p
	var err error
	if r.Err != "" {
		te := &TxnError{Tx: r.Tx, Msg: r.Err, Fatal: r.Fatal, Abortable: r.Abortable}
		if r.Code != 0 {
			te.Err = kerr.ErrorForCode(r.Code)
		}
		err = te
	}
	if r.Bump {
		pid, epoch := s.core.ID()
		if berr := p.initTxnProducerID(ctx, pid, epoch); berr != nil {
			s.core.Fatal("InitProducerId to bump the epoch after the transaction: " + berr.Error())
			err = &TxnError{Tx: r.Tx, Msg: berr.Error(), Fatal: true, Err: berr}
		} else {
			s.enc.pid = p.pid
			s.core.Bumped(p.pid, p.epoch)
		}
	}
	if p.trace != nil {
		e := tracer.Event{Kind: tracer.TxnTold, Commit: r.Commit, Tx: r.Tx, Result: tracer.Aborted}
		switch {
		case err != nil:
			e.Result, e.Reason = tracer.Failed, err.Error()
			if r.Code != 0 {
				e.Err = tracer.ErrorName(r.Code)
			}
		case r.Commit:
			e.Result = tracer.Committed
		}
		s.emit(&e)
	}
	if s.txnReply != nil {
		s.txnReply <- err
		s.txnReply = nil
	}
}

// txnCommand applies an application's transactional call.
func (s *sender) txnCommand(cmd *txnCmd) {
	if cmd.begin {
		cmd.reply <- s.core.BeginTxn()
		return
	}
	if err := s.core.EndTxn(cmd.commit); err != nil {
		var te *core.TxnError
		if errors.As(err, &te) {
			err = &TxnError{Tx: s.core.Tx(), Msg: te.Msg, Abortable: te.Abortable, Fatal: s.core.FatalErr() != ""}
		}
		cmd.reply <- err
		return
	}
	s.txnReply = cmd.reply
}
