#!/usr/bin/env python3
"""The seed's experiment (KAFKA-14359) run by librdkafka, through PyPI's
confluent-kafka (whose wheel bundles librdkafka): create a new topic, produce
to it at once with idempotence on, read every partition back and count what
was lost, duplicated or reordered. Same flags, same one line of JSON on stdout
and same exit codes as drivers/java: 0 clean, 1 anomalies or failed sends,
2 setup errors (with a message on stderr). Each record carries a kcheck-id
header, its number n in decimal ASCII, and the value prefix "rec=<n>;".
--outcomes FILE (or $KCHECK_OUTCOMES) also writes what librdkafka reported
for each record (drivers/OUTCOMES.md). With --transactional it produces in
transactions with librdkafka's transactional API (produce_txn; drivers/WORKLOADS.md,
"Transactions"). The workload is seed.py's, shared with the
aiokafka and kafka-python drivers. With --bench it runs the throughput mode instead (bench.py).

    py=$(drivers/python/setup.sh) && "$py" drivers/python/driver.py --bootstrap HOST:PORT --topic T
"""

import logging
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import seed  # noqa: E402
from seed import SetupError  # noqa: E402

PREFIX = "python driver: "


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
    deadline = time.monotonic() + seed.REACH_TIMEOUT_S
    while True:
        try:
            admin.list_topics(timeout=max(0.5, min(5, deadline - time.monotonic())))
            break
        except ck.KafkaException as e:
            if time.monotonic() >= deadline:
                raise SetupError("%sno broker answers at %s after %d s: %s"
                                 % (PREFIX, bootstrap, seed.REACH_TIMEOUT_S, e.args[0].str() if e.args else e))
            time.sleep(0.2)

    # replication_factor -1 is the brokers' default (librdkafka sends CreateTopics v4 or later).
    fs = admin.create_topics([admin_mod.NewTopic(topic, num_partitions=partitions,
                                                 replication_factor=cfg["replication_factor"])],
                             operation_timeout=seed.CREATE_TIMEOUT_S, request_timeout=seed.CREATE_TIMEOUT_S)
    try:
        fs[topic].result(timeout=seed.CREATE_TIMEOUT_S + 5)
    except ck.KafkaException as e:
        err = e.args[0] if e.args else None
        if isinstance(err, ck.KafkaError) and err.code() == ck.KafkaError.TOPIC_ALREADY_EXISTS:
            raise SetupError('%stopic "%s" already exists: pick a new --topic' % (PREFIX, topic))
        raise SetupError('%screating topic "%s" at %s: %s'
                         % (PREFIX, topic, bootstrap, err.str() if isinstance(err, ck.KafkaError) else e))
    except Exception as e:  # a future's timeout
        raise SetupError('%screating topic "%s" at %s: %r' % (PREFIX, topic, bootstrap, e))

    def led():
        try:
            md = admin.list_topics(topic=topic, timeout=10).topics.get(topic)
        except ck.KafkaException:
            return False  # not yet visible; retry
        if md is None or md.error is not None:
            return False
        n = sum(1 for p in md.partitions.values() if p.error is None and p.leader >= 0)
        return len(md.partitions) == partitions and n == partitions

    if not seed.poll_until(led, seed.LEADER_TIMEOUT_S):
        raise SetupError('%stopic "%s": partitions have no leaders after %d s'
                         % (PREFIX, topic, seed.LEADER_TIMEOUT_S))


def error_name(err):
    """Names a failed record's error for failed_errors: librdkafka's error
    code name (Kafka's, or librdkafka's own such as _MSG_TIMED_OUT)."""
    try:
        return err.name()
    except Exception:
        return str(err)


def error_code(err):
    """A failed record's Kafka error code: KafkaError.code() when positive
    (the broker's); librdkafka's own errors are negative (_MSG_TIMED_OUT),
    and -1 (UNKNOWN) says nothing of the broker's answer: None."""
    try:
        code = err.code()
    except Exception:
        return None
    return code if isinstance(code, int) and code > 0 else None


def batch_settings(shape):
    """librdkafka's settings for --batch-records (drivers/WORKLOADS.md).
    default: linger.ms=0, with librdkafka's batch.num.messages (10000) and
    batch.size (1000000): a partition's messages that wait while its
    requests are in flight share a batch. one: batch.num.messages=1, at most
    one message in a partition's MessageSet. many: linger.ms=20 and
    batch.size=256 KiB (batch.num.messages stays 10000)."""
    if shape == "one":
        return {"linger.ms": 0, "batch.num.messages": 1}
    if shape == "many":
        return {"linger.ms": seed.MANY_LINGER_MS, "batch.size": seed.MANY_BATCH_BYTES}
    return {"linger.ms": 0}


def txn_settings(txn):
    """librdkafka's settings for --transactional: transactional.id, and no
    other (transaction.timeout.ms stays 60 s)."""
    return {} if txn is None else {"transactional.id": txn.id}


# librdkafka's own error for a broker without the transactional requests
# (RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE): as a cannot-run Kafka code.
UNSUPPORTED_FEATURE = -165


def produce_txn(ck, producer, cfg, w, key_of, reports, out, on_delivery):
    """The produce phase of --transactional (drivers/WORKLOADS.md,
    "Transactions") with librdkafka's transactional API as its documentation
    asks it to be used: init_transactions() once, then for each transaction
    begin_transaction(), its records, a wait for each record's report
    (served by poll(), bounded by the delivery timeout + grace; a record
    without one gets its none line and its transaction is aborted, the
    last), then commit_transaction(), or abort_transaction() for every
    --txn-abort-every-th. A failed commit whose error says
    txn_requires_abort() is aborted; any other failure (a fatal error, a
    retriable one) ends the phase. init_transactions() failing, or an error
    that says the broker cannot run transactions (seed.TXN_CANNOT_RUN,
    _UNSUPPORTED_FEATURE), is a setup error: could not run. Returns the
    records sent."""
    txn, records = cfg["txn"], cfg["records"]
    bound = cfg["delivery_timeout_ms"] / 1000 + seed.GRACE_S

    def cannot_run(err):
        return isinstance(err, ck.KafkaError) and (err.code() in seed.TXN_CANNOT_RUN or
                                                   err.code() == UNSUPPORTED_FEATURE)

    def words(err):
        return "%s: %s" % (error_name(err), err.str()) if isinstance(err, ck.KafkaError) else str(err)

    def call(f, what, tx):
        """f's error, None if it returned; a cannot-run error is raised."""
        try:
            f(bound)
            return None
        except ck.KafkaException as e:
            err = e.args[0] if e.args else e
            if cannot_run(err):
                raise SetupError("%scould not run transactions: transaction %d: %s: %s" % (PREFIX, tx, what, words(err)))
            return err

    def serve(seconds):
        """producer.poll(seconds); a fatal error, which librdkafka raises
        from poll() once the producer has one, is noted, and the phase goes
        on to end the transaction (which fails with it)."""
        try:
            producer.poll(seconds)
        except ck.KafkaException as e:
            reports.note(words(e.args[0] if e.args else e))
            return True
        return False

    try:
        producer.init_transactions(bound)
    except ck.KafkaException as e:
        err = e.args[0] if e.args else e
        raise SetupError("%scould not run transactions: init_transactions: %s" % (PREFIX, words(err)))
    sent, tx = 0, 0
    while sent < records:
        tx += 1
        err = call(lambda _: producer.begin_transaction(), "begin", tx)
        if err is not None:
            reports.note(words(err))
            break
        first, k = sent, min(txn.records, records - sent)
        fatal = False
        for n in range(first, first + k):
            produce_one(ck, producer, cfg, w, key_of, reports, on_delivery, n)
            fatal = fatal or serve(0)
        sent += k
        deadline = time.monotonic() + bound
        while reports.pending_in(first, sent) > 0 and not fatal:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            fatal = serve(min(0.1, left))
        stalled = reports.close_range(first, sent) > 0
        commit = not txn.abort(tx) and not stalled
        err = call(producer.commit_transaction if commit else producer.abort_transaction,
                   "commit" if commit else "abort", tx)
        ended = txn.end(out, tx, commit, None if err is None else words(err), error_code(err))
        if err is not None:
            reports.note("transaction %d: %s: %s" % (tx, "commit" if commit else "abort", words(err)))
            if commit and err.txn_requires_abort():
                err = call(producer.abort_transaction, "abort after a failed commit", tx)
                txn.end(out, tx, False, None if err is None else words(err), error_code(err), count=False)
                if err is None:
                    ended = True
                else:
                    reports.note("transaction %d: abort after a failed commit: %s" % (tx, words(err)))
        if not ended or stalled:
            break
    return sent


def run(cfg, t0):
    import confluent_kafka as ck
    import confluent_kafka.admin as admin_mod

    out = seed.open_outcomes(cfg["outcomes"], PREFIX)
    create_topic(ck, admin_mod, cfg)
    records, value_bytes = cfg["records"], cfg["value_bytes"]

    # Produce. Java's request.timeout.ms is both the ProduceRequest's timeout
    # field (how long the broker may wait for the replicas) and how long the
    # client waits for a response; librdkafka's request.timeout.ms is only
    # the former and socket.timeout.ms the latter, so both are set.
    # partitioner=murmur2_random hashes keys with murmur2 like Java's default
    # partitioner (null keys, with --keys 0, go to random partitions).
    producer = ck.Producer(dict({
        "bootstrap.servers": cfg["bootstrap"],
        "client.id": "kcheck-librdkafka",
        "enable.idempotence": True,
        "acks": "all",
        "max.in.flight.requests.per.connection": 5,
        "compression.type": cfg["compression"],
        "delivery.timeout.ms": cfg["delivery_timeout_ms"],
        "request.timeout.ms": cfg["request_timeout_ms"],
        "socket.timeout.ms": max(10, cfg["request_timeout_ms"]),
        "partitioner": "murmur2_random",
        "queue.buffering.max.messages": max(100000, records),
        "queue.buffering.max.kbytes": max(32 << 10, 2 * records * (value_bytes + 64) // 1024),
        "logger": quiet_logger(),
    }, **batch_settings(cfg["batch_records"]), **txn_settings(cfg["txn"])))

    w = seed.Workload(value_bytes, cfg["keys"])
    key_of = [-1] * records
    reports = seed.Reports(records, out, cfg["idle_after"])
    idle = seed.Idle(cfg, reports)

    def on_delivery(n):
        def cb(err, msg):
            if err is None:
                reports.success(n, msg.partition(), msg.offset())
            else:
                reports.failure(n, msg.partition(), error_name(err), "%s: %s" % (error_name(err), err.str()),
                                error_code(err))
        return cb

    if cfg["txn"] is not None:
        sent = produce_txn(ck, producer, cfg, w, key_of, reports, out, on_delivery)
    else:
        sent = produce(ck, producer, cfg, w, key_of, reports, idle, on_delivery)
    reports.close()
    try:
        producer.flush(seed.CLOSE_TIMEOUT_S)  # Java's producer.close(5 s); callbacks no longer count
    except ck.KafkaException as e:
        # A producer in a fatal state (a transactional one told
        # INVALID_TXN_STATE, fenced) raises it here too: the run goes on
        # to its read-back, the error already reported.
        reports.note("flush: %s" % (e.args[0].str() if e.args and isinstance(e.args[0], ck.KafkaError) else e))
    seed.close_outcomes(out, PREFIX)

    tally = seed.Tally(key_of)
    read_back(ck, cfg, tally)
    tally.finish(sent, reports.acked)
    return seed.summary("librdkafka", ck.libversion()[0], sent, reports, tally, t0, shape=seed.shape_keys(cfg, idle),
                        extra=cfg["txn"].keys() if cfg["txn"] is not None else None)


def produce_one(ck, producer, cfg, w, key_of, reports, on_delivery, n):
    """Produces record n (its key drawn from w), serving callbacks while the
    local queue is full; a produce() that fails is record n's failure."""
    key_of[n], key = w.next_key()
    while True:
        try:
            producer.produce(cfg["topic"], value=w.value(n), key=key, headers=[(seed.ID_HEADER, w.id_header(n))],
                             on_delivery=on_delivery(n))
            return
        except BufferError:
            producer.poll(0.1)  # the local queue is full: serve callbacks, then retry
        except ck.KafkaException as e:
            err = e.args[0] if e.args else e
            reports.failure(n, -1, error_name(err), str(err), error_code(err))
            return


def produce(ck, producer, cfg, w, key_of, reports, idle, on_delivery):
    """The idempotent produce phase; returns the records sent."""
    records = cfg["records"]
    sent = 0
    for n in range(records + 1):
        if idle.due(n):  # the callbacks come from poll()
            idle.run_blocking(producer.poll)
        if n == records:
            break
        produce_one(ck, producer, cfg, w, key_of, reports, on_delivery, n)
        sent += 1
        producer.poll(0)
    # linger.ms=0 sends at once; a bounded wait instead of flush(), so a
    # stalled producer is reported rather than waited on forever.
    deadline = time.monotonic() + cfg["delivery_timeout_ms"] / 1000 + seed.GRACE_S
    while reports.pending() > 0:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        producer.poll(min(0.1, left))
    return sent


def read_back(ck, cfg, tally):
    """Reads every partition from the beginning up to its end offset (the
    high watermark) with assign(), no group and no commits, into tally."""
    topic, partitions = cfg["topic"], cfg["partitions"]
    after_move = (ck.KafkaError.NOT_LEADER_FOR_PARTITION, ck.KafkaError.OFFSET_NOT_AVAILABLE)
    consumer = ck.Consumer({
        "bootstrap.servers": cfg["bootstrap"],
        "client.id": "kcheck-librdkafka-readback",
        "group.id": "kcheck-readback-unused",  # required by the client; assign() joins no group
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "isolation.level": "read_uncommitted",  # as the Java consumer's default
        # A partition's end reached is reported (_PARTITION_EOF with its
        # offset): a transactional run's markers take offsets up to the end
        # that no record's offset reaches.
        "enable.partition.eof": True,
        "logger": quiet_logger(),
    })
    try:
        end = {}
        for p in range(partitions):
            # A broker still taking up a new partition's leadership (a loaded
            # machine, seconds after the topic was created) answers with a
            # retriable error: wait for it, up to READ_TIMEOUT_S.
            give_up, backoff = time.monotonic() + seed.READ_TIMEOUT_S, 0.02
            while True:
                try:
                    _, high = consumer.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=30)
                    break
                except ck.KafkaException as e:
                    err = e.args[0] if e.args and isinstance(e.args[0], ck.KafkaError) else None
                    # A leader that just moved answers NOT_LEADER_FOR_PARTITION, or
                    # OFFSET_NOT_AVAILABLE until its high watermark has caught up
                    # (KIP-207): both pass, though librdkafka marks neither retriable.
                    if err is None or not err.retriable() and err.code() not in after_move \
                            or time.monotonic() > give_up:
                        raise SetupError('%sread-back: end offset of "%s"[%d]: %s' % (PREFIX, topic, p, e))
                    time.sleep(backoff)
                    backoff = min(2 * backoff, 1.0)
            end[p] = high
        consumer.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(partitions)])

        rb = seed.ReadBack(end, tally, PREFIX)
        while rb.more():
            for m in consumer.consume(num_messages=2000, timeout=0.5):
                err = m.error()
                if err is not None:
                    if err.code() == ck.KafkaError._PARTITION_EOF:
                        rb.passed(m.partition(), m.offset())
                        continue
                    if err.retriable():
                        continue
                    raise SetupError("%sread-back: %s" % (PREFIX, err.str()))
                rb.add(m.partition(), m.offset(), m.value())
    finally:
        consumer.close()


def main(argv):
    if "--bench" in argv:  # the throughput mode: bench.py (bench/run.sh)
        import bench
        rest = list(argv)
        rest.remove("--bench")
        try:
            return bench.run(rest, SetupError, error_name, quiet_logger, seed.JavaRandom)
        except SetupError as e:
            seed.die(str(e))
        except KeyboardInterrupt:
            seed.die("python driver: interrupted")
        except Exception as e:  # anything else is a setup error too, without a traceback
            seed.die("python driver: %s: %s" % (type(e).__name__, e))
    return seed.main(argv, PREFIX, "confluent_kafka", run, transactional=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
