package producer

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/wire"
)

// snapshot is an immutable view of the cluster's metadata. Produce reads it
// with one atomic load and takes no lock shared across partitions (the lesson
// of KAFKA-2102); a refresh builds a new snapshot and swaps it in.
type snapshot struct {
	brokers map[int32]string // node id -> host:port
	topics  map[string]*topicInfo
}

type topicInfo struct {
	parts   []*partition // long-lived: reused from one snapshot to the next
	leaders []int32      // leaders[i] leads parts[i]; -1 if none
	err     error        // the topic's metadata error, if any
}

func (s *snapshot) leader(p *partition) int32 {
	t := s.topics[p.topic]
	if t == nil || int(p.id) >= len(t.leaders) {
		return -1
	}
	return t.leaders[p.id]
}

// metadataLoop refreshes metadata when asked, one refresh at a time, on its
// own connection so it never waits behind produce requests.
type metadataLoop struct {
	p      *Producer
	want   chan struct{} // a refresh is wanted
	mu     sync.Mutex
	topics map[string]bool // topics to ask for
	conn   *wire.Conn
	gen    chan struct{} // closed and replaced after every refresh
	err    error         // the last refresh's error
}

// refresh asks for new metadata and returns a channel closed once a refresh
// that started after the call has finished.
func (m *metadataLoop) refresh(topic string) <-chan struct{} {
	m.mu.Lock()
	if topic != "" {
		m.topics[topic] = true
	}
	ch := m.gen
	m.mu.Unlock()
	select {
	case m.want <- struct{}{}:
	default:
	}
	return ch
}

func (m *metadataLoop) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			if m.conn != nil {
				m.conn.Close()
			}
			return
		case <-m.want:
		}
		m.mu.Lock()
		ch := m.gen
		m.gen = make(chan struct{})
		m.mu.Unlock()
		err := m.fetch(ctx)
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
		close(ch)
		m.p.wakeSender()
	}
}

func (m *metadataLoop) lastErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

func (m *metadataLoop) fetch(ctx context.Context) error {
	p := m.p
	if m.conn == nil || m.conn.Err() != nil {
		c, err := p.dialAny(ctx)
		if err != nil {
			return err
		}
		m.conn = c
	}
	req := kmsg.NewPtrMetadataRequest()
	m.mu.Lock()
	// Never nil: a null list asks for every topic in the cluster, and the
	// sender would then keep, and scan, every partition of them.
	req.Topics = make([]kmsg.MetadataRequestTopic, 0, len(m.topics))
	for t := range m.topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, p.cfg.requestTimeout)
	defer cancel()
	kresp, err := m.conn.Request(ctx, req)
	if err != nil {
		m.conn.Close()
		m.conn = nil
		return fmt.Errorf("producer: metadata: %w", err)
	}
	resp := kresp.(*kmsg.MetadataResponse)
	old := p.meta.Load()
	next := &snapshot{brokers: make(map[int32]string), topics: make(map[string]*topicInfo)}
	for _, b := range resp.Brokers {
		next.brokers[b.NodeID] = fmt.Sprintf("%s:%d", b.Host, b.Port)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		name := *t.Topic
		ti := &topicInfo{err: kerr.ErrorForCode(t.ErrorCode)}
		var prev *topicInfo
		if old != nil {
			prev = old.topics[name]
		}
		n := len(t.Partitions)
		if ti.err != nil && prev != nil {
			// Keep what we knew; the error is usually transient.
			ti.parts, ti.leaders = prev.parts, prev.leaders
		} else {
			ti.parts = make([]*partition, n)
			ti.leaders = make([]int32, n)
			for i := range ti.leaders {
				ti.leaders[i] = -1
			}
			for _, pm := range t.Partitions {
				if pm.Partition < 0 || int(pm.Partition) >= n {
					continue
				}
				if kerr.ErrorForCode(pm.ErrorCode) == nil {
					ti.leaders[pm.Partition] = pm.Leader
				}
			}
			for i := range ti.parts {
				if prev != nil && i < len(prev.parts) {
					ti.parts[i] = prev.parts[i]
				} else {
					ti.parts[i] = newPartition(name, int32(i))
				}
			}
		}
		next.topics[name] = ti
	}
	// Topics we knew and did not ask about this time stay as they were.
	if old != nil {
		for name, ti := range old.topics {
			if _, ok := next.topics[name]; !ok {
				next.topics[name] = ti
			}
		}
	}
	p.meta.Store(next)
	return nil
}
