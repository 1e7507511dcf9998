#!/usr/bin/env python3
"""Attributes the slow Produce calls that bench/cmd/enqueue --trace logs
(category "slow") to what the runtime trace shows during each call, from
`go tool trace -d=parsed` output: bench/tailtrace.py PARSED.txt

Per call, the first that applies: a stop-the-world overlapping it; a GC mark
assist by the calling goroutine; a GC incremental sweep on its P; the
goroutine leaving Running (descheduled: preempted or blocked); a new span
taken by the goroutine (the heap metric the runtime emits on an mcache
refill); GC marking meanwhile; none of these. ", woke a goroutine" is added
when the goroutine made another runnable during the call."""
import re, sys, collections, bisect
ev = re.compile(r'^M=(-?\d+) P=(-?\d+) G=(-?\d+) (\w+) Time=(\d+)(.*)$')
slow = []            # (g, start, end, dur)
trans = collections.defaultdict(list)   # goid -> [(time, from, to, reason)]
unblocks = collections.defaultdict(list)  # actor goid -> [time] (it made another goroutine runnable)
ranges = collections.defaultdict(list)
refill = collections.defaultdict(list)   # goid -> times it took a new span (the heap metric it emits then)   # (name, scope) -> [[begin, end]]
open_r = {}
for line in open(sys.argv[1]):
    m = ev.match(line)
    if not m:
        continue
    M, P, G, kind, t, rest = int(m[1]), int(m[2]), int(m[3]), m[4], int(m[5]), m[6]
    if kind == 'Log' and 'Category="slow"' in rest:
        d = int(re.search(r'Message="(\d+)"', rest)[1])
        slow.append((G, t - d, t, d, P))
    elif kind == 'Metric' and 'heap/objects' in rest and G >= 0:
        refill[G].append(t)
    elif kind == 'StateTransition' and 'GoID=' in rest:
        mm = re.search(r'GoID=(\d+) (\w+)->(\w+) Reason="([^"]*)"', rest)
        if mm:
            gid = int(mm[1])
            trans[gid].append((t, mm[2], mm[3], mm[4]))
            if mm[2] == 'Waiting' and mm[3] == 'Runnable' and G >= 0 and G != gid:
                unblocks[G].append(t)
    elif kind in ('RangeBegin', 'RangeEnd', 'RangeActive'):
        mm = re.search(r'Name="([^"]*)" Scope=(\S+)', rest)
        if not mm:
            continue
        name, scope = mm[1], mm[2]
        if name.startswith('stop-the-world'):
            name = 'stop-the-world'
        key = (name, scope)
        if kind in ('RangeBegin', 'RangeActive'):
            open_r[key] = t
        elif key in open_r:
            ranges[key].append([open_r.pop(key), t])
# global views
def merged(names, scope_pred):
    out = []
    for (n, sc), rs in ranges.items():
        if n in names and scope_pred(sc):
            out += rs
    return sorted(out)
def overlaps(rs, a, b):
    return any(r0 < b and r1 > a for r0, r1 in rs)
gc = merged({'GC concurrent mark phase'}, lambda s: True)
stw = merged({'stop-the-world'}, lambda s: True)
cats = collections.Counter(); durs = collections.defaultdict(list)
detail = collections.Counter()
for g, a, b, d, p in slow:
    sweep = overlaps(ranges.get(('GC incremental sweep', 'Proc(%d)' % p), []), a, b)
    assist = overlaps(ranges.get(('GC mark assist', 'Goroutine(%d)' % g), []), a, b)
    tr = [x for x in trans[g] if a <= x[0] <= b and x[1] == 'Running']
    woke = any(a <= t <= b for t in unblocks[g])
    if overlaps(stw, a, b):
        c = 'stop-the-world during the call'
    elif assist:
        c = 'GC mark assist by the calling goroutine'
    elif sweep:
        c = 'GC incremental sweep on the call\'s P (allocating)'
    elif tr:
        c = 'descheduled: Running->%s (%s)%s' % (tr[0][2], tr[0][3] or '-', ' during GC mark' if overlaps(gc, a, b) else '')
    elif any(a <= t <= b for t in refill[g]):
        c = 'allocated a new span (mcache refill)' + (' during GC mark' if overlaps(gc, a, b) else '')
    elif overlaps(gc, a, b):
        c = 'ran throughout, GC marking meanwhile'
    else:
        c = 'ran throughout, no GC'
    if woke:
        c += ', woke a goroutine'
    cats[c] += 1; durs[c].append(d)
# fraction of the timed span in GC mark
if slow:
    t0 = min(x[1] for x in slow); t1 = max(x[2] for x in slow)
    gcspan = sum(max(0, min(r1, t1) - max(r0, t0)) for r0, r1 in gc)
    print('slow calls: %d; GC mark covers %.0f%% of the span from the first to the last' % (len(slow), 100 * gcspan / max(1, t1 - t0)))
for c, n in cats.most_common():
    ds = sorted(durs[c])
    print('%6d %5.1f%%  median %6.1f us  max %8.1f us  %s' % (n, 100 * n / len(slow), ds[len(ds)//2] / 1e3, ds[-1] / 1e3, c))
