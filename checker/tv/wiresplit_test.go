package tv

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker/tlc/tlctest"
	"github.com/kcheck/kcheck/tracer"
)

var (
	wireSplitSeed    = flag.Uint64("wiresplit.seed", 0, "TestWireSplitAgreesWithWhole: the seed of its random mutants (0: one from the clock)")
	wireSplitMutants = flag.Int("wiresplit.mutants", 12, "TestWireSplitAgreesWithWhole: random mutants of the proxy traces of several partitions")
)

// Lines of a hand-written trace of the wire (wireCase's events).
func wInit(t int64, pid int) string {
	return fmt.Sprintf(`"t":%d,"ev":"InitProducerId","pid":%d,"ep":0,"node":1`, t, pid)
}

func wSend(t int64, p, b, seq, req, node int) string {
	return fmt.Sprintf(`"t":%d,"ev":"SendNew","p":%d,"b":%d,"pid":7,"ep":0,"seq":%d,"n":1,"req":%d,"node":%d,"recs":[%d]`, t, p, b, seq, req, node, b)
}

func wResend(t int64, p, b, seq, req, node int) string {
	return fmt.Sprintf(`"t":%d,"ev":"Resend","p":%d,"b":%d,"pid":7,"ep":0,"seq":%d,"n":1,"req":%d,"node":%d`, t, p, b, seq, req, node)
}

func wRecv(t int64, p, b, seq, req, node int, err string, off int) string {
	return fmt.Sprintf(`"t":%d,"ev":"Receive","p":%d,"b":%d,"pid":7,"ep":0,"seq":%d,"req":%d,"node":%d,"err":%q,"off":%d,"lso":0`, t, p, b, seq, req, node, err, off)
}

func wDisc(t int64, node int) string {
	return fmt.Sprintf(`"t":%d,"ev":"Disconnect","node":%d`, t, node)
}

// wireSplitCases are traces of the wire whose partitions interact through
// a connection (spec/README.md, "Trace validation of the wire, one
// partition at a time"): what the whole-trace check says of each, and the
// parts Split must make so that a split check says the same.
func wireSplitCases() []struct {
	c     wireCase
	parts [][]int32
} {
	c := func(name string, accept bool, evs ...string) wireCase {
		return wireCase{name: name, kind: "kafka", rule: "v25to44", faults: "[]", accept: accept, evs: evs}
	}
	return []struct {
		c     wireCase
		parts [][]int32
	}{
		{c("two requests on a connection, answered in order", true,
			wInit(1, 7), wSend(2, 0, 1, 0, 1, 1), wSend(3, 1, 2, 0, 2, 1),
			wRecv(4, 0, 1, 0, 1, 1, "NONE", 0), wRecv(5, 1, 2, 0, 2, 1, "NONE", 0)),
			[][]int32{{0}, {1}}},
		// Partition 1's part alone would have its request as the oldest.
		{c("two requests on a connection, answered out of order", false,
			wInit(1, 7), wSend(2, 0, 1, 0, 1, 1), wSend(3, 1, 2, 0, 2, 1),
			wRecv(4, 1, 2, 0, 2, 1, "NONE", 0), wRecv(5, 0, 1, 0, 1, 1, "NONE", 0)),
			[][]int32{{0, 1}}},
		{c("one request of two partitions, answered", true,
			wInit(1, 7), wSend(2, 0, 1, 0, 1, 1), wSend(3, 1, 2, 0, 1, 1),
			wRecv(4, 0, 1, 0, 1, 1, "NONE", 0), wRecv(5, 1, 2, 0, 1, 1, "NONE", 0)),
			[][]int32{{0}, {1}}},
		// Each part alone would see a request not begun, or none.
		{c("a connection lost between the partitions of one response", false,
			wInit(1, 7), wSend(2, 0, 1, 0, 1, 1), wSend(3, 1, 2, 0, 1, 1),
			wRecv(4, 0, 1, 0, 1, 1, "NONE", 0), wDisc(5, 1)),
			[][]int32{{0, 1}}},
		{c("a connection lost with a request of two partitions, none answered", true,
			wInit(1, 7), wSend(2, 0, 1, 0, 1, 1), wSend(3, 1, 2, 0, 1, 1), wDisc(4, 1),
			wResend(5, 0, 1, 0, 2, 2), wResend(6, 1, 2, 0, 2, 2),
			wRecv(7, 0, 1, 0, 2, 2, "NONE", 0), wRecv(8, 1, 2, 0, 2, 2, "NONE", 0)),
			[][]int32{{0}, {1}}},
		// Partition 1's part alone would see its request not begun.
		{c("a batch sent again while its request is half answered", false,
			wInit(1, 7), wSend(2, 0, 1, 0, 1, 1), wSend(3, 1, 2, 0, 1, 1),
			wRecv(4, 0, 1, 0, 1, 1, "NONE", 0), wResend(5, 1, 2, 0, 2, 2)),
			[][]int32{{0, 1}}},
		// Partition 1's batch joins request 1 after its request 2 was sent:
		// its part alone would put request 1 behind request 2 and refuse the
		// answers the whole trace explains.
		{c("a batch joining an older request of its connection", true,
			wInit(1, 7), wSend(2, 0, 1, 0, 1, 1), wSend(3, 1, 2, 1, 2, 1), wSend(4, 1, 3, 0, 1, 1),
			wRecv(5, 0, 1, 0, 1, 1, "NONE", 0), wRecv(6, 1, 3, 0, 1, 1, "NONE", 0), wRecv(7, 1, 2, 1, 2, 1, "NONE", 1)),
			[][]int32{{0, 1}}},
		{c("two connections, one partition each", true,
			wInit(1, 7), wSend(2, 0, 1, 0, 1, 1), wSend(3, 1, 2, 0, 2, 2),
			wRecv(4, 1, 2, 0, 2, 2, "NONE", 0), wRecv(5, 0, 1, 0, 1, 1, "NONE", 0), wDisc(6, 2)),
			[][]int32{{0}, {1}}},
	}
}

// Which partitions Split keeps together in a trace of the wire (no TLC
// needed).
func TestWireSplitParts(t *testing.T) {
	for _, tc := range wireSplitCases() {
		t.Run(tc.c.name, func(t *testing.T) {
			if got := partsOf(t, tc.c.trace()); !slices.EqualFunc(got, tc.parts, slices.Equal) {
				t.Fatalf("parts %v, want %v", got, tc.parts)
			}
		})
	}
	// A real client's run on 64 partitions, each answered in order on its
	// connection: one part a partition.
	got := partsOf(t, readJSONL(t, filepath.Join("..", "..", "traces", "proxy", "kgo-1.22.3-on-kafka-4.1.0.jsonl")).bytes())
	if len(got) != 64 {
		t.Fatalf("kgo's trace of 64 partitions in %d parts: %v", len(got), got)
	}
	mods, err := translator(t, readJSONL(t, filepath.Join("..", "..", "traces", "proxy", "kgo-1.22.3-on-kafka-4.1.0.jsonl")).bytes()).Split(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 3 {
		t.Fatalf("packed into %d runs, want 3", len(mods))
	}
	for _, m := range mods {
		if m.Spec != WireSpec || len(m.Partitions) < 10 {
			t.Fatalf("a packed run of %d partitions for %q", len(m.Partitions), m.Spec)
		}
	}
}

// The split check of a trace of the wire judges it as the whole-trace
// check does, furthest line included: on the cases above, on every proxy
// trace of the repository, and on random mutants of those of several
// partitions (-wiresplit.seed, -wiresplit.mutants). spec/README.md, "Trace
// validation of the wire, one partition at a time", argues why.
func TestWireSplitAgreesWithWhole(t *testing.T) {
	jar := tlctest.Jar(t)
	seed := *wireSplitSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("random mutants from -wiresplit.seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	type tc struct {
		name   string
		data   []byte
		accept int // 1: the whole check must accept it, 0: reject, -1: either
	}
	var cases []tc
	for _, s := range wireSplitCases() {
		want := 0
		if s.c.accept {
			want = 1
		}
		cases = append(cases, tc{s.c.name, s.c.trace(), want})
	}
	var several []string // traces of several partitions, to mutate
	for _, f := range wireTraces(t) {
		// A trace of one partition (or whose partitions are all joined)
		// is one part: the same module as the whole.
		if data := readJSONL(t, f).bytes(); len(partsOf(t, data)) > 1 {
			cases = append(cases, tc{filepath.Base(f), data, -1})
			several = append(several, f)
		}
	}
	if len(several) < 3 {
		t.Fatalf("%d proxy traces of several partitions", len(several))
	}
	loaded := map[string][]tracer.Event{}
	headers := map[string]string{}
	for n := 0; n < *wireSplitMutants; {
		f := several[rng.IntN(len(several))]
		if loaded[f] == nil {
			headers[f], loaded[f] = readTrace(t, f)
		}
		evs, what := mutateWire(rng, loaded[f])
		if what == "" {
			continue
		}
		cases = append(cases, tc{fmt.Sprintf("%s mutant %d: %s", filepath.Base(f), n, what), writeTrace(headers[f], evs), -1})
		n++
	}

	tally := map[string]int{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := translator(t, c.data).Module(); err != nil {
				t.Skipf("not translated: %v", err) // the mirror's alone (wire_test.go)
			}
			// One run per part only when there are few: kgo's trace has 64.
			whole, split, packed := judge(t, jar, c.data, len(partsOf(t, c.data)) <= 4)
			if !same(whole, split) || !same(whole, packed) {
				t.Fatalf("split and whole disagree (-wiresplit.seed %d): whole accepted=%v furthest=%d; one run per part accepted=%v furthest=%d rejected=%v; packed accepted=%v furthest=%d rejected=%v",
					seed, whole.Accepted, whole.Furthest, split.Accepted, split.Furthest, split.Rejected, packed.Accepted, packed.Furthest, packed.Rejected)
			}
			if c.accept >= 0 && whole.Accepted != (c.accept == 1) {
				t.Fatalf("whole accepted=%v (furthest line %d), want %v", whole.Accepted, whole.Furthest, c.accept == 1)
			}
			if whole.Accepted {
				tally["accepted"]++
			} else {
				tally["rejected"]++
			}
			t.Logf("accepted=%v furthest=%d in %d runs (%d states), whole %d states", split.Accepted, split.Furthest, split.Parts, split.States, whole.States)
		})
	}
	t.Logf("-wiresplit.seed %d: %v", seed, tally)
}
