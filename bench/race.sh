#!/usr/bin/env bash
# The seed's experiment (KAFKA-14359) against a real Apache Kafka broker:
# a new 64-partition topic produced to at once, 3,000 records of 10 KB, gzip,
# 1,024 keys, with our producer's first-ack rule off (the Java client 4.3.1's
# rules) and on; every trace checked by kcheck verify; then the stock Java
# client 4.3.1 itself (drivers/java, kafka-clients from Maven Central) on the
# same workload, which kcheck cannot trace without its proxy. Prints a
# Markdown table.
#
#   bench/race.sh [RUNS] [KAFKA_VERSION...]      (defaults: 5 runs, 4.1.0 4.3.1)
#
# Needs bin/kcheck (make build), Java and Maven (the broker comes from Maven
# Central through kcheck kafka). It starts and stops its own broker.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
shift || true
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(4.1.0 4.3.1)
kcheck=bin/kcheck
javajar=drivers/java/target/kcheck-java-driver.jar
[ -f "$javajar" ] || mvn -B -q -f drivers/java/pom.xml package >&2 || { echo "race: building $javajar failed" >&2; exit 2; }
out=$(mktemp -d)
broker=""
cleanup() { [ -n "$broker" ] && kill "$broker" 2>/dev/null && wait "$broker" 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT
field() { sed -E "s/.*\"$1\":([0-9]+).*/\1/" "$out/java.json"; } # a number from the Java driver's JSON

printf '| broker | producer rules | runs | runs not clean | records lost | duplicated | reordered | OUT_OF_ORDER_SEQUENCE_NUMBER answers | kcheck verify flagged | run time |\n'
printf '|---|---|---|---|---|---|---|---|---|---|\n'
for v in "${versions[@]}"; do
  "$kcheck" kafka --version "$v" --dir "$out/kafka-$v" >"$out/kafka-$v.log" 2>&1 &
  broker=$!
  for _ in $(seq 1 120); do
    grep -q '^bootstrap:' "$out/kafka-$v.log" 2>/dev/null && break
    kill -0 "$broker" 2>/dev/null || { cat "$out/kafka-$v.log" >&2; exit 2; }
    sleep 0.5 # waiting for another process to print its address
  done
  addr=$(sed -n 's/^bootstrap: //p' "$out/kafka-$v.log" | head -1)
  [ -n "$addr" ] || { echo "race: Kafka $v did not start" >&2; exit 2; }
  for mode in off on; do
    bad=0 lost=0 dup=0 reord=0 ooo=0 flagged=0 secs=0
    for i in $(seq 1 "$runs"); do
      trace="$out/$v-$mode-$i.jsonl"
      start=$(date +%s.%N)
      set +e
      "$kcheck" run --brokers "$addr" --broker-version "$v" --topic "race-$mode-$i" --partitions 64 \
        --records 3000 --value-bytes 10240 --keys 1024 --compression gzip --linger 0 \
        --first-ack "$mode" --hold-while-retrying "$mode" --delivery-timeout 5s --request-timeout 2s \
        --trace "$trace" >"$out/run.txt" 2>&1
      rc=$?
      "$kcheck" verify "$trace" >"$out/verify.txt" 2>&1
      vrc=$?
      set -e
      end=$(date +%s.%N)
      secs=$(echo "$secs + $end - $start" | bc)
      [ $rc -eq 2 ] && { cat "$out/run.txt" >&2; exit 2; }
      [ $rc -ne 0 ] && bad=$((bad + 1))
      [ $vrc -ne 0 ] && flagged=$((flagged + 1))
      line=$(grep 'lost ' "$out/run.txt")
      lost=$((lost + $(echo "$line" | sed -E 's/.*lost ([0-9]+).*/\1/')))
      dup=$((dup + $(echo "$line" | sed -E 's/.*duplicated ([0-9]+).*/\1/')))
      reord=$((reord + $(echo "$line" | sed -E 's/.*out of order ([0-9]+).*/\1/')))
      ooo=$((ooo + $(echo "$line" | sed -E 's/.*answers\) ([0-9]+).*/\1/')))
    done
    rules="first-ack and hold $mode"
    [ "$mode" = off ] && rules="Java 4.3.1's (first-ack off)"
    printf '| Kafka %s | %s | %d | %d | %d | %d | %d | %d | %d | %.1f s each |\n' "$v" "$rules" "$runs" "$bad" "$lost" "$dup" "$reord" "$ooo" "$flagged" "$(echo "$secs / $runs" | bc -l)"
  done
  # The stock Java client on the same workload: one JSON line a run.
  bad=0 lost=0 dup=0 reord=0 secs=0
  for i in $(seq 1 "$runs"); do
    start=$(date +%s.%N)
    set +e
    java -jar "$javajar" --bootstrap "$addr" --topic "race-java-$i" --partitions 64 --records 3000 \
      --value-bytes 10240 --keys 1024 --compression gzip --delivery-timeout-ms 5000 --request-timeout-ms 2000 \
      >"$out/java.json" 2>"$out/java.err"
    rc=$?
    set -e
    end=$(date +%s.%N)
    secs=$(echo "$secs + $end - $start" | bc)
    if [ $rc -eq 2 ] || [ ! -s "$out/java.json" ]; then cat "$out/java.err" >&2; exit 2; fi
    [ $rc -ne 0 ] && bad=$((bad + 1))
    lost=$((lost + $(field lost)))
    dup=$((dup + $(field duplicated)))
    reord=$((reord + $(field out_of_order)))
  done
  printf '| Kafka %s | %s | %d | %d | %d | %d | %d | %s | %s | %.1f s each |\n' "$v" "stock Java client 4.3.1" "$runs" "$bad" "$lost" "$dup" "$reord" "n/a (needs kcheck proxy)" "n/a (needs kcheck proxy)" "$(echo "$secs / $runs" | bc -l)"
  kill "$broker"; wait "$broker" 2>/dev/null || true; broker=""
done
