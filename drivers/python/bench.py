"""The throughput mode of the librdkafka driver (driver.py --bench;
bench/run.sh): no topic creation and no read-back; a warm-up, then records as
fast as librdkafka takes them (or paced at --rate), records/s and
produce-to-ack latency percentiles in one line of JSON. The same flags, loop
and JSON as bench/loadgen (kcheck's producer and kgo) and the Java driver's
Bench.java: records carry one of --keys keys drawn by java.util.Random(1)
after the value's letters, murmur2-partitioned; no headers.

Latency is librdkafka's own per-message latency (Message.latency(): from
produce() to the delivery report, measured in librdkafka's threads), so the
time until Python's poll() serves the callback does not count; time blocked
on a full queue (BufferError, retried) does. Percentiles are nearest-rank;
cpu_seconds is the process's CPU time (librdkafka's threads included) over
the timed part.
Exit 0 every record acknowledged, 1 some failed, 2 bad usage or setup errors.
"""

import json
import math
import re
import threading
import time

PREFIX = "python driver: "
USAGE = ("usage: --bench --bootstrap HOST:PORT --topic T [--records N] [--value-bytes N] [--keys N] "
         "[--compression C] [--linger-ms N] [--batch-bytes N] [--max-in-flight N] [--max-buffered N] "
         "[--rate N (records/s, 0: as fast as possible)] [--warmup N] [--warmup-topic T] [--warmup-keys random|cycle] "
         "[--window-ms N] [--delivery-timeout-ms N] [--request-timeout-ms N]")
MAX_WINDOWS = 3600  # the most windows --window-ms counts (as bench/loadgen)
DEFAULTS = {
    "--bootstrap": "", "--topic": "", "--records": "100000", "--value-bytes": "1024", "--keys": "1024",
    "--compression": "none", "--linger-ms": "5", "--batch-bytes": "16384", "--max-in-flight": "5",
    "--max-buffered": "10000", "--rate": "0", "--warmup": "1000", "--warmup-topic": "",
    "--warmup-keys": "random", "--window-ms": "0",
    "--delivery-timeout-ms": "120000", "--request-timeout-ms": "30000",
}
MINIMUMS = {
    "--records": 1, "--value-bytes": 0, "--keys": 0, "--linger-ms": 0, "--batch-bytes": 1,
    "--max-in-flight": 1, "--max-buffered": 1, "--rate": 0, "--warmup": 0, "--window-ms": 0,
    "--delivery-timeout-ms": 1, "--request-timeout-ms": 1,
}
GRACE_S = 30


def parse(argv, setup_error):
    a = dict(DEFAULTS)
    i = 0
    while i < len(argv):
        k = argv[i]
        if not k.startswith("--") or i + 1 == len(argv):
            raise setup_error('%sbad arguments near "%s"\n%s' % (PREFIX, k, USAGE))
        if k not in a:
            raise setup_error("%sunknown flag %s\n%s" % (PREFIX, k, USAGE))
        a[k] = argv[i + 1]
        i += 2
    if not a["--bootstrap"] or not a["--topic"]:
        raise setup_error("%s--bootstrap and --topic are required\n%s" % (PREFIX, USAGE))
    cfg = {"bootstrap": a["--bootstrap"], "topic": a["--topic"], "compression": a["--compression"],
           "warmup_topic": a["--warmup-topic"] or a["--topic"], "warmup_keys": a["--warmup-keys"]}
    if cfg["warmup_keys"] not in ("random", "cycle"):
        raise setup_error("%s--warmup-keys wants random or cycle, not %s\n%s" % (PREFIX, cfg["warmup_keys"], USAGE))
    for k, lo in MINIMUMS.items():
        v = a[k]
        if not re.fullmatch(r"[+-]?[0-9]+", v) or int(v) > 2**31 - 1:
            raise setup_error("%s%s wants a number, not %s" % (PREFIX, k, v))
        if int(v) < lo:
            raise setup_error("%s%s wants a number of at least %d, not %s" % (PREFIX, k, lo, v))
        cfg[k[2:].replace("-", "_")] = int(v)
    if cfg["max_in_flight"] > 5:
        raise setup_error("%s--max-in-flight %d: idempotence allows at most 5" % (PREFIX, cfg["max_in_flight"]))
    if cfg["compression"] not in ("none", "gzip", "snappy", "lz4", "zstd"):
        raise setup_error("%s--compression wants none, gzip, snappy, lz4 or zstd, not %s" % (PREFIX, cfg["compression"]))
    return cfg


def pct(sorted_lat, q):
    """The nearest-rank q-quantile of sorted_lat, 0 for none."""
    if not sorted_lat:
        return 0.0
    i = int(math.ceil(q * len(sorted_lat))) - 1
    return sorted_lat[min(max(i, 0), len(sorted_lat) - 1)]


class Phase:
    """Outcomes of the records of one phase (warm-up or timed)."""

    def __init__(self, records, timed, error_name):
        self.lat = [] if timed else None  # seconds
        self.open = records
        self.failed = 0
        self.errors = {}
        self.first = None
        self.last = None  # time of the last outcome
        self.error_name = error_name
        self.lock = threading.Lock()
        self.win = 0  # > 0: count acks per window of win s since win_start
        self.win_start = 0.0
        self.wins = None

    def on_delivery(self, err, msg):
        with self.lock:
            if err is None:
                if self.lat is not None:
                    self.lat.append(msg.latency())
                    if self.win > 0:
                        self.wins[min(int((time.perf_counter() - self.win_start) / self.win), MAX_WINDOWS - 1)] += 1
            else:
                self.failed += 1
                name = self.error_name(err)
                self.errors[name] = self.errors.get(name, 0) + 1
                if self.first is None:
                    self.first = "%s: %s" % (name, err.str())
            self.open -= 1
            self.last = time.perf_counter()

    def wait(self, producer, timeout_s):
        deadline = time.monotonic() + timeout_s
        while True:
            with self.lock:
                if self.open <= 0:
                    return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            producer.poll(min(0.05, left))


def run(argv, setup_error, error_name, quiet_logger, java_random):
    t0 = time.monotonic()
    cfg = parse(argv, setup_error)
    try:
        import confluent_kafka as ck
    except ImportError as e:
        raise setup_error("%s%s (run drivers/python/setup.sh and use the python it prints)" % (PREFIX, e))
    producer = ck.Producer({
        "bootstrap.servers": cfg["bootstrap"],
        "client.id": "kcheck-librdkafka-bench",
        "enable.idempotence": True,
        "acks": "all",
        "max.in.flight.requests.per.connection": cfg["max_in_flight"],
        "linger.ms": cfg["linger_ms"],
        "batch.size": cfg["batch_bytes"],
        "compression.type": cfg["compression"],
        "delivery.timeout.ms": cfg["delivery_timeout_ms"],
        "request.timeout.ms": min(cfg["request_timeout_ms"], cfg["delivery_timeout_ms"]),
        "socket.timeout.ms": max(10, cfg["request_timeout_ms"]),
        "partitioner": "murmur2_random",
        "queue.buffering.max.messages": cfg["max_buffered"],
        "queue.buffering.max.kbytes": max(1024, 2 * cfg["max_buffered"] * (cfg["value_bytes"] + 64) // 1024),
        "logger": quiet_logger(),
    })
    rng = java_random(1)
    value = bytes(0x61 + rng.next_int(26) for _ in range(cfg["value_bytes"]))
    keys = [b"key-%d" % i for i in range(cfg["keys"])]
    grace = cfg["delivery_timeout_ms"] / 1000 + GRACE_S

    def produce(topic, phase, key=None):
        if key is None and keys:
            key = keys[rng.next_int(cfg["keys"])]
        while True:
            try:
                producer.produce(topic, value=value, key=key, on_delivery=phase.on_delivery)
                return
            except BufferError:
                producer.poll(0.001)  # the queue is full: serve callbacks, then retry
            except ck.KafkaException as e:
                with phase.lock:
                    phase.failed += 1
                    phase.open -= 1
                    name = error_name(e.args[0] if e.args else e)
                    phase.errors[name] = phase.errors.get(name, 0) + 1
                return

    warm = Phase(cfg["warmup"], False, error_name)
    cycle = cfg["warmup_keys"] == "cycle" and keys
    for i in range(cfg["warmup"]):
        # cycle: every key in turn, drawing nothing, so every partition a key maps to gets a record
        produce(cfg["warmup_topic"], warm, keys[i % len(keys)] if cycle else None)
        producer.poll(0)
    if not warm.wait(producer, grace):
        raise setup_error("%sthe warm-up's %d records were not all done within the delivery timeout + 30 s"
                          % (PREFIX, cfg["warmup"]))
    if warm.failed:
        raise setup_error("%s%d warm-up records failed: %s" % (PREFIX, warm.failed, warm.first))

    records, rate = cfg["records"], cfg["rate"]
    p = Phase(records, True, error_name)
    cpu0 = time.process_time()
    start = time.perf_counter()
    if cfg["window_ms"] > 0:
        p.win, p.win_start, p.wins = cfg["window_ms"] / 1000, start, [0] * MAX_WINDOWS
    for i in range(records):
        while rate > 0:
            d = start + i / rate - time.perf_counter()
            if d <= 0:
                break
            producer.poll(d)  # serve callbacks while waiting; it may return early
        produce(cfg["topic"], p)
        producer.poll(0)
    done = p.wait(producer, grace)
    end = p.last if done and p.last is not None else time.perf_counter()
    cpu = time.process_time() - cpu0
    with p.lock:
        failed, errors, first = p.failed, dict(sorted(p.errors.items())), p.first
        if not done:
            failed += p.open
            errors["no callback within delivery timeout + %d s" % GRACE_S] = p.open
        lat = sorted(p.lat)
    producer.flush(5)
    secs = max(end - start, 1e-9)
    out = {
        "client": "librdkafka", "version": ck.libversion()[0], "mode": "bench", "topic": cfg["topic"],
        "records": records, "acked": len(lat), "failed": failed, "failed_errors": errors,
    }
    if first is not None:
        out["first_error"] = first
    out.update({
        "seconds": secs, "cpu_seconds": cpu, "records_per_s": len(lat) / secs,
        "latency_ms": {"p50": pct(lat, 0.50) * 1e3, "p95": pct(lat, 0.95) * 1e3, "p99": pct(lat, 0.99) * 1e3,
                       "p999": pct(lat, 0.999) * 1e3, "max": pct(lat, 1.0) * 1e3},
        "linger_ms": cfg["linger_ms"], "batch_bytes": cfg["batch_bytes"], "max_in_flight": cfg["max_in_flight"],
        "max_buffered": cfg["max_buffered"], "rate": rate, "ms": int((time.monotonic() - t0) * 1000),
    })
    if cfg["window_ms"] > 0:
        with p.lock:
            out["window_ms"] = cfg["window_ms"]
            out["windows"] = p.wins[:min(int(secs / p.win) + 1, MAX_WINDOWS)]
    print(json.dumps(out, separators=(",", ":"), ensure_ascii=False), flush=True)
    return 0 if failed == 0 and len(lat) == records else 1
