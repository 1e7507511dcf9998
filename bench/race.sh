#!/usr/bin/env bash
# The seed's experiment (KAFKA-14359) against real Apache Kafka brokers: a new
# 64-partition topic produced to at once, 3,000 records of 10 KB, gzip, 1,024
# keys, by
#   - our producer with the Java client 4.3.1's rules (first-ack rule off) and
#     with the first-ack rule on, each tracing itself;
#   - clients kcheck did not write, unchanged, traced on the wire by kcheck
#     proxy: the stock Java client 4.3.1 and 4.4.0 (drivers/java, built by
#     drivers/java/build.sh against each kafka-clients), franz-go's kgo
#     (drivers/kgo), librdkafka (drivers/python, confluent-kafka) and IBM's
#     sarama (drivers/sarama; one request in flight, all idempotence allows),
#     aiokafka and kafka-python (drivers/python) and kafkajs (drivers/kafkajs);
# every trace checked by kcheck verify. Prints a Markdown table.
#
#   bench/race.sh [RUNS] [KAFKA_VERSION...]      (defaults: 5 runs, 4.1.0 4.3.1)
#
# RACE_FAULTS: faults (as kcheck proxy --fault takes them, space-separated)
# the proxy injects into every run; our producer then runs through the proxy
# too (kcheck run --brokers {bootstrap}), so every row meets the same
# schedule, e.g.
#   RACE_FAULTS="reject:err=NOT_LEADER_OR_FOLLOWER,attempt=1,until=next,delay=1500ms,count=-1"
# RACE_SCHEDULE=FILE does the same with a schedule file (kcheck proxy
# --schedule; traces/scenarios/*.schedule).
# RACE_PARTITIONS (default 64, the seed's) sets the new topic's partitions.
# The clients take turns run by run (each round in a rotated order), so a
# broker whose speed drifts meets every client alike.
# RACE_DATA=DIR keeps the broker's files (its log segments and indexes) in a
# new directory under DIR, e.g. /dev/shm for memory; by default they are in
# the system's temporary directory, on disk. On a loaded machine the disk
# makes the broker slow to answer (producer/README.md, "A slow broker").
# RACE_BROKER_SET="KEY=VALUE ..." passes broker settings on to kcheck kafka
# --set, e.g. "log.index.interval.bytes=2147483647" (no offset-index entry
# while the race runs; producer/README.md, "A slow broker").
# RACE_KEEP (default /tmp/kcheck-race-keep) keeps the trace, stderr and JSON of
# every run that was flagged or not clean.
# CLIENTS (default "ours-off ours-on java-4.3.1 java-4.4.0 kgo librdkafka
# sarama aiokafka kafka-python kafkajs") picks the rows; "java" is
# java-4.3.1.
# Needs bin/kcheck (make build), Java and Maven (the broker comes from Maven
# Central through kcheck kafka), Python 3 with venv for librdkafka. It starts
# and stops its own broker. Exit status: 0 when kcheck's verdict agrees with
# every run (it flags every run whose read-back shows an acknowledged record
# lost, a duplicate or a reorder, and no run in which nothing went wrong),
# and kcheck finds nothing wrong with our producer with the rule on in any
# run; 1 otherwise; 2 when something could not run. Records that failed to
# the application (a delivery timeout) and are absent count in "runs not
# clean" and "records lost" but are no safety violation.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
shift || true
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(4.1.0 4.3.1)
all="ours-off ours-on java-4.3.1 java-4.4.0 kgo librdkafka sarama aiokafka kafka-python kafkajs"
read -r -a clients <<<"${CLIENTS:-$all}"
for i in "${!clients[@]}"; do [ "${clients[$i]}" = java ] && clients[$i]=java-4.3.1; done # the old name
kcheck=bin/kcheck
out=$(mktemp -d)
# RACE_KEEP: where the traces of runs that were flagged or not clean are kept.
keepdir=${RACE_KEEP:-/tmp/kcheck-race-keep}
broker=""
datadirs=()
cleanup() {
  [ -n "$broker" ] && kill "$broker" 2>/dev/null && wait "$broker" 2>/dev/null
  rm -rf "$out" ${datadirs[@]+"${datadirs[@]}"}
}
trap cleanup EXIT
die() { echo "race: $*" >&2; exit 2; }
. bench/kafka.sh

# The drivers, built once; the Java driver's jar for each kafka-clients.
declare -A jar
for c in "${clients[@]}"; do
  case $c in
  java-4.3.1 | java-4.4.0) jar[$c]=$(drivers/java/build.sh "${c#java-}") || die "building the Java driver against kafka-clients ${c#java-} failed" ;;
  kgo) go build -o bin/kcheck-kgo-driver ./drivers/kgo || die "building the kgo driver failed" ;;
  sarama) go build -o bin/kcheck-sarama-driver ./drivers/sarama || die "building the sarama driver failed" ;;
  librdkafka | aiokafka | kafka-python) py=$(drivers/python/setup.sh) || die "setting up the Python drivers failed" ;;
  kafkajs) node=$(drivers/kafkajs/setup.sh) || die "setting up the kafkajs driver failed" ;;
  ours-off | ours-on) ;;
  *) die "unknown client $c ($all; java is java-4.3.1)" ;;
  esac
done
read -r -a faults <<<"${RACE_FAULTS:-}"
faultflags=()
for f in ${faults[@]+"${faults[@]}"}; do faultflags+=(--fault "$f"); done
if [ -n "${RACE_SCHEDULE:-}" ]; then
  [ -f "$RACE_SCHEDULE" ] || die "RACE_SCHEDULE $RACE_SCHEDULE: no such file"
  faultflags+=(--schedule "$RACE_SCHEDULE")
fi
workload=(--partitions "${RACE_PARTITIONS:-64}" --records 3000 --value-bytes 10240 --keys 1024 --compression gzip)
driverflags=("${workload[@]}" --delivery-timeout-ms 5000 --request-timeout-ms 2000)

# json FILE KEY...: numbers from a one-line JSON object, space-separated.
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(*[int(d.get(k,0)) for k in sys.argv[2:]])' "$@"; }

printf '| broker | client | runs | runs that met NOT_LEADER_OR_FOLLOWER | runs not clean | records lost | lost though acknowledged to the application | duplicated | reordered | OUT_OF_ORDER_SEQUENCE_NUMBER answers | stalls | kcheck verify flagged | missed by verify | clean runs flagged | run time |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
status=0
for v in "${versions[@]}"; do
  kdir="$out/kafka-$v"
  if [ -n "${RACE_DATA:-}" ]; then
    kdir=$(mktemp -d -p "$RACE_DATA" "kcheck-race-kafka-$v.XXXXXX") || die "RACE_DATA $RACE_DATA: cannot make a directory there"
    datadirs+=("$kdir")
  fi
  setflags=()
  for kv in ${RACE_BROKER_SET:-}; do setflags+=(--set "$kv"); done
  start_kafka "$kcheck" "$v" "$kdir" "$out/kafka-$v.log" ${setflags[@]+"${setflags[@]}"}
  # The clients take turns, run by run, each round in an order rotated by
  # one: a broker (or a machine) whose speed drifts over minutes then falls
  # on every client alike, where client after client in blocks would give
  # one client the slow minutes. acc holds each client's sums.
  declare -A acc=()
  for c in "${clients[@]}"; do acc[$c]="0 0 0 0 0 0 0 0 0 0 0 0"; done
  for i in $(seq 1 "$runs"); do
    n=${#clients[@]}
    order=()
    for k in $(seq 0 $((n - 1))); do order+=("${clients[$(((k + i - 1) % n))]}"); done
    for c in "${order[@]}"; do
      read -r bad lost lostacked dup reord ooo stalls flagged missed falsealarm secs met <<<"${acc[$c]}"
      topic="race-$c-$i"
      trace="$out/$v-$c-$i.jsonl"
      rm -f "$out/run.json" "$out/run.txt" "$out/run.err"
      start=$(date +%s.%N)
      set +e
      case $c in
      ours-off | ours-on)
        mode=${c#ours-}
        ours=(run --broker-version "$v" --topic "$topic" "${workload[@]}" --linger 0
          --first-ack "$mode" --hold-while-retrying "$mode" --delivery-timeout 5s --request-timeout 2s)
        if [ ${#faultflags[@]} -eq 0 ]; then
          "$kcheck" "${ours[@]}" --brokers "$addr" --trace "$trace" >"$out/run.txt" 2>"$out/run.err"
        else # through the proxy, as the other clients, to meet the same faults; the proxy's trace is judged
          "$kcheck" proxy --upstream "$addr" --broker-version "$v" --topic "$topic" "${faultflags[@]}" --trace "$trace" -- \
            "$kcheck" "${ours[@]}" --brokers '{bootstrap}' --trace "$out/own.jsonl" >"$out/run.txt" 2>"$out/run.err"
        fi
        ;;
      java-*) "$kcheck" proxy --upstream "$addr" --broker-version "$v" --topic "$topic" ${faultflags[@]+"${faultflags[@]}"} --trace "$trace" -- \
        java -jar "${jar[$c]}" --bootstrap '{bootstrap}' --topic "$topic" "${driverflags[@]}" >"$out/run.json" 2>"$out/run.err" ;;
      kgo) "$kcheck" proxy --upstream "$addr" --broker-version "$v" --topic "$topic" ${faultflags[@]+"${faultflags[@]}"} --trace "$trace" -- \
        bin/kcheck-kgo-driver --bootstrap '{bootstrap}' --topic "$topic" "${driverflags[@]}" >"$out/run.json" 2>"$out/run.err" ;;
      sarama) "$kcheck" proxy --upstream "$addr" --broker-version "$v" --topic "$topic" ${faultflags[@]+"${faultflags[@]}"} --trace "$trace" -- \
        bin/kcheck-sarama-driver --bootstrap '{bootstrap}' --topic "$topic" "${driverflags[@]}" >"$out/run.json" 2>"$out/run.err" ;;
      aiokafka) "$kcheck" proxy --upstream "$addr" --broker-version "$v" --topic "$topic" ${faultflags[@]+"${faultflags[@]}"} --trace "$trace" -- \
        "$py" drivers/python/aiokafka_driver.py --bootstrap '{bootstrap}' --topic "$topic" "${driverflags[@]}" >"$out/run.json" 2>"$out/run.err" ;;
      kafka-python) "$kcheck" proxy --upstream "$addr" --broker-version "$v" --topic "$topic" ${faultflags[@]+"${faultflags[@]}"} --trace "$trace" -- \
        "$py" drivers/python/kafka_python_driver.py --bootstrap '{bootstrap}' --topic "$topic" "${driverflags[@]}" >"$out/run.json" 2>"$out/run.err" ;;
      kafkajs) "$kcheck" proxy --upstream "$addr" --broker-version "$v" --topic "$topic" ${faultflags[@]+"${faultflags[@]}"} --trace "$trace" -- \
        "$node" drivers/kafkajs/driver.js --bootstrap '{bootstrap}' --topic "$topic" "${driverflags[@]}" >"$out/run.json" 2>"$out/run.err" ;;
      librdkafka) "$kcheck" proxy --upstream "$addr" --broker-version "$v" --topic "$topic" ${faultflags[@]+"${faultflags[@]}"} --trace "$trace" -- \
        "$py" drivers/python/driver.py --bootstrap '{bootstrap}' --topic "$topic" "${driverflags[@]}" >"$out/run.json" 2>"$out/run.err" ;;
      esac
      rc=$?
      set -e
      secs=$(echo "$secs + $(date +%s.%N) - $start" | bc)
      [ $rc -ge 2 ] && { cat "$out/run.err" >&2; die "$c on Kafka $v, run $i: exit $rc"; }
      set +e
      "$kcheck" verify --format json "$trace" >"$out/verify.json" 2>"$out/verify.err"
      vrc=$?
      set -e
      [ $vrc -ge 2 ] && { cat "$out/verify.err" >&2; die "verify $trace: exit $vrc"; }
      # The run's own account: from kcheck run's JSON-less summary, or the driver's JSON.
      case $c in
      ours-*)
        line=$(grep 'lost ' "$out/run.txt")
        l=$(echo "$line" | sed -E 's/.*lost ([0-9]+).*/\1/') d=$(echo "$line" | sed -E 's/.*duplicated ([0-9]+).*/\1/')
        r=$(echo "$line" | sed -E 's/.*out of order ([0-9]+).*/\1/') la=$(echo "$line" | sed -E 's/.*\(([0-9]+) of them acknowledged\).*/\1/')
        ;;
      *)
        python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out/run.json" 2>/dev/null ||
          { cat "$out/run.err" >&2; die "$c on Kafka $v, run $i: the driver printed no JSON summary on stdout (its stderr is above; run it alone with the same flags to see why)"; }
        read -r l la d r < <(json "$out/run.json" lost lost_acked duplicated out_of_order)
        ;;
      esac
      case $c in
      java-*) # the row's name says the client version the driver ran with
        got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("version"))' "$out/run.json")
        [ "$got" = "${c#java-}" ] || die "$c on Kafka $v, run $i: the driver ran kafka-clients $got" ;;
      esac
      # From kcheck verify: OUT_OF_ORDER_SEQUENCE_NUMBER answers, stalls, and
      # how many records the trace says the application was told about
      # (Told: the driver's report, merged by the proxy; our producer's
      # callbacks) and, of those told delivered, how many are not in the log.
      read -r o st told lt < <(python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["order"]; print(o["OutOfOrderAnswers"], o["Stalls"], o["ToldDelivered"]+o["ToldFailed"]+o["ToldNone"], o["LostTold"])' "$out/verify.json")
      [ "$told" -gt 0 ] || die "$c on Kafka $v, run $i: the trace does not say what the client told its application (no Told events: the driver wrote no report to \$KCHECK_OUTCOMES)"
      lost=$((lost + l)) lostacked=$((lostacked + la)) dup=$((dup + d)) reord=$((reord + r)) ooo=$((ooo + o)) stalls=$((stalls + st))
      [ $rc -ne 0 ] && bad=$((bad + 1))
      # The seed's trigger: an answer NOT_LEADER_OR_FOLLOWER on the wire.
      grep -q '"ev":"Receive".*"err":"NOT_LEADER_OR_FOLLOWER"' "$trace" && met=$((met + 1))
      [ $vrc -ne 0 ] && flagged=$((flagged + 1))
      # kcheck must flag every run whose read-back shows a record acknowledged
      # and lost, duplicated or reordered, and no run in which nothing went
      # wrong (exit 0: all sent, acknowledged and read back once, in order).
      if [ $((la + lt + d + r)) -gt 0 ] && [ $vrc -eq 0 ]; then missed=$((missed + 1)); fi
      if [ $rc -eq 0 ] && [ $vrc -ne 0 ]; then falsealarm=$((falsealarm + 1)); fi
      # Every trace kcheck flagged, and every run not clean, is kept.
      if [ $vrc -ne 0 ] || [ $rc -ne 0 ]; then
        mkdir -p "$keepdir"
        cp "$trace" "$keepdir/$v-$c-$i.jsonl"
        cp "$out/run.err" "$keepdir/$v-$c-$i.err" 2>/dev/null || true
        for f in run.json run.txt; do [ -f "$out/$f" ] && cp "$out/$f" "$keepdir/$v-$c-$i.${f#run.}"; done
      fi
      if [ "$c" = ours-on ] && [ $rc -ne 0 ]; then
        keep="/tmp/kcheck-race-$v-$i.jsonl"
        cp "$trace" "$keep"
        if [ $vrc -ne 0 ] || [ $((la + d + r)) -gt 0 ]; then
          echo "race: our producer with the rule on lost, duplicated or reordered records on Kafka $v, run $i (trace kept as $keep)" >&2
          status=1
        else
          # Records that failed (a delivery timeout on a loaded machine) and
          # are absent: no safety violation, but not clean either.
          echo "race: our producer with the rule on failed records on Kafka $v, run $i, none acknowledged and lost (trace kept as $keep)" >&2
        fi
      fi
      acc[$c]="$bad $lost $lostacked $dup $reord $ooo $stalls $flagged $missed $falsealarm $secs $met"
    done
  done
  for c in "${clients[@]}"; do
    read -r bad lost lostacked dup reord ooo stalls flagged missed falsealarm secs met <<<"${acc[$c]}"
    [ $((missed + falsealarm)) -gt 0 ] && status=1
    case $c in
    ours-off) name="ours, Java 4.3.1's rules (first-ack off)" ;;
    ours-on) name="ours, first-ack and hold on" ;;
    java-*) name="stock Java client ${c#java-} (proxy)" ;;
    kgo) name="kgo $(go list -m -f '{{.Version}}' github.com/twmb/franz-go) (proxy)" ;;
    sarama) name="sarama $(go list -m -f '{{.Version}}' github.com/IBM/sarama) (proxy, 1 request in flight)" ;;
    aiokafka) name="aiokafka $("$py" -c 'import aiokafka; print(aiokafka.__version__)') (proxy, 1 request in flight)" ;;
    kafka-python) name="kafka-python $("$py" -c 'import kafka; print(kafka.__version__)') (proxy, 1 batch per partition)" ;;
    kafkajs) name="kafkajs $(sed -n 's/.*"kafkajs": "\(.*\)".*/\1/p' drivers/kafkajs/package.json | head -1) (proxy, 1 request in flight)" ;;
    librdkafka) name="librdkafka $("$py" -c 'import confluent_kafka; print(confluent_kafka.libversion()[0])') (proxy)" ;;
    esac
    printf '| Kafka %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.1f s each |\n' "$v" "$name" "$runs" "$met" "$bad" "$lost" "$lostacked" "$dup" "$reord" "$ooo" "$stalls" "$flagged" "$missed" "$falsealarm" "$(echo "$secs / $runs" | bc -l)"
  done
  kill "$broker"; wait "$broker" 2>/dev/null || true; broker=""
done
exit $status
