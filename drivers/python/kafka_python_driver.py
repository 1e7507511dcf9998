#!/usr/bin/env python3
"""The seed's experiment (KAFKA-14359) run by kafka-python 3.0.12 (PyPI's
kafka-python, pure Python), which kcheck did not write: create a new topic,
produce to it at once with idempotence on, read every partition back and count
what was lost, duplicated or reordered. The flags, the one line of JSON (plus
max_in_flight and differs: where kafka-python's producer is not the Java
driver's) and the exit codes of driver.py and drivers/java: 0 clean,
1 anomalies or failed sends, 2 setup errors (with a message on stderr). The
workload is seed.py's. --outcomes FILE (or $KCHECK_OUTCOMES) writes what
kafka-python reported for each record (drivers/OUTCOMES.md). With
--transactional it produces in transactions with kafka-python's transactional
API (produce_txn; drivers/WORKLOADS.md, "Transactions").

    py=$(drivers/python/setup.sh) && "$py" drivers/python/kafka_python_driver.py --bootstrap HOST:PORT --topic T

How kafka-python is configured, and why (kafka-python 3.0.12's source):

- Idempotence: enable_idempotence=True, set explicitly so that a conflicting
  setting raises instead of silently turning idempotence off
  (KafkaProducer.__init__, producer/kafka.py), with acks="all".
- In flight: max_in_flight_requests_per_connection=5, the most
  KafkaProducer.__init__ allows with idempotence (it refuses more than 5),
  as the Java driver. But with idempotence kafka-python sets
  guarantee_message_order, and its Sender (producer/sender.py,
  _send_producer_data and _complete_batch/_dispatch_error) mutes each
  partition drained until its batch is answered: one batch in flight per
  partition, where Java keeps up to 5 per partition.
- --delivery-timeout-ms is delivery_timeout_ms, as in Java (batches expire
  in the accumulator and in flight, Sender._get_expired_inflight_batches);
  kafka-python refuses one below linger_ms + request_timeout_ms
  (RecordAccumulator.__init__), as Java does, and that is exit 2.
- --request-timeout-ms is request_timeout_ms: the ProduceRequest's timeout
  field (Sender._create_produce_requests) and the client's wait for each
  response, Java's request.timeout.ms.
- Partitioning: StickyPartitioner (KIP-480), murmur2 on keys as the Java
  client and sticky for records without a key (--keys 0), as Java's default;
  kafka-python's default would spread those at random. linger_ms=0 (or
  --batch-records' batching: batch_settings) and max_block_ms as the Java
  driver's; kafka-python 3 has no buffer_memory
  (the accumulator is not bounded), so nothing stands for Java's.
"""

import sys
import threading

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import seed  # noqa: E402
from seed import SetupError  # noqa: E402

PREFIX = "kafka-python driver: "
MAX_IN_FLIGHT = 5  # max_in_flight_requests_per_connection; one batch per partition (guarantee_message_order)
DIFFERS = ("one batch in flight per partition: with idempotence kafka-python mutes a partition until its "
           "batch is answered (guarantee_message_order), up to 5 requests per connection (Java: 5 batches "
           "per partition)")


def chosen_partitioner(kp):
    """kafka-python's StickyPartitioner, remembering the partition it chose
    last: the partition of the record just sent, for a failure's report
    (kafka-python's errors do not carry it)."""
    from kafka.partitioner import StickyPartitioner

    class ChosenPartition(StickyPartitioner):
        last = -1

        def partition(self, *args):
            self.last = super().partition(*args)
            return self.last

    return ChosenPartition()


def create_topic(kp, cfg):
    """Waits until a broker answers (a bounded wait), creates the topic and
    waits until every partition has a leader, as kcheck run does; then the
    produce starts at once."""
    from kafka.admin import KafkaAdminClient
    bootstrap, topic, partitions = cfg["bootstrap"], cfg["topic"], cfg["partitions"]
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kcheck-kafka-python-admin",
                                 request_timeout_ms=seed.CREATE_TIMEOUT_S * 1000,
                                 bootstrap_timeout_ms=seed.REACH_TIMEOUT_S * 1000)
    except kp.errors.KafkaError as e:
        raise SetupError("%sno broker answers at %s after %d s: %s"
                         % (PREFIX, bootstrap, seed.REACH_TIMEOUT_S, seed.exception_text(e)))
    try:
        try:
            # replication_factor -1 is the brokers' default (kafka-python refuses it
            # only for brokers before 2.4, which lack CreateTopics v4).
            resp = admin.create_topics({topic: {"num_partitions": partitions,
                                                "replication_factor": cfg["replication_factor"]}},
                                       timeout_ms=seed.CREATE_TIMEOUT_S * 1000, raise_errors=False)
        except kp.errors.KafkaError as e:
            raise SetupError('%screating topic "%s" at %s: %s' % (PREFIX, topic, bootstrap, seed.exception_text(e)))
        for t in resp["topics"]:
            err = kp.errors.for_code(t["error_code"])
            if err is kp.errors.TopicAlreadyExistsError:
                raise SetupError('%stopic "%s" already exists: pick a new --topic' % (PREFIX, topic))
            if err is not kp.errors.NoError:
                msg = err.message + (": " + t["error_message"] if t.get("error_message") else "")
                raise SetupError('%screating topic "%s" at %s: %s' % (PREFIX, topic, bootstrap, msg))

        def led():
            try:
                md = admin.describe_topics([topic])
            except kp.errors.KafkaError:
                return False  # not yet visible; retry
            ps = [p for t in md if t["name"] == topic and t["error_code"] == 0 for p in t["partitions"]]
            return len(ps) == partitions and all(p["error_code"] == 0 and p["leader_id"] >= 0 for p in ps)

        if not seed.poll_until(led, seed.LEADER_TIMEOUT_S):
            raise SetupError('%stopic "%s": partitions have no leaders after %d s'
                             % (PREFIX, topic, seed.LEADER_TIMEOUT_S))
    finally:
        admin.close()


def run(cfg, t0):
    import kafka as kp
    import kafka.errors  # noqa: F401

    seed.quiet("kafka")
    out = seed.open_outcomes(cfg["outcomes"], PREFIX)
    create_topic(kp, cfg)
    records, value_bytes = cfg["records"], cfg["value_bytes"]
    chosen = chosen_partitioner(kp)
    try:
        producer = kp.KafkaProducer(
            bootstrap_servers=cfg["bootstrap"],
            client_id="kcheck-kafka-python",
            enable_idempotence=True,
            acks="all",
            max_in_flight_requests_per_connection=MAX_IN_FLIGHT,
            compression_type=None if cfg["compression"] == "none" else cfg["compression"],
            delivery_timeout_ms=cfg["delivery_timeout_ms"],
            request_timeout_ms=cfg["request_timeout_ms"],
            max_block_ms=30000,
            partitioner=chosen,
            **batch_settings(cfg["batch_records"]),
            # --transactional: the transactional id and nothing else
            # (transaction_timeout_ms stays kafka-python's 60 s).
            **({} if cfg["txn"] is None else {"transactional_id": cfg["txn"].id}),
        )
    except kp.errors.KafkaError as e:
        raise SetupError("%sstarting the producer: %s" % (PREFIX, seed.exception_text(e)))

    w = seed.Workload(value_bytes, cfg["keys"])
    key_of = [-1] * records
    reports = seed.Reports(records, out, cfg["idle_after"])
    idle = seed.Idle(cfg, reports)

    def on_success(n):
        return lambda md: reports.success(n, md.partition, md.offset)

    def on_failure(n, p):
        return lambda e: reports.failure(n, p, seed.exception_name(e), seed.exception_text(e),
                                         seed.exception_code(e, kp.errors.BrokerResponseError))

    def send(n):
        """Sends record n: its report comes from the sender thread."""
        key_of[n], key = w.next_key()
        chosen.last = -1
        try:
            fut = producer.send(cfg["topic"], value=w.value(n), key=key, headers=[(seed.ID_HEADER, w.id_header(n))])
            fut.add_callback(on_success(n))
            fut.add_errback(on_failure(n, chosen.last))
        except kp.errors.KafkaError as e:  # no room within max_block_ms (KafkaTimeoutError), or a fatal state
            reports.failure(n, chosen.last, seed.exception_name(e), seed.exception_text(e),
                            seed.exception_code(e, kp.errors.BrokerResponseError))

    try:
        if cfg["txn"] is not None:
            sent = produce_txn(kp, producer, cfg, reports, out, send)
        else:
            sent = 0
            for n in range(records + 1):
                if idle.due(n):  # the callbacks come from the sender thread
                    idle.run_blocking()
                if n == records:
                    break
                send(n)
                sent += 1
            # A bounded wait instead of flush(), so a stalled producer is
            # reported rather than waited on forever.
            reports.all_answered.wait(cfg["delivery_timeout_ms"] / 1000 + seed.GRACE_S)
    except SetupError:  # could not run transactions
        close_producer(kp, producer)
        raise
    reports.close()
    close_producer(kp, producer)
    seed.close_outcomes(out, PREFIX)

    tally = seed.Tally(key_of)
    read_back(kp, cfg, tally)
    tally.finish(sent, reports.acked)
    extra = {"max_in_flight": MAX_IN_FLIGHT, "differs": DIFFERS}
    if cfg["txn"] is not None:
        extra.update(cfg["txn"].keys())
    return seed.summary("kafka-python", kp.__version__, sent, reports, tally, t0, extra, seed.shape_keys(cfg, idle))


class Unanswered(Exception):
    """A transactional call that had not returned within its bound."""


def bounded(f, timeout_s):
    """Runs f() on a thread of its own and returns its exception, None if it
    returned, or Unanswered once timeout_s has passed (kafka-python's
    commit_transaction and abort_transaction wait without a bound; the
    thread is a daemon, left behind)."""
    result = []

    def target():
        try:
            f()
            result.append(None)
        except Exception as e:  # the call's own error, handed back
            result.append(e)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout_s)
    if not result:
        return Unanswered("no answer within %d s" % timeout_s)
    return result[0]


def produce_txn(kp, producer, cfg, reports, out, send):
    """The produce phase of --transactional (drivers/WORKLOADS.md,
    "Transactions") with kafka-python's transactional API (its Java-like
    one): init_transactions() once (bounded by max_block_ms), then for each
    transaction begin_transaction(), its records, a wait for each record's
    report (bounded by the delivery timeout + grace; a record without one
    gets its none line, its transaction is aborted and is the last), then
    commit_transaction(), or abort_transaction() for every
    --txn-abort-every-th, each bounded by the delivery timeout + grace. A
    failed commit is aborted unless the producer's transaction state is a
    fatal error; any other failure ends the phase. init_transactions()
    failing, or an error that says the broker cannot run transactions
    (seed.TXN_CANNOT_RUN), is a setup error: could not run. Returns the
    records sent."""
    txn, records = cfg["txn"], cfg["records"]
    bound = cfg["delivery_timeout_ms"] / 1000 + seed.GRACE_S

    def code(e):
        return seed.exception_code(e, kp.errors.BrokerResponseError)

    err = bounded(producer.init_transactions, bound)
    if err is not None:
        raise SetupError("%scould not run transactions: init_transactions: %s" % (PREFIX, seed.exception_text(err)))

    def call(f, what, tx):
        err = bounded(f, bound)
        if err is None:
            return None
        text = "transaction %d: %s: %s" % (tx, what, seed.exception_text(err))
        if code(err) in seed.TXN_CANNOT_RUN:
            raise SetupError("%scould not run transactions: %s" % (PREFIX, text))
        reports.note(text)
        return err

    def end(tx, commit, err, count=True):
        return txn.end(out, tx, commit, None if err is None else seed.exception_text(err), code(err), count)

    sent, tx = 0, 0
    while sent < records:
        tx += 1
        if call(producer.begin_transaction, "begin", tx) is not None:
            break
        first, k = sent, min(txn.records, records - sent)
        for n in range(first, first + k):
            send(n)
        sent += k
        seed.poll_until(lambda: reports.pending_in(first, sent) == 0, bound)
        stalled = reports.close_range(first, sent) > 0
        commit = not txn.abort(tx) and not stalled
        err = call(producer.commit_transaction if commit else producer.abort_transaction,
                   "commit" if commit else "abort", tx)
        ended = end(tx, commit, err)
        if err is not None and commit and not isinstance(err, Unanswered) \
                and not producer._transaction_manager.has_fatal_error():
            err = call(producer.abort_transaction, "abort after a failed commit", tx)
            ended = end(tx, False, err, count=False)
        if not ended or stalled:
            break
    return sent


def batch_settings(shape):
    """kafka-python's settings for --batch-records (drivers/WORKLOADS.md).
    default: linger_ms=0 and kafka-python's batch_size (16384). one:
    batch_size=0, which kafka-python documents as disabling batching: its
    record batch builder takes a batch's first record whatever its size and
    no second one over batch_size. many: linger_ms=20, batch_size=256 KiB."""
    if shape == "one":
        return {"linger_ms": 0, "batch_size": 0}
    if shape == "many":
        return {"linger_ms": seed.MANY_LINGER_MS, "batch_size": seed.MANY_BATCH_BYTES}
    return {"linger_ms": 0}


def close_producer(kp, producer):
    """Java's producer.close(5 s); reports no longer count. kafka-python's
    close(timeout) raises KafkaTimeoutError from its flush when records are
    still pending after the timeout, and leaves the producer open (its
    __del__ tries again); then its sender is force-closed, as Java's close
    does after the timeout (the private _sender: kafka-python has no public
    way)."""
    try:
        producer.close(timeout=seed.CLOSE_TIMEOUT_S)
    except kp.errors.KafkaTimeoutError:
        sender = getattr(producer, "_sender", None)
        if sender is not None:
            sender.force_close()
        producer._closed = True  # no second close from __del__


def read_back(kp, cfg, tally):
    """Reads every partition from the beginning up to its end offset with
    assign(), no group and no commits, into tally."""
    topic, partitions = cfg["topic"], cfg["partitions"]
    tps = [kp.TopicPartition(topic, p) for p in range(partitions)]
    consumer = kp.KafkaConsumer(bootstrap_servers=cfg["bootstrap"], client_id="kcheck-kafka-python-readback",
                                group_id=None, enable_auto_commit=False, auto_offset_reset="earliest",
                                isolation_level="read_uncommitted")
    try:
        consumer.assign(tps)
        try:
            end = consumer.end_offsets(tps)
        except kp.errors.KafkaError as e:
            raise SetupError('%sread-back: end offsets of "%s": %s' % (PREFIX, topic, seed.exception_text(e)))
        consumer.seek_to_beginning(*tps)
        rb = seed.ReadBack({tp.partition: off for tp, off in end.items()}, tally, PREFIX)
        while rb.more():
            for tp, msgs in consumer.poll(timeout_ms=500, max_records=2000).items():
                for m in msgs:
                    rb.add(tp.partition, m.offset, m.value)
            # A transactional run's markers take offsets up to the end that
            # no record's offset reaches; the position passes them.
            for tp in tps:
                rb.passed(tp.partition, consumer.position(tp))
    finally:
        consumer.close()


if __name__ == "__main__":
    sys.exit(seed.main(sys.argv[1:], PREFIX, "kafka", run, transactional=True))
