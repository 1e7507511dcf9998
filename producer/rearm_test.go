package producer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/tracer"
)

func TestRearmValidate(t *testing.T) {
	cases := []struct {
		opts []Opt
		want string // "" for valid
	}{
		{nil, ""},
		{[]Opt{IdleRearmAfter(time.Second), ProducerIDExpiration(2 * time.Second)}, ""},
		{[]Opt{IdleRearmAfter(-time.Second)}, "IdleRearmAfter: -1s is negative"},
		{[]Opt{ProducerIDExpiration(-time.Second)}, "ProducerIDExpiration: -1s is negative"},
		{[]Opt{IdleRearmAfter(2 * time.Second), ProducerIDExpiration(2 * time.Second)}, "IdleRearmAfter (2s) must be below ProducerIDExpiration (2s)"},
		{[]Opt{IdleRearm(true), FirstAckRule(false)}, "IdleRearm: on needs FirstAckRule on"},
		{[]Opt{IdleRearm(false), IdleRearmAfter(time.Second)}, "IdleRearmAfter (1s) is set but IdleRearm is off"},
		{[]Opt{FirstAckRule(false)}, ""}, // the default re-arm follows the first-ack rule
	}
	for _, c := range cases {
		cf := defaults()
		cf.brokers = []string{"x:1"}
		for _, o := range c.opts {
			o.apply(&cf)
		}
		err := cf.validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%d options: unexpected error %v", len(c.opts), err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("want an error containing %q, got %v", c.want, err)
		}
	}
}

// TestRearmBound checks where the bound comes from on kfake, which does not
// report producer.id.expiration.ms: the default or the configured
// expiration, recorded in the trace header.
func TestRearmBound(t *testing.T) {
	cases := []struct {
		opts     []Opt
		refuse   bool // the broker answers DescribeConfigs with an authorization error
		wantMs   int64
		wantFrom string
	}{
		{nil, false, 12 * 3600 * 1000, "half of Kafka's default producer.id.expiration.ms (24h0m0s); DescribeConfigs failed (broker 0 does not report producer.id.expiration.ms)"},
		{nil, true, 12 * 3600 * 1000, "half of Kafka's default producer.id.expiration.ms (24h0m0s); DescribeConfigs failed (DescribeConfigs: broker 0: CLUSTER_AUTHORIZATION_FAILED)"},
		{[]Opt{ProducerIDExpiration(2 * time.Second)}, true, 1000, "half of ProducerIDExpiration 2s"},
		{[]Opt{IdleRearmAfter(300 * time.Millisecond)}, false, 300, "IdleRearmAfter; DescribeConfigs failed (broker 0 does not report producer.id.expiration.ms)"},
		{[]Opt{IdleRearm(false)}, false, 0, ""},
	}
	for _, c := range cases {
		cl := newCluster(t, 1)
		if c.refuse {
			cl.ControlKey(int16(kmsg.DescribeConfigs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
				cl.KeepControl()
				req := kreq.(*kmsg.DescribeConfigsRequest)
				resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
				for _, r := range req.Resources {
					rr := kmsg.NewDescribeConfigsResponseResource()
					rr.ResourceType, rr.ResourceName, rr.ErrorCode = r.ResourceType, r.ResourceName, kerr.ClusterAuthorizationFailed.Code
					resp.Resources = append(resp.Resources, rr)
				}
				return resp, nil, true
			})
		}
		var buf bytes.Buffer
		w, err := tracer.NewDeferredWriter(&buf, tracer.Header{Writer: "test"})
		if err != nil {
			t.Fatal(err)
		}
		p := newProducer(t, cl, append([]Opt{Trace(w)}, c.opts...)...)
		wantFrom := c.wantFrom
		if c.wantMs == 0 {
			wantFrom = "off"
		}
		if after, from := p.IdleRearm(); after != time.Duration(c.wantMs)*time.Millisecond || from != wantFrom {
			t.Errorf("IdleRearm() = %v from %q, want %d ms from %q", after, from, c.wantMs, wantFrom)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		var h tracer.Header
		line, _ := bufio.NewReader(&buf).ReadBytes('\n')
		if err := json.Unmarshal(line, &h); err != nil {
			t.Fatalf("header %q: %v", line, err)
		}
		if h.IdleRearmMs != c.wantMs || h.IdleRearmFrom != c.wantFrom {
			t.Errorf("header: idle_rearm_ms %d from %q, want %d from %q", h.IdleRearmMs, h.IdleRearmFrom, c.wantMs, c.wantFrom)
		}
	}
}

// TestRearmWithWrittenHeader checks that a trace whose header is already
// written (tracer.NewWriter) does not stop the producer: it goes without
// the bound.
func TestRearmWithWrittenHeader(t *testing.T) {
	var buf bytes.Buffer
	w, err := tracer.NewWriter(&buf, tracer.Header{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	p := newProducer(t, newCluster(t, 1), Trace(w))
	if p.cfg.rules.RearmMs != 12*3600*1000 {
		t.Errorf("bound %d ms, want the default", p.cfg.rules.RearmMs)
	}
}
