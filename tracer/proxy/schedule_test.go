package proxy_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kcheck/kcheck/checker/verify"
	"github.com/kcheck/kcheck/fault"
	"github.com/kcheck/kcheck/recordbatch"
	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/proxy"
	"github.com/kcheck/kcheck/workload"
)

// The tests here drive the proxy with a client of their own that writes
// produce requests on the wire (raw), so that what the client sends, when,
// and on which connection is exact: one schedule step at a time, what the
// client sees and what the trace says.

// rawRun is a proxy with a schedule in front of a one-broker kfake cluster
// emulating Kafka 4.1, whose topic t has 4 partitions.
type rawRun struct {
	t     *testing.T
	p     *proxy.Proxy
	path  string
	trace *os.File
}

func startRaw(t *testing.T, schedule ...string) *rawRun {
	t.Helper()
	var faults []fault.Fault
	for _, s := range schedule {
		f, err := fault.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		faults = append(faults, f)
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "t"), kfake.MaxVersions(workload.Emulations["4.1"].Versions))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	r := &rawRun{t: t, path: filepath.Join(t.TempDir(), "proxy.jsonl")}
	if r.trace, err = os.Create(r.path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.trace.Close() })
	r.p, err = proxy.Start(context.Background(), proxy.Config{
		Listen: "127.0.0.1:0", Upstream: cluster.ListenAddrs()[0], Topic: "t",
		Broker: tracer.Broker{Kind: "kfake", Version: "4.1", NoStateRule: "v25to44"},
		Faults: faults, Seed: 1, Trace: r.trace, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.p.Close)
	t.Cleanup(func() {
		if t.Failed() {
			keep := filepath.Join(os.TempDir(), "kcheck-"+strings.ReplaceAll(t.Name(), "/", "-")+".jsonl")
			if b, err := os.ReadFile(r.path); err == nil && os.WriteFile(keep, b, 0o644) == nil {
				t.Logf("kept %s", keep)
			}
		}
	})
	return r
}

// finish reads the topic back, checks kcheck verify's verdict on the trace
// (Valid unless given), and returns its events, the read-back's record ids
// by partition.
func (r *rawRun) finish(verdict ...verify.Verdict) ([]tracer.Event, map[int32][]int64) {
	r.t.Helper()
	ctx := context.Background()
	if err := r.p.Finish(ctx); err != nil {
		r.t.Fatal(err)
	}
	rep, err := verify.File(ctx, r.path, verify.Options{LinzTimeout: 30 * time.Second})
	if err != nil {
		r.t.Fatal(err)
	}
	want := verify.Valid
	if len(verdict) > 0 {
		want = verdict[0]
	}
	if rep.Verdict != want || rep.Conformance != "" {
		r.t.Errorf("verify: %s (want %s), conformance %q, violations %v", rep.Verdict, want, rep.Conformance, rep.Violations)
	}
	f, err := tracer.Open(r.path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	var evs []tracer.Event
	logs := map[int32][]int64{}
	err = f.Each(func(_ int, e *tracer.Event) error {
		evs = append(evs, *e)
		if e.Kind == tracer.ReadBack {
			for _, rec := range e.Log {
				logs[e.Partition] = append(logs[e.Partition], rec.ID)
			}
		}
		return nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return evs, logs
}

// rawConn is one client connection through the proxy: requests are
// written at once, answers read in the order the requests were sent, each
// checked to be the answer to the oldest request unanswered.
type rawConn struct {
	t     *testing.T
	c     net.Conn
	br    *bufio.Reader
	fmt   *kmsg.RequestFormatter
	corr  int32
	queue []kmsg.Request // sent, not yet answered, oldest first
	at    []time.Time    // when each was sent
}

func (r *rawRun) dial() *rawConn {
	r.t.Helper()
	c, err := net.Dial("tcp", r.p.Addr())
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Close() })
	rc := &rawConn{t: r.t, c: c, br: bufio.NewReader(c), fmt: kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))}
	// The proxy learns the topic's partitions from metadata.
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(7)
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("t")
	md.Topics = append(md.Topics, mt)
	rc.send(md)
	rc.recv()
	return rc
}

func (rc *rawConn) send(req kmsg.Request) {
	rc.t.Helper()
	rc.corr++
	if _, err := rc.c.Write(rc.fmt.AppendRequest(nil, req, rc.corr)); err != nil {
		rc.t.Fatal(err)
	}
	rc.queue = append(rc.queue, req)
	rc.at = append(rc.at, time.Now())
}

// recv reads the answer to the oldest request unanswered and how long after
// its request it came.
func (rc *rawConn) recv() (kmsg.Response, time.Duration) {
	rc.t.Helper()
	resp, took, err := rc.tryRecv()
	if err != nil {
		rc.t.Fatal(err)
	}
	return resp, took
}

func (rc *rawConn) tryRecv() (kmsg.Response, time.Duration, error) {
	if len(rc.queue) == 0 {
		return nil, 0, fmt.Errorf("nothing sent to answer")
	}
	rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(rc.br, size[:]); err != nil {
		return nil, 0, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(rc.br, body); err != nil {
		return nil, 0, err
	}
	took := time.Since(rc.at[0])
	req := rc.queue[0]
	want := rc.corr - int32(len(rc.queue)) + 1
	rc.queue, rc.at = rc.queue[1:], rc.at[1:]
	if corr := int32(binary.BigEndian.Uint32(body)); corr != want {
		return nil, 0, fmt.Errorf("answer to request %d, want %d: answers out of order", corr, want)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(body[4:]); err != nil {
		return nil, 0, err
	}
	return resp, took, nil
}

// closed reports whether the proxy closed the connection (with no answer).
func (rc *rawConn) closed() bool {
	_, _, err := rc.tryRecv()
	return err != nil && !strings.Contains(err.Error(), "timeout")
}

// initPID asks for a producer id.
func (rc *rawConn) initPID() (int64, int16) {
	rc.t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.SetVersion(1)
	req.TransactionTimeoutMillis = -1
	rc.send(req)
	resp, _ := rc.recv()
	r := resp.(*kmsg.InitProducerIDResponse)
	if r.ErrorCode != 0 {
		rc.t.Fatalf("InitProducerId: error %d", r.ErrorCode)
	}
	return r.ProducerID, r.ProducerEpoch
}

// produce sends a batch to partition p from producer pid at epoch ep with
// base sequence seq, one record per id, each with its kcheck-id.
func (rc *rawConn) produce(p int32, pid int64, ep int16, seq int32, ids ...int64) {
	rc.t.Helper()
	b := recordbatch.NewBuilder(recordbatch.Params{ProducerID: pid, ProducerEpoch: ep, BaseSequence: seq, BaseTimestamp: time.Now().UnixMilli()})
	for _, id := range ids {
		b.Append(recordbatch.Record{Value: []byte("v"), Headers: []kmsg.Header{{Key: recordbatch.IDHeader, Value: []byte(strconv.FormatInt(id, 10))}}})
	}
	batch, err := b.AppendTo(nil)
	if err != nil {
		rc.t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(8)
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = p, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	rc.send(req)
}

// answer reads the answer to the oldest produce request: its partition's
// error name, and how long after the request it came.
func (rc *rawConn) answer() (string, time.Duration) {
	rc.t.Helper()
	resp, took := rc.recv()
	r, ok := resp.(*kmsg.ProduceResponse)
	if !ok || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		rc.t.Fatalf("not the answer to one partition's produce: %+v", resp)
	}
	return tracer.ErrorName(r.Topics[0].Partitions[0].ErrorCode), took
}

// faultsOf lists a trace's Fault events as "Fault pP eE sS ERR" (the epoch
// as an index of the partition's producer ids, as a schedule's epoch= is)
// and the events of other kinds as their kind.
func faultsOf(evs []tracer.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Kind == tracer.Fault {
			out = append(out, fmt.Sprintf("%s p%d e%d s%d %s", e.Fault, e.Partition, e.Epoch, e.Seq, e.Err))
		}
	}
	return out
}

// kinds lists the kinds of a trace's events on partition p, and the
// Disconnects, in order: "SendNew", "Fault DropConnection", "Receive NONE".
func kinds(evs []tracer.Event, p int32) []string {
	var out []string
	for _, e := range evs {
		switch {
		case e.Kind == tracer.Disconnect:
			out = append(out, "Disconnect")
		case e.Partition != p || e.Kind == tracer.ReadBack || e.Kind == tracer.InitProducerID:
		case e.Kind == tracer.Fault:
			out = append(out, "Fault "+e.Fault)
		case e.Kind == tracer.Receive:
			out = append(out, "Receive "+e.Err)
		default:
			out = append(out, string(e.Kind))
		}
	}
	return out
}

// hold: the attempt goes to the broker and is handled as usual; its answer
// comes D later, and the answers to the connection's later requests after
// it, in order.
func TestHoldDelaysAnswerInOrder(t *testing.T) {
	const d = 400 * time.Millisecond
	r := startRaw(t, "hold:delay=400ms,seq=0,partitions=0")
	c := r.dial()
	pid, ep := c.initPID()
	start := time.Now()
	c.produce(0, pid, ep, 0, 1, 2) // held
	c.produce(1, pid, ep, 0, 3)    // behind it on the connection
	c.produce(1, pid, ep, 1, 4)
	// Only lower bounds on time: a loaded machine may answer late, never
	// early. Every answer waits for the held one, which comes d after its
	// request at the earliest.
	for _, id := range []int64{1, 3, 4} {
		err, _ := c.answer() // recv checks the order
		since := time.Since(start)
		t.Logf("record %d answered %s %v after the first request", id, err, since)
		if err != "NONE" || since < d {
			t.Fatalf("record %d: answered %s %v after the first request; want NONE, after the held answer (%v at the earliest)", id, err, since, d)
		}
	}
	// Not held: a later attempt of the same partition, another batch (the
	// trace's Fault events, below, show the one hold).
	c.produce(0, pid, ep, 2, 5)
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("an unselected attempt: %s", err)
	}
	evs, logs := r.finish()
	if got, want := faultsOf(evs), []string{"Delay p0 e0 s0 "}; !slices.Equal(got, want) {
		t.Fatalf("Fault events %q, want %q", got, want)
	}
	if got, want := kinds(evs, 0), []string{"SendNew", "Fault Delay", "Receive NONE", "SendNew", "Receive NONE"}; !slices.Equal(got, want) {
		t.Fatalf("partition 0: %q, want %q", got, want)
	}
	if !slices.Equal(logs[0], []int64{1, 2, 5}) || !slices.Equal(logs[1], []int64{3, 4}) {
		t.Fatalf("read back %v", logs)
	}
}

// cut (when=before): the connection closes as the selected attempt
// arrives; nothing of its request reaches the broker, so its batch is not
// appended, and the client gets no answer to it or to anything after it.
func TestCutBefore(t *testing.T) {
	r := startRaw(t, "cut:seq=1,partitions=0")
	c := r.dial()
	pid, ep := c.initPID()
	c.produce(0, pid, ep, 0, 1)
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("seq 0: %s", err)
	}
	c.produce(0, pid, ep, 1, 2) // cut
	c.produce(1, pid, ep, 0, 3) // written into a closed connection, or lost with it
	if !c.closed() {
		t.Fatal("the connection is open after the cut")
	}
	// A new connection works; the cut was once.
	c = r.dial()
	c.produce(1, pid, ep, 0, 4)
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("after the cut: %s", err)
	}
	evs, logs := r.finish()
	if got, want := faultsOf(evs), []string{"DropConnection p0 e0 s1 "}; !slices.Equal(got, want) {
		t.Fatalf("Fault events %q, want %q", got, want)
	}
	if got, want := kinds(evs, 0), []string{"SendNew", "Receive NONE", "SendNew", "Fault DropConnection", "Disconnect"}; !slices.Equal(got, want) {
		t.Fatalf("partition 0: %q, want %q", got, want)
	}
	if !slices.Equal(logs[0], []int64{1}) || !slices.Equal(logs[1], []int64{4}) {
		t.Fatalf("read back %v: want the cut batch not appended", logs)
	}
}

// cut:when=after: the attempt is forwarded and appended; when the broker's
// answer arrives the connection closes instead of delivering it.
func TestCutAfter(t *testing.T) {
	r := startRaw(t, "cut:when=after,seq=1,partitions=0")
	c := r.dial()
	pid, ep := c.initPID()
	c.produce(0, pid, ep, 0, 1)
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("seq 0: %s", err)
	}
	c.produce(0, pid, ep, 1, 2) // appended, its answer dropped
	if !c.closed() {
		t.Fatal("the client got an answer to the cut attempt")
	}
	evs, logs := r.finish()
	if got, want := faultsOf(evs), []string{"DropResponse p0 e0 s1 "}; !slices.Equal(got, want) {
		t.Fatalf("Fault events %q, want %q", got, want)
	}
	if got, want := kinds(evs, 0), []string{"SendNew", "Receive NONE", "SendNew", "Fault DropResponse", "Disconnect"}; !slices.Equal(got, want) {
		t.Fatalf("partition 0: %q, want %q", got, want)
	}
	if !slices.Equal(logs[0], []int64{1, 2}) {
		t.Fatalf("read back %v: want the cut batch appended", logs)
	}
}

// until=seq:K: the refused attempt's answer is held until the partition's
// attempt with base sequence K (same producer and epoch) has gone to the
// broker, then fault.NextGrace; another sequence does not release it.
func TestRejectUntilSeq(t *testing.T) {
	r := startRaw(t, "reject:err=NOT_LEADER_OR_FOLLOWER,seq=0,until=seq:2,delay=5s,partitions=0")
	c := r.dial()
	pid, ep := c.initPID()
	other := r.dial() // another partition's seq 2 does not count
	start := time.Now()
	c.produce(0, pid, ep, 0, 1) // refused, held
	time.Sleep(200 * time.Millisecond)
	c.produce(0, pid, ep, 1, 2) // not seq 2
	other.produce(1, pid, ep, 2, 10)
	if err, _ := other.answer(); err != "NONE" {
		t.Fatalf("partition 1: %s", err)
	}
	time.Sleep(300 * time.Millisecond)
	sent2 := time.Since(start)
	c.produce(0, pid, ep, 2, 3) // releases it
	err, took := c.answer()
	t.Logf("seq 0 answered %s after %v; seq 2 sent at %v", err, took, sent2)
	if err != "NOT_LEADER_OR_FOLLOWER" || took < sent2+fault.NextGrace-20*time.Millisecond || took > sent2+fault.NextGrace+10*time.Second {
		t.Fatalf("seq 0 answered %s after %v; want NOT_LEADER_OR_FOLLOWER %v after seq 2 went at %v", err, took, fault.NextGrace, sent2)
	}
	for _, seq := range []int{1, 2} {
		if err, _ := c.answer(); err != "NONE" {
			t.Fatalf("seq %d: %s", seq, err)
		}
	}
	// The broker (Kafka 4.1, no state for the producer) took seq 1 without
	// seq 0: the seed's loss, which kcheck verify names.
	evs, _ := r.finish(verify.Violations)
	if got, want := faultsOf(evs), []string{"RejectBeforeAppend p0 e0 s0 NOT_LEADER_OR_FOLLOWER"}; !slices.Equal(got, want) {
		t.Fatalf("Fault events %q, want %q", got, want)
	}
}

// idle=D selects a partition's first attempt after none for D, never its
// first; count=-1, each such attempt. D is long beside the machine's
// scheduling noise (a loaded machine stretches a gap, never shortens a
// sleep): the gaps meant to be idle sleep past it, the others are at once
// or 100ms.
func TestIdleSelects(t *testing.T) {
	r := startRaw(t, "reject:err=NOT_ENOUGH_REPLICAS,idle=1500ms,partitions=0,count=-1")
	c := r.dial()
	pid, ep := c.initPID()
	want := func(what, err string) {
		t.Helper()
		if got, _ := c.answer(); got != err {
			t.Fatalf("%s: %s, want %s", what, got, err)
		}
	}
	c.produce(0, pid, ep, 0, 1)
	want("p0's first attempt", "NONE")
	c.produce(1, pid, ep, 0, 2)
	want("p1's first attempt", "NONE")
	time.Sleep(100 * time.Millisecond)
	c.produce(0, pid, ep, 1, 3)
	want("p0 after 100ms", "NONE")
	time.Sleep(1700 * time.Millisecond)
	c.produce(1, pid, ep, 1, 4)
	want("p1 after 1.7s (not a partition of the fault)", "NONE")
	c.produce(0, pid, ep, 2, 5)
	want("p0 after 1.7s", "NOT_ENOUGH_REPLICAS")
	c.produce(0, pid, ep, 2, 5)
	want("its retry at once", "NONE")
	time.Sleep(1700 * time.Millisecond)
	c.produce(0, pid, ep, 3, 6)
	want("p0 after 1.7s again", "NOT_ENOUGH_REPLICAS")
	c.produce(0, pid, ep, 3, 6)
	want("its retry at once", "NONE")
	evs, logs := r.finish()
	if got, want := faultsOf(evs), []string{"RejectBeforeAppend p0 e0 s2 NOT_ENOUGH_REPLICAS", "RejectBeforeAppend p0 e0 s3 NOT_ENOUGH_REPLICAS"}; !slices.Equal(got, want) {
		t.Fatalf("Fault events %q, want %q", got, want)
	}
	if !slices.Equal(logs[0], []int64{1, 3, 5, 6}) || !slices.Equal(logs[1], []int64{2, 4}) {
		t.Fatalf("read back %v", logs)
	}
}

// epoch=E counts a partition's distinct producer epochs (a new producer id
// is a new one), try=N a batch's attempts, after=answer attempts sent after
// an answer to the partition reached the client.
func TestSelectors(t *testing.T) {
	r := startRaw(t,
		"reject:err=NOT_LEADER_OR_FOLLOWER,epoch=1,seq=0,partitions=0", // the second producer's first batch
		"reject:err=NOT_ENOUGH_REPLICAS,attempt=1,partitions=1",
		"append-then-error:err=REQUEST_TIMED_OUT,try=2,partitions=1", // its retry
		// p2's first answer is held, so that its second attempt surely
		// reaches the proxy before any answer of p2 has gone to the client
		"hold:delay=1s,seq=0,partitions=2",
		"reject:err=NOT_LEADER_OR_FOLLOWER,after=answer,partitions=2",
	)
	c := r.dial()
	pid, ep := c.initPID()
	want := func(what, err string) {
		t.Helper()
		if got, _ := c.answer(); got != err {
			t.Fatalf("%s: %s, want %s", what, got, err)
		}
	}
	c.produce(0, pid, ep, 0, 1)
	want("p0, producer 1", "NONE")
	pid2, ep2 := c.initPID()
	if pid2 == pid && ep2 == ep {
		t.Fatal("InitProducerId gave the same producer and epoch again")
	}
	c.produce(0, pid2, ep2, 0, 2)
	want("p0, producer 2", "NOT_LEADER_OR_FOLLOWER")
	c.produce(0, pid2, ep2, 0, 2)
	want("p0, producer 2, again", "NONE")

	c.produce(1, pid2, ep2, 0, 10)
	want("p1's first attempt", "NOT_ENOUGH_REPLICAS")
	c.produce(1, pid2, ep2, 0, 10)
	want("p1's batch's second try", "REQUEST_TIMED_OUT") // appended all the same
	c.produce(1, pid2, ep2, 0, 10)
	want("p1's batch's third try", "NONE") // a duplicate

	c.produce(2, pid2, ep2, 0, 20) // pipelined: neither after an answer (the first's is held)
	c.produce(2, pid2, ep2, 1, 21)
	want("p2 seq 0", "NONE")
	want("p2 seq 1", "NONE")
	c.produce(2, pid2, ep2, 2, 22)
	want("p2 after an answer", "NOT_LEADER_OR_FOLLOWER")
	c.produce(2, pid2, ep2, 2, 22)
	want("p2 again (count=1)", "NONE")

	evs, logs := r.finish()
	if got, want := faultsOf(evs), []string{
		fmt.Sprintf("RejectBeforeAppend p0 e%d s0 NOT_LEADER_OR_FOLLOWER", ep2),
		fmt.Sprintf("RejectBeforeAppend p1 e%d s0 NOT_ENOUGH_REPLICAS", ep2),
		fmt.Sprintf("AppendThenFail p1 e%d s0 REQUEST_TIMED_OUT", ep2),
		fmt.Sprintf("Delay p2 e%d s0 ", ep2),
		fmt.Sprintf("RejectBeforeAppend p2 e%d s2 NOT_LEADER_OR_FOLLOWER", ep2),
	}; !slices.Equal(got, want) {
		t.Fatalf("Fault events %q, want %q", got, want)
	}
	if !slices.Equal(logs[0], []int64{1, 2}) || !slices.Equal(logs[1], []int64{10}) || !slices.Equal(logs[2], []int64{20, 21, 22}) {
		t.Fatalf("read back %v", logs)
	}
}

// until=next on an attempt the broker handles: append-then-error's answer
// is held until the partition's next new batch has gone to the broker (one
// of another partition does not count), then fault.NextGrace.
func TestAppendThenErrorUntilNext(t *testing.T) {
	r := startRaw(t, "append-then-error:err=REQUEST_TIMED_OUT,seq=0,until=next,delay=5s,partitions=0")
	c, other := r.dial(), r.dial()
	pid, ep := c.initPID()
	start := time.Now()
	c.produce(0, pid, ep, 0, 1) // appended, its answer held
	time.Sleep(150 * time.Millisecond)
	other.produce(1, pid, ep, 0, 10) // another partition's
	if err, _ := other.answer(); err != "NONE" {
		t.Fatalf("partition 1: %s", err)
	}
	time.Sleep(150 * time.Millisecond)
	sent := time.Since(start)
	c.produce(0, pid, ep, 1, 2) // the next batch releases it
	err, took := c.answer()
	if err != "REQUEST_TIMED_OUT" || took < sent+fault.NextGrace-20*time.Millisecond || took > sent+fault.NextGrace+10*time.Second {
		t.Fatalf("seq 0 answered %s after %v; want REQUEST_TIMED_OUT %v after the next batch went at %v", err, took, fault.NextGrace, sent)
	}
	if err, _ := c.answer(); err != "NONE" {
		t.Fatalf("seq 1: %s", err)
	}
	evs, logs := r.finish()
	if got, want := faultsOf(evs), []string{"AppendThenFail p0 e0 s0 REQUEST_TIMED_OUT"}; !slices.Equal(got, want) {
		t.Fatalf("Fault events %q, want %q", got, want)
	}
	if !slices.Equal(logs[0], []int64{1, 2}) {
		t.Fatalf("read back %v", logs)
	}
}
