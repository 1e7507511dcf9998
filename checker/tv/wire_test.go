package tv

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker/replay"
	"github.com/kcheck/kcheck/checker/tlc/tlctest"
	"github.com/kcheck/kcheck/tracer"
)

var (
	wireSeed    = flag.Uint64("wire.seed", 0, "TestWireMutantsAgree: the generator's seed (0: one from the clock)")
	wireMutants = flag.Int("wire.mutants", 24, "TestWireMutantsAgree: mutants generated")
)

// wireTraces are the proxy traces of the repository small enough to mutate.
func wireTraces(t *testing.T) []string {
	var out []string
	for _, pat := range []string{"fixtures/*.proxy.jsonl", "proxy/*.jsonl", "scenarios/*.jsonl"} {
		fs, _ := filepath.Glob(filepath.Join("..", "..", "traces", pat))
		for _, f := range fs {
			if st, err := os.Stat(f); err == nil && st.Size() < 400_000 && !transactional(t, f) {
				out = append(out, f)
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("found %d proxy traces", len(out))
	}
	return out
}

// transactional reports whether the trace at path is a transactional
// producer's: TraceTransactional judges those, and leaves the produce
// answers this file's tests mutate to the Go mirror (txn_test.go holds
// them to checker/txn instead).
func transactional(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := tracer.NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return r.Header().TransactionalID != ""
}

// readTrace returns a trace's header line and events.
func readTrace(t *testing.T, path string) (string, []tracer.Event) {
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
	var evs []tracer.Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, *e)
	}
	return string(header), evs
}

// writeTrace is the header and evs, numbered anew, as a trace.
func writeTrace(header string, evs []tracer.Event) []byte {
	var buf []byte
	buf = append(buf, header...)
	buf = append(buf, '\n')
	for i := range evs {
		e := evs[i]
		e.I = int64(i + 1)
		buf = append(tracer.AppendEvent(buf, &e), '\n')
	}
	return buf
}

var wireErrs = []string{"NONE", "OUT_OF_ORDER_SEQUENCE_NUMBER", "NOT_LEADER_OR_FOLLOWER", "DUPLICATE_SEQUENCE_NUMBER",
	"INVALID_PRODUCER_EPOCH", "UNKNOWN_PRODUCER_ID", "INVALID_RECORD", "REQUEST_TIMED_OUT"}

// mutateWire doctors evs once, by a class rng picks among those with a
// site, and says what it did ("" if no class has a site).
func mutateWire(rng *rand.Rand, evs []tracer.Event) ([]tracer.Event, string) {
	where := func(ok func(e *tracer.Event) bool) []int {
		var out []int
		for i := range evs {
			if ok(&evs[i]) {
				out = append(out, i)
			}
		}
		return out
	}
	recv := where(func(e *tracer.Event) bool { return e.Kind == tracer.Receive })
	sends := where(func(e *tracer.Event) bool { return e.Kind == tracer.SendNew || e.Kind == tracer.Resend })
	others := where(func(e *tracer.Event) bool { return e.Kind == tracer.Disconnect || e.Kind == tracer.Fault })
	reads := where(func(e *tracer.Event) bool { return e.Kind == tracer.ReadBack && len(e.Log) > 0 })
	// pairs of answers on one partition
	var pairs [][2]int
	last := map[int32]int{}
	for _, i := range recv {
		if j, ok := last[evs[i].Partition]; ok {
			pairs = append(pairs, [2]int{j, i})
		}
		last[evs[i].Partition] = i
	}
	pick := func(s []int) int { return s[rng.IntN(len(s))] }
	out := slices.Clone(evs)
	for range 20 {
		switch rng.IntN(8) {
		case 0: // an answer's error
			if len(recv) == 0 {
				continue
			}
			i := pick(recv)
			e := &out[i]
			was := e.Err
			e.Err = wireErrs[rng.IntN(len(wireErrs))]
			if e.Err != "NONE" && e.Err != "DUPLICATE_SEQUENCE_NUMBER" {
				e.Offset = -1
			} else if e.Offset < 0 {
				e.Offset = 0
			}
			return out, fmt.Sprintf("line %d: answer %s -> %s", i+1, was, e.Err)
		case 1: // drop an attempt
			if len(sends) == 0 {
				continue
			}
			i := pick(sends)
			return slices.Delete(out, i, i+1), fmt.Sprintf("line %d: attempt dropped", i+1)
		case 2: // drop an answer
			if len(recv) == 0 {
				continue
			}
			i := pick(recv)
			return slices.Delete(out, i, i+1), fmt.Sprintf("line %d: answer dropped", i+1)
		case 3: // swap two answers on a partition, each keeping its place in time
			if len(pairs) == 0 {
				continue
			}
			pr := pairs[rng.IntN(len(pairs))]
			a, b := pr[0], pr[1]
			out[a], out[b] = out[b], out[a]
			out[a].T, out[b].T = evs[a].T, evs[b].T
			return out, fmt.Sprintf("lines %d and %d: answers swapped", a+1, b+1)
		case 4: // an answer's offset
			if len(recv) == 0 {
				continue
			}
			i := pick(recv)
			d := int64(rng.IntN(3) + 1)
			if rng.IntN(2) == 0 {
				d = -d
			}
			out[i].Offset = max(out[i].Offset+d, -1)
			return out, fmt.Sprintf("line %d: answer's offset %+d", i+1, d)
		case 5: // an attempt's sequence or epoch
			if len(sends) == 0 {
				continue
			}
			i := pick(sends)
			if rng.IntN(2) == 0 {
				out[i].Seq++
				return out, fmt.Sprintf("line %d: attempt's seq +1", i+1)
			}
			out[i].Epoch++
			return out, fmt.Sprintf("line %d: attempt's epoch +1", i+1)
		case 6: // drop a Disconnect or a Fault
			if len(others) == 0 {
				continue
			}
			i := pick(others)
			return slices.Delete(out, i, i+1), fmt.Sprintf("line %d: %s dropped", i+1, evs[i].Kind)
		case 7: // a read-back offset
			if len(reads) == 0 {
				continue
			}
			i := pick(reads)
			lg := slices.Clone(out[i].Log)
			k := rng.IntN(len(lg))
			lg[k].Offset += int64(rng.IntN(3) + 1)
			out[i].Log = lg
			return out, fmt.Sprintf("line %d: read-back record %d's offset moved", i+1, k)
		}
	}
	return nil, ""
}

// The Go mirror and TLC agree on traces of the wire doctored at random:
// answers' errors and offsets changed, attempts, answers, faults and
// disconnects dropped, answers on a partition swapped, attempts renumbered,
// read-back offsets moved. -wire.seed repeats a run; -wire.mutants sets
// how many (8 at most with -short).
func TestWireMutantsAgree(t *testing.T) {
	j := tlctest.Jar(t)
	seed := *wireSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-wire.seed=%d repeats it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	files := wireTraces(t)
	n := *wireMutants
	if testing.Short() {
		n = min(n, 8)
	}
	type tc struct {
		name, what string
		data       []byte
	}
	var cases []tc
	loaded := map[string][]tracer.Event{}
	headers := map[string]string{}
	for len(cases) < n {
		f := files[rng.IntN(len(files))]
		if loaded[f] == nil {
			headers[f], loaded[f] = readTrace(t, f)
		}
		evs, what := mutateWire(rng, loaded[f])
		if what == "" {
			continue
		}
		cases = append(cases, tc{filepath.Base(f), what, writeTrace(headers[f], evs)})
	}
	var mu sync.Mutex
	tally := map[string]int{}
	t.Cleanup(func() {
		t.Logf("seed %d: %d mutants: %v", seed, len(cases), tally)
	})
	for n, c := range cases {
		t.Run(fmt.Sprintf("%d-%s", n, c.name), func(t *testing.T) {
			t.Parallel()
			mirror, v, terr := verdicts(t, j, c.name, c.data)
			var re *replay.Error
			outcome := ""
			switch {
			case mirror != nil && !errors.As(mirror, &re):
				outcome = "unreadable"
			case terr != nil && errors.Is(terr, ErrUnsupported):
				outcome = "not expressible"
			case terr != nil:
				t.Fatalf("seed %d: %s: translate: %v", seed, c.what, terr)
			case (mirror == nil) != v.Accepted:
				t.Fatalf("seed %d: %s (%s): they disagree: mirror %v; TLC accepted=%v (furthest line %d)",
					seed, c.name, c.what, mirror, v.Accepted, v.Furthest)
			case mirror == nil:
				outcome = "both accept"
			default:
				outcome = "both reject"
			}
			mu.Lock()
			tally[outcome]++
			mu.Unlock()
			t.Logf("%s: %s", c.what, outcome)
			if re != nil && v != nil && v.Furthest+1 < re.Line && !strings.Contains(outcome, "accept") {
				t.Logf("mirror stops at line %d, TLC's furthest explained line is %d", re.Line, v.Furthest)
			}
		})
	}
}

// wireCase is a trace of the wire written out by hand: its header's broker
// kind, no-state rule and faults, and its events (without "i").
type wireCase struct {
	name   string
	kind   string // broker kind: kafka, kfake
	rule   string // no_state_rule
	faults string // the header's faults, JSON
	evs    []string
	accept bool // what both must say
}

func (c wireCase) trace() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"kcheck_trace":2,"writer":"kcheck-proxy","client":"test","topic":"t","partitions":2,"first_ack":false,"hold_while_retrying":false,"max_in_flight":5,"delivery_timeout_ms":0,"broker":{"kind":%q,"version":"4.1.0","no_state_rule":%q},"faults":%s,"seed":0}`+"\n",
		c.kind, c.rule, c.faults)
	for i, e := range c.evs {
		fmt.Fprintf(&b, `{"i":%d,%s}`+"\n", i+1, e)
	}
	return []byte(b.String())
}

// Cases the repository's traces do not reach, each written to land on one
// side of a rule of the broker or the wire: the mirror and TLC agree on
// each, and both say what the case expects.
func TestWireCasesAgree(t *testing.T) {
	j := tlctest.Jar(t)
	init := func(t int64, pid int) string {
		return fmt.Sprintf(`"t":%d,"ev":"InitProducerId","pid":%d,"ep":0,"node":1`, t, pid)
	}
	send := func(t int64, p, b, pid, ep, seq, req, node int) string {
		return fmt.Sprintf(`"t":%d,"ev":"SendNew","p":%d,"b":%d,"pid":%d,"ep":%d,"seq":%d,"n":1,"req":%d,"node":%d,"recs":[%d]`, t, p, b, pid, ep, seq, req, node, b)
	}
	resend := func(t int64, p, b, pid, ep, seq, req, node int) string {
		return fmt.Sprintf(`"t":%d,"ev":"Resend","p":%d,"b":%d,"pid":%d,"ep":%d,"seq":%d,"n":1,"req":%d,"node":%d`, t, p, b, pid, ep, seq, req, node)
	}
	recv := func(t int64, p, b, pid, ep, seq, req, node int, err string, off int) string {
		return fmt.Sprintf(`"t":%d,"ev":"Receive","p":%d,"b":%d,"pid":%d,"ep":%d,"seq":%d,"req":%d,"node":%d,"err":%q,"off":%d,"lso":0`, t, p, b, pid, ep, seq, req, node, err, off)
	}
	disc := func(t int64, node int) string { return fmt.Sprintf(`"t":%d,"ev":"Disconnect","node":%d`, t, node) }
	cut := func(t int64, p, ep, seq, node int) string {
		return fmt.Sprintf(`"t":%d,"ev":"Fault","fault":"DropConnection","p":%d,"ep":%d,"seq":%d,"node":%d,"err":""`, t, p, ep, seq, node)
	}
	const ms = int64(1e6)
	newPid := func(second string, accept bool, rule string) wireCase {
		off := -1
		if second == "NONE" {
			off = 1
		}
		return wireCase{name: "new producer id, " + rule + ", then " + second, kind: "kafka", rule: rule, faults: "[]", accept: accept, evs: []string{
			init(1, 7), send(2, 0, 1, 7, 0, 0, 1, 1), recv(3, 0, 1, 7, 0, 0, 1, 1, "NONE", 0),
			init(4, 8), send(5, 0, 2, 8, 0, 5, 2, 1), recv(6, 0, 2, 8, 0, 5, 2, 1, second, off),
		}}
	}
	expiry := func(gap int64, accept bool) wireCase {
		return wireCase{name: fmt.Sprintf("UNKNOWN_PRODUCER_ID %d ms after the last append, expiry 1 s", gap/ms), kind: "kafka", rule: "pre25",
			faults: `["state-expiry:delay=1s"]`, accept: accept, evs: []string{
				init(1, 7), send(2, 0, 1, 7, 0, 0, 1, 1), recv(3, 0, 1, 7, 0, 0, 1, 1, "NONE", 0),
				send(2+gap, 0, 2, 7, 0, 1, 2, 1), recv(3+gap, 0, 2, 7, 0, 1, 2, 1, "UNKNOWN_PRODUCER_ID", -1),
			}}
	}
	cutCase := func(cutIt bool, accept bool) wireCase {
		evs := []string{init(1, 7), send(2, 0, 1, 7, 0, 0, 1, 1)}
		if cutIt {
			evs = append(evs, cut(3, 0, 0, 0, 1))
		}
		evs = append(evs, disc(4, 1), resend(5, 0, 1, 7, 0, 0, 2, 2), recv(6, 0, 1, 7, 0, 0, 2, 2, "DUPLICATE_SEQUENCE_NUMBER", -1))
		return wireCase{name: fmt.Sprintf("lost attempt (cut as it arrived: %v) answered as a duplicate on its retry", cutIt),
			kind: "kafka", rule: "v25to44", faults: "[]", accept: accept, evs: evs}
	}
	staleEpoch := func(kind string, accept bool) wireCase {
		return wireCase{name: "INVALID_PRODUCER_EPOCH to a partition behind the highest epoch, on " + kind, kind: kind, rule: "v25to44",
			faults: "[]", accept: accept, evs: []string{
				init(1, 7), send(2, 0, 1, 7, 1, 0, 1, 1), recv(3, 0, 1, 7, 1, 0, 1, 1, "NONE", 0),
				send(4, 1, 2, 7, 0, 0, 2, 1), recv(5, 1, 2, 7, 0, 0, 2, 1, "INVALID_PRODUCER_EPOCH", -1),
			}}
	}
	ownError := func(second string, off int, accept bool) wireCase {
		return wireCase{name: "the broker's own NOT_LEADER_OR_FOLLOWER, then " + second, kind: "kafka", rule: "v25to44", faults: "[]",
			accept: accept, evs: []string{
				init(1, 7), send(2, 0, 1, 7, 0, 0, 1, 1), recv(3, 0, 1, 7, 0, 0, 1, 1, "NOT_LEADER_OR_FOLLOWER", -1),
				resend(4, 0, 1, 7, 0, 0, 2, 1), recv(5, 0, 1, 7, 0, 0, 2, 1, second, off),
				send(6, 0, 2, 7, 0, 1, 3, 1), recv(7, 0, 2, 7, 0, 1, 3, 1, "NONE", 1),
			}}
	}
	order := func(swap bool) wireCase {
		a, b := recv(4, 0, 1, 7, 0, 0, 1, 1, "NONE", 0), recv(5, 1, 2, 7, 0, 0, 2, 1, "NONE", 0)
		if swap {
			a, b = recv(4, 1, 2, 7, 0, 0, 2, 1, "NONE", 0), recv(5, 0, 1, 7, 0, 0, 1, 1, "NONE", 0)
		}
		return wireCase{name: fmt.Sprintf("two requests on a connection answered in order: %v", !swap), kind: "kafka", rule: "v25to44",
			faults: "[]", accept: !swap, evs: []string{init(1, 7), send(2, 0, 1, 7, 0, 0, 1, 1), send(3, 1, 2, 7, 0, 0, 2, 1), a, b}}
	}
	cases := []wireCase{
		newPid("UNKNOWN_PRODUCER_ID", true, "pre25"),
		newPid("NONE", false, "pre25"),
		newPid("NONE", true, "v25to44"),
		expiry(2000*ms, true),
		expiry(500*ms, false),
		cutCase(false, true),
		cutCase(true, false),
		staleEpoch("kfake", true),
		staleEpoch("kafka", false),
		ownError("DUPLICATE_SEQUENCE_NUMBER", -1, true),
		ownError("NONE", 0, true),
		ownError("OUT_OF_ORDER_SEQUENCE_NUMBER", -1, false),
		order(false),
		order(true),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			mirror, v, terr := verdicts(t, j, c.name, c.trace())
			if terr != nil {
				t.Fatalf("translate: %v", terr)
			}
			var re *replay.Error
			if mirror != nil && !errors.As(mirror, &re) {
				t.Fatalf("the mirror could not read it: %v", mirror)
			}
			if (mirror == nil) != v.Accepted || v.Accepted != c.accept {
				t.Fatalf("mirror %v; TLC accepted=%v (furthest line %d); want accepted=%v", mirror, v.Accepted, v.Furthest, c.accept)
			}
		})
	}
}
