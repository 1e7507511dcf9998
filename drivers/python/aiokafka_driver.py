#!/usr/bin/env python3
"""The seed's experiment (KAFKA-14359) run by aiokafka (PyPI's aiokafka
0.14.0, asyncio, its own protocol code), which kcheck did not write: create a
new topic, produce to it at once with idempotence on, read every partition
back and count what was lost, duplicated or reordered. The flags, the one line
of JSON (plus max_in_flight and differs: where aiokafka's producer is not the
Java driver's) and the exit codes of driver.py and drivers/java: 0 clean,
1 anomalies or failed sends, 2 setup errors (with a message on stderr). The
workload is seed.py's. --outcomes FILE (or $KCHECK_OUTCOMES) writes what
aiokafka reported for each record (drivers/OUTCOMES.md). With --transactional
it produces in transactions with aiokafka's transactional API (produce_txn;
drivers/WORKLOADS.md, "Transactions").

    py=$(drivers/python/setup.sh) && "$py" drivers/python/aiokafka_driver.py --bootstrap HOST:PORT --topic T

How aiokafka is configured, and why (aiokafka 0.14.0's source):

- Idempotence: enable_idempotence=True with acks="all", as its documentation
  requires (AIOKafkaProducer.__init__ refuses any other acks with it).
- In flight: aiokafka has no max.in.flight setting. Its Sender._sender_routine
  (producer/sender.py) drains batches only for nodes without a request in
  flight (drain_by_nodes(ignore_nodes=self._in_flight)) and mutes each
  partition sent until its request is answered: one produce request in
  flight per broker and one batch per partition, the closest it comes to 5
  (the Java, kgo and librdkafka drivers run 5).
- --delivery-timeout-ms: aiokafka has no delivery timeout. With idempotence
  a batch is retried until it succeeds or gets a non-retriable error
  (SendProduceReqHandler._can_retry: "If idempotence is enabled we never
  expire batches"); the one expiry left is MessageAccumulator.drain_by_nodes
  failing a batch older than request_timeout_ms whose partition has no
  leader. The flag only bounds this driver's wait for the reports (delivery
  timeout + 30 s, as the other drivers').
- --request-timeout-ms is request_timeout_ms: the ProduceRequest's timeout
  field and the client's wait for each response (Java's request.timeout.ms),
  the batches' time-to-live in the accumulator above, and how long send()
  waits for room in a partition's one pending batch (KafkaTimeoutError).
- Partitioning: aiokafka's default partitioner, murmur2 on keys as the Java
  client; records without a key (--keys 0) go to a random partition (Java:
  sticky). linger_ms=0 and max_batch_size (16384, Java's batch.size) are the
  defaults; --batch-records changes them (batch_settings).
"""

import asyncio
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import seed  # noqa: E402
from seed import SetupError  # noqa: E402

PREFIX = "aiokafka driver: "
# Why --replication-factor -1 is refused: aiokafka's NewTopic takes -1 only
# with a replica assignment, and its CreateTopics goes up to version 3, before
# version 4 let a topic take the brokers' default (KIP-464).
NO_BROKER_DEFAULT = ("aiokafka 0.14.0 cannot ask for the brokers' default.replication.factor: "
                     "its CreateTopics predates it")
MAX_IN_FLIGHT = 1  # produce requests in flight per broker: aiokafka's Sender, not a setting
DIFFERS = ("one produce request in flight per broker and one batch per partition (aiokafka's Sender, "
           "not configurable; Java, kgo and librdkafka: 5); no delivery timeout: with idempotence a batch is "
           "retried until it succeeds or fails with a non-retriable error (a batch older than "
           "request_timeout_ms whose partition has no leader is failed), the delivery timeout only bounds "
           "the wait for reports; send() waits at most request_timeout_ms for room in a partition's pending "
           "batch; records without a key go to a random partition (Java: sticky)")


class ChosenPartition:
    """aiokafka's default partitioner, remembering the partition it chose
    last: the partition of the record just sent, for a failure's report
    (aiokafka's errors do not carry it)."""

    def __init__(self, inner):
        self.inner = inner
        self.last = -1

    def __call__(self, key, all_partitions, available):
        self.last = self.inner(key, all_partitions, available)
        return self.last


def batch_settings(shape):
    """aiokafka's settings for --batch-records (drivers/WORKLOADS.md).
    default: linger_ms=0 and aiokafka's max_batch_size (16384). one:
    max_batch_size=0: aiokafka's record batch builder takes a batch's first
    record whatever its size and no second one over max_batch_size (send()
    then waits for the partition's one pending batch to drain, as it does
    for a full batch of any size). many: linger_ms=20, max_batch_size=256 KiB."""
    if shape == "one":
        return {"linger_ms": 0, "max_batch_size": 0}
    if shape == "many":
        return {"linger_ms": seed.MANY_LINGER_MS, "max_batch_size": seed.MANY_BATCH_BYTES}
    return {"linger_ms": 0}


async def create_topic(ak, cfg):
    """Waits until a broker answers (a bounded wait), creates the topic and
    waits until every partition has a leader, as kcheck run does; then the
    produce starts at once."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    bootstrap, topic, partitions = cfg["bootstrap"], cfg["topic"], cfg["partitions"]
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="kcheck-aiokafka-admin",
                                request_timeout_ms=seed.CREATE_TIMEOUT_S * 1000)
    try:
        b = seed.Backoff(seed.REACH_TIMEOUT_S, 0.1, 1.0)
        while True:
            try:
                await admin.start()
                break
            except ak.errors.KafkaError as e:
                w = b.next()
                if w is None:
                    raise SetupError("%sno broker answers at %s after %d s: %s"
                                     % (PREFIX, bootstrap, seed.REACH_TIMEOUT_S, e))
                await asyncio.sleep(w)
        try:
            resp = await admin.create_topics([NewTopic(topic, partitions, cfg["replication_factor"])],
                                             timeout_ms=seed.CREATE_TIMEOUT_S * 1000)
        except ak.errors.KafkaError as e:
            raise SetupError('%screating topic "%s" at %s: %s' % (PREFIX, topic, bootstrap, e))
        for t in resp.topic_errors:
            err = ak.errors.for_code(t[1])
            if err is ak.errors.TopicAlreadyExistsError:
                raise SetupError('%stopic "%s" already exists: pick a new --topic' % (PREFIX, topic))
            if err is not ak.errors.NoError:
                msg = err.message + (": " + t[2] if len(t) > 2 and t[2] else "")
                raise SetupError('%screating topic "%s" at %s: %s' % (PREFIX, topic, bootstrap, msg))

        b = seed.Backoff(seed.LEADER_TIMEOUT_S)
        while True:
            try:
                md = await admin.describe_topics([topic])
                ps = [p for t in md if t["topic"] == topic and t["error_code"] == 0 for p in t["partitions"]]
                if len(ps) == partitions and all(p["error_code"] == 0 and p["leader"] >= 0 for p in ps):
                    return
            except ak.errors.KafkaError:
                pass  # not yet visible; retry
            w = b.next()
            if w is None:
                raise SetupError('%stopic "%s": partitions have no leaders after %d s'
                                 % (PREFIX, topic, seed.LEADER_TIMEOUT_S))
            await asyncio.sleep(w)
    finally:
        await admin.close()


async def experiment(ak, cfg, t0, out):
    await create_topic(ak, cfg)
    records = cfg["records"]
    chosen = ChosenPartition(ak.producer.producer._DEFAULT_PARTITIONER)
    producer = ak.AIOKafkaProducer(
        bootstrap_servers=cfg["bootstrap"],
        client_id="kcheck-aiokafka",
        enable_idempotence=True,
        acks="all",
        compression_type=None if cfg["compression"] == "none" else cfg["compression"],
        request_timeout_ms=cfg["request_timeout_ms"],
        partitioner=chosen,
        **batch_settings(cfg["batch_records"]),
        # --transactional: the transactional id and nothing else
        # (transaction_timeout_ms stays aiokafka's 60 s).
        **({} if cfg["txn"] is None else {"transactional_id": cfg["txn"].id}),
    )
    try:
        await asyncio.wait_for(producer.start(), seed.REACH_TIMEOUT_S)  # InitProducerId
    except (ak.errors.KafkaError, asyncio.TimeoutError) as e:
        raise SetupError("%sstarting the producer: %s" % (PREFIX, seed.exception_text(e)))

    w = seed.Workload(cfg["value_bytes"], cfg["keys"])
    key_of = [-1] * records
    part_of = [-1] * records
    reports = seed.Reports(records, out, cfg["idle_after"])
    idle = seed.Idle(cfg, reports)

    def on_done(n):
        def cb(f):
            if f.cancelled():
                reports.failure(n, part_of[n], "cancelled", "cancelled")
            elif f.exception() is not None:
                e = f.exception()
                reports.failure(n, part_of[n], seed.exception_name(e), seed.exception_text(e),
                                seed.exception_code(e, ak.errors.BrokerResponseError))
            else:
                md = f.result()
                reports.success(n, md.partition, md.offset)
        return cb

    async def send(n):
        """Sends record n: its report comes through on_done."""
        key_of[n], key = w.next_key()
        chosen.last = -1
        try:
            fut = await producer.send(cfg["topic"], value=w.value(n), key=key,
                                      headers=[(seed.ID_HEADER, w.id_header(n))])
            part_of[n] = chosen.last
            fut.add_done_callback(on_done(n))
        except ak.errors.KafkaError as e:  # no room in time (KafkaTimeoutError), or the producer failed
            part_of[n] = chosen.last
            reports.failure(n, part_of[n], seed.exception_name(e), seed.exception_text(e),
                            seed.exception_code(e, ak.errors.BrokerResponseError))

    async def stop():
        try:
            await asyncio.wait_for(producer.stop(), seed.CLOSE_TIMEOUT_S)  # Java's producer.close(5 s)
        except (asyncio.TimeoutError, ak.errors.KafkaError):
            pass

    try:
        if cfg["txn"] is not None:
            sent = await produce_txn(ak, producer, cfg, reports, out, send)
        else:
            sent = await produce(cfg, reports, idle, send)
    except SetupError:  # could not run transactions
        await stop()
        raise
    reports.close()
    await stop()
    seed.close_outcomes(out, PREFIX)

    tally = seed.Tally(key_of)
    await read_back(ak, cfg, tally)
    tally.finish(sent, reports.acked)
    extra = {"max_in_flight": MAX_IN_FLIGHT, "differs": DIFFERS}
    if cfg["txn"] is not None:
        extra.update(cfg["txn"].keys())
    return seed.summary("aiokafka", ak.__version__, sent, reports, tally, t0, extra, seed.shape_keys(cfg, idle))


async def produce(cfg, reports, idle, send):
    """The idempotent produce phase; returns the records sent."""
    records = cfg["records"]
    sent = 0
    for n in range(records + 1):
        if idle.due(n):  # the callbacks come from the event loop
            deadline = time.monotonic() + idle.wait_s()
            while reports.first_pending() > 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            idle.begin()
            await asyncio.sleep(idle.sleep_s())
            idle.end()
        if n == records:
            break
        await send(n)
        sent += 1
    # A bounded wait instead of flush(), so a stalled producer is reported
    # rather than waited on forever.
    deadline = time.monotonic() + cfg["delivery_timeout_ms"] / 1000 + seed.GRACE_S
    while reports.pending() > 0 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return sent


def txn_text(e):
    """A transaction call's error for first_error and --outcomes: its text,
    and its cause's when it has one (aiokafka's sender wraps what stopped it
    in KafkaError("Unexpected error during batch delivery"))."""
    text = seed.exception_text(e)
    return text if e.__cause__ is None else "%s (cause: %s)" % (text, seed.exception_text(e.__cause__))


async def produce_txn(ak, producer, cfg, reports, out, send):
    """The produce phase of --transactional (drivers/WORKLOADS.md,
    "Transactions") with aiokafka's transactional API: for each transaction
    begin_transaction() (the first waits for InitProducerId), its records
    sent, a wait for each record's report (bounded by the delivery timeout +
    grace; a record without one gets its none line, its transaction is
    aborted and is the last), then commit_transaction(), or
    abort_transaction() for every --txn-abort-every-th. A failed commit is
    aborted unless the producer's transaction state is a fatal error, as
    aiokafka's own transaction() context manager does (TransactionContext);
    any other failure ends the phase. Each call is bounded by the delivery
    timeout + grace (asyncio.wait_for: a timeout is a failure). An error
    that says the broker cannot run transactions (seed.TXN_CANNOT_RUN;
    aiokafka's IncompatibleBrokerVersion, for a request the broker does not
    know, as the cause of the error that stopped its sender; any failure of
    the first begin, which waits for the producer id) is a setup error:
    could not run. Returns the records sent."""
    txn, records = cfg["txn"], cfg["records"]
    bound = cfg["delivery_timeout_ms"] / 1000 + seed.GRACE_S

    async def call(f, what, tx):
        """f()'s error, None if it returned; a cannot-run error is raised."""
        try:
            await asyncio.wait_for(f(), bound)
            return None
        except (ak.errors.KafkaError, asyncio.TimeoutError) as e:
            code = seed.exception_code(e, ak.errors.BrokerResponseError)
            text = "transaction %d: %s: %s" % (tx, what, txn_text(e))
            if code in seed.TXN_CANNOT_RUN or isinstance(e.__cause__, ak.errors.IncompatibleBrokerVersion) \
                    or what == "begin" and tx == 1:
                raise SetupError("%scould not run transactions: %s" % (PREFIX, text))
            reports.note(text)
            return e

    def end(tx, commit, err, count=True):
        text = None if err is None else txn_text(err)
        return txn.end(out, tx, commit, text, seed.exception_code(err, ak.errors.BrokerResponseError), count)

    sent, tx = 0, 0
    while sent < records:
        tx += 1
        if await call(producer.begin_transaction, "begin", tx) is not None:
            break
        first, k = sent, min(txn.records, records - sent)
        for n in range(first, first + k):
            await send(n)
        sent += k
        deadline = time.monotonic() + bound
        while reports.pending_in(first, sent) > 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        stalled = reports.close_range(first, sent) > 0
        commit = not txn.abort(tx) and not stalled
        err = await call(producer.commit_transaction if commit else producer.abort_transaction,
                         "commit" if commit else "abort", tx)
        ended = end(tx, commit, err)
        if err is not None and commit and not producer._txn_manager.is_fatal_error():
            err = await call(producer.abort_transaction, "abort after a failed commit", tx)
            ended = end(tx, False, err, count=False)
        if not ended or stalled:
            break
    return sent


async def read_back(ak, cfg, tally):
    """Reads every partition from the beginning up to its end offset with
    assign(), no group and no commits, into tally."""
    topic, partitions = cfg["topic"], cfg["partitions"]
    tps = [ak.TopicPartition(topic, p) for p in range(partitions)]
    consumer = ak.AIOKafkaConsumer(bootstrap_servers=cfg["bootstrap"], client_id="kcheck-aiokafka-readback",
                                   group_id=None, enable_auto_commit=False, auto_offset_reset="earliest",
                                   isolation_level="read_uncommitted")
    consumer.assign(tps)
    try:
        await consumer.start()
        try:
            end = await consumer.end_offsets(tps)
        except ak.errors.KafkaError as e:
            raise SetupError('%sread-back: end offsets of "%s": %s' % (PREFIX, topic, seed.exception_text(e)))
        await consumer.seek_to_beginning(*tps)
        rb = seed.ReadBack({tp.partition: off for tp, off in end.items()}, tally, PREFIX)
        while rb.more():
            for tp, msgs in (await consumer.getmany(timeout_ms=500, max_records=2000)).items():
                for m in msgs:
                    rb.add(tp.partition, m.offset, m.value)
            # A transactional run's markers take offsets up to the end that
            # no record's offset reaches; the position passes them.
            for tp in tps:
                rb.passed(tp.partition, await consumer.position(tp))
    finally:
        await consumer.stop()


def run(cfg, t0):
    import aiokafka as ak
    import aiokafka.producer.producer  # noqa: F401 (the default partitioner)

    seed.quiet("aiokafka")
    out = seed.open_outcomes(cfg["outcomes"], PREFIX)
    return asyncio.run(experiment(ak, cfg, t0, out))


if __name__ == "__main__":
    sys.exit(seed.main(sys.argv[1:], PREFIX, "aiokafka", run, NO_BROKER_DEFAULT, transactional=True))
