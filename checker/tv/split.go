package tv

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Split translates the events added as one module per part of the trace:
// a part is one partition, or several whose steps the trace shows to
// interact in a way a module of one cannot follow. spec/README.md ("Trace
// validation, one partition at a time") argues that the trace is accepted
// by TLC exactly when every part is. Parts come in the order of their
// lowest partition.
//
// Partitions interact in the spec through the producer's epoch (a Bump of
// any partition moves it: the other parts see the line as EpochMoves, with
// nothing else of that partition), through a lost connection (a Disconnect
// line goes to each part that had an attempt outstanding on it), and
// through the order in which one connection's requests are handled and
// answered. Two partitions go into one part when the trace leaves the last
// two unexplained by each partition alone: an attempt of one answered (or
// hit by a fault) while an earlier attempt of the other on the same
// connection was not yet, or a Disconnect that lost attempts of both, with
// anyHandled TRUE because of what each did next (TLC tries every prefix of
// the connection's requests, and the prefixes of the two must be one).
// A Disconnect with no attempt outstanding joins every partition into one
// part: the whole-trace check rejects it, and so must the split.
//
// A trace of the wire (WireSpec) is split the same way, by what TraceWire
// shares across partitions: the requests outstanding on a connection.
// Partitions go into one part where a part alone would see a connection's
// requests other than the whole trace does (wire.go, wirePlan; spec/README.md,
// "Trace validation of the wire, one partition at a time").
//
// With runs > 0, the parts are packed into at most that many modules, each
// checking several parts at once (parts share nothing, so one run follows
// them as well as several do), balanced by their lines: each TLC run costs
// a JVM's start, and a state of a few partitions is still small.
func (t *Translator) Split(runs int) ([]*Module, error) {
	if SpecFor(t.h) == TxnSpec {
		m, err := t.txnModule() // one coordinator ties every partition: no split
		if err != nil {
			return nil, err
		}
		return []*Module{m}, nil
	}
	if SpecFor(t.h) == WireSpec {
		pl, err := t.wirePlan()
		if err != nil {
			return nil, err
		}
		return pl.split(runs), nil
	}
	pl, err := t.plan()
	if err != nil {
		return nil, err
	}
	groups := pl.parts()
	if runs > 0 && runs < len(groups) {
		groups = pack(groups, pl.lines(), runs)
	}
	var mods []*Module
	for _, g := range groups {
		only := map[int32]bool{}
		for _, p := range g {
			only[p] = true
		}
		mods = append(mods, pl.render(only))
	}
	return mods, nil
}

// lines counts each partition's lines of TraceLog.
func (pl *plan) lines() map[int32]int {
	n := map[int32]int{}
	for _, e := range pl.log {
		if e.p != -1 {
			n[e.p]++
		}
	}
	return n
}

// pack puts the parts into at most runs groups, the largest part first into
// the group with the fewest lines so far; each group's partitions sorted.
func pack(parts [][]int32, lines map[int32]int, runs int) [][]int32 {
	size := func(part []int32) int {
		n := 0
		for _, p := range part {
			n += lines[p]
		}
		return n
	}
	order := slices.Clone(parts)
	slices.SortStableFunc(order, func(a, b []int32) int { return cmp.Compare(size(b), size(a)) })
	groups := make([][]int32, runs)
	load := make([]int, runs)
	for _, part := range order {
		g := slices.Index(load, slices.Min(load))
		groups[g] = append(groups[g], part...)
		load[g] += size(part)
	}
	out := groups[:0]
	for _, g := range groups {
		if len(g) > 0 {
			slices.Sort(g)
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b []int32) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// parts groups the plan's partitions into the parts Split checks apart.
func (pl *plan) parts() [][]int32 {
	ps := slices.Sorted(maps.Keys(pl.count))
	joins := slices.Clone(pl.crossed)
	for _, e := range pl.log {
		if e.p != -1 {
			continue
		}
		switch {
		case len(e.parts) == 0:
			for _, p := range ps[1:] {
				joins = append(joins, [2]int32{ps[0], p})
			}
		case len(e.matters) > 1:
			for _, p := range e.matters[1:] {
				joins = append(joins, [2]int32{e.matters[0], p})
			}
		}
	}
	return unite(ps, joins)
}

// unite groups the partitions ps, joining each pair of joins (and what
// they join in turn): the groups in the order of their lowest partition,
// each sorted.
func unite(ps []int32, joins [][2]int32) [][]int32 {
	up := map[int32]int32{} // union-find: each partition's parent
	for _, p := range ps {
		up[p] = p
	}
	var root func(p int32) int32
	root = func(p int32) int32 {
		if up[p] != p {
			up[p] = root(up[p])
		}
		return up[p]
	}
	for _, j := range joins {
		ra, rb := root(j[0]), root(j[1])
		if ra != rb {
			up[max(ra, rb)] = min(ra, rb)
		}
	}
	byRoot := map[int32][]int32{}
	for _, p := range slices.Sorted(slices.Values(ps)) {
		r := root(p)
		byRoot[r] = append(byRoot[r], p)
	}
	out := slices.Collect(maps.Values(byRoot))
	slices.SortFunc(out, func(a, b []int32) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// split is Split for a trace of the wire.
func (pl *wirePlan) split(runs int) []*Module {
	groups := unite(slices.Sorted(maps.Keys(pl.parts)), pl.joins)
	if runs > 0 && runs < len(groups) {
		lines := map[int32]int{}
		for _, ln := range pl.log {
			if !ln.every && !ln.disc {
				lines[ln.p]++
			}
		}
		groups = pack(groups, lines, runs)
	}
	var mods []*Module
	for _, g := range groups {
		only := map[int32]bool{}
		for _, p := range g {
			only[p] = true
		}
		mods = append(mods, pl.render(only))
	}
	return mods
}

// CheckAll has TLC validate each module (the parts from Split), up to
// parallel at once (0: one per CPU), and combines the verdicts: rejected
// if any part is, with the furthest line the whole-trace check would give
// (the lowest of the rejected parts'); else inconclusive if any part is;
// else accepted. Every part runs to its end, so the line is exact; only an
// error stops the others. States add up; Duration is the wall time.
func CheckAll(ctx context.Context, mods []*Module, specDir, jar string, timeout time.Duration, parallel int) (*Verdict, error) {
	if len(mods) == 0 {
		return nil, errors.New("tv: no module to check")
	}
	if parallel <= 0 {
		parallel = runtime.NumCPU()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	verdicts := make([]*Verdict, len(mods))
	errs := make([]error, len(mods))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(parallel, len(mods)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				verdicts[i], errs[i] = Check(ctx, mods[i], specDir, jar, timeout)
				if errs[i] != nil {
					cancel()
				}
			}
		}()
	}
feed:
	for i := range mods {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		switch {
		case err != nil:
			return nil, fmt.Errorf("partitions %v: %w", mods[i].Partitions, err)
		case verdicts[i] == nil: // never started: the caller's context ended
			return nil, fmt.Errorf("tv: %w", ctx.Err())
		}
	}

	all := &Verdict{Accepted: true, Parts: len(mods)}
	for i, v := range verdicts {
		all.States += v.States
		all.Violated = append(all.Violated, v.Violated...)
		switch {
		case v.Inconclusive != "":
			if all.Inconclusive == "" {
				all.Inconclusive = fmt.Sprintf("partitions %v: %s", mods[i].Partitions, v.Inconclusive)
			}
			all.Accepted = false
		case !v.Accepted:
			if all.Rejected == nil || v.Furthest < all.Furthest {
				all.Furthest, all.At, all.AtEvent, all.Rejected = v.Furthest, v.At, v.AtEvent, mods[i].Partitions
			}
			all.Accepted = false
		}
	}
	if all.Rejected != nil {
		all.Inconclusive = ""
	}
	all.Duration = time.Since(start)
	return all, nil
}
