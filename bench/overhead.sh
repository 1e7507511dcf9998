#!/usr/bin/env bash
# Each driver's own overhead: records/s of the seed's workload (bench/race.sh's:
# a new 64-partition topic, 3,000 records of 10 KB, gzip, 1,024 keys, delivery
# timeout 5 s, request timeout 2 s) through kcheck proxy against the same
# client straight to the broker, on one Apache Kafka 4.1.0 broker.
#
#   bench/overhead.sh          (make bench-overhead; not part of make test)
#
# REPEATS (default 3) pairs per client, each pair a run straight to the broker
# and one through "kcheck proxy --upstream ADDR --topic T --trace FILE -- ...",
# interleaved: odd pairs direct first, even pairs proxy first, so drift and
# warm-up fall on both sides. CLIENTS (default "java-4.3.1 kgo sarama
# librdkafka aiokafka kafka-python kafkajs ours") picks the rows; "ours" is
# "kcheck run --brokers" (first-ack and hold on, linger 0, as race.sh),
# tracing itself (--trace) either way: through the proxy it must (its report
# of what its callbacks were told needs its records' kcheck ids), and
# without --trace it cannot match its read-back. Every run has a
# topic of its own, deleted after it (a broker holding many written topics
# slows down; file.delete.delay.ms=0 removes the files at once).
#
# Records/s is records sent / the run's own time: the drivers' JSON "ms"
# (their main from start to exit: creating the topic, producing, waiting for
# every callback, reading the topic back; no driver reports its produce phase
# alone) and kcheck run's "time" (the same span). The same span in both
# modes, so through the proxy it includes the driver's own read-back through
# the proxy, not the proxy's read-back after the driver exits, which the
# "wall" columns (the whole command) include. Only runs that exit 0 or 1
# count; a pair with a run that exited 2 is dropped and counted in "dropped".
#
# KEEP=DIR keeps each run's output there (CLIENT-MODE-PAIR.out, .err; and
# the trace, .jsonl, of a run through the proxy that exited 1).
#
# Prints a Markdown table on stdout (progress on stderr). Exit status: 0 when
# every pair ran, 1 when a pair was dropped, 2 when something could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${REPEATS:-3}
version=4.1.0
all="java-4.3.1 kgo sarama librdkafka aiokafka kafka-python kafkajs ours"
read -r -a clients <<<"${CLIENTS:-$all}"
kcheck=bin/kcheck
out=$(mktemp -d "${TMPDIR:-/tmp}/kcheck-overhead.XXXXXX")
broker=""
cleanup() { [ -n "$broker" ] && kill "$broker" 2>/dev/null && wait "$broker" 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT
die() { echo "overhead: $*" >&2; exit 2; }
. bench/kafka.sh

[ -x "$kcheck" ] || die "no $kcheck (make build)"
[ -z "${KEEP:-}" ] || mkdir -p "$KEEP" || die "KEEP=$KEEP: cannot make it"
go build -o bin/kcheck-deletetopics ./bench/cmd/deletetopics || die "building bench/cmd/deletetopics failed"
jar="" py="" node=""
for c in "${clients[@]}"; do
  case $c in
  java-4.3.1) jar=$(drivers/java/build.sh 4.3.1) || die "building the Java driver failed" ;;
  kgo) go build -o bin/kcheck-kgo-driver ./drivers/kgo || die "building the kgo driver failed" ;;
  sarama) go build -o bin/kcheck-sarama-driver ./drivers/sarama || die "building the sarama driver failed" ;;
  librdkafka | aiokafka | kafka-python) py=$(drivers/python/setup.sh) || die "setting up the Python drivers failed" ;;
  kafkajs) node=$(drivers/kafkajs/setup.sh) || die "setting up the kafkajs driver failed" ;;
  ours) ;;
  *) die "unknown client $c ($all)" ;;
  esac
done
workload=(--partitions 64 --records 3000 --value-bytes 10240 --keys 1024 --compression gzip)
driverflags=("${workload[@]}" --delivery-timeout-ms 5000 --request-timeout-ms 2000)
records=3000

# client_argv CLIENT BOOTSTRAP TOPIC: sets argv to the client's command line.
client_argv() {
  local c=$1 b=$2 t=$3
  case $c in
  java-4.3.1) argv=(java -jar "$jar") ;;
  kgo) argv=(bin/kcheck-kgo-driver) ;;
  sarama) argv=(bin/kcheck-sarama-driver) ;;
  librdkafka) argv=("$py" drivers/python/driver.py) ;;
  aiokafka) argv=("$py" drivers/python/aiokafka_driver.py) ;;
  kafka-python) argv=("$py" drivers/python/kafka_python_driver.py) ;;
  kafkajs) argv=("$node" drivers/kafkajs/driver.js) ;;
  ours)
    argv=("$kcheck" run --brokers "$b" --broker-version "$version" --topic "$t" "${workload[@]}" --linger 0
      --first-ack on --hold-while-retrying on --delivery-timeout 5s --request-timeout 2s --trace "$out/ours.jsonl")
    return
    ;;
  esac
  argv+=(--bootstrap "$b" --topic "$t" "${driverflags[@]}")
}

# run_one CLIENT MODE PAIR: one run; appends "client mode pair rc ms wall" to
# $out/runs.tsv (ms: the run's own time, -1 when it printed none).
run_one() {
  local c=$1 mode=$2 i=$3 topic="ovh-$1-$3-$2" rc start wall ms
  start=$(date +%s.%N)
  set +e
  if [ "$mode" = direct ]; then
    client_argv "$c" "$addr" "$topic"
    "${argv[@]}" >"$out/run.out" 2>"$out/run.err"
  else
    client_argv "$c" '{bootstrap}' "$topic"
    "$kcheck" proxy --upstream "$addr" --broker-version "$version" --topic "$topic" --trace "$out/trace.jsonl" -- \
      "${argv[@]}" >"$out/run.out" 2>"$out/run.err"
  fi
  rc=$?
  set -e
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  ms=$(python3 - "$c" "$out/run.out" <<'EOF'
import json, re, sys
text = open(sys.argv[2]).read()
if sys.argv[1] == "ours":  # kcheck run's summary: "  time 3.2s" (a Go duration)
    m = re.search(r"^\s*time ([0-9.]+)(ms|s|m)\s*$", text, re.M)
    print(int(float(m.group(1)) * {"ms": 1, "s": 1000, "m": 60000}[m.group(2)]) if m else -1)
else:
    try:
        print(int(json.loads(text.strip().splitlines()[-1])["ms"]))
    except Exception:
        print(-1)
EOF
  )
  if [ "$rc" -ge 2 ] || [ "$ms" -lt 0 ]; then
    echo "overhead: $c $mode pair $i: exit $rc, time ${ms} ms; its stderr:" >&2
    tail -5 "$out/run.err" >&2
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$mode" "$i" "$rc" "$ms" "$wall" >>"$out/runs.tsv"
  echo "overhead: $c $mode pair $i: exit $rc, $ms ms, wall $wall s" >&2
  if [ -n "${KEEP:-}" ]; then
    cp "$out/run.out" "$KEEP/$c-$mode-$i.out"
    cp "$out/run.err" "$KEEP/$c-$mode-$i.err"
    if [ "$mode" = proxy ] && [ "$rc" -eq 1 ] && [ -f "$out/trace.jsonl" ]; then cp "$out/trace.jsonl" "$KEEP/$c-$mode-$i.jsonl"; fi
  fi
  rm -f "$out/trace.jsonl" "$out/ours.jsonl"
  bin/kcheck-deletetopics --brokers "$addr" "$topic" || die "deleting $topic failed"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(loadavg)
date_start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
start_kafka "$kcheck" "$version" "$out/kafka" "$out/kafka.log" \
  --set broker.session.timeout.ms=60000 --set file.delete.delay.ms=0
: >"$out/runs.tsv"
: >"$out/load.tsv"
for c in "${clients[@]}"; do
  l0=$(loadavg)
  for i in $(seq 1 "$repeats"); do
    if [ $((i % 2)) -eq 1 ]; then order="direct proxy"; else order="proxy direct"; fi
    for mode in $order; do run_one "$c" "$mode" "$i"; done
  done
  printf '%s\t%s\t%s\n' "$c" "$l0" "$(loadavg)" >>"$out/load.tsv"
done
kill "$broker"
wait "$broker" 2>/dev/null || true
broker=""

# The rows' names, as race.sh has them.
declare -A name
for c in "${clients[@]}"; do
  case $c in
  java-4.3.1) name[$c]="stock Java client 4.3.1" ;;
  kgo) name[$c]="kgo $(go list -m -f '{{.Version}}' github.com/twmb/franz-go)" ;;
  sarama) name[$c]="sarama $(go list -m -f '{{.Version}}' github.com/IBM/sarama)" ;;
  librdkafka) name[$c]="librdkafka $("$py" -c 'import confluent_kafka; print(confluent_kafka.libversion()[0])')" ;;
  aiokafka) name[$c]="aiokafka $("$py" -c 'import aiokafka; print(aiokafka.__version__)')" ;;
  kafka-python) name[$c]="kafka-python $("$py" -c 'import kafka; print(kafka.__version__)')" ;;
  kafkajs) name[$c]="kafkajs $(sed -n 's/.*"kafkajs": "\(.*\)".*/\1/p' drivers/kafkajs/package.json | head -1)" ;;
  ours) name[$c]="ours (kcheck run, first-ack on)" ;;
  esac
  printf '%s\t%s\n' "$c" "${name[$c]}" >>"$out/names.tsv"
done

echo "Kafka $version, one node; $repeats pairs per client; $records records each; $(nproc) CPUs; started $date_start, load average $load_start at start, $(loadavg) at end."
echo
python3 - "$out" "$records" <<'EOF'
import statistics, sys
d, records = sys.argv[1], int(sys.argv[2])
names = dict(l.rstrip("\n").split("\t") for l in open(d + "/names.tsv"))
load = {f[0]: (f[1], f[2]) for f in (l.rstrip("\n").split("\t") for l in open(d + "/load.tsv"))}
runs = {}
for l in open(d + "/runs.tsv"):
    c, mode, i, rc, ms, wall = l.split("\t")
    runs.setdefault(c, {}).setdefault(int(i), {})[mode] = (int(rc), int(ms), float(wall))
def span(xs, f):
    if not xs:
        return "–"
    return f"{f(statistics.median(xs))} ({f(min(xs))}–{f(max(xs))})"
rate = lambda x: f"{x:,.0f}"
print("| client | pairs used | dropped | runs that exited 1, direct / proxy | records/s direct | records/s through the proxy | proxy/direct (paired) | wall s direct | wall s proxy | load average (1 min) start → end |")
print("|---|---|---|---|---|---|---|---|---|---|")
dropped_any = False
for c in names:
    pairs = runs.get(c, {})
    direct, proxy, ratios, wd, wp, dropped = [], [], [], [], [], 0
    ones = {m: sum(1 for p in pairs.values() if m in p and p[m][0] == 1) for m in ("direct", "proxy")}
    for i, p in sorted(pairs.items()):
        ok = all(m in p and p[m][0] in (0, 1) and p[m][1] > 0 for m in ("direct", "proxy"))
        if not ok:
            dropped += 1
            continue
        rd, rp = records / (p["direct"][1] / 1000), records / (p["proxy"][1] / 1000)
        direct.append(rd); proxy.append(rp); ratios.append(rp / rd)
        wd.append(p["direct"][2]); wp.append(p["proxy"][2])
    dropped_any |= dropped > 0
    l0, l1 = load.get(c, ("?", "?"))
    print(f"| {names[c]} | {len(ratios)} | {dropped} | {ones['direct']} / {ones['proxy']} | {span(direct, rate)} | {span(proxy, rate)} | "
          f"{span(ratios, lambda x: f'{x:.2f}')} | {span(wd, lambda x: f'{x:.1f}')} | {span(wp, lambda x: f'{x:.1f}')} | "
          f"{l0.split()[0]} → {l1.split()[0]} |")
print()
print("Medians, (min–max) over the pairs. Records/s: records sent / the run's own time (the drivers' JSON \"ms\", "
      "kcheck run's \"time\": creating the topic, producing, every callback, reading the topic back; no driver "
      "reports its produce phase alone), so the same span in both modes. The paired ratio is each pair's proxy "
      "records/s / direct records/s (below 1: slower through the proxy). Wall: the whole command, which through "
      "the proxy adds the proxy's start and its own read-back of the topic after the client exits. Runs that "
      "exited 2 (or printed no time) drop their pair. A run that exited 1 had records fail or lost (on this "
      "workload mostly records that met the new topic's NOT_LEADER_OR_FOLLOWER answers until their delivery "
      "timeout, 5 s): it counts, but takes some 5 s longer, so a pair with one such run and one clean run gives a "
      "ratio far from 1 either way; the spread shows it.")
sys.exit(1 if dropped_any else 0)
EOF
