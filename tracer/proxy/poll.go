package proxy

import (
	"context"

	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/poll"
)

// A transactional client's run (the header names a transactional id: its
// first produce to the topic carried one) is polled as read_committed by a
// consumer of the proxy's own, straight from the upstream cluster, while
// the client runs, and to each partition's end once it has exited (Finish),
// before the read-back: Poll and PollEnd events (tracer/poll).

// pollSink writes a poller's events into the proxy's trace.
type pollSink struct{ p *Proxy }

func (s pollSink) Emit(e *tracer.Event) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	s.p.trace.Emit(e)
}

// startPollLocked starts the poller once the header is written, for a
// transactional client, when Config.Poll asks for one.
func (p *Proxy) startPollLocked() {
	if !p.cfg.Poll || p.poller != nil || p.trace == nil || p.txnID == "" {
		return
	}
	pl, err := poll.Start(poll.Config{Brokers: []string{p.cfg.Upstream}, Topic: p.topic, Partitions: p.partitions[p.topic],
		Sink: pollSink{p}, Retries: p.cfg.PollRetries, Bound: p.cfg.PollBound})
	if err != nil {
		p.cfg.Logf("proxy: no read_committed poller: %v", err)
		return
	}
	p.poller = pl
}

// finishPoll runs the poller's final polls, if there is one.
func (p *Proxy) finishPoll(ctx context.Context) {
	p.mu.Lock()
	pl := p.poller
	p.poller = nil
	p.mu.Unlock()
	if pl == nil {
		return
	}
	st := pl.Finish(ctx)
	p.mu.Lock()
	p.stats.Polls, p.stats.PollRecords, p.stats.PollGaveUp = st.Polls, st.Records, st.GaveUp
	p.mu.Unlock()
}

// stopPoll stops the poller without its final polls.
func (p *Proxy) stopPoll() {
	p.mu.Lock()
	pl := p.poller
	p.poller = nil
	p.mu.Unlock()
	if pl != nil {
		pl.Close()
	}
}
