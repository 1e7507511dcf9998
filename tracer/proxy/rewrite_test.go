package proxy

import (
	"context"
	"encoding/binary"
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A produce response may name a partition's new leader with its address
// (KIP-951); Java 4.x and librdkafka connect to it at once, so the proxy
// must rewrite it like metadata, or the client leaves the proxy unseen.
func TestProduceResponseLeaderRewritten(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	p, err := Start(context.Background(), Config{Listen: "127.0.0.1:0", Upstream: cluster.ListenAddrs()[0]})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(10)
	rq := &request{key: req.Key(), version: 10, corr: 7, kind: req}
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	resp.SetVersion(10)
	b := kmsg.NewProduceResponseBroker()
	b.NodeID, b.Host, b.Port = 2, "broker-2.internal", 9092
	resp.Brokers = append(resp.Brokers, b)
	raw := resp.AppendTo(newResponseHeader(rq))

	c := &conn{p: p, id: 1}
	out, _ := p.response(c, &exchange{rq: rq}, raw)
	if corr := int32(binary.BigEndian.Uint32(out)); corr != 7 {
		t.Fatalf("correlation id %d, want 7", corr)
	}
	got, _, err := decodeResponse(out, rq)
	if err != nil {
		t.Fatal(err)
	}
	gb := got.(*kmsg.ProduceResponse).Brokers
	if len(gb) != 1 || gb[0].NodeID != 2 {
		t.Fatalf("brokers %+v", gb)
	}
	addr := net.JoinHostPort(gb[0].Host, strconv.Itoa(int(gb[0].Port)))
	p.mu.Lock()
	l := p.listeners["broker-2.internal:9092"]
	p.mu.Unlock()
	if l == nil || l.ln.Addr().String() != addr {
		t.Fatalf("leader rewritten to %s; the proxy's listener for broker-2.internal:9092 is %v", addr, l)
	}
}
