#!/usr/bin/env python3
"""Pool BenchmarkProduce runs: the median of each paired ratio, with a 95%
bootstrap interval of that median, over every run in the files given.

    go test ./producer -run '^$' -bench 'BenchmarkProduce$' -benchtime 100000x -count 200 > runs.txt
    bench/pool.py runs.txt [more.txt ...]
    bench/pool.py --json runs.txt ...   (the same as one JSON object)
    bench/pool.py --values FILE         (any paired ratios: FILE is a JSON object
                                         {"name": [one ratio per run, ...], ...};
                                         out: {"name": {"n", "median", "lo", "hi",
                                         "min", "max"}, ...}; null values are
                                         skipped, a name with none has n 0)

Each run (a line of `go test -bench` output) pairs every client inside one
process on the same machine state, so the ratios of one run are the unit;
their median over many runs, and how far it would move if the runs were
drawn again (the bootstrap), say how finely the runs resolve a ratio. The
CPU ratios are per record (the client's leg: the whole process, kfake
included), the inverse of the time ratio so that both read "higher is
better for the first". The bootstrap's seed is fixed, so the same files
give the same intervals.

A line of another benchmark, or a file with no runs, is an error (exit 2).
"""
import json
import random
import re
import statistics
import sys

RATE_RATIOS = ["on/kgo", "off/kgo", "trace/kgo", "on/off", "trace/on"]
CPU_RATIOS = [("on", "kgo"), ("on", "off"), ("trace", "on")]
SEED = 1
DRAWS = 4000


def fail(msg):
    print(f"pool.py: {msg}", file=sys.stderr)
    sys.exit(2)


def runs(paths):
    out = []
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if not line.startswith("BenchmarkProduce-") and not line.startswith("BenchmarkProduce "):
                    continue
                try:
                    m = dict((k, float(v)) for v, k in re.findall(r"([0-9.eE+-]+) (\S+)", line))
                except ValueError:
                    fail(f"{path}:{n}: a BenchmarkProduce line with a value that is not a number")
                if "trace/on" not in m:
                    fail(f"{path}:{n}: a BenchmarkProduce line without the trace/on ratio")
                for k, v in m.items():
                    if k.endswith("-cpu-ns/rec") and not v > 0:
                        fail(f"{path}:{n}: {k} is {v}, not a positive CPU time")
                out.append(m)
    if not out:
        fail(f"no BenchmarkProduce runs in {' '.join(paths)}")
    return out


def interval(values, rng):
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(DRAWS))
    return meds[int(DRAWS * 0.025)], meds[int(DRAWS * 0.975) - 1]


def pool(ms):
    """The rows: each ratio's name, median, interval, min and max; and the
    medians of the per-record numbers."""
    rng = random.Random(SEED)
    rows = [(k, [m[k] for m in ms]) for k in RATE_RATIOS]
    for a, b in CPU_RATIOS:
        ka, kb = f"{a}-cpu-ns/rec", f"{b}-cpu-ns/rec"
        rows.append((f"cpu {a}/{b}", [m[kb] / m[ka] for m in ms if ka in m and kb in m]))
    out = []
    for name, v in rows:
        if v:
            lo, hi = interval(v, rng)
            out.append({"name": name, "median": statistics.median(v), "lo": lo, "hi": hi, "min": min(v), "max": max(v)})
    medians = {}
    for k in ["on-cpu-ns/rec", "trace-cpu-ns/rec", "off-cpu-ns/rec", "kgo-cpu-ns/rec", "on-allocs/rec", "trace-allocs/rec"]:
        v = [m[k] for m in ms if k in m]
        if v:
            medians[k] = statistics.median(v)
    return out, medians


def pool_values(path):
    """--values: the median, interval, min and max of each named list of
    ratios (one per run), the same bootstrap as the runs' ratios."""
    try:
        with open(path) as f:
            named = json.load(f)
    except OSError as e:
        fail(f"reading {e.filename}: {e.strerror}")
    except ValueError as e:
        fail(f"{path}: not JSON: {e}")
    if not isinstance(named, dict):
        fail(f"{path}: want a JSON object of name: [values]")
    rng = random.Random(SEED)
    out = {}
    for name in sorted(named):
        vs = named[name]
        if not isinstance(vs, list) or any(v is not None and not isinstance(v, (int, float)) for v in vs):
            fail(f"{path}: {name}: want a list of numbers (or null)")
        v = [float(x) for x in vs if x is not None]
        if not v:
            out[name] = {"n": 0}
            continue
        lo, hi = interval(v, rng)
        out[name] = {"n": len(v), "median": statistics.median(v), "lo": lo, "hi": hi, "min": min(v), "max": max(v)}
    return out


def main(argv):
    args = argv[1:]
    if len(args) == 2 and args[0] == "--values":
        print(json.dumps(pool_values(args[1])))
        return 0
    as_json = bool(args) and args[0] == "--json"
    if as_json:
        args = args[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args else 2
    try:
        ms = runs(args)
    except OSError as e:
        fail(f"reading {e.filename}: {e.strerror}")
    rows, medians = pool(ms)
    if as_json:
        print(json.dumps({"runs": len(ms), "ratios": rows, "medians": medians}))
        return 0
    print(f"{len(ms)} runs; median (95% bootstrap interval of the median) [min-max]")
    for r in rows:
        print(f"{r['name']:14s} {r['median']:.3f} ({r['lo']:.3f}-{r['hi']:.3f}) [{r['min']:.3f}-{r['max']:.3f}]")
    for k, v in medians.items():
        print(f"{k:17s} median {v:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
