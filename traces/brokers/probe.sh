#!/usr/bin/env bash
# Probes every broker kcheck can run (kcheck broker probe) and tabulates
# them: traces/brokers/NAME/ holds each case's trace and probe.json, and
# traces/brokers/TABLE.md the table (make brokers-probe). Run from the
# repository's root after make build. BROKERS overrides the list, e.g.
# BROKERS="kafka-4.4.0 tansu-0.6.0".
set -euo pipefail
cd "$(dirname "$0")/../.."
kcheck=bin/kcheck
brokers=${BROKERS:-"kafka-4.4.0 kafka-4.1.0 kafka-3.9.1 kafka-3.5.2 kafka-2.8.2 kfake-4.1 kfake-4.4 tansu-0.6.0"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for b in $brokers; do
  kind=${b%%-*} version=${b#*-}
  out=traces/brokers/$b
  # Only the probe's own files are replaced: NAME/matrix/ (a scenarios run on
  # that broker) stays.
  mkdir -p "$out" && rm -f "$out"/*.jsonl "$out"/probe.json "$out"/probe.txt "$out"/start.txt
  log=$tmp/$b.log
  if [ "$kind" = kafka ]; then
    $kcheck kafka --version "$version" >"$log" 2>&1 &
  else
    $kcheck broker --kind "$kind" --version "$version" >"$log" 2>&1 &
  fi
  pid=$!
  # Wait for the broker's "bootstrap:" line (a tansu build takes minutes).
  addr=
  while kill -0 "$pid" 2>/dev/null; do
    addr=$(sed -n 's/^bootstrap: \([0-9.:]*\).*/\1/p' "$log" | head -1)
    [ -n "$addr" ] && break
    sleep 1
  done
  if [ -z "$addr" ]; then
    echo "probe.sh: $b did not start:" >&2
    tail -20 "$log" >&2
    continue
  fi
  echo "probe.sh: $b at $addr" >&2
  # How long the fetch or build (or finding it in the cache) and the start took.
  grep -E 'found in the cache|fetched with mvn|built with cargo|started in' "$log" >"$out/start.txt" || true
  $kcheck broker probe --bootstrap "$addr" --broker-kind "$kind" --broker-version "$version" --traces "$out" --json "$out/probe.json" >"$out/probe.txt" || echo "probe.sh: $b: some case could not run (see $out/probe.txt)" >&2
  kill -TERM "$pid"
  wait "$pid" || true
done
# The table holds every broker probed so far (BROKERS may name a few).
$kcheck broker table traces/brokers/*/probe.json >traces/brokers/TABLE.md
cat traces/brokers/TABLE.md
