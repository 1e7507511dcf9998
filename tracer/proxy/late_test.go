package proxy_test

import (
	"slices"
	"testing"

	"github.com/kcheck/kcheck/checker/verify"
)

// late-produce: the selected attempt's request is kept from the broker and
// the client's connection closed; the request reaches the broker only once
// the client has sent another produce (until=send:produce), and is appended
// then, after that produce: the read-back's order says which came first.
func TestLateProduce(t *testing.T) {
	r := startRaw(t, "late-produce:until=send:produce,seq=1,partitions=0")
	c := r.dial()
	pid, ep := c.initPID()
	c.produce(0, pid, ep, 0, 1)
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("seq 0: %s", err)
	}
	c.produce(0, pid, ep, 1, 2) // kept
	if !c.closed() {
		t.Fatal("the connection is open after the late request")
	}
	// The late request has not reached the broker: partition 1's first
	// produce is appended at offset 0 of its own log, and partition 0's
	// next is refused as out of order (seq 1 is not there yet) unless the
	// late one came first: the condition is what releases it.
	c = r.dial()
	c.produce(1, pid, ep, 0, 3)
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("partition 1: %s", err)
	}
	evs, logs := r.finish(verify.Valid)
	if got, want := faultsOf(evs), []string{"Delay p0 e0 s1 "}; !slices.Equal(got, want) {
		t.Fatalf("Fault events %q, want %q", got, want)
	}
	if got, want := kinds(evs, 0), []string{"SendNew", "Receive NONE", "SendNew", "Fault Delay", "Disconnect"}; !slices.Equal(got, want) {
		t.Fatalf("partition 0: %q, want %q", got, want)
	}
	if !slices.Equal(logs[0], []int64{1, 2}) || !slices.Equal(logs[1], []int64{3}) {
		t.Fatalf("read back %v: want the late batch appended after all", logs)
	}
}

// late-produce with no condition and no delay is never sent.
func TestLateProduceNever(t *testing.T) {
	r := startRaw(t, "late-produce:seq=1,partitions=0")
	c := r.dial()
	pid, ep := c.initPID()
	c.produce(0, pid, ep, 0, 1)
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("seq 0: %s", err)
	}
	c.produce(0, pid, ep, 1, 2)
	if !c.closed() {
		t.Fatal("the connection is open after the late request")
	}
	_, logs := r.finish(verify.Valid)
	if !slices.Equal(logs[0], []int64{1}) {
		t.Fatalf("read back %v: want the late batch never appended", logs)
	}
}

// The late request waits for its condition: the client's retry of the same
// sequence (another record id, to tell them apart) goes first and is
// appended; the late original, sent after it, is the broker's duplicate.
func TestLateProduceAfterRetry(t *testing.T) {
	r := startRaw(t, "late-produce:until=send:produce,seq=1,partitions=0")
	c := r.dial()
	pid, ep := c.initPID()
	c.produce(0, pid, ep, 0, 1)
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("seq 0: %s", err)
	}
	c.produce(0, pid, ep, 1, 2) // kept
	if !c.closed() {
		t.Fatal("the connection is open after the late request")
	}
	c = r.dial()
	c.produce(0, pid, ep, 1, 3) // the retry
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("the retry: %s", err)
	}
	_, logs := r.finish(verify.Valid)
	if !slices.Equal(logs[0], []int64{1, 3}) {
		t.Fatalf("read back %v: want the retry appended and the late original, after it, a duplicate", logs)
	}
}
