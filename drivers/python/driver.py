#!/usr/bin/env python3
"""The seed's experiment (KAFKA-14359) run by librdkafka, through PyPI's
confluent-kafka (whose wheel bundles librdkafka): create a new topic, produce
to it at once with idempotence on, read every partition back and count what
was lost, duplicated or reordered. Same flags, same one line of JSON on stdout
and same exit codes as drivers/java: 0 clean, 1 anomalies or failed sends,
2 setup errors (with a message on stderr). Each record carries a kcheck-id
header, its number n in decimal ASCII, and the value prefix "rec=<n>;".
With --bench it runs the throughput mode instead (bench.py).

    py=$(drivers/python/setup.sh) && "$py" drivers/python/driver.py --bootstrap HOST:PORT --topic T
"""

import json
import logging
import re
import sys
import threading
import time

PREFIX = b"rec="  # value = "rec=<n>;" + letters
ID_HEADER = "kcheck-id"  # header: the record's number n in decimal ASCII
GRACE_S = 30  # past the delivery timeout
REACH_TIMEOUT_S = 20  # a broker must answer within this, as Java's admin client
CREATE_TIMEOUT_S = 30
LEADER_TIMEOUT_S = 30
READ_TIMEOUT_S = 120
CLOSE_TIMEOUT_S = 5
USAGE = ("usage: --bootstrap HOST:PORT --topic T [--partitions N] [--records N] [--value-bytes N] "
         "[--keys N] [--compression C] [--delivery-timeout-ms N] [--request-timeout-ms N]")
DEFAULTS = {
    "--partitions": "64", "--records": "3000", "--value-bytes": "10240", "--keys": "1024",
    "--compression": "gzip", "--delivery-timeout-ms": "5000", "--request-timeout-ms": "2000",
}
MINIMUMS = {
    "--partitions": 1, "--records": 0, "--value-bytes": 0, "--keys": 0,
    "--delivery-timeout-ms": 1, "--request-timeout-ms": 1,
}
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


class SetupError(Exception):
    """An error of the setup: exit 2 with its message."""


def die(msg):
    print(msg, file=sys.stderr, flush=True)
    sys.exit(2)


def parse_args(argv):
    """Reads "--flag value" pairs, as the Java driver does."""
    a = dict(DEFAULTS, **{"--bootstrap": "", "--topic": ""})
    i = 0
    while i < len(argv):
        k = argv[i]
        if not k.startswith("--") or i + 1 == len(argv):
            raise SetupError(USAGE)
        if k not in a:
            raise SetupError("python driver: unknown flag %s\n%s" % (k, USAGE))
        a[k] = argv[i + 1]
        i += 2
    for k in ("--bootstrap", "--topic"):
        if not a[k]:
            raise SetupError("python driver: %s is required" % k)
    cfg = {"bootstrap": a["--bootstrap"], "topic": a["--topic"], "compression": a["--compression"]}
    for k, lo in MINIMUMS.items():
        v = a[k]
        if not re.fullmatch(r"[+-]?[0-9]+", v) or int(v) > 2**31 - 1 or int(v) < -2**31:
            raise SetupError("python driver: %s wants a number, not %s" % (k, v))
        if int(v) < lo:
            raise SetupError("python driver: %s wants a number of at least %d, not %s" % (k, lo, v))
        cfg[k[2:].replace("-", "_")] = int(v)
    if cfg["compression"] not in CODECS:
        raise SetupError("python driver: --compression wants none, gzip, snappy, lz4 or zstd, not %s"
                         % cfg["compression"])
    return cfg


class JavaRandom:
    """java.util.Random, so that this driver draws the same letters and keys
    as the Java driver's new Random(1)."""

    MULT, MASK = 0x5DEECE66D, (1 << 48) - 1

    def __init__(self, seed):
        self.seed = (seed ^ self.MULT) & self.MASK

    def next(self, bits):
        self.seed = (self.seed * self.MULT + 0xB) & self.MASK
        r = self.seed >> (48 - bits)
        return r - (1 << 32) if r >= 1 << 31 else r  # as a Java int

    def next_int(self, bound):
        r = self.next(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            s = u - r + m
            if s < 2**31:  # no int overflow, as in Java
                return r
            u = self.next(31)


def record_number(v):
    """n from a value that starts "rec=<n>;", or -1."""
    if v is None or len(v) < len(PREFIX) + 2 or not v.startswith(PREFIX):
        return -1
    n = 0
    for i in range(len(PREFIX), min(len(v), len(PREFIX) + 11)):
        c = v[i]
        if c == 0x3B:  # ';'
            return n
        if not 0x30 <= c <= 0x39:
            return -1
        n = n * 10 + c - 0x30
    return -1


def quiet_logger():
    """A logger that drops librdkafka's own log lines (the Java driver's
    slf4j-nop): failures are reported through errors, not logs."""
    log = logging.getLogger("kcheck.librdkafka")
    log.addHandler(logging.NullHandler())
    log.propagate = False
    return log


def create_topic(ck, admin_mod, cfg):
    """Checks that a broker answers (a bounded wait), creates the topic and
    waits until every partition has a leader, as kcheck run does; then the
    produce starts at once."""
    bootstrap, topic, partitions = cfg["bootstrap"], cfg["topic"], cfg["partitions"]
    admin = admin_mod.AdminClient({
        "bootstrap.servers": bootstrap,
        "client.id": "kcheck-librdkafka-admin",
        "socket.timeout.ms": 10000,
        "logger": quiet_logger(),
    })
    deadline = time.monotonic() + REACH_TIMEOUT_S
    while True:
        try:
            admin.list_topics(timeout=max(0.5, min(5, deadline - time.monotonic())))
            break
        except ck.KafkaException as e:
            if time.monotonic() >= deadline:
                raise SetupError("python driver: no broker answers at %s after %d s: %s"
                                 % (bootstrap, REACH_TIMEOUT_S, e.args[0].str() if e.args else e))
            time.sleep(0.2)

    fs = admin.create_topics([admin_mod.NewTopic(topic, num_partitions=partitions, replication_factor=1)],
                             operation_timeout=CREATE_TIMEOUT_S, request_timeout=CREATE_TIMEOUT_S)
    try:
        fs[topic].result(timeout=CREATE_TIMEOUT_S + 5)
    except ck.KafkaException as e:
        err = e.args[0] if e.args else None
        if isinstance(err, ck.KafkaError) and err.code() == ck.KafkaError.TOPIC_ALREADY_EXISTS:
            raise SetupError('python driver: topic "%s" already exists: pick a new --topic' % topic)
        raise SetupError('python driver: creating topic "%s" at %s: %s'
                         % (topic, bootstrap, err.str() if isinstance(err, ck.KafkaError) else e))
    except Exception as e:  # a future's timeout
        raise SetupError('python driver: creating topic "%s" at %s: %r' % (topic, bootstrap, e))

    deadline = time.monotonic() + LEADER_TIMEOUT_S
    backoff = 0.01
    while True:
        try:
            md = admin.list_topics(topic=topic, timeout=10).topics.get(topic)
            if md is not None and md.error is None:
                led = sum(1 for p in md.partitions.values() if p.error is None and p.leader >= 0)
                if len(md.partitions) == partitions and led == partitions:
                    return
        except ck.KafkaException:
            pass  # not yet visible; retry
        if time.monotonic() > deadline:
            raise SetupError('python driver: topic "%s": partitions have no leaders after %d s'
                             % (topic, LEADER_TIMEOUT_S))
        time.sleep(backoff)
        backoff = min(2 * backoff, 0.5)


def error_name(err):
    """Names a failed record's error for failed_errors: librdkafka's error
    code name (Kafka's, or librdkafka's own such as _MSG_TIMED_OUT)."""
    try:
        return err.name()
    except Exception:
        return str(err)


def run(cfg, t0):
    import confluent_kafka as ck
    import confluent_kafka.admin as admin_mod

    create_topic(ck, admin_mod, cfg)
    records, keys, value_bytes = cfg["records"], cfg["keys"], cfg["value_bytes"]

    # Produce. Java's request.timeout.ms is both the ProduceRequest's timeout
    # field (how long the broker may wait for the replicas) and how long the
    # client waits for a response; librdkafka's request.timeout.ms is only
    # the former and socket.timeout.ms the latter, so both are set.
    # partitioner=murmur2_random hashes keys with murmur2 like Java's default
    # partitioner (null keys, with --keys 0, go to random partitions).
    producer = ck.Producer({
        "bootstrap.servers": cfg["bootstrap"],
        "client.id": "kcheck-librdkafka",
        "enable.idempotence": True,
        "acks": "all",
        "max.in.flight.requests.per.connection": 5,
        "linger.ms": 0,
        "compression.type": cfg["compression"],
        "delivery.timeout.ms": cfg["delivery_timeout_ms"],
        "request.timeout.ms": cfg["request_timeout_ms"],
        "socket.timeout.ms": max(10, cfg["request_timeout_ms"]),
        "partitioner": "murmur2_random",
        "queue.buffering.max.messages": max(100000, records),
        "queue.buffering.max.kbytes": max(32 << 10, 2 * records * (value_bytes + 64) // 1024),
        "logger": quiet_logger(),
    })

    rng = JavaRandom(1)
    letters = bytes(0x61 + rng.next_int(26) for _ in range(value_bytes))  # compressible, like text
    key_of = [-1] * records
    acked = [False] * records
    res = {"acked": 0, "failed": 0, "errors": {}, "first_error": None}
    lock = threading.Lock()
    state = {"open": records, "closed": False}

    def fail(name, msg, count=1):
        res["failed"] += count
        if res["first_error"] is None and msg is not None:
            res["first_error"] = msg
        res["errors"][name] = res["errors"].get(name, 0) + count

    def on_delivery(n):
        def cb(err, _msg):
            with lock:
                if state["closed"]:
                    return  # past the wait: not counted
                if err is None:
                    acked[n] = True
                    res["acked"] += 1
                else:
                    fail(error_name(err), "%s: %s" % (error_name(err), err.str()))
                state["open"] -= 1
        return cb

    sent = 0
    for n in range(records):
        key = None
        if keys > 0:
            key_of[n] = rng.next_int(keys)
            key = b"key-%d" % key_of[n]
        tag = PREFIX + b"%d;" % n
        value = (tag + letters[len(tag):])[:value_bytes]
        while True:
            try:
                producer.produce(cfg["topic"], value=value, key=key, headers=[(ID_HEADER, b"%d" % n)],
                                 on_delivery=on_delivery(n))
                break
            except BufferError:
                producer.poll(0.1)  # the local queue is full: serve callbacks, then retry
            except ck.KafkaException as e:
                with lock:
                    err = e.args[0] if e.args else e
                    fail(error_name(err), str(err))
                    state["open"] -= 1
                break
        sent += 1
        producer.poll(0)
    # linger.ms=0 sends at once; a bounded wait instead of flush(), so a
    # stalled producer is reported rather than waited on forever.
    deadline = time.monotonic() + cfg["delivery_timeout_ms"] / 1000 + GRACE_S
    while True:
        with lock:
            if state["open"] <= 0:
                break
        left = deadline - time.monotonic()
        if left <= 0:
            break
        producer.poll(min(0.1, left))
    with lock:
        state["closed"] = True
        if state["open"] > 0:
            fail("no callback within delivery timeout + %d s" % GRACE_S, None, state["open"])
    producer.flush(CLOSE_TIMEOUT_S)  # Java's producer.close(5 s); callbacks no longer count

    read = read_back(ck, cfg, key_of)
    lost = lost_acked = 0
    for n in range(sent):
        if read["seen"][n] == 0:
            lost += 1
            if acked[n]:
                lost_acked += 1
    out = {
        "client": "librdkafka",
        "version": ck.libversion()[0],
        "sent": sent,
        "acked": res["acked"],
        "failed": res["failed"],
        "read_back": read["read_back"],
        "lost": lost,
        "lost_acked": lost_acked,
        "duplicated": read["duplicated"],
        "out_of_order": read["out_of_order"],
        "foreign": read["foreign"],
        "failed_errors": dict(sorted(res["errors"].items())),
    }
    if res["first_error"] is not None:
        out["first_error"] = res["first_error"]
    out["ms"] = int((time.monotonic() - t0) * 1000)
    print(json.dumps(out, separators=(",", ":"), ensure_ascii=False), flush=True)
    clean = (out["failed"] == 0 and lost == 0 and out["duplicated"] == 0
             and out["out_of_order"] == 0 and out["foreign"] == 0)
    return 0 if clean else 1


def read_back(ck, cfg, key_of):
    """Reads every partition from the beginning up to its end offset (the
    high watermark) with assign(), no group and no commits, and counts the
    records as the Java driver does."""
    topic, partitions, records = cfg["topic"], cfg["partitions"], cfg["records"]
    consumer = ck.Consumer({
        "bootstrap.servers": cfg["bootstrap"],
        "client.id": "kcheck-librdkafka-readback",
        "group.id": "kcheck-readback-unused",  # required by the client; assign() joins no group
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "isolation.level": "read_uncommitted",  # as the Java consumer's default
        "logger": quiet_logger(),
    })
    try:
        end = {}
        for p in range(partitions):
            # A broker still taking up a new partition's leadership (a loaded
            # machine, seconds after the topic was created) answers with a
            # retriable error: wait for it, up to READ_TIMEOUT_S.
            give_up, backoff = time.monotonic() + READ_TIMEOUT_S, 0.02
            while True:
                try:
                    _, high = consumer.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=30)
                    break
                except ck.KafkaException as e:
                    err = e.args[0] if e.args and isinstance(e.args[0], ck.KafkaError) else None
                    if err is None or not err.retriable() and err.code() != ck.KafkaError.NOT_LEADER_FOR_PARTITION \
                            or time.monotonic() > give_up:
                        raise SetupError('python driver: read-back: end offset of "%s"[%d]: %s' % (topic, p, e))
                    time.sleep(backoff)
                    backoff = min(2 * backoff, 1.0)
            end[p] = high
        consumer.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(partitions)])
        nxt = {p: 0 for p in range(partitions)}
        seen = [0] * records
        last = {}
        out = {"seen": seen, "read_back": 0, "duplicated": 0, "out_of_order": 0, "foreign": 0}
        deadline = time.monotonic() + READ_TIMEOUT_S
        while any(nxt[p] < end[p] for p in end):
            if time.monotonic() > deadline:
                raise SetupError("python driver: read-back did not reach the end offsets in %d s" % READ_TIMEOUT_S)
            for m in consumer.consume(num_messages=2000, timeout=0.5):
                err = m.error()
                if err is not None:
                    if err.code() == ck.KafkaError._PARTITION_EOF or err.retriable():
                        continue
                    raise SetupError("python driver: read-back: %s" % err.str())
                p = m.partition()
                nxt[p] = max(nxt[p], m.offset() + 1)
                n = record_number(m.value())
                if n < 0 or n >= records:
                    out["foreign"] += 1
                    continue
                seen[n] += 1
                if seen[n] > 1:
                    out["duplicated"] += 1
                    continue
                out["read_back"] += 1
                k = (p, key_of[n])
                prev = last.get(k)
                if prev is not None and n < prev:
                    out["out_of_order"] += 1
                if prev is None or n > prev:
                    last[k] = n
        return out
    finally:
        consumer.close()


def main(argv):
    t0 = time.monotonic()
    if "--bench" in argv:  # the throughput mode: bench.py (bench/run.sh)
        sys.dont_write_bytecode = True  # no __pycache__ in the source tree
        import bench
        rest = list(argv)
        rest.remove("--bench")
        try:
            return bench.run(rest, SetupError, error_name, quiet_logger, JavaRandom)
        except SetupError as e:
            die(str(e))
        except KeyboardInterrupt:
            die("python driver: interrupted")
        except Exception as e:  # anything else is a setup error too, without a traceback
            die("python driver: %s: %s" % (type(e).__name__, e))
    try:
        cfg = parse_args(argv)
        try:
            import confluent_kafka  # noqa: F401
        except ImportError as e:
            raise SetupError("python driver: %s (run drivers/python/setup.sh and use the python it prints)" % e)
        return run(cfg, t0)
    except SetupError as e:
        die(str(e))
    except KeyboardInterrupt:
        die("python driver: interrupted")
    except Exception as e:  # anything else is a setup error too, without a traceback
        die("python driver: %s: %s" % (type(e).__name__, e))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
