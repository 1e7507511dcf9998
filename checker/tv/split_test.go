package tv

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kcheck/kcheck/checker/tlc/tlctest"
	"github.com/kcheck/kcheck/tracer"
)

var (
	splitSeed    = flag.Uint64("split.seed", 0, "TestSplitAgreesWithWhole: the seed of its random mutants (0: one from the clock)")
	splitMutants = flag.Int("split.mutants", 4, "TestSplitAgreesWithWhole: random mutants per trace")
)

// jsonl is a trace as lines of JSON, for the tests to mutate.
type jsonl []string

func readJSONL(t *testing.T, path string) jsonl {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func (j jsonl) bytes() []byte { return []byte(strings.Join(j, "\n") + "\n") }

// event returns line i (0: the header) as a map.
func (j jsonl) event(t *testing.T, i int) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(j[i]), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// with returns a copy of j with line i changed by fn.
func (j jsonl) with(t *testing.T, i int, fn func(m map[string]any)) jsonl {
	t.Helper()
	m := j.event(t, i)
	fn(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(j)
	out[i] = string(b)
	return out
}

// find returns the index of the first line whose event matches every
// field given, from line 1.
func (j jsonl) find(t *testing.T, fields map[string]any) int {
	t.Helper()
	for i := 1; i < len(j); i++ {
		m := j.event(t, i)
		ok := true
		for k, v := range fields {
			if fmt.Sprint(m[k]) != fmt.Sprint(v) {
				ok = false
			}
		}
		if ok {
			return i
		}
	}
	t.Fatalf("no line with %v", fields)
	return -1
}

// swap returns a copy of j with events a and b exchanged, each keeping the
// place's number and time (the reader holds both to the order of lines).
func (j jsonl) swap(t *testing.T, a, b int) jsonl {
	t.Helper()
	out := slices.Clone(j)
	out[a], out[b] = out[b], out[a]
	return out.renumber(t)
}

// drop returns a copy of j without event i.
func (j jsonl) drop(t *testing.T, i int) jsonl {
	t.Helper()
	return slices.Delete(slices.Clone(j), i, i+1).renumber(t)
}

// renumber gives each event its place as its number, and a time no earlier
// than the one before it.
func (j jsonl) renumber(t *testing.T) jsonl {
	t.Helper()
	out := slices.Clone(j)
	last := 0.0
	for k := 1; k < len(out); k++ {
		out = out.with(t, k, func(m map[string]any) {
			m["i"] = k
			last = max(last, m["t"].(float64))
			m["t"] = last
		})
	}
	return out
}

func translator(t *testing.T, data []byte) *Translator {
	t.Helper()
	r, err := tracer.NewReader(bytes.NewReader(data), "trace")
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTranslator(r.Header())
	if err := r.Each(func(line int, e *tracer.Event) error { tr.Add(line, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return tr
}

func partsOf(t *testing.T, data []byte) [][]int32 {
	t.Helper()
	mods, err := translator(t, data).Split(0)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]int32
	for _, m := range mods {
		out = append(out, m.Partitions)
	}
	return out
}

func fixture(t *testing.T, name string) jsonl {
	return readJSONL(t, filepath.Join("..", "..", "traces", "fixtures", name))
}

// Which partitions Split keeps together, and why (no TLC needed).
func TestSplitParts(t *testing.T) {
	bump := fixture(t, "ok-bump-two-partitions.jsonl")
	// Partition 0's first answer after partition 1's, though it was sent
	// first on the same connection: answers cross, so the two are joined.
	r0, r1 := bump.find(t, map[string]any{"ev": "Receive", "b": 1}), bump.find(t, map[string]any{"ev": "Receive", "b": 4})
	crossed := bump.swap(t, r0, r1)
	for _, tc := range []struct {
		name string
		data jsonl
		want [][]int32
	}{
		{"a bump is seen by the other part as the epoch moving", bump, [][]int32{{0}, {1}}},
		{"a lost connection whose handled prefix matters to both", fixture(t, "ok-disconnect-two-partitions.jsonl"), [][]int32{{0, 1}}},
		{"answers that cross on a connection", crossed, [][]int32{{0, 1}}},
		{"two connections", fixture(t, "ok-interleaved-partitions.jsonl"), [][]int32{{0}, {1}}},
		{"one partition", fixture(t, "ok-dedup-retry.jsonl"), [][]int32{{0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := partsOf(t, tc.data.bytes()); !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("parts %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPack(t *testing.T) {
	parts := [][]int32{{0}, {1, 2}, {3}, {4}}
	lines := map[int32]int{0: 10, 1: 30, 2: 30, 3: 40, 4: 5}
	got := pack(parts, lines, 2)
	want := [][]int32{{0, 3, 4}, {1, 2}} // 60 lines, then 55: the largest first, each to the lighter group
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("pack: %v, want %v", got, want)
	}
	if got := pack(parts, lines, 9); len(got) != 4 {
		t.Fatalf("pack into more runs than parts: %v", got)
	}
}

// judge has TLC check a trace whole and split: packed into two runs, as
// verify does on this machine, and (with perPart) one run per part, each
// state holding one part's partitions (else split is packed).
func judge(t *testing.T, jar string, data []byte, perPart bool) (whole, split, packed *Verdict) {
	t.Helper()
	spec := filepath.Join("..", "..", "spec")
	m, err := translator(t, data).Module()
	if err != nil {
		t.Fatal(err)
	}
	if whole, err = Check(context.Background(), m, spec, jar, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	runs := []int{0, 2}
	if !perPart {
		runs = runs[1:]
	}
	for _, runs := range runs {
		mods, err := translator(t, data).Split(runs)
		if err != nil {
			t.Fatal(err)
		}
		v, err := CheckAll(context.Background(), mods, spec, jar, 2*time.Minute, 2)
		if err != nil {
			t.Fatal(err)
		}
		if runs == 0 {
			split = v
		} else {
			packed = v
		}
	}
	if split == nil {
		split = packed
	}
	return whole, split, packed
}

func same(a, b *Verdict) bool {
	return a.Accepted == b.Accepted && a.Furthest == b.Furthest && a.Inconclusive == "" && b.Inconclusive == ""
}

// The split check judges a trace as the whole-trace check does: on the
// repository's traces of several partitions, on traces whose partitions
// interact (a producer-wide epoch bump, a lost connection carrying two
// partitions, answers crossing on a connection), on a violation planted in
// one partition of eight, and on random mutants (-split.seed,
// -split.mutants). spec/README.md, "Trace validation, one partition at a
// time", argues why.
func TestSplitAgreesWithWhole(t *testing.T) {
	jar := tlctest.Jar(t)
	seed := *splitSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("random mutants from -split.seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	type tc struct {
		name     string
		data     jsonl
		rejected int32 // the partition whose part must reject it; -1: accepted, or any
		big      bool  // eight partitions: packed into two runs only, to keep the test short
	}
	var cases []tc
	bump := fixture(t, "ok-bump-two-partitions.jsonl")
	disc := fixture(t, "ok-disconnect-two-partitions.jsonl")
	run := readJSONL(t, filepath.Join("..", "..", "traces", "run.jsonl"))
	cases = append(cases,
		tc{"ok-bump-two-partitions", bump, -1, false},
		tc{"ok-disconnect-two-partitions", disc, -1, false},
		tc{"ok-interleaved-partitions", fixture(t, "ok-interleaved-partitions.jsonl"), -1, false},
		tc{"run.jsonl", run, -1, true},
	)
	// After partition 0's bump, partition 1 claims to go on in the old
	// epoch: only the epoch partition 0 moved says it cannot.
	i := bump.find(t, map[string]any{"ev": "SendNew", "b": 10})
	stale := bump.with(t, i, func(m map[string]any) { m["ep"], m["seq"] = 0, 3 })
	stale = stale.with(t, stale.find(t, map[string]any{"ev": "Receive", "b": 10}), func(m map[string]any) { m["ep"], m["seq"] = 0, 3 })
	cases = append(cases, tc{"partition 1 stays in the epoch partition 0 left", stale, 1, false})
	// Answers crossing on the connection: the broker answers in order.
	r0, r1 := bump.find(t, map[string]any{"ev": "Receive", "b": 1}), bump.find(t, map[string]any{"ev": "Receive", "b": 4})
	crossed := bump.swap(t, r0, r1)
	cases = append(cases, tc{"answers crossing on a connection", crossed, -1, false})
	// A violation planted in one partition of eight: a sequence skipped.
	var planted jsonl
	for p := range 8 {
		first := run.find(t, map[string]any{"ev": "SendNew", "p": p, "seq": 0})
		next := -1
		for k := first + 1; k < len(run); k++ {
			m := run.event(t, k)
			if m["ev"] == "SendNew" && fmt.Sprint(m["p"]) == fmt.Sprint(p) {
				next = k
				break
			}
		}
		if p == 5 && next > 0 {
			planted = run.with(t, next, func(m map[string]any) { m["seq"] = m["seq"].(float64) + 1 })
		}
	}
	if planted == nil {
		t.Fatal("run.jsonl has no second batch on partition 5 to plant a violation in")
	}
	cases = append(cases, tc{"run.jsonl with a sequence skipped on partition 5", planted, 5, true})
	// Random mutants of the small traces of two partitions.
	for _, base := range []struct {
		name string
		data jsonl
	}{{"ok-bump-two-partitions", bump}, {"ok-disconnect-two-partitions", disc}} {
		for k := range *splitMutants {
			name, m := mutate(t, rng, base.data)
			cases = append(cases, tc{fmt.Sprintf("%s mutant %d: %s", base.name, k, name), m, -1, false})
		}
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			whole, split, packed := judge(t, jar, c.data.bytes(), !c.big)
			if !same(whole, split) || !same(whole, packed) {
				t.Fatalf("split and whole disagree (-split.seed %d): whole accepted=%v furthest=%d; one run per part accepted=%v furthest=%d rejected=%v; packed accepted=%v furthest=%d",
					seed, whole.Accepted, whole.Furthest, split.Accepted, split.Furthest, split.Rejected, packed.Accepted, packed.Furthest)
			}
			if c.rejected >= 0 && (split.Accepted || !slices.Contains(split.Rejected, c.rejected)) {
				t.Fatalf("want partition %d's part rejected; got accepted=%v rejected=%v", c.rejected, split.Accepted, split.Rejected)
			}
			t.Logf("accepted=%v furthest=%d in %d runs (%d states), whole %d states", split.Accepted, split.Furthest, split.Parts, split.States, whole.States)
		})
	}
}

// mutate changes one event of j at random: an answer's error, an attempt's
// sequence or epoch, two adjacent events swapped, or an event dropped.
func mutate(t *testing.T, rng *rand.Rand, j jsonl) (string, jsonl) {
	t.Helper()
	for {
		i := 1 + rng.IntN(len(j)-1)
		m := j.event(t, i)
		ev, _ := m["ev"].(string)
		if ev == "ReadBack" || ev == "InitProducerId" {
			continue
		}
		switch rng.IntN(4) {
		case 0:
			if ev != "Receive" {
				continue
			}
			errs := []string{"NONE", "OUT_OF_ORDER_SEQUENCE_NUMBER", "NOT_LEADER_OR_FOLLOWER", "INVALID_PRODUCER_EPOCH"}
			e := errs[rng.IntN(len(errs))]
			return fmt.Sprintf("line %d answered %s", i, e), j.with(t, i, func(m map[string]any) { m["err"] = e })
		case 1:
			if ev != "SendNew" && ev != "Resend" {
				continue
			}
			field := []string{"seq", "ep"}[rng.IntN(2)]
			return fmt.Sprintf("line %d's %s + 1", i, field), j.with(t, i, func(m map[string]any) { m[field] = m[field].(float64) + 1 })
		case 2:
			if i+1 >= len(j) || j.event(t, i+1)["ev"] == "ReadBack" {
				continue
			}
			return fmt.Sprintf("lines %d and %d swapped", i, i+1), j.swap(t, i, i+1)
		default:
			return fmt.Sprintf("line %d dropped", i), j.drop(t, i)
		}
	}
}
