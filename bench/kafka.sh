# Sourced by bench scripts: start_kafka KCHECK VERSION DIR LOG [FLAG...] starts
# Apache Kafka VERSION with "KCHECK kafka" in the background (its files in DIR,
# its output in LOG, any FLAGs passed on, e.g. --set KEY=VALUE), and sets broker to its pid and addr to its bootstrap
# address once it prints one; it calls die (the script's) if Kafka exits or
# does not start within 120 s.
start_kafka() {
  local kcheck="$1" version="$2" dir="$3" log="$4"
  shift 4
  "$kcheck" kafka --version "$version" --dir "$dir" "$@" >"$log" 2>&1 &
  broker=$!
  for _ in $(seq 1 240); do
    grep -q '^bootstrap:' "$log" 2>/dev/null && break
    kill -0 "$broker" 2>/dev/null || { cat "$log" >&2; die "Kafka $version did not start"; }
    sleep 0.5 # waiting for another process to print its address
  done
  addr=$(sed -n 's/^bootstrap: //p' "$log" | head -1)
  [ -n "$addr" ] || die "Kafka $version did not start in 120 s"
}
