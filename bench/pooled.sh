#!/usr/bin/env bash
# BenchmarkProduce against one real Kafka 4.1.0 broker, many short runs
# pooled (bench/README.md, "Against a real broker"; make bench-pooled):
#
#   bench/pooled.sh [RUNS [PARTITIONS...]]
#   bench/pooled.sh --report DIR     (the report of runs already in DIR)
#
# RUNS (default 40, a multiple of 10 from 10 to 1000) runs of BenchmarkProduce
# (ours with the rule on, off and traced, and kgo) at each partition count
# (default 1 64), 10 at a time in turn over the counts. Each run gives each
# client 2 x 40,000 x (1 + PARTITIONS/16) records in 10 turns (more
# partitions move records faster; a turn lasts about a quarter second),
# on a broker it starts and stops itself (kcheck kafka). Prints, per count,
# bench/pool.py's medians with their 95% bootstrap intervals; the raw runs
# stay in the directory it names on stderr, and the same report in markdown
# goes to bench/RESULTS-pooled.md (when every run passed). About 5 s a run at 1 partition
# and 10 s at 64. POOLED_BASE=COMMIT also builds the benchmarks of COMMIT (a
# git worktree) and runs them beside this tree's in every round, on the same
# broker, in alternating order, into runs-P-base.txt: a before-and-after in
# one run (bench/RESULTS-pooled.md is then left alone). Exit status: 0 done;
# 1 a run failed; 2 bad usage or a build or broker that failed.
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "pooled: $*" >&2; exit 2; }

# report DIR: RESULTS-pooled.md's text for the runs-P.txt files in DIR,
# from the lines each run file holds (commit, times, load) and bench/pool.py.
report() {
  local dir=$1 f p first last files
  files=$(ls "$dir"/runs-*.txt 2>/dev/null | sort -V || true)
  [ -n "$files" ] || die "--report $dir: no runs-*.txt files"
  echo "# BenchmarkProduce against a real broker, pooled"
  echo
  echo "Written by \`make bench-pooled\` (bench/pooled.sh; bench/README.md, \"Against a real broker\"): ours with the first-ack rule on, off and traced, and kgo, in turns inside each run on one Kafka 4.1.0 broker on the same two cores; each run's ratios pair the clients, and bench/pool.py gives their median over the runs with a 95% bootstrap interval of the median, and the runs' min and max. CPU ratios are per record, the client process's own CPU, the second client's over the first's (higher is better for the first)."
  for f in $files; do
    p=${f##*/runs-}
    p=${p%.txt}
    case $p in *-base) p="${p%-base} partitions, the base commit's build" ;; *) p="$p partitions" ;; esac
    first=$(grep -m1 '^# round' "$f" | sed 's/^# //')
    last=$(grep '^# round' "$f" | tail -1 | sed 's/^# //')
    echo
    echo "## $p"
    echo
    grep -m1 '^# commit' "$f" | sed 's/^# /- /' || echo "- commit: not recorded"
    echo "- first round: $first"
    echo "- last round: $last"
    echo "- records a run a client: $(grep -m1 '^BenchmarkProduce' "$f" | awk '{print 2 * $2}')"
    echo
    echo '```'
    bench/pool.py "$f" || return 1
    echo '```'
  done
}

if [ "${1:-}" = "--report" ]; then
  [ $# -eq 2 ] && [ -d "$2" ] || die "--report DIR: want one directory of runs-P.txt files"
  text=$(report "$2") || die "--report $2: bench/pool.py could not pool the runs (above)"
  printf '%s\n' "$text"
  exit
fi
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
builds=(producer.test)
if [ -n "${POOLED_BASE:-}" ]; then
  base=$(git rev-parse --short "$POOLED_BASE^{commit}") || die "POOLED_BASE $POOLED_BASE: not a commit"
  git worktree add --detach "$out/base" "$base" >/dev/null 2>&1 || die "POOLED_BASE $base: git worktree add failed"
  (cd "$out/base" && go test -c -o "$out/producer-base.test" ./producer) || die "building the benchmarks of $base failed"
  git worktree remove --force "$out/base"
  builds+=(producer-base.test)
fi
start_kafka "$kcheck" 4.1.0 "$out/kafka" "$out/kafka.log" \
  --heap 1g --set broker.session.timeout.ms=60000 --set file.delete.delay.ms=0
status=0
for round in $(seq 1 $((runs / 10))); do
  for p in "${parts[@]}"; do
    order=("${builds[@]}")
    [ $((round % 2)) -eq 0 ] && [ ${#builds[@]} -eq 2 ] && order=("${builds[1]}" "${builds[0]}")
    for b in "${order[@]}"; do
      runs_file="$out/runs-$p.txt" commit="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- producer tracer || echo ' (with uncommitted changes)')"
      [ "$b" = producer.test ] || runs_file="$out/runs-$p-base.txt" commit=$base
      [ "$round" -gt 1 ] || echo "# commit $commit" >>"$runs_file"
      echo "# round $round, $p partitions, $(date -u '+%F %T') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$runs_file"
      echo "pooled: round $round of $((runs / 10)), $p partitions, $b" >&2
      (cd producer && KCHECK_BENCH_BROKERS="$addr" KCHECK_BENCH_PARTITIONS="$p" "$out/$b" \
        -test.run '^$' -test.bench 'BenchmarkProduce$' -test.benchtime $((40000 * (1 + p / 16)))x -test.count 10) >>"$runs_file" 2>&1 || status=1
    done
  done
done
report "$out" >"$out/RESULTS-pooled.md" || status=1
cat "$out/RESULTS-pooled.md"
[ "$status" -ne 0 ] || [ -n "${POOLED_BASE:-}" ] || cp "$out/RESULTS-pooled.md" bench/RESULTS-pooled.md
exit "$status"
