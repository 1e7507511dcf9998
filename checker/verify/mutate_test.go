package verify

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kcheck/kcheck/tracer"
)

var (
	mutateSeed  = flag.Uint64("mutate.seed", 0, "TestMutations: the seed that picks the sites (0: one from the clock)")
	mutateSites = flag.Int("mutate.sites", 2, "TestMutations: sites tried per class and trace")
)

// mutant is a trace to mutate: its header line, events and verdict.
type mutant struct {
	name   string
	header string
	h      tracer.Header
	evs    []tracer.Event
	rep    *Report

	perReq map[reqKey]int       // batches sent in each request
	recs   map[mutBatch][]int64 // each batch's record ids
}

type mutBatch struct {
	p int32
	b int64
}

func (m *mutant) wire() bool { return m.h.Writer == tracer.ProxyWriter }

// reqKey names a request: (node, req).
type reqKey struct{ node, req int32 }

// expect is what verify must say of a mutated trace.
type expect int

const (
	caught  expect = iota // not VALID
	neutral               // the original verdict, with the same kinds of violation
)

// mutation is one class of doctoring: where it can be done (event indexes)
// and how. It is tried on every trace it has a site in: a caught class on
// the traces verify passes (on the others, "not VALID" would prove
// nothing), a neutral one on all.
type mutation struct {
	name   string
	want   expect
	why    string // why that verdict
	sites  func(m *mutant) []int
	mutate func(m *mutant, at int) []tracer.Event
}

// TestMutations doctors every trace in traces/, traces/proxy/ and
// traces/fixtures/ one change at a time, at sites a seeded random source
// picks (-mutate.seed; the seed is logged and named in every failure), and
// holds verify to each class's expected verdict (mutations below): a class
// that slips through is a checker bug, not a test to weaken.
// -mutate.sites=25 tries more sites (about 20 s).
func TestMutations(t *testing.T) {
	seed := *mutateSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -mutate.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	var paths []string
	for _, g := range []string{"../../traces/*.jsonl", "../../traces/proxy/*.jsonl", "../../traces/fixtures/*.jsonl"} {
		m, _ := filepath.Glob(g)
		paths = append(paths, m...)
	}
	if len(paths) < 20 {
		t.Fatalf("found %d traces", len(paths))
	}
	dir := t.TempDir()
	perClass := *mutateSites
	for _, path := range paths {
		m := loadMutant(t, path)
		for _, mu := range mutations {
			if mu.want == caught && m.rep.Verdict != Valid {
				continue
			}
			sites := mu.sites(m)
			rng.Shuffle(len(sites), func(i, j int) { sites[i], sites[j] = sites[j], sites[i] })
			for _, at := range sites[:min(perClass, len(sites))] {
				evs := mu.mutate(m, at)
				rep, err := verifyEvents(dir, m, evs)
				where := fmt.Sprintf("%s, %s at line %d (seed %d)", m.name, mu.name, at+2, seed)
				switch {
				case err != nil:
					t.Errorf("%s: the mutated trace is not readable (a bad mutation): %v", where, err)
				case mu.want == caught && rep.Verdict == Valid:
					t.Errorf("%s: slipped through as VALID; want it caught: %s", where, mu.why)
				case mu.want == neutral && (rep.Verdict != m.rep.Verdict || !slices.Equal(kinds(rep), kinds(m.rep))):
					t.Errorf("%s: verdict %s %v, want the original's %s %v: %s", where, rep.Verdict, kinds(rep), m.rep.Verdict, kinds(m.rep), mu.why)
					for _, v := range rep.Violations {
						t.Logf("  %s lines %v: %s", v.Kind, v.Lines, v.Detail)
					}
				}
			}
		}
	}
}

// Every class has a site in some trace, so none goes untried.
func TestMutationsHaveSites(t *testing.T) {
	var paths []string
	for _, g := range []string{"../../traces/*.jsonl", "../../traces/proxy/*.jsonl", "../../traces/fixtures/*.jsonl"} {
		m, _ := filepath.Glob(g)
		paths = append(paths, m...)
	}
	tried := map[string]bool{}
	for _, path := range paths {
		m := loadMutant(t, path)
		for _, mu := range mutations {
			if (mu.want == neutral || m.rep.Verdict == Valid) && len(mu.sites(m)) > 0 {
				tried[mu.name] = true
			}
		}
	}
	for _, mu := range mutations {
		if !tried[mu.name] {
			t.Errorf("mutation %s has no site in any trace", mu.name)
		}
	}
}

func kinds(r *Report) []string {
	var ks []string
	for _, v := range r.Violations {
		ks = append(ks, string(v.Kind))
	}
	slices.Sort(ks)
	return slices.Compact(ks)
}

func loadMutant(t *testing.T, path string) *mutant {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := bytes.Cut(data, []byte("\n"))
	r, err := tracer.NewReader(bytes.NewReader(data), path)
	if err != nil {
		t.Fatal(err)
	}
	m := &mutant{name: filepath.Base(path), header: string(header), h: r.Header()}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		m.evs = append(m.evs, *e)
	}
	if m.rep, err = File(context.Background(), path, Options{}); err != nil {
		t.Fatal(err)
	}
	return m
}

// verifyEvents writes the header and evs, numbered anew, and verifies them.
func verifyEvents(dir string, m *mutant, evs []tracer.Event) (*Report, error) {
	path := filepath.Join(dir, "mutant.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(f)
	w.WriteString(m.header + "\n")
	var buf []byte
	for i := range evs {
		e := evs[i]
		e.I = int64(i + 1)
		buf = append(tracer.AppendEvent(buf[:0], &e), '\n')
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return File(context.Background(), path, Options{})
}

// Helpers over a mutant's events.

func (m *mutant) where(ok func(i int, e *tracer.Event) bool) []int {
	var out []int
	for i := range m.evs {
		if ok(i, &m.evs[i]) {
			out = append(out, i)
		}
	}
	return out
}

func (m *mutant) clone() []tracer.Event { return slices.Clone(m.evs) }

func (m *mutant) without(at int) []tracer.Event { return slices.Delete(m.clone(), at, at+1) }

func (m *mutant) with(at int, fn func(e *tracer.Event)) []tracer.Event {
	evs := m.clone()
	fn(&evs[at])
	return evs
}

// swap exchanges events a and b, each keeping the other's place in time.
func (m *mutant) swap(a, b int) []tracer.Event {
	evs := m.clone()
	evs[a], evs[b] = evs[b], evs[a]
	evs[a].T, evs[b].T = m.evs[a].T, m.evs[b].T
	return evs
}

func (m *mutant) key(i int) reqKey { return reqKey{m.evs[i].Node, m.evs[i].Req} }

func isRecv(e *tracer.Event) bool { return e.Kind == tracer.Receive }
func isSend(e *tracer.Event) bool { return e.Kind == tracer.SendNew || e.Kind == tracer.Resend }

// batches counts the batches sent in each request.
func (m *mutant) batches() map[reqKey]int {
	if m.perReq == nil {
		m.perReq = map[reqKey]int{}
		for i := range m.evs {
			if isSend(&m.evs[i]) {
				m.perReq[m.key(i)]++
			}
		}
	}
	return m.perReq
}

// nextOnNode returns the index of the first Receive or Disconnect on node
// after i, or -1.
func (m *mutant) nextOnNode(i int, node int32) int {
	for j := i + 1; j < len(m.evs); j++ {
		e := &m.evs[j]
		if (isRecv(e) || e.Kind == tracer.Disconnect) && e.Node == node {
			return j
		}
	}
	return -1
}

// sentAgain reports whether batch b of partition p is sent after event i.
func (m *mutant) sentAgain(i int, p int32, b int64) bool {
	for j := i + 1; j < len(m.evs); j++ {
		if e := &m.evs[j]; isSend(e) && e.Partition == p && e.Batch == b {
			return true
		}
	}
	return false
}

// attemptOf returns the index of the attempt Receive i answers.
func (m *mutant) attemptOf(i int) int {
	r := &m.evs[i]
	for j := i - 1; j >= 0; j-- {
		if e := &m.evs[j]; isSend(e) && e.Partition == r.Partition && e.Batch == r.Batch && e.Req == r.Req && e.Node == r.Node {
			return j
		}
	}
	return -1
}

// outOfOrderBefore reports whether Receive i's batch was answered
// OUT_OF_ORDER_SEQUENCE_NUMBER before it.
func (m *mutant) outOfOrderBefore(i int) bool {
	r := &m.evs[i]
	for j := range i {
		if e := &m.evs[j]; isRecv(e) && e.Partition == r.Partition && e.Batch == r.Batch && e.Err == "OUT_OF_ORDER_SEQUENCE_NUMBER" {
			return true
		}
	}
	return false
}

// inLog reports whether record id is in some read-back.
func (m *mutant) inLog(id int64) bool {
	for i := range m.evs {
		if e := &m.evs[i]; e.Kind == tracer.ReadBack {
			for _, lr := range e.Log {
				if lr.ID == id {
					return true
				}
			}
		}
	}
	return false
}

// offsetOf returns where record id is in partition p's read-back, or the
// end of that log.
func (m *mutant) offsetOf(p int32, id int64) int64 {
	for i := range m.evs {
		if e := &m.evs[i]; e.Kind == tracer.ReadBack && e.Partition == p {
			for _, lr := range e.Log {
				if lr.ID == id {
					return lr.Offset
				}
			}
			if len(e.Log) > 0 {
				return e.Log[len(e.Log)-1].Offset + 1
			}
		}
	}
	return 0
}

// recordsOf returns the record ids batch b of partition p was sent with.
func (m *mutant) recordsOf(p int32, b int64) []int64 {
	if m.recs == nil {
		m.recs = map[mutBatch][]int64{}
		for i := range m.evs {
			if e := &m.evs[i]; e.Kind == tracer.SendNew {
				m.recs[mutBatch{e.Partition, e.Batch}] = e.Records
			}
		}
	}
	return m.recs[mutBatch{p, b}]
}

// acked returns the ids of records in batches acknowledged.
func (m *mutant) acked() map[int64]bool {
	ids := map[int64]bool{}
	for i := range m.evs {
		if e := &m.evs[i]; isRecv(e) && (e.Err == "NONE" || e.Err == "DUPLICATE_SEQUENCE_NUMBER") {
			for _, id := range m.recordsOf(e.Partition, e.Batch) {
				ids[id] = true
			}
		}
	}
	return ids
}

// logSites returns (event index, record index) pairs of read-back records
// for which ok holds, encoded as one int: event*1e6 + record.
func (m *mutant) logSites(ok func(e *tracer.Event, k int) bool) []int {
	var out []int
	for i := range m.evs {
		e := &m.evs[i]
		if e.Kind != tracer.ReadBack {
			continue
		}
		for k := range e.Log {
			if ok(e, k) {
				out = append(out, i*1e6+k)
			}
		}
	}
	return out
}

// withLog applies fn to a copy of the log of ReadBack site at (see logSites).
func (m *mutant) withLog(at int, fn func(log []tracer.LogRecord, k int) []tracer.LogRecord) []tracer.Event {
	i, k := at/1e6, at%1e6
	evs := m.clone()
	evs[i].Log = fn(slices.Clone(evs[i].Log), k)
	return evs
}

// faultAnswer returns the Receive a Fault at i caused, or -1.
func (m *mutant) faultAnswer(i int) int {
	f := &m.evs[i]
	for j := i + 1; j < len(m.evs); j++ {
		if e := &m.evs[j]; isRecv(e) && e.Partition == f.Partition && e.Epoch == f.Epoch && e.Seq == f.Seq {
			return j
		}
	}
	return -1
}

// fatalOnWire reports whether a fatal answer to Fault i's attempt would
// fail its batch definitely on the wire: the answer is to the batch's only
// attempt, and the batch is never sent again.
func (m *mutant) fatalOnWire(i int) bool {
	r := m.faultAnswer(i)
	if r < 0 {
		return false
	}
	a := m.attemptOf(r)
	return a >= 0 && m.evs[a].Kind == tracer.SendNew && !m.sentAgain(a, m.evs[r].Partition, m.evs[r].Batch)
}

func fatalFault(m *mutant, at int) []tracer.Event {
	evs := m.with(at, func(e *tracer.Event) { e.Err = "INVALID_RECORD" })
	r := m.faultAnswer(at)
	evs[r].Err, evs[r].Offset, evs[r].LogStart = "INVALID_RECORD", -1, -1
	return evs
}

func appendThenFail(m *mutant, i int, e *tracer.Event) bool {
	return e.Kind == tracer.Fault && e.Fault == "AppendThenFail" && e.Err != "INVALID_RECORD" && m.faultAnswer(i) >= 0
}

// No class sends a batch, on the wire, at an epoch no InitProducerId
// granted: that is no doctoring. A client bumps its epoch itself (KIP-360:
// the Java client's idempotent producer, and ours, add one to the epoch
// without asking the broker), so real traces do it: traces/proxy/
// java-4.3.1-on-kafka-4.1.0.jsonl sends at epoch 1 from line 4604 with only
// epoch 0 granted, as do traces/scenarios/ExpiryKgo.NoGap-ours-norearm-*
// and traces/fixtures/bad-failed-but-present.proxy.jsonl. Nor is a bump by
// one a bound: a client may bump several times with nothing sent between
// (the Java trace goes from epoch 4 to 6 at line 4774; librdkafka's drain
// bump, local for an idempotent producer, takes traces/scenarios/
// librdkafka-4134-* from epoch 0, its only grant, to 87 at line 51). A
// check that bounded the epoch flagged both (tried in session 17).
var mutations = []mutation{
	{name: "delete a Receive answered before later answers on its connection, or never lost", want: caught,
		why: "its request stays unanswered: a later answer on the connection comes out of order, or the read-back finds it outstanding",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool {
				if !isRecv(e) {
					return false
				}
				j := m.nextOnNode(i, e.Node)
				return j < 0 || isRecv(&m.evs[j]) || m.batches()[m.key(i)] > 1 || !m.wire()
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.without(at) }},
	{name: "delete the Receive of a one-batch request whose connection is lost next (the wire)", want: neutral,
		why: "a lost connection may lose an answer: the batch's outcome becomes unknown, which nothing contradicts (unless the batch was answered OUT_OF_ORDER_SEQUENCE_NUMBER before: then it is a stall, and rightly so)",
		sites: func(m *mutant) []int {
			if !m.wire() {
				return nil
			}
			return m.where(func(i int, e *tracer.Event) bool {
				j := m.nextOnNode(i, e.Node)
				return isRecv(e) && m.batches()[m.key(i)] == 1 && j >= 0 && m.evs[j].Kind == tracer.Disconnect && !m.outOfOrderBefore(i)
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.without(at) }},
	{name: "delete one partition's Receive from a multi-partition answer", want: caught,
		why: "a response answers every partition of its request",
		sites: func(m *mutant) []int {
			n := map[reqKey]int{}
			for i := range m.evs {
				if isRecv(&m.evs[i]) {
					n[m.key(i)]++
				}
			}
			return m.where(func(i int, e *tracer.Event) bool { return isRecv(e) && n[m.key(i)] > 1 })
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.without(at) }},
	{name: "swap the answers to two requests on one connection", want: caught,
		why: "a broker answers a connection's requests in the order sent",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return isRecv(e) && m.nextAnswer(i) >= 0 })
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.swap(at, m.nextAnswer(at)) }},
	{name: "swap two adjacent Receives of one answer", want: neutral,
		why: "one response: the order of its partitions' answers means nothing",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool {
				return i+1 < len(m.evs) && isRecv(e) && isRecv(&m.evs[i+1]) && m.key(i) == m.key(i+1) && e.Partition != m.evs[i+1].Partition
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.swap(at, at+1) }},
	{name: "change an error answer to NONE, at the offset the batch has in the log", want: caught,
		why: "the fault or the broker's rules answer otherwise, or the client's next step for the batch is not enabled, or an acknowledged record is missing",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool {
				return isRecv(e) && e.Err != "NONE" && e.Err != "DUPLICATE_SEQUENCE_NUMBER" && (!m.wire() || !m.sentAgain(i, e.Partition, e.Batch))
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			e := &m.evs[at]
			off := m.offsetOf(e.Partition, m.recordsOf(e.Partition, e.Batch)[0])
			return m.with(at, func(e *tracer.Event) { e.Err, e.Offset, e.LogStart = "NONE", off, 0 })
		}},
	{name: "change a NONE answer to a fatal error (INVALID_RECORD)", want: caught,
		why: "the spec's broker appends it (or the fault answers otherwise), and no fault explains the error",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return isRecv(e) && e.Err == "NONE" })
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			return m.with(at, func(e *tracer.Event) { e.Err, e.Offset, e.LogStart = "INVALID_RECORD", -1, -1 })
		}},
	{name: "an append-then-fail fault answers a fatal error instead, to an attempt the client never repeats", want: caught,
		why: "ours: the client's rules do not retry a fatal answer; on the wire: the batch definitely failed and is in the log (failed-but-present)",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return appendThenFail(m, i, e) && (!m.wire() || m.fatalOnWire(i)) })
		},
		mutate: fatalFault},
	{name: "an append-then-fail fault answers a fatal error instead, to a batch sent more than once (the wire)", want: neutral,
		why: "an earlier attempt may have been written: the outcome is unknown, and its records may be in the log",
		sites: func(m *mutant) []int {
			if !m.wire() {
				return nil
			}
			return m.where(func(i int, e *tracer.Event) bool { return appendThenFail(m, i, e) && !m.fatalOnWire(i) })
		},
		mutate: fatalFault},
	{name: "explain a fatal answer by an injected fault, to a written attempt the client never repeats", want: caught,
		why: "ours: the producer fails a batch after a fatal answer (Fail); on the wire: the batch definitely failed and is in the log (failed-but-present)",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool {
				if !isRecv(e) || e.Err != "NONE" || e.Offset < 0 {
					return false
				}
				a := m.attemptOf(i)
				return !m.wire() || (a >= 0 && m.evs[a].Kind == tracer.SendNew && !m.sentAgain(a, e.Partition, e.Batch))
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			r := m.evs[at]
			f := tracer.Event{Kind: tracer.Fault, T: r.T, Fault: "AppendThenFail", Partition: r.Partition, Epoch: r.Epoch, Seq: r.Seq, Node: r.Node, Err: "INVALID_RECORD"}
			evs := m.with(at, func(e *tracer.Event) { e.Err, e.Offset, e.LogStart = "INVALID_RECORD", -1, -1 })
			return slices.Insert(evs, at, f)
		}},
	{name: "change an acknowledged offset", want: caught,
		why: "the read-back holds the batch elsewhere (inconsistent-offsets), or the spec's broker gives another offset",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return isRecv(e) && e.Err == "NONE" && e.Offset >= 0 })
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.with(at, func(e *tracer.Event) { e.Offset++ }) }},
	{name: "change a SendNew's sequence", want: caught,
		why: "the client's sequences, the broker's answer or the read-back's sequences disagree",
		sites: func(m *mutant) []int {
			return m.where(m.judged)
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.with(at, func(e *tracer.Event) { e.Seq++ }) }},
	{name: "change a Receive's sequence", want: caught,
		why:    "the answer names another attempt than its request's",
		sites:  func(m *mutant) []int { return m.where(func(i int, e *tracer.Event) bool { return isRecv(e) }) },
		mutate: func(m *mutant, at int) []tracer.Event { return m.with(at, func(e *tracer.Event) { e.Seq++ }) }},
	{name: "change a SendNew's epoch", want: caught,
		why: "the client's epoch, the broker's answer or the read-back's epochs disagree",
		sites: func(m *mutant) []int {
			return m.where(m.judged)
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.with(at, func(e *tracer.Event) { e.Epoch++ }) }},
	{name: "change a SendNew's producer id", want: caught,
		why: "no InitProducerId gave it",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return e.Kind == tracer.SendNew })
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.with(at, func(e *tracer.Event) { e.PID++ }) }},
	{name: "change a Resend's record count", want: caught,
		why: "a batch is resent as it was first sent",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return e.Kind == tracer.Resend })
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.with(at, func(e *tracer.Event) { e.N++ }) }},
	{name: "drop a SendNew", want: caught,
		why: "its answer, or the read-back's records, belong to no batch sent",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return e.Kind == tracer.SendNew })
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.without(at) }},
	{name: "change a Receive's node", want: caught,
		why:    "the answer comes on another connection than its request",
		sites:  func(m *mutant) []int { return m.where(func(i int, e *tracer.Event) bool { return isRecv(e) }) },
		mutate: func(m *mutant, at int) []tracer.Event { return m.with(at, func(e *tracer.Event) { e.Node += 100 }) }},
	{name: "duplicate a Receive", want: caught,
		why: "an attempt is answered once",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return isRecv(e) })
		},
		mutate: func(m *mutant, at int) []tracer.Event { return slices.Insert(m.clone(), at+1, m.evs[at]) }},
	{name: "move an answer before its request", want: caught,
		why: "no attempt is outstanding for it",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return isRecv(e) && m.attemptOf(i) >= 0 })
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			a := m.attemptOf(at)
			evs := slices.Delete(m.clone(), at, at+1)
			r := m.evs[at]
			r.T = m.evs[a].T
			return slices.Insert(evs, a, r)
		}},
	{name: "delete a Disconnect", want: caught,
		why: "the requests it lost stay outstanding: their batches cannot be retried (ours), or the read-back finds them unanswered",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return e.Kind == tracer.Disconnect })
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.without(at) }},
	{name: "delete the Fail or ExpireBatch of a batch that was sent", want: caught,
		why: "the batch stays in flight: its sequence never resolves, or the read-back finds it without an outcome",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool {
				return (e.Kind == tracer.Fail && e.Seq != -1) || e.Kind == tracer.ExpireBatch
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.without(at) }},
	{name: "delete the Fail of a batch never sent", want: neutral,
		why: "its records are not in the trace, and no sequence was given to it",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return e.Kind == tracer.Fail && e.Seq == -1 })
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.without(at) }},
	{name: "duplicate a record in the read-back", want: caught,
		why: "a record is in the log once (duplicate)",
		sites: func(m *mutant) []int {
			return m.logSites(func(e *tracer.Event, k int) bool { return e.Log[k].ID >= 0 })
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			return m.withLog(at, func(log []tracer.LogRecord, k int) []tracer.LogRecord {
				r := log[k]
				r.Offset = log[len(log)-1].Offset + 1
				return append(log, r)
			})
		}},
	{name: "delete an acknowledged record from the read-back", want: caught,
		why: "an acknowledged record is lost (lost-write)",
		sites: func(m *mutant) []int {
			acked := m.acked()
			return m.logSites(func(e *tracer.Event, k int) bool { return acked[e.Log[k].ID] })
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			return m.withLog(at, func(log []tracer.LogRecord, k int) []tracer.LogRecord { return slices.Delete(log, k, k+1) })
		}},
	{name: "swap two adjacent records of the read-back", want: caught,
		why: "records in the log out of send order (nonmonotonic-send), or not at their acknowledged offsets",
		sites: func(m *mutant) []int {
			return m.logSites(func(e *tracer.Event, k int) bool {
				return k+1 < len(e.Log) && e.Log[k].ID >= 0 && e.Log[k+1].ID >= 0 && e.Log[k].ID != e.Log[k+1].ID
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			return m.withLog(at, func(log []tracer.LogRecord, k int) []tracer.LogRecord {
				log[k].Offset, log[k+1].Offset = log[k+1].Offset, log[k].Offset
				log[k], log[k+1] = log[k+1], log[k]
				return log
			})
		}},
	{name: "change a record id in the read-back", want: caught,
		why: "the record is lost and another duplicated, misplaced, or never sent",
		sites: func(m *mutant) []int {
			return m.logSites(func(e *tracer.Event, k int) bool { return e.Log[k].ID >= 0 })
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			return m.withLog(at, func(log []tracer.LogRecord, k int) []tracer.LogRecord { log[k].ID++; return log })
		}},
	{name: "delete a ReadBack", want: caught,
		why: "the partition's records cannot be checked: not a pass",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return e.Kind == tracer.ReadBack && len(e.Log) > 0 })
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.without(at) }},
	{name: "claim a short read-back (a ReadBackShort before a ReadBack) the log agrees with", want: neutral,
		why: "a ReadBackShort is the evidence a lost-write is reported with, never an excuse: one its log does not contradict (the log ends below its high watermark) neither adds a violation nor takes one away",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return e.Kind == tracer.ReadBack })
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			e := m.evs[at]
			// A high watermark the log agrees with: the log ends below it.
			var hwm int64
			if len(e.Log) > 0 {
				hwm = e.Log[len(e.Log)-1].Offset + 1
			}
			short := tracer.Event{T: e.T, Kind: tracer.ReadBackShort, Partition: e.Partition, Node: 1, Offset: 1 << 40, HWM: hwm, WaitedMs: 60000}
			return slices.Insert(m.clone(), at, short)
		}},
	{name: "swap two ReadBack events", want: neutral,
		why: "each names its partition: their order means nothing",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool {
				return i+1 < len(m.evs) && e.Kind == tracer.ReadBack && m.evs[i+1].Kind == tracer.ReadBack
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.swap(at, at+1) }},
	{name: "change the offset the application was told of a record in the log", want: caught,
		why: "the application was told another offset than where the record is (inconsistent-offsets)",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool {
				return e.Kind == tracer.Told && e.Result == tracer.Delivered && e.Offset >= 0 && m.offsetOf(e.Partition, e.RecordID) == e.Offset
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.with(at, func(e *tracer.Event) { e.Offset += 1000 }) }},
	{name: "delete from the read-back a record the application was told was delivered", want: caught,
		why: "a record acknowledged to the application is lost (lost-write), whatever the wire said",
		sites: func(m *mutant) []int {
			told := map[int64]bool{}
			for i := range m.evs {
				if e := &m.evs[i]; e.Kind == tracer.Told && e.Result == tracer.Delivered {
					told[e.RecordID] = true
				}
			}
			return m.logSites(func(e *tracer.Event, k int) bool { return told[e.Log[k].ID] })
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			return m.withLog(at, func(log []tracer.LogRecord, k int) []tracer.LogRecord { return slices.Delete(log, k, k+1) })
		}},
	{name: "tell the application a record in the log failed with a fatal error", want: caught,
		why: "the application was told the broker refused a record that is in the log (failed-but-present)",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool {
				return e.Kind == tracer.Told && e.Result != tracer.Failed && m.inLog(e.RecordID)
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			return m.with(at, func(e *tracer.Event) {
				e.Result, e.Offset, e.Err, e.Reason = tracer.Failed, -1, "INVALID_RECORD", "doctored"
			})
		}},
	{name: "tell the application a record in the log timed out", want: neutral,
		why: "a timeout says nothing about whether the record was written",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return e.Kind == tracer.Told && m.inLog(e.RecordID) })
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			return m.with(at, func(e *tracer.Event) {
				e.Result, e.Offset, e.Err, e.Reason = tracer.Failed, -1, "REQUEST_TIMED_OUT", "doctored"
			})
		}},
	{name: "claim a short read-back for a partition whose read-back holds every acknowledged offset", want: caught,
		why: "a read-back that falls short reads the log only up to the high watermark it reports, at or below the acknowledged offset: a log holding that offset contradicts the ReadBackShort before it",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool {
				return e.Kind == tracer.ReadBack && !m.shortBefore(i) && m.highestAcked(e.Partition) >= 0
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			e := m.evs[at]
			off := m.highestAcked(e.Partition)
			short := tracer.Event{T: e.T, Kind: tracer.ReadBackShort, Partition: e.Partition, Node: 1, Offset: off, HWM: off, WaitedMs: 60000}
			return slices.Insert(m.clone(), at, short)
		}},
	{name: "swap the correlation ids of two requests on one connection", want: caught,
		why: "a client numbers the requests of one connection in increasing order: the later request carries the lower id, whether the two are answered or lost with the connection",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return m.prevRequest(i) >= 0 })
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.swapReqs(m.prevRequest(at), at) }},
	{name: "swap the correlation ids of two requests on a connection then lost", want: caught,
		why: "correlation ids go backwards on the connection: a Disconnect after them does not excuse it",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool {
				j := m.nextOnNode(i, e.Node)
				return m.prevRequest(i) >= 0 && j >= 0 && m.evs[j].Kind == tracer.Disconnect
			})
		},
		mutate: func(m *mutant, at int) []tracer.Event { return m.swapReqs(m.prevRequest(at), at) }},
	{name: "refuse a batch's only attempt before the append, and answer its retry fatally after the append (the wire)", want: caught,
		why: "the first attempt was refused, so the last one is the only one that could be written, and its fatal answer fails the batch definitely: its records in the log are failed-but-present",
		sites: func(m *mutant) []int {
			if !m.wire() {
				return nil
			}
			return m.where(m.refusable)
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			s := m.evs[at]
			r := m.answerOf(at)
			evs := m.clone()
			evs[r].Err, evs[r].Offset, evs[r].LogStart = "NOT_LEADER_OR_FOLLOWER", -1, -1
			end := m.firstReadBack()
			var req, node int32
			for i := range m.evs {
				req, node = max(req, m.evs[i].Req), max(node, m.evs[i].Node)
			}
			t := m.evs[end-1].T
			retry := []tracer.Event{
				{T: t, Kind: tracer.Resend, Partition: s.Partition, Batch: s.Batch, PID: s.PID, Epoch: s.Epoch, Seq: s.Seq, N: s.N, Req: req + 1, Node: node + 1},
				{T: t, Kind: tracer.Fault, Fault: "AppendThenFail", Partition: s.Partition, Epoch: s.Epoch, Seq: s.Seq, Node: node + 1, Err: "INVALID_RECORD"},
				{T: t, Kind: tracer.Receive, Partition: s.Partition, Batch: s.Batch, PID: s.PID, Epoch: s.Epoch, Seq: s.Seq, Req: req + 1, Node: node + 1, Err: "INVALID_RECORD", Offset: -1, LogStart: -1},
			}
			evs = slices.Insert(evs, end, retry...)
			reject := tracer.Event{T: m.evs[r].T, Kind: tracer.Fault, Fault: "RejectBeforeAppend", Partition: s.Partition, Epoch: s.Epoch, Seq: s.Seq, Node: s.Node, Err: "NOT_LEADER_OR_FOLLOWER"}
			return slices.Insert(evs, r, reject)
		}},
	{name: "move an event's time to its neighbour's", want: neutral,
		why: "trace order is kept; equal times only let operations overlap more, which can hide nothing that was legal",
		sites: func(m *mutant) []int {
			return m.where(func(i int, e *tracer.Event) bool { return i > 0 && i+1 < len(m.evs) })
		},
		mutate: func(m *mutant, at int) []tracer.Event {
			t := m.evs[at-1].T
			if at%2 == 0 {
				t = m.evs[at+1].T
			}
			return m.with(at, func(e *tracer.Event) { e.T = t })
		}},
}

// judged reports whether event i is a SendNew whose attempt some rule
// judges: any of our producer's (its rules say what it sends), on the wire
// one that is answered. On the wire a client may renumber a batch in its
// epoch (the Java client's adjustSequencesDueToFailedBatch), so a first
// attempt lost with its connection may have carried any sequence.
func (m *mutant) judged(i int, e *tracer.Event) bool {
	if e.Kind != tracer.SendNew {
		return false
	}
	if !m.wire() {
		return true
	}
	for j := i + 1; j < len(m.evs); j++ {
		if r := &m.evs[j]; isRecv(r) && r.Partition == e.Partition && r.Batch == e.Batch && r.Req == e.Req && r.Node == e.Node {
			return true
		}
	}
	return false
}

// nextAnswer returns the first Receive of the request answered on Receive
// i's connection after i's request, if no Disconnect comes between; or -1.
func (m *mutant) nextAnswer(i int) int {
	k := m.key(i)
	for j := i + 1; j < len(m.evs); j++ {
		e := &m.evs[j]
		switch {
		case e.Kind == tracer.Disconnect && e.Node == k.node:
			return -1
		case isRecv(e) && e.Node == k.node && e.Req != k.req:
			return j
		}
	}
	return -1
}

// shortBefore reports whether a ReadBackShort of ReadBack i's partition
// comes before it.
func (m *mutant) shortBefore(i int) bool {
	for j := range i {
		if e := &m.evs[j]; e.Kind == tracer.ReadBackShort && e.Partition == m.evs[i].Partition {
			return true
		}
	}
	return false
}

// highestAcked returns the highest offset acknowledged on partition p (the
// last record of a batch answered NONE), or -1.
func (m *mutant) highestAcked(p int32) int64 {
	hi := int64(-1)
	for i := range m.evs {
		if e := &m.evs[i]; isRecv(e) && e.Partition == p && e.Err == "NONE" && e.Offset >= 0 {
			hi = max(hi, e.Offset+int64(len(m.recordsOf(p, e.Batch)))-1)
		}
	}
	return hi
}

// prevRequest returns, for the first send of a request at i, the first
// send of the request sent before it on the same connection, with no
// Disconnect of it between (the same connection); or -1.
func (m *mutant) prevRequest(i int) int {
	e := &m.evs[i]
	if !isSend(e) {
		return -1
	}
	for j := i - 1; j >= 0; j-- {
		c := &m.evs[j]
		switch {
		case c.Kind == tracer.Disconnect && c.Node == e.Node:
			return -1
		case isSend(c) && c.Node == e.Node && c.Req == e.Req:
			return -1 // not the request's first send
		case isSend(c) && c.Node == e.Node && c.Req < e.Req:
			for j > 0 && isSend(&m.evs[j-1]) && m.key(j-1) == m.key(j) {
				j--
			}
			return j
		}
	}
	return -1
}

// swapReqs exchanges the correlation ids of the requests whose first sends
// are a and b (a before b, on one connection), on that connection from a
// until it is lost.
func (m *mutant) swapReqs(a, b int) []tracer.Event {
	evs := m.clone()
	node, ra, rb := m.evs[a].Node, m.evs[a].Req, m.evs[b].Req
	for i := a; i < len(evs); i++ {
		e := &evs[i]
		if e.Node != node {
			continue
		}
		if e.Kind == tracer.Disconnect {
			break
		}
		if isSend(e) || isRecv(e) {
			switch e.Req {
			case ra:
				e.Req = rb
			case rb:
				e.Req = ra
			}
		}
	}
	return evs
}

// firstReadBack returns the index of the first ReadBack or ReadBackShort.
func (m *mutant) firstReadBack() int {
	for i := range m.evs {
		if k := m.evs[i].Kind; k == tracer.ReadBack || k == tracer.ReadBackShort {
			return i
		}
	}
	return len(m.evs)
}

// answerOf returns the Receive that answers the attempt sent at i, or -1.
func (m *mutant) answerOf(i int) int {
	s := &m.evs[i]
	for j := i + 1; j < len(m.evs); j++ {
		if e := &m.evs[j]; isRecv(e) && e.Partition == s.Partition && e.Batch == s.Batch && e.Req == s.Req && e.Node == s.Node {
			return j
		}
	}
	return -1
}

// refusable reports whether event i is the SendNew of the last batch of its
// partition, alone in its request, acknowledged with an offset on its only
// attempt, and read back: its answer can become a refusal before the
// append, with a retry written before the read-back.
func (m *mutant) refusable(i int, e *tracer.Event) bool {
	if e.Kind != tracer.SendNew || m.batches()[m.key(i)] != 1 || m.sentAgain(i, e.Partition, e.Batch) || m.firstReadBack() == len(m.evs) {
		return false
	}
	r := m.answerOf(i)
	if r < 0 || m.evs[r].Err != "NONE" || m.evs[r].Offset < 0 || !m.inLog(e.Records[0]) {
		return false
	}
	for j := i + 1; j < len(m.evs); j++ {
		if c := &m.evs[j]; c.Kind == tracer.SendNew && c.Partition == e.Partition {
			return false
		}
	}
	return true
}
