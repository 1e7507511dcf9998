"""Tests of the drivers' transactional produce phases against stand-in
producers that fail as the clients document (no broker): which lines a
failed commit writes, when the driver aborts after it, when it stops, and
when it could not run.

    py=$(drivers/python/setup.sh) && "$py" -m unittest discover -s drivers/python -p 'test_*.py'
"""

import io
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import seed  # noqa: E402


class FakeRdkafka:
    """confluent-kafka's Producer as driver.produce_txn uses it: each
    record delivered at the next poll(); commit_transaction() raises the
    next of commit_errors (None: it commits)."""

    def __init__(self, ck, commit_errors=(), init_error=None):
        self.ck, self.commit_errors, self.init_error = ck, list(commit_errors), init_error
        self.pending, self.calls, self.offset = [], [], 0

    def init_transactions(self, timeout):
        self.calls.append("init")
        if self.init_error is not None:
            raise self.ck.KafkaException(self.init_error)

    def begin_transaction(self):
        self.calls.append("begin")

    def produce(self, topic, value, key, headers, on_delivery):
        self.pending.append(on_delivery)

    def poll(self, timeout):
        pending, self.pending = self.pending, []
        for cb in pending:
            msg = FakeMessage(0, self.offset)
            self.offset += 1
            cb(None, msg)

    def commit_transaction(self, timeout):
        self.calls.append("commit")
        err = self.commit_errors.pop(0) if self.commit_errors else None
        if err is not None:
            raise self.ck.KafkaException(err)

    def abort_transaction(self, timeout):
        self.calls.append("abort")


class FakeMessage:
    def __init__(self, p, off):
        self.p, self.off = p, off

    def partition(self):
        return self.p

    def offset(self):
        return self.off


class LibrdkafkaTxnTest(unittest.TestCase):
    """driver.produce_txn (librdkafka)."""

    def run_txn(self, producer, records=6, per=2, abort_every=0):
        import confluent_kafka as ck
        import driver
        cfg = {"records": records, "delivery_timeout_ms": 1000, "topic": "t",
               "txn": seed.Txn(records=per, abort_every=abort_every, tid="x")}
        b = io.StringIO()
        out = seed.Outcomes(b)
        reports = seed.Reports(records, out)
        w = seed.Workload(10, 0)

        def on_delivery(n):
            return lambda err, msg: reports.success(n, msg.partition(), msg.offset())
        sent = driver.produce_txn(ck, producer, cfg, w, [-1] * records, reports, out, on_delivery)
        return sent, b.getvalue(), cfg["txn"], reports

    def test_commits_and_aborts(self):
        import confluent_kafka as ck
        p = FakeRdkafka(ck)
        sent, lines, txn, _ = self.run_txn(p, abort_every=2)
        self.assertEqual(sent, 6)
        self.assertEqual(lines, '{"id":0,"p":0,"off":0}\n{"id":1,"p":0,"off":1}\n'
                                '{"tx":1,"commit":true,"res":"committed"}\n'
                                '{"id":2,"p":0,"off":2}\n{"id":3,"p":0,"off":3}\n'
                                '{"tx":2,"commit":false,"res":"aborted"}\n'
                                '{"id":4,"p":0,"off":4}\n{"id":5,"p":0,"off":5}\n'
                                '{"tx":3,"commit":true,"res":"committed"}\n')
        self.assertEqual((txn.committed, txn.aborted, txn.failed), (2, 1, 0))
        self.assertEqual(p.calls, ["init", "begin", "commit", "begin", "abort", "begin", "commit"])

    def test_abortable_commit(self):
        """A commit whose error says txn_requires_abort: its failed line,
        then the abort's; the next transaction goes on."""
        import confluent_kafka as ck
        err = ck.KafkaError(ck.KafkaError.INVALID_TXN_STATE, "x", txn_requires_abort=True)
        sent, lines, txn, reports = self.run_txn(FakeRdkafka(ck, [None, err]))
        self.assertEqual(sent, 6)
        self.assertIn('{"tx":2,"commit":true,"res":"failed","err":"INVALID_TXN_STATE: x","code":48}\n'
                      '{"tx":2,"commit":false,"res":"aborted"}\n', lines)
        self.assertTrue(lines.endswith('{"tx":3,"commit":true,"res":"committed"}\n'), lines)
        self.assertEqual((txn.committed, txn.aborted, txn.failed), (2, 0, 1))
        self.assertEqual(reports.first_error, "transaction 2: commit: INVALID_TXN_STATE: x")

    def test_fatal_commit(self):
        """A fatal error: its failed line, no abort, and the phase ends."""
        import confluent_kafka as ck
        err = ck.KafkaError(ck.KafkaError._FENCED, "fenced", fatal=True)
        p = FakeRdkafka(ck, [err])
        sent, lines, txn, _ = self.run_txn(p)
        self.assertEqual(sent, 2)
        self.assertTrue(lines.endswith('{"tx":1,"commit":true,"res":"failed","err":"_FENCED: fenced"}\n'), lines)
        self.assertEqual((txn.committed, txn.aborted, txn.failed), (0, 0, 1))
        self.assertEqual(p.calls, ["init", "begin", "commit"])

    def test_could_not_run(self):
        import confluent_kafka as ck
        err = ck.KafkaError(ck.KafkaError._UNSUPPORTED_FEATURE, "no EndTxn")
        with self.assertRaises(seed.SetupError) as e:
            self.run_txn(FakeRdkafka(ck, [err]))
        self.assertEqual(str(e.exception), "python driver: could not run transactions: transaction 1: commit: "
                                           "_UNSUPPORTED_FEATURE: no EndTxn")
        with self.assertRaises(seed.SetupError) as e:
            self.run_txn(FakeRdkafka(ck, init_error=ck.KafkaError(ck.KafkaError._TIMED_OUT, "slow")))
        self.assertEqual(str(e.exception), "python driver: could not run transactions: init_transactions: "
                                           "_TIMED_OUT: slow")


class FakeTxnManager:
    def __init__(self):
        self.fatal = False

    def has_fatal_error(self):  # kafka-python's
        return self.fatal

    def is_fatal_error(self):  # aiokafka's
        return self.fatal


class FakePyProducer:
    """kafka-python's KafkaProducer as kafka_python_driver.produce_txn uses
    it: commit_transaction() raises the next of commit_errors (None: it
    commits); an error with fatal set puts the transaction manager in its
    fatal state first."""

    def __init__(self, commit_errors=()):
        self.commit_errors, self.calls = list(commit_errors), []
        self._transaction_manager = self._txn_manager = FakeTxnManager()

    def init_transactions(self):
        self.calls.append("init")

    def begin_transaction(self):
        self.calls.append("begin")

    def commit_transaction(self):
        self.calls.append("commit")
        err = self.commit_errors.pop(0) if self.commit_errors else None
        if err is not None:
            self._transaction_manager.fatal = getattr(err, "fatal", False)
            raise err

    def abort_transaction(self):
        self.calls.append("abort")


class FakeAioProducer(FakePyProducer):
    """aiokafka's AIOKafkaProducer: the same calls, as coroutines."""

    async def begin_transaction(self):
        FakePyProducer.begin_transaction(self)

    async def commit_transaction(self):
        FakePyProducer.commit_transaction(self)

    async def abort_transaction(self):
        FakePyProducer.abort_transaction(self)


def ends(lines):
    """The transaction lines of an outcomes report, as (tx, commit, res, code)."""
    import json
    return [(e["tx"], e["commit"], e["res"], e.get("code")) for e in map(json.loads, lines.splitlines()) if "tx" in e]


class PythonClientsTxnTest(unittest.TestCase):
    """kafka_python_driver.produce_txn and aiokafka_driver.produce_txn: a
    failed commit is aborted unless the client's transaction state is
    fatal, and then the phase ends; an UNSUPPORTED_VERSION could not run."""

    def run_txn(self, client, producer, records=6, per=2):
        cfg = {"records": records, "delivery_timeout_ms": 1000, "txn": seed.Txn(records=per, tid="x")}
        b = io.StringIO()
        out = seed.Outcomes(b)
        reports = seed.Reports(records, out)
        if client == "kafka-python":
            import kafka as kp
            import kafka.errors  # noqa: F401
            import kafka_python_driver as d
            sent = d.produce_txn(kp, producer, cfg, reports, out, lambda n: reports.success(n, 0, n))
        else:
            import asyncio
            import aiokafka as ak
            import aiokafka_driver as d

            async def send(n):
                reports.success(n, 0, n)
            sent = asyncio.run(d.produce_txn(ak, producer, cfg, reports, out, send))
        return sent, b.getvalue(), cfg["txn"]

    def errors(self, client):
        if client == "kafka-python":
            import kafka.errors as e
            return e.InvalidTxnStateError("x"), e.ProducerFencedError("f"), e.UnsupportedVersionError("v")
        import aiokafka.errors as e
        return e.InvalidTxnState("x"), e.ProducerFenced(), e.UnsupportedVersionError("v")

    def test_clients(self):
        for client, fake in (("kafka-python", FakePyProducer), ("aiokafka", FakeAioProducer)):
            with self.subTest(client=client):
                abortable, fatal, unsupported = self.errors(client)
                p = fake([None, abortable])
                sent, lines, txn = self.run_txn(client, p)
                self.assertEqual(sent, 6)
                self.assertEqual(ends(lines), [(1, True, "committed", None), (2, True, "failed", 48),
                                               (2, False, "aborted", None), (3, True, "committed", None)])
                self.assertEqual((txn.committed, txn.aborted, txn.failed), (2, 0, 1))

                fatal.fatal = True
                p = fake([fatal])
                sent, lines, txn = self.run_txn(client, p)
                self.assertEqual((sent, [e[:3] for e in ends(lines)]), (2, [(1, True, "failed")]))
                self.assertNotIn("abort", p.calls)

                with self.assertRaises(seed.SetupError) as e:
                    self.run_txn(client, fake([unsupported]))
                self.assertIn("could not run transactions: transaction 1: commit: ", str(e.exception))


if __name__ == "__main__":
    unittest.main()
