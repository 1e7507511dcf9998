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
// connection was not yet, or a Disconnect that lost attempts of both with
// anyHandled TRUE (TLC tries every prefix of the connection's requests).
// A Disconnect with no attempt outstanding joins every partition into one
// part: the whole-trace check rejects it, and so must the split.
func (t *Translator) Split() ([]*Module, error) {
	pl, err := t.plan()
	if err != nil {
		return nil, err
	}
	var mods []*Module
	for _, part := range pl.parts() {
		only := map[int32]bool{}
		for _, p := range part {
			only[p] = true
		}
		mods = append(mods, pl.render(only))
	}
	return mods, nil
}

// parts groups the plan's partitions into the parts Split checks apart.
func (pl *plan) parts() [][]int32 {
	ps := slices.Sorted(maps.Keys(pl.count))
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
	join := func(a, b int32) {
		ra, rb := root(a), root(b)
		if ra != rb {
			up[max(ra, rb)] = min(ra, rb)
		}
	}
	for _, c := range pl.crossed {
		join(c[0], c[1])
	}
	for _, e := range pl.log {
		if e.p != -1 {
			continue
		}
		switch {
		case len(e.parts) == 0:
			for _, p := range ps[1:] {
				join(ps[0], p)
			}
		case e.fields[len(e.fields)-1] == "anyHandled |-> TRUE":
			for _, p := range e.parts[1:] {
				join(e.parts[0], p)
			}
		}
	}
	byRoot := map[int32][]int32{}
	for _, p := range ps {
		r := root(p)
		byRoot[r] = append(byRoot[r], p)
	}
	out := slices.Collect(maps.Values(byRoot))
	slices.SortFunc(out, func(a, b []int32) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// CheckAll has TLC validate each module (the parts from Split), up to
// parallel at once (0: one per CPU), and combines the verdicts: accepted
// when every part is. A rejected part's furthest line is the verdict's
// (the lowest such line when several are rejected); the other runs are
// stopped once one part is rejected. States add up; Duration is the wall
// time of them all.
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
				v, err := Check(ctx, mods[i], specDir, jar, timeout)
				verdicts[i], errs[i] = v, err
				if err != nil || !v.Accepted {
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

	all := &Verdict{Accepted: true, Parts: len(mods)}
	for i, v := range verdicts {
		if v == nil {
			continue
		}
		all.States += v.States
		if !v.Accepted {
			if all.Accepted || v.Furthest < all.Furthest {
				all.Furthest = v.Furthest
				all.Rejected = mods[i].Partitions
			}
			all.Accepted = false
		}
	}
	if all.Accepted {
		// Every part ran (none rejected, so none was stopped): an error is
		// the verdict's.
		for i, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("partitions %v: %w", mods[i].Partitions, err)
			}
		}
	}
	all.Duration = time.Since(start)
	return all, nil
}
