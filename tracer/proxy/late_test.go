package proxy_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/proxy"
	"github.com/kcheck/kcheck/workload"
)

// late-produce: the selected attempt's request is kept from the broker and
// the client's connection closed; the request reaches the broker only once
// the client has sent another produce (until=send:produce), and is appended
// then, after that produce: the read-back's order says which came first.
func TestLateProduce(t *testing.T) {
	r := startRaw(t, "late-produce:until=send:produce,seq=1,partitions=0")
	pid, ep := keepSecond(t, r)
	// The late request has not reached the broker: partition 1's first
	// produce is appended at offset 0 of its own log, and partition 0's
	// next is refused as out of order (seq 1 is not there yet) unless the
	// late one came first: the condition is what releases it.
	c := r.dial()
	c.produce(1, pid, ep, 0, 3)
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("partition 1: %s", err)
	}
	evs, logs := r.finish(verify.Valid)
	// Its keeping is a Delay, its going (the condition held) a LateSent.
	if got, want := faultsOf(evs), []string{"Delay p0 e0 s1 ", "LateSent p0 e0 s1 "}; !slices.Equal(got, want) {
		t.Fatalf("Fault events %q, want %q", got, want)
	}
	if got, want := kinds(evs, 0), []string{"SendNew", "Receive NONE", "SendNew", "Fault Delay", "Disconnect", "Fault LateSent"}; !slices.Equal(got, want) {
		t.Fatalf("partition 0: %q, want %q", got, want)
	}
	if !slices.Equal(logs[0], []int64{1, 2}) || !slices.Equal(logs[1], []int64{3}) {
		t.Fatalf("read back %v: want the late batch appended after all", logs)
	}
}

// late-produce with no condition and no delay is never sent.
func TestLateProduceNever(t *testing.T) {
	r := startRaw(t, "late-produce:seq=1,partitions=0")
	keepSecond(t, r)
	evs, logs := r.finish(verify.Valid)
	if got, want := faultsOf(evs), []string{"Delay p0 e0 s1 "}; !slices.Equal(got, want) {
		t.Fatalf("Fault events %q, want %q (no LateSent: it never went)", got, want)
	}
	if !slices.Equal(logs[0], []int64{1}) {
		t.Fatalf("read back %v: want the late batch never appended", logs)
	}
}

// The late request waits for its condition: the client's retry of the same
// sequence (another record id, to tell them apart) goes first and is
// appended; the late original, sent after it, is the broker's duplicate.
func TestLateProduceAfterRetry(t *testing.T) {
	r := startRaw(t, "late-produce:until=send:produce,seq=1,partitions=0")
	pid, ep := keepSecond(t, r)
	c := r.dial()
	c.produce(0, pid, ep, 1, 3) // the retry
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("the retry: %s", err)
	}
	_, logs := r.finish(verify.Valid)
	if !slices.Equal(logs[0], []int64{1, 3}) {
		t.Fatalf("read back %v: want the retry appended and the late original, after it, a duplicate", logs)
	}
}

// late-txn and txn-cut with a real transactional client (ours, TV2 and
// TV1, on kfake): the first transaction's EndTxn is kept from the
// coordinator and its connection closed, and goes to the coordinator once
// the client's EndTxn sent again has been answered; the second's answer is
// lost. The client sends each EndTxn again on a new connection and every
// transaction ends as the application asked.
func TestLateEndTxnAndLostAnswer(t *testing.T) {
	for _, tv := range []int{2, 1} {
		cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(workload.Emulations["4.1"].Versions))
		if err != nil {
			t.Fatal(err)
		}
		defer cluster.Close()
		var faults []fault.Fault
		for _, s := range []string{"late-txn:api=end-txn,txn=1,until=answer:end-txn", "txn-cut:api=end-txn,txn=2"} {
			f, err := fault.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			faults = append(faults, f)
		}
		var mu sync.Mutex
		var logged []string
		logf := func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			logged = append(logged, fmt.Sprintf(format, args...))
			t.Logf(format, args...)
		}
		ctx := context.Background()
		p, err := proxy.Start(ctx, proxy.Config{
			Listen: "127.0.0.1:0", Upstream: cluster.ListenAddrs()[0], Topic: "t",
			Broker: tracer.Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"},
			Faults: faults, Seed: 1, Logf: logf,
		})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := workload.Run(ctx, workload.Config{
			Brokers: []string{p.Addr()}, BrokerVersion: "4.1.0", Topic: "t", Partitions: 2, Records: 60, ValueBytes: 50, Keys: 8,
			Codec: recordbatch.CodecNone, FirstAck: true, MaxInFlight: 5, Linger: time.Millisecond, BatchBytes: 512,
			DeliveryTimeout: 10 * time.Second, RequestTimeout: 2 * time.Second, Seed: 1,
			Txn: &workload.Txn{ID: "late", Records: 20, Version: tv},
		})
		p.Close()
		if err != nil {
			t.Fatalf("TV%d: %v", tv, err)
		}
		if sum.TxnCommitted != 3 {
			t.Errorf("TV%d: run: %+v, want 3 transactions committed", tv, sum)
		}
		mu.Lock()
		text := strings.Join(logged, "\n")
		mu.Unlock()
		for _, want := range []string{"end-txn kept from the coordinator", "a late request (until answer:end-txn) went to", "the answer to end-txn will be lost"} {
			if !strings.Contains(text, want) {
				t.Errorf("TV%d: the proxy did not log %q:\n%s", tv, want, text)
			}
		}
	}
}

// keepSecond dials r as a new producer, has partition 0's sequence 0
// answered, then sends its sequence 1 (record 2), which the schedule keeps
// from the broker: the client's connection is closed after it.
func keepSecond(t *testing.T, r *rawRun) (pid int64, ep int16) {
	t.Helper()
	c := r.dial()
	pid, ep = c.initPID()
	c.produce(0, pid, ep, 0, 1)
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("seq 0: %s", err)
	}
	c.produce(0, pid, ep, 1, 2)
	if !c.closed() {
		t.Fatal("the connection is open after the late request")
	}
	return pid, ep
}
