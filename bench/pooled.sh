#!/usr/bin/env bash
# BenchmarkProduce against one real Kafka 4.1.0 broker, many short runs
# pooled (bench/README.md, "Against a real broker"; make bench-pooled):
#
#   bench/pooled.sh [RUNS [PARTITIONS...]]
#
# RUNS (default 40, a multiple of 10 from 10 to 1000) runs of BenchmarkProduce
# (ours with the rule on, off and traced, and kgo) at each partition count
# (default 1 64), 10 at a time in turn over the counts. Each run gives each
# client 2 x 40,000 x (1 + PARTITIONS/16) records in 10 turns (more
# partitions move records faster; a turn lasts about a quarter second),
# on a broker it starts and stops itself (kcheck kafka). Prints, per count,
# bench/pool.py's medians with their 95% bootstrap intervals; the raw runs
# stay in the directory it names on stderr. About 5 s a run at 1 partition
# and 10 s at 64. Exit status: 0 done; 1 a run failed; 2 bad usage or a
# build or broker that failed.
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "pooled: $*" >&2; exit 2; }
runs=${1:-40}
shift || true
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(1 64)
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 10 ] && [ "$runs" -le 1000 ] && [ $((runs % 10)) -eq 0 ] ||
  die "RUNS '$runs': want a multiple of 10 from 10 to 1000"
for p in "${parts[@]}"; do
  [[ "$p" =~ ^[0-9]+$ ]] && [ "$p" -ge 1 ] && [ "$p" -le 10000 ] || die "PARTITIONS '$p': want a partition count from 1 to 10000"
done
kcheck=bin/kcheck
[ -x "$kcheck" ] || die "no $kcheck (make build)"
out=$(mktemp -d "${TMPDIR:-/tmp}/kcheck-pooled.XXXXXX")
echo "pooled: runs and the broker's log in $out" >&2
broker=""
cleanup() { [ -n "$broker" ] && kill "$broker" 2>/dev/null && wait "$broker" 2>/dev/null; rm -rf "$out/kafka"; }
trap cleanup EXIT
. bench/kafka.sh
go test -c -o "$out/producer.test" ./producer || die "building the producer's benchmarks failed"
start_kafka "$kcheck" 4.1.0 "$out/kafka" "$out/kafka.log" \
  --heap 1g --set broker.session.timeout.ms=60000 --set file.delete.delay.ms=0
status=0
for round in $(seq 1 $((runs / 10))); do
  for p in "${parts[@]}"; do
    echo "# round $round, $p partitions, $(date -u +%T) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/runs-$p.txt"
    echo "pooled: round $round of $((runs / 10)), $p partitions" >&2
    (cd producer && KCHECK_BENCH_BROKERS="$addr" KCHECK_BENCH_PARTITIONS="$p" "$out/producer.test" \
      -test.run '^$' -test.bench 'BenchmarkProduce$' -test.benchtime $((40000 * (1 + p / 16)))x -test.count 10) >>"$out/runs-$p.txt" 2>&1 || status=1
  done
done
for p in "${parts[@]}"; do
  echo "## $p partitions"
  bench/pool.py "$out/runs-$p.txt" || status=1
done
exit "$status"
