"""Tests of seed.py's pure parts: the flags, the records, --outcomes' lines
and the read-back's counts; and of the error codes the drivers take from
each client's own error types (the clients of setup.sh's virtualenv). No
broker.

    py=$(drivers/python/setup.sh) && "$py" -m unittest discover -s drivers/python -p 'test_*.py'
"""

import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import seed  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVERS = ("driver.py", "aiokafka_driver.py", "kafka_python_driver.py")


class ParseArgsTest(unittest.TestCase):
    def test_defaults(self):
        cfg = seed.parse_args(["--bootstrap", "h:1", "--topic", "t"], "x: ")
        self.assertEqual(cfg, {
            "bootstrap": "h:1", "topic": "t", "compression": "gzip", "outcomes": "", "partitions": 64,
            "replication_factor": 1, "records": 3000, "value_bytes": 10240, "keys": 1024, "delivery_timeout_ms": 5000,
            "request_timeout_ms": 2000, "batch_records": "default", "idle_after": -1, "idle_ms": 0})
        cfg = seed.parse_args(["--bootstrap", "h:1", "--topic", "t", "--outcomes", "f", "--records", "0"], "x: ")
        self.assertEqual((cfg["outcomes"], cfg["records"]), ("f", 0))

    def test_replication_factor(self):
        for v, why_not in (("3", ""), ("-1", ""), ("32767", ""), ("3", "no default")):
            cfg = seed.parse_args(["--bootstrap", "h:1", "--topic", "t", "--replication-factor", v], "x: ", why_not)
            self.assertEqual(cfg["replication_factor"], int(v), (v, why_not))
        # A client that cannot ask for the brokers' default refuses -1 with why.
        for v, why_not, want in (
            ("-1", "no default", "x: --replication-factor wants a number from 1 to 32767, not -1 (no default)"),
            ("0", "no default", "x: --replication-factor wants a number from 1 to 32767, not 0"),
        ):
            with self.assertRaises(seed.SetupError, msg=v) as e:
                seed.parse_args(["--bootstrap", "h:1", "--topic", "t", "--replication-factor", v], "x: ", why_not)
            self.assertEqual(str(e.exception), want)

    def test_errors(self):
        # The messages of bench/loadgen/seed_test.go's TestParseSeed.
        for argv, want in [
            (["--bootstrap", "h:1", "--topic"], seed.USAGE),
            (["bootstrap", "h:1"], seed.USAGE),
            (["--bootstrap", "h:1", "--topic", "t", "--bogus", "1"], "x: unknown flag --bogus\n" + seed.USAGE),
            (["--topic", "t"], "x: --bootstrap is required"),
            (["--bootstrap", "h:1"], "x: --topic is required"),
            (["--bootstrap", "h:1", "--topic", "t", "--records", "x"], "x: --records wants a number, not x"),
            (["--bootstrap", "h:1", "--topic", "t", "--keys", "2147483648"], "x: --keys wants a number, not 2147483648"),
            (["--bootstrap", "h:1", "--topic", "t", "--partitions", "0"],
             "x: --partitions wants a number of at least 1, not 0"),
            (["--bootstrap", "h:1", "--topic", "t", "--compression", "brotli"],
             "x: --compression wants none, gzip, snappy, lz4 or zstd, not brotli"),
            (["--bootstrap", "h:1", "--topic", "t", "--replication-factor", "0"],
             "x: --replication-factor wants a number from 1 to 32767, or -1 (the brokers' "
             "default.replication.factor), not 0"),
            (["--bootstrap", "h:1", "--topic", "t", "--replication-factor", "-2"],
             "x: --replication-factor wants a number from 1 to 32767, or -1 (the brokers' "
             "default.replication.factor), not -2"),
            (["--bootstrap", "h:1", "--topic", "t", "--replication-factor", "32768"],
             "x: --replication-factor wants a number from 1 to 32767, or -1 (the brokers' "
             "default.replication.factor), not 32768"),
            (["--bootstrap", "h:1", "--topic", "t", "--replication-factor", "three"],
             "x: --replication-factor wants a number, not three"),
            (["--bootstrap", "h:1", "--topic", "t", "--records", "-1", "--keys", "x"],
             "x: --records wants a number of at least 0, not -1"),
            (["--bootstrap", "h:1", "--topic", "t", "--batch-records", "few"],
             "x: --batch-records wants one, many or default, not few"),
            (["--bootstrap", "h:1", "--topic", "t", "--idle-after", "-1", "--idle-ms", "5"],
             "x: --idle-after wants a number of at least 0, not -1"),
            (["--bootstrap", "h:1", "--topic", "t", "--idle-after", "1", "--idle-ms", "-5"],
             "x: --idle-ms wants a number of at least 0, not -5"),
            (["--bootstrap", "h:1", "--topic", "t", "--idle-after", "x", "--idle-ms", "5"],
             "x: --idle-after wants a number, not x"),
            (["--bootstrap", "h:1", "--topic", "t", "--records", "10", "--idle-after", "11", "--idle-ms", "5"],
             "x: --idle-after wants a number of at most --records (10), not 11"),
            (["--bootstrap", "h:1", "--topic", "t", "--idle-after", "10"],
             "x: --idle-after needs --idle-ms (how long the idle phase lasts)"),
            (["--bootstrap", "h:1", "--topic", "t", "--idle-ms", "10"],
             "x: --idle-ms needs --idle-after (how many records come before the idle phase)"),
        ]:
            with self.assertRaises(seed.SetupError, msg=argv) as e:
                seed.parse_args(argv, "x: ")
            self.assertEqual(str(e.exception), want, argv)

    def test_shapes(self):
        for argv, want in [
            (["--batch-records", "one"], ("one", -1, 0)),
            (["--batch-records", "many", "--idle-after", "100", "--idle-ms", "1500"], ("many", 100, 1500)),
            (["--batch-records", "default", "--idle-after", "0", "--idle-ms", "0"], ("default", 0, 0)),
            (["--records", "7", "--idle-after", "7", "--idle-ms", "1"], ("default", 7, 1)),
        ]:
            cfg = seed.parse_args(["--bootstrap", "h:1", "--topic", "t"] + argv, "x: ")
            self.assertEqual((cfg["batch_records"], cfg["idle_after"], cfg["idle_ms"]), want, argv)

    def test_batch_settings(self):
        """Each driver's client settings for --batch-records
        (drivers/WORKLOADS.md); only the batching changes."""
        import aiokafka_driver
        import driver
        import kafka_python_driver
        self.assertEqual(driver.batch_settings("default"), {"linger.ms": 0})
        self.assertEqual(driver.batch_settings("one"), {"linger.ms": 0, "batch.num.messages": 1})
        self.assertEqual(driver.batch_settings("many"), {"linger.ms": 20, "batch.size": 262144})
        self.assertEqual(aiokafka_driver.batch_settings("default"), {"linger_ms": 0})
        self.assertEqual(aiokafka_driver.batch_settings("one"), {"linger_ms": 0, "max_batch_size": 0})
        self.assertEqual(aiokafka_driver.batch_settings("many"), {"linger_ms": 20, "max_batch_size": 262144})
        self.assertEqual(kafka_python_driver.batch_settings("default"), {"linger_ms": 0})
        self.assertEqual(kafka_python_driver.batch_settings("one"), {"linger_ms": 0, "batch_size": 0})
        self.assertEqual(kafka_python_driver.batch_settings("many"), {"linger_ms": 20, "batch_size": 262144})

    def test_one_record_a_batch(self):
        """The batch builders of aiokafka and kafka-python (setup.sh's
        virtualenv) take a batch's first record and refuse a second at
        --batch-records one's size, 0; and a hundred at many's."""
        from aiokafka.record.default_records import DefaultRecordBatchBuilder
        from kafka.record.memory_records import MemoryRecordsBuilder
        import aiokafka_driver
        import kafka_python_driver
        for shape, fits in (("one", 1), ("many", 100)):
            size = aiokafka_driver.batch_settings(shape)["max_batch_size"]
            b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=0, producer_id=-1,
                                          producer_epoch=-1, base_sequence=-1, batch_size=size)
            n = sum(1 for i in range(100) if b.append(i, None, b"key-1", b"v" * 100, [("kcheck-id", b"1")]))
            self.assertEqual(n, fits, "aiokafka " + shape)
            m = MemoryRecordsBuilder(2, 0, kafka_python_driver.batch_settings(shape)["batch_size"])
            n = sum(1 for i in range(100) if m.append(None, b"key-1", b"v" * 100, [("kcheck-id", b"1")]))
            self.assertEqual(n, fits, "kafka-python " + shape)

    def test_drivers_exit_2(self):
        """Each driver: bad flags are exit 2, the message on stderr, nothing
        on stdout, before any client is started."""
        with tempfile.TemporaryDirectory() as d:
            for drv in DRIVERS:
                prefix = {"driver.py": "python driver: ", "aiokafka_driver.py": "aiokafka driver: ",
                          "kafka_python_driver.py": "kafka-python driver: "}[drv]
                for argv, want in [
                    (["--bootstrap", "127.0.0.1:1", "--topic", "t", "--bogus", "1"],
                     prefix + "unknown flag --bogus\n" + seed.USAGE + "\n"),
                    (["--topic", "t"], prefix + "--bootstrap is required\n"),
                    (["--bootstrap", "127.0.0.1:1", "--topic", "t", "--batch-records", "two"],
                     prefix + "--batch-records wants one, many or default, not two\n"),
                    (["--bootstrap", "127.0.0.1:1", "--topic", "t", "--idle-after", "5"],
                     prefix + "--idle-after needs --idle-ms"),
                    (["--bootstrap", "127.0.0.1:1", "--topic", "t", "--replication-factor", "0"],
                     prefix + "--replication-factor wants a number from 1 to 32767"),
                    # -1: aiokafka refuses it; the others take it, then stop at $KCHECK_OUTCOMES
                    (["--bootstrap", "127.0.0.1:1", "--topic", "t", "--replication-factor", "-1"],
                     prefix + "--replication-factor wants a number from 1 to 32767, not -1 (aiokafka 0.14.0 cannot "
                     "ask for the brokers' default.replication.factor: its CreateTopics predates it)\n"
                     if drv == "aiokafka_driver.py" else prefix + "--outcomes: "),
                    (["--bootstrap", "127.0.0.1:1", "--topic", "t", "--outcomes", os.path.join(d, "no", "such")],
                     prefix + "--outcomes: "),
                    # without --outcomes, $KCHECK_OUTCOMES (set below) is the file
                    (["--bootstrap", "127.0.0.1:1", "--topic", "t"], prefix + "--outcomes: "),
                ]:
                    env = dict(os.environ, **{seed.OUTCOMES_ENV: os.path.join(d, "no", "such", "env")})
                    p = subprocess.run([sys.executable, os.path.join(HERE, drv)] + argv,
                                       capture_output=True, text=True, timeout=60, env=env)
                    self.assertEqual(p.returncode, 2, (drv, argv, p.stderr))
                    self.assertEqual(p.stdout, "", (drv, argv))
                    self.assertTrue(p.stderr.startswith(want), (drv, argv, p.stderr))


class SetupTest(unittest.TestCase):
    def test_no_python(self):
        """setup.sh without python3 (or with a PYTHON that is not there):
        exit 2, a message naming the clients and what to do, nothing on
        stdout. PATH holds only what the script needs before it looks (bash,
        dirname, cat)."""
        with tempfile.TemporaryDirectory() as d:
            for tool in ("bash", "dirname", "cat"):
                found = next(f for f in (os.path.join(x, tool) for x in ("/usr/bin", "/bin")) if os.path.exists(f))
                os.symlink(found, os.path.join(d, tool))
            for extra, name in (({}, "python3"), ({"PYTHON": os.path.join(d, "nopython")}, os.path.join(d, "nopython"))):
                p = subprocess.run([os.path.join(d, "bash"), os.path.join(HERE, "setup.sh")], capture_output=True,
                                   text=True, timeout=60,
                                   env=dict({"PATH": d, "HOME": d, "KCHECK_CACHE": os.path.join(d, "cache")}, **extra))
                self.assertEqual((p.returncode, p.stdout), (2, ""), p.stderr)
                self.assertTrue(p.stderr.startswith(
                    "drivers/python/setup.sh: %s not found, needed for the Python drivers' clients (librdkafka via "
                    "confluent-kafka, aiokafka, kafka-python): install Python 3" % name), p.stderr)

    def test_no_venv(self):
        """A python3 without ensurepip (Debian without python3-venv): exit 2
        naming the package to install."""
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "python3")
            with open(fake, "w") as f:
                f.write('#!/bin/sh\ncase "$*" in *ensurepip*|"-m venv"*) exit 1;; esac\nexec %s "$@"\n' % sys.executable)
            os.chmod(fake, 0o755)
            p = subprocess.run([os.path.join(HERE, "setup.sh")], capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, PYTHON=fake, KCHECK_CACHE=os.path.join(d, "cache")))
            self.assertEqual((p.returncode, p.stdout), (2, ""), p.stderr)
            self.assertIn("has no venv or ensurepip module, needed for the Python drivers' clients", p.stderr)
            self.assertIn("apt-get install python3-venv", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "cache")))


class WorkloadTest(unittest.TestCase):
    def test_java_random(self):
        # new java.util.Random(1): nextInt(26) x5, nextInt(1024), nextInt(1000), as Java 17 draws them.
        r = seed.JavaRandom(1)
        self.assertEqual([r.next_int(26) for _ in range(5)], [17, 0, 7, 9, 12])
        self.assertEqual([r.next_int(1024), r.next_int(1000)], [37, 434])

    def test_values_and_keys(self):
        w = seed.Workload(10, 4)
        self.assertEqual(w.letters, b"rahjmyuwwk")  # Random(1)'s first ten letters
        self.assertEqual(w.value(42), b"rec=42;wwk")
        self.assertEqual(seed.Workload(3, 0).value(42), b"rec")
        self.assertEqual(seed.Workload(3, 0).next_key(), (-1, None))
        i, k = w.next_key()
        self.assertEqual(k, b"key-%d" % i)
        self.assertEqual(w.id_header(42), b"42")

    def test_record_number(self):
        for v, want in {b"rec=0;abc": 0, b"rec=2999;x": 2999, b"rec=12;": 12, b"rec=;abc": 0, b"rec=1": -1,
                        b"rec=1x;": -1, b"rek=1;abc": -1, b"": -1, None: -1, b"rec=12345678901;": -1,
                        b"rec=1234567890;": 1234567890}.items():
            self.assertEqual(seed.record_number(v), want, v)


class OutcomesTest(unittest.TestCase):
    """The lines of drivers/OUTCOMES.md, byte for byte (as
    tracer/outcomes's TestOutcomeLines)."""

    def test_lines(self):
        b = io.StringIO()
        o = seed.Outcomes(b)
        o.success(7, 3, 41)
        o.success(8, 0, -1)
        o.success(14, 1, -1001)  # librdkafka's OFFSET_INVALID: no offset
        o.failure(9, 2, "INVALID_RECORD: x", 87)
        o.failure(10, -1, 'kafka: "quoted" <text> é\n')
        o.failure(11, 5, "UNKNOWN", -1)
        o.failure(12, 5, "NONE", 0)
        o.none(13)
        self.assertEqual(b.getvalue(), '{"id":7,"p":3,"off":41}\n'
                                       '{"id":8,"p":0,"off":-1}\n'
                                       '{"id":14,"p":1,"off":-1}\n'
                                       '{"id":9,"p":2,"err":"INVALID_RECORD: x","code":87}\n'
                                       '{"id":10,"p":-1,"err":"kafka: \\"quoted\\" <text> é\\n"}\n'
                                       '{"id":11,"p":5,"err":"UNKNOWN"}\n'
                                       '{"id":12,"p":5,"err":"NONE"}\n'
                                       '{"id":13,"none":true}\n')
        for line, keys in zip(b.getvalue().splitlines(), [["id", "p", "off"]] * 3 + [["id", "p", "err", "code"]]
                              + [["id", "p", "err"]] * 3 + [["id", "none"]]):
            self.assertEqual(list(json.loads(line)), keys, line)

    def test_txn_lines(self):
        """A transaction's end (drivers/OUTCOMES.md, "Transactions"), as
        tracer/outcomes's Committed, Aborted and TxnFailed write it."""
        b = io.StringIO()
        o = seed.Outcomes(b)
        o.committed(1)
        o.aborted(2)
        o.txn_failed(3, True, 'INVALID_PRODUCER_EPOCH: "x" é', 47)
        o.txn_failed(3, False, "_TIMED_OUT: y", -185)
        o.txn_failed(4, True, "z")
        self.assertEqual(b.getvalue(), '{"tx":1,"commit":true,"res":"committed"}\n'
                                       '{"tx":2,"commit":false,"res":"aborted"}\n'
                                       '{"tx":3,"commit":true,"res":"failed","err":"INVALID_PRODUCER_EPOCH: \\"x\\" é","code":47}\n'
                                       '{"tx":3,"commit":false,"res":"failed","err":"_TIMED_OUT: y"}\n'
                                       '{"tx":4,"commit":true,"res":"failed","err":"z"}\n')
        for line, keys in zip(b.getvalue().splitlines(), [["tx", "commit", "res"]] * 2
                              + [["tx", "commit", "res", "err", "code"]] + [["tx", "commit", "res", "err"]] * 2):
            self.assertEqual(list(json.loads(line)), keys, line)

    def test_txn_end(self):
        """Txn.end writes and counts each end; the abort after a failed
        commit is written, not counted."""
        b = io.StringIO()
        o, t = seed.Outcomes(b), seed.Txn(abort_every=2, tid="i")
        self.assertTrue(t.end(o, 1, True))
        self.assertTrue(t.end(o, 2, False))
        self.assertFalse(t.end(o, 3, True, "E: x", 48))
        self.assertTrue(t.end(o, 3, False, count=False))
        self.assertTrue(t.end(None, 4, False))
        self.assertEqual(b.getvalue(), '{"tx":1,"commit":true,"res":"committed"}\n'
                                       '{"tx":2,"commit":false,"res":"aborted"}\n'
                                       '{"tx":3,"commit":true,"res":"failed","err":"E: x","code":48}\n'
                                       '{"tx":3,"commit":false,"res":"aborted"}\n')
        self.assertEqual(list(t.keys().items()), [
            ("transactional_id", "i"), ("txn_records", 100), ("txn_abort_every", 2),
            ("txn_committed", 1), ("txn_aborted", 2), ("txn_failed", 1)])

    def test_reports_by_transaction(self):
        """close_range ends one transaction's wait: its unanswered records
        get their none lines then, and their later reports are dropped."""
        b = io.StringIO()
        r = seed.Reports(6, seed.Outcomes(b))
        r.success(0, 1, 0)
        r.success(2, 1, 1)
        self.assertEqual(r.pending_in(0, 3), 1)
        self.assertEqual(r.close_range(0, 3), 1)
        self.assertEqual(r.close_range(0, 3), 0)
        r.failure(1, 0, "X", "X: late")
        r.success(3, 0, 0)
        self.assertEqual((r.pending_in(3, 6), r.pending()), (2, 2))
        r.close()
        self.assertEqual(b.getvalue(), '{"id":0,"p":1,"off":0}\n{"id":2,"p":1,"off":1}\n{"id":1,"none":true}\n'
                                       '{"id":3,"p":0,"off":0}\n{"id":4,"none":true}\n{"id":5,"none":true}\n')
        self.assertEqual((r.n_acked, r.failed, r.errors), (3, 3, {seed.NO_CALLBACK: 3}))

    def test_env(self):
        """--outcomes wins; without it $KCHECK_OUTCOMES if not empty; else none."""
        with tempfile.TemporaryDirectory() as d:
            env, flag = os.path.join(d, "env.jsonl"), os.path.join(d, "flag.jsonl")
            old = os.environ.get(seed.OUTCOMES_ENV)
            try:
                os.environ[seed.OUTCOMES_ENV] = ""
                self.assertIsNone(seed.open_outcomes("", "x: "))
                os.environ[seed.OUTCOMES_ENV] = env
                for path, want in (("", env), (flag, flag)):
                    o = seed.open_outcomes(path, "x: ")
                    o.none(1)
                    seed.close_outcomes(o, "x: ")
                    with open(want) as f:
                        self.assertEqual(f.read(), '{"id":1,"none":true}\n')
                    os.remove(want)
                self.assertFalse(os.path.exists(env))
                os.environ[seed.OUTCOMES_ENV] = os.path.join(d, "no", "such")
                with self.assertRaises(seed.SetupError) as e:
                    seed.open_outcomes("", "x: ")
                self.assertTrue(str(e.exception).startswith("x: --outcomes: "), str(e.exception))
            finally:
                if old is None:
                    os.environ.pop(seed.OUTCOMES_ENV, None)
                else:
                    os.environ[seed.OUTCOMES_ENV] = old

    def test_reports(self):
        """Reports write each first and later report as it arrives, none
        after close(), then a none line per unanswered record by id."""
        b = io.StringIO()
        r = seed.Reports(5, seed.Outcomes(b))
        r.success(3, 1, 0)
        r.failure(0, 2, "NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_OR_FOLLOWER: x", 6)
        r.failure(3, 1, "X", "X: again")  # a second report of 3: counted, written
        self.assertEqual(r.pending(), 3)
        r.close()
        r.success(1, 0, 5)  # after the wait: neither counted nor written
        self.assertEqual(b.getvalue(), '{"id":3,"p":1,"off":0}\n'
                                       '{"id":0,"p":2,"err":"NOT_LEADER_OR_FOLLOWER: x","code":6}\n'
                                       '{"id":3,"p":1,"err":"X: again"}\n'
                                       '{"id":1,"none":true}\n{"id":2,"none":true}\n{"id":4,"none":true}\n')
        self.assertEqual((r.n_acked, r.failed, r.first_error, r.acked),
                         (1, 5, "NOT_LEADER_OR_FOLLOWER: x", [False, False, False, True, False]))
        self.assertEqual(r.errors, {"NOT_LEADER_OR_FOLLOWER": 1, "X": 1, seed.NO_CALLBACK: 3})

    def test_none_records(self):
        r = seed.Reports(0)
        self.assertTrue(r.all_answered.is_set())
        r.close()
        self.assertEqual(r.failed, 0)


class TxnFlagsTest(unittest.TestCase):
    """The transactional mode's flags, as drivers/txnmode's TestSplit."""

    def test_split(self):
        t, rest = seed.Txn.split(["--topic", "t", "--records", "5"], "d: ")
        self.assertEqual((t, rest), (None, ["--topic", "t", "--records", "5"]))
        t, rest = seed.Txn.split(["--topic", "t", "--transactional", "--records", "5", "--txn-records", "7",
                                  "--txn-abort-every", "2"], "d: ")
        self.assertEqual(rest, ["--topic", "t", "--records", "5"])
        self.assertEqual((t.records, t.abort_every, t.id), (7, 2, ""))
        cfg = seed.parse_args(["--bootstrap", "h:1"] + rest, "d: ")
        t.check(cfg, "d: ")
        self.assertEqual(t.id, "kcheck-t")
        self.assertEqual([t.abort(tx) for tx in range(1, 7)], [False, True, False, True, False, True])
        t, _ = seed.Txn.split(["--transactional", "--transactional-id", "x"], "d: ")
        t.check(cfg, "d: ")
        self.assertEqual((t.records, t.abort_every, t.id), (seed.TXN_DEFAULT_RECORDS, 0, "x"))
        self.assertFalse(t.abort(1) or t.abort(3))
        cfg["idle_after"] = 4
        with self.assertRaises(seed.SetupError) as e:
            t.check(cfg, "d: ")
        self.assertEqual(str(e.exception), "d: --idle-after with --transactional: a transactional run has no idle phase")

    def test_errors(self):
        for argv, want in [
            (["--txn-records", "5"], "d: --txn-records needs --transactional"),
            (["--transactional-id", "x"], "d: --transactional-id needs --transactional"),
            (["--transactional", "--txn-records"], "d: --txn-records needs a value"),
            (["--transactional", "--txn-records", "0"], "d: --txn-records wants a number of at least 1, not 0"),
            (["--transactional", "--txn-records", "x"], "d: --txn-records wants a number of at least 1, not x"),
            (["--transactional", "--txn-abort-every", "-1"],
             "d: --txn-abort-every wants a number of at least 0 (0: none aborted), not -1"),
            (["--transactional", "--transactional-id", ""], "d: --transactional-id is empty"),
        ]:
            with self.assertRaises(seed.SetupError) as e:
                seed.Txn.split(argv, "d: ")
            self.assertEqual(str(e.exception), want, argv)


class ErrorCodeTest(unittest.TestCase):
    """The code each driver writes, from its client's own error types."""

    def test_librdkafka(self):
        import confluent_kafka as ck
        import driver
        for err, want in [(ck.KafkaError(87), 87), (ck.KafkaError(ck.KafkaError.REQUEST_TIMED_OUT), 7),
                          (ck.KafkaError(ck.KafkaError.NOT_LEADER_FOR_PARTITION), 6),
                          (ck.KafkaError(ck.KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER), 45),
                          (ck.KafkaError(ck.KafkaError._MSG_TIMED_OUT), None),
                          (ck.KafkaError(ck.KafkaError._TRANSPORT), None),
                          (ck.KafkaError(ck.KafkaError.UNKNOWN), None),
                          (ck.KafkaError(0), None), (ValueError("x"), None)]:
            self.assertEqual(driver.error_code(err), want, repr(err))

    def test_kafka_python(self):
        import kafka.errors as ke
        for err, want in [(ke.InvalidRecordError(), 87), (ke.RequestTimedOutError("x"), 7),
                          (ke.NotLeaderForPartitionError(), 6), (ke.for_code(45)(), 45),
                          (ke.for_code(999)(), 999),  # a code kafka-python does not know keeps its errno
                          (ke.UnknownError(), None), (ke.KafkaTimeoutError(), None),
                          (ke.KafkaConnectionError(), None), (OSError(111, "refused"), None)]:
            self.assertEqual(seed.exception_code(err, ke.BrokerResponseError), want, repr(err))

    def test_aiokafka(self):
        import aiokafka.errors as ae
        for err, want in [(ae.RequestTimedOutError(), 7), (ae.NotLeaderForPartitionError(), 6),
                          (ae.for_code(45)(), 45), (ae.InvalidTopicError(), 17),
                          (ae.for_code(87)(), None),  # aiokafka 0.14 has no INVALID_RECORD: UnknownError, -1
                          (ae.UnknownError(), None), (ae.KafkaTimeoutError(), None),
                          (ae.KafkaConnectionError(), None), (OSError(111, "refused"), None)]:
            self.assertEqual(seed.exception_code(err, ae.BrokerResponseError), want, repr(err))


class KafkaPythonCloseTest(unittest.TestCase):
    def test_close_times_out(self):
        """kafka-python's close(timeout) raising KafkaTimeoutError (records
        still pending) force-closes the sender instead of ending the run."""
        import kafka
        import kafka.errors
        import kafka_python_driver

        class Sender:
            forced = False

            def force_close(self):
                self.forced = True

        class Producer:
            _sender, _closed = Sender(), False

            def close(self, timeout=None):
                self.timeout = timeout
                raise kafka.errors.KafkaTimeoutError("Timeout waiting for future")

        p = Producer()
        kafka_python_driver.close_producer(kafka, p)
        self.assertEqual((p.timeout, p._sender.forced, p._closed), (seed.CLOSE_TIMEOUT_S, True, True))


class TallyTest(unittest.TestCase):
    def test_log(self):
        """bench/loadgen/seed_test.go's TestTally: records 0-5 (keys 0, 1, 0,
        1, -1, 0); 0 and 2 on partition 0, 1 and 3 on partition 1, 1 again and
        2 again on the other partition (duplicates), two foreign values; 1
        read after 2 on partition 0 (out of order, though their keys
        differ); 4 lost though acknowledged, 5 lost."""
        t = seed.Tally([0, 1, 0, 1, -1, 0])
        log = {0: [b"rec=0;a", b"rec=2;a", b"rec=1;a", b"other"], 1: [b"rec=1;a", b"rec=3;a", b"rec=2;a", b"rec=6;a"]}
        for p, values in log.items():
            for v in values:
                t.add(p, v)
        t.finish(6, [True, True, True, True, True, False])
        self.assertEqual((t.read_back, t.duplicated, t.out_of_order, t.foreign, t.lost, t.lost_acked),
                         (4, 2, 1, 2, 2, 1))

    def test_reordered(self):
        t = seed.Tally([0, 0, 0, 1])
        for v in (b"rec=0;", b"rec=2;", b"rec=1;", b"rec=3;"):
            t.add(0, v)
        t.finish(4, [True] * 4)
        self.assertEqual((t.read_back, t.out_of_order, t.lost), (4, 1, 0))

    def test_read_back(self):
        """The read-back goes on until every partition reached its end offset
        (an empty partition at once), whatever each poll hands over."""
        t = seed.Tally([0, 0, 0])
        polls = [[], [(0, 0, b"rec=0;")], [(1, 0, b"rec=1;"), (0, 1, b"rec=2;")]]
        rb = seed.ReadBack({0: 2, 1: 1, 2: 0}, t, "x: ")
        while rb.more():
            for p, off, v in polls.pop(0):
                rb.add(p, off, v)
        self.assertEqual((polls, t.read_back), ([], 3))
        rb = seed.ReadBack({0: 1}, t, "x: ")
        rb.deadline = 0
        with self.assertRaises(seed.SetupError) as e:
            rb.more()
        self.assertEqual(str(e.exception), "x: read-back did not reach the end offsets in 120 s")


class SummaryTest(unittest.TestCase):
    def test_line_and_exit(self):
        r = seed.Reports(2)
        r.success(0, 0, 0)
        r.failure(1, -1, "E", "E: é")
        t = seed.Tally([-1, -1])
        t.add(0, b"rec=0;")
        t.finish(2, r.acked)
        out = io.StringIO()
        stdout, sys.stdout = sys.stdout, out
        try:
            code = seed.summary("c", "1.0", 2, r, t, 0.0, {"max_in_flight": 1, "differs": "d"})
        finally:
            sys.stdout = stdout
        line = out.getvalue()
        head, tail = line.split('"ms":')
        self.assertEqual(head, '{"client":"c","version":"1.0","sent":2,"acked":1,"failed":1,"read_back":1,'
                               '"lost":1,"lost_acked":0,"duplicated":0,"out_of_order":0,"foreign":0,'
                               '"failed_errors":{"E":1},"first_error":"E: é",')
        self.assertTrue(tail.endswith(',"max_in_flight":1,"differs":"d"}\n'), tail)
        self.assertEqual(code, 1)

    def test_shape_keys(self):
        """The shape's keys come after ms, before the driver's own, as
        bench/loadgen's SeedResult writes them; none for the default."""
        cfg = seed.parse_args(["--bootstrap", "h:1", "--topic", "t", "--records", "2"], "x: ")
        self.assertEqual(seed.shape_keys(cfg), {})
        cfg = seed.parse_args(["--bootstrap", "h:1", "--topic", "t", "--records", "2", "--batch-records", "one",
                               "--idle-after", "1", "--idle-ms", "30"], "x: ")
        r = seed.Reports(2, None, cfg["idle_after"])
        idle = seed.Idle(cfg, r)
        self.assertEqual(seed.shape_keys(cfg, idle), {"batch_records": "one"})  # not yet run
        self.assertEqual([idle.due(n) for n in range(3)], [False, True, False])
        t = time.monotonic()
        threading.Timer(0.02, lambda: r.success(0, 0, 0)).start()
        idle.run_blocking()
        self.assertGreaterEqual(time.monotonic() - t, 0.049)  # the wait for record 0, then 30 ms idle
        self.assertFalse(idle.due(1), "once")
        keys = seed.shape_keys(cfg, idle)
        self.assertEqual(list(keys), ["batch_records", "idle_after", "idle_ms", "idle_start_ms", "idle_end_ms",
                                      "idle_unanswered"])
        self.assertEqual((keys["idle_after"], keys["idle_ms"], keys["idle_unanswered"]), (1, 30, 0))
        self.assertGreaterEqual(keys["idle_end_ms"] - keys["idle_start_ms"], 30)
        out = io.StringIO()
        stdout, sys.stdout = sys.stdout, out
        try:
            seed.summary("c", "1.0", 2, r, seed.Tally([-1, -1]), 0.0, {"differs": "d"}, keys)
        finally:
            sys.stdout = stdout
        self.assertRegex(out.getvalue(),
                         r'"ms":\d+,"batch_records":"one","idle_after":1,.*"idle_unanswered":0,"differs":"d"}\n$')

    def test_idle_bounded(self):
        """The wait for the records before the idle phase is bounded; the
        ones unanswered are counted."""
        cfg = seed.parse_args(["--bootstrap", "h:1", "--topic", "t", "--records", "2", "--idle-after", "2",
                               "--idle-ms", "0", "--delivery-timeout-ms", "1"], "x: ")
        r = seed.Reports(2, None, 2)
        r.failure(1, 0, "E", "E")
        idle = seed.Idle(cfg, r)
        idle.wait_bound_s = 0.02
        idle.run_blocking(lambda s: time.sleep(s))
        self.assertEqual(idle.unanswered, 1)


if __name__ == "__main__":
    unittest.main()
