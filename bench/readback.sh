#!/usr/bin/env bash
# The read-back's cost on a settled cluster, against an earlier kcheck's in
# the same run: one real Kafka broker (kcheck kafka), one run of our producer
# (16 partitions, 30,000 records of 1 KiB) whose trace, without its read-back,
# is read back REPEATS times by each kcheck in turn (this tree's and the one
# built from PEER_REV), alternating which goes first. Prints each's median
# and spread (half the interquartile range), the paired ratio, and the load.
# Usage: bench/readback.sh [REPEATS] [PEER_REV]   (defaults: 10, 0fd4c92:
# the read-back before it waited for a settled cluster).
set -euo pipefail
cd "$(dirname "$0")/.."
repeats="${1:-10}"
peer_rev="${2:-0fd4c92}"
version="${KAFKA_VERSION:-4.1.0}"
out="$(mktemp -d /tmp/kcheck-readback-bench.XXXXXX)"
broker=""
cleanup() {
  [ -n "$broker" ] && kill "$broker" 2>/dev/null && wait "$broker" 2>/dev/null
  git worktree remove --force "$out/peer" 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT
die() { echo "readback.sh: $*" >&2; exit 2; }
. bench/kafka.sh

go build -o "$out/kcheck" ./cmd/kcheck
git worktree add -q --detach "$out/peer" "$peer_rev" || die "no revision $peer_rev"
(cd "$out/peer" && go build -o "$out/kcheck-peer" ./cmd/kcheck)

start_kafka "$out/kcheck" "$version" "$out/kafka" "$out/kafka.log"

"$out/kcheck" run --brokers "$addr" --broker-version "$version" --topic rb --partitions 16 --records 30000 \
  --value-bytes 1024 --compression lz4 --trace "$out/full.jsonl" >/dev/null
grep -v '"ev":"ReadBack' "$out/full.jsonl" >"$out/trace.jsonl"

# ms CMD...: the wall time of CMD in milliseconds.
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 || die "failed: $*"; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
: >"$out/times"
for i in $(seq 1 "$repeats"); do
  if (( i % 2 )); then order="ours peer"; else order="peer ours"; fi
  for who in $order; do
    bin="$out/kcheck"; [ "$who" = peer ] && bin="$out/kcheck-peer"
    echo "$i $who $(ms "$bin" readback --brokers "$addr" --out "$out/rb-$who.jsonl" "$out/trace.jsonl")" >>"$out/times"
  done
done
cmp -s <(grep '"ev":"ReadBack"' "$out/rb-ours.jsonl" | cut -d, -f3-) <(grep '"ev":"ReadBack"' "$out/rb-peer.jsonl" | cut -d, -f3-) ||
  die "the two read-backs differ"
python3 - "$out/times" "$peer_rev" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
t = {"ours": {}, "peer": {}}
for i, who, ms in rows:
    t[who][i] = int(ms)
def summary(xs):
    q = statistics.quantiles(xs, n=4)
    return statistics.median(xs), (q[2] - q[0]) / 2
ratios = [t["ours"][i] / t["peer"][i] for i in t["ours"]]
for who in ("ours", "peer"):
    m, s = summary(list(t[who].values()))
    print(f"{who:5} median {m:.0f} ms (±{s:.0f})")
m, s = summary(ratios)
print(f"ours / {sys.argv[2]}: median {m:.2f} (±{s:.2f}) over {len(ratios)} pairs; load average {sys.argv[3]}")
PY
