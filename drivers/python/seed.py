"""The seed's experiment (KAFKA-14359), shared by the Python drivers
(driver.py: librdkafka; aiokafka_driver.py; kafka_python_driver.py): its
flags, its records, the bookkeeping of delivery reports and --outcomes, how a
read-back is counted, and the one line of JSON with its exit code.
drivers/java (Main.java) is the reference; bench/loadgen/seed.go is the Go
drivers' counterpart. No Kafka client is imported here: each driver brings its
own client and hands this module what the client told it.
"""

import json
import logging
import os
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
USAGE = ("usage: --bootstrap HOST:PORT --topic T [--partitions N] [--replication-factor N] [--records N] "
         "[--value-bytes N] [--keys N] [--compression C] [--delivery-timeout-ms N] [--request-timeout-ms N] "
         "[--batch-records one|many|default] [--idle-after N --idle-ms D] [--outcomes FILE] "
         "[--transactional [--txn-records N] [--txn-abort-every K] [--transactional-id ID]]")
DEFAULTS = {
    "--partitions": "64", "--replication-factor": "1", "--records": "3000", "--value-bytes": "10240", "--keys": "1024",
    "--compression": "gzip", "--delivery-timeout-ms": "5000", "--request-timeout-ms": "2000",
}
MINIMUMS = {
    "--partitions": 1, "--records": 0, "--value-bytes": 0, "--keys": 0,
    "--delivery-timeout-ms": 1, "--request-timeout-ms": 1,
}
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
MAX_REPLICATION_FACTOR = 2**15 - 1  # CreateTopics' int16
# The workload shapes (drivers/WORKLOADS.md): --batch-records, and what
# "many" sets (a linger and a batch size), as every driver.
BATCH_SHAPES = ("one", "many", "default")
MANY_LINGER_MS = 20
MANY_BATCH_BYTES = 256 << 10
OUTCOMES_ENV = "KCHECK_OUTCOMES"  # the outcomes file without --outcomes (kcheck proxy sets it)
NO_CALLBACK = "no callback within delivery timeout + %d s" % GRACE_S  # failed_errors' name for the unanswered


class SetupError(Exception):
    """An error of the setup: exit 2 with its message."""


def parse_args(argv, prefix, no_broker_default=""):
    """Reads "--flag value" pairs as the Java driver does; prefix ("python
    driver: ") starts the messages, not the bare usage (as in Java). Returns
    the config: bootstrap, topic, compression, outcomes ("" for none), the
    numbers under their flag's name with "_" for "-", replication_factor
    (-1: the brokers' default.replication.factor), and the workload's
    shape: batch_records ("one", "many" or "default"), idle_after (-1: no
    idle phase) and idle_ms. no_broker_default says why the driver's client
    cannot ask for the brokers' default replication factor ("": it can);
    then --replication-factor -1 is refused with that reason."""
    a = dict(DEFAULTS, **{"--bootstrap": "", "--topic": "", "--outcomes": "",
                          "--batch-records": "default", "--idle-after": "", "--idle-ms": ""})
    i = 0
    while i < len(argv):
        k = argv[i]
        if not k.startswith("--") or i + 1 == len(argv):
            raise SetupError(USAGE)
        if k not in a:
            raise SetupError("%sunknown flag %s\n%s" % (prefix, k, USAGE))
        a[k] = argv[i + 1]
        i += 2
    for k in ("--bootstrap", "--topic"):
        if not a[k]:
            raise SetupError("%s%s is required" % (prefix, k))
    cfg = {"bootstrap": a["--bootstrap"], "topic": a["--topic"], "compression": a["--compression"],
           "outcomes": a["--outcomes"]}
    def number(k, lo):
        v = a[k]
        if not re.fullmatch(r"[+-]?[0-9]+", v) or int(v) > 2**31 - 1 or int(v) < -2**31:
            raise SetupError("%s%s wants a number, not %s" % (prefix, k, v))
        if int(v) < lo:
            raise SetupError("%s%s wants a number of at least %d, not %s" % (prefix, k, lo, v))
        return int(v)

    for k, lo in MINIMUMS.items():
        cfg[k[2:].replace("-", "_")] = number(k, lo)
    rf = number("--replication-factor", -2**31)
    if not (1 <= rf <= MAX_REPLICATION_FACTOR or rf == -1 and not no_broker_default):
        if no_broker_default:
            raise SetupError("%s--replication-factor wants a number from 1 to %d, not %s%s"
                             % (prefix, MAX_REPLICATION_FACTOR, a["--replication-factor"],
                                " (%s)" % no_broker_default if rf == -1 else ""))
        raise SetupError("%s--replication-factor wants a number from 1 to %d, or -1 (the brokers' "
                         "default.replication.factor), not %s"
                         % (prefix, MAX_REPLICATION_FACTOR, a["--replication-factor"]))
    cfg["replication_factor"] = rf
    after, ms = a["--idle-after"] != "", a["--idle-ms"] != ""
    cfg["idle_after"] = number("--idle-after", 0) if after else -1
    cfg["idle_ms"] = number("--idle-ms", 0) if ms else 0
    if cfg["compression"] not in CODECS:
        raise SetupError("%s--compression wants none, gzip, snappy, lz4 or zstd, not %s"
                         % (prefix, cfg["compression"]))
    cfg["batch_records"] = a["--batch-records"]
    if cfg["batch_records"] not in BATCH_SHAPES:
        raise SetupError("%s--batch-records wants one, many or default, not %s" % (prefix, cfg["batch_records"]))
    if after and not ms:
        raise SetupError("%s--idle-after needs --idle-ms (how long the idle phase lasts)" % prefix)
    if ms and not after:
        raise SetupError("%s--idle-ms needs --idle-after (how many records come before the idle phase)" % prefix)
    if cfg["idle_after"] > cfg["records"]:
        raise SetupError("%s--idle-after wants a number of at most --records (%d), not %d"
                         % (prefix, cfg["records"], cfg["idle_after"]))
    return cfg


class JavaRandom:
    """java.util.Random, so that the drivers draw the same letters and keys
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


class Workload:
    """The records, drawn as the Java driver draws them from Random(1): first
    the value's letters (compressible, like text), then one key index a
    record, in record order, when there are keys."""

    def __init__(self, value_bytes, keys):
        self.rng = JavaRandom(1)
        self.keys = keys
        self.letters = bytes(0x61 + self.rng.next_int(26) for _ in range(value_bytes))

    def next_key(self):
        """The next record's key index and key ("key-<i>"), or -1 and None
        without keys."""
        if self.keys <= 0:
            return -1, None
        i = self.rng.next_int(self.keys)
        return i, b"key-%d" % i

    def value(self, n):
        """Record n's value: "rec=<n>;" then the letters, len(letters) bytes
        (cut short if the tag is longer)."""
        tag = PREFIX + b"%d;" % n
        return (tag + self.letters[len(tag):])[:len(self.letters)]

    @staticmethod
    def id_header(n):
        """Record n's kcheck-id header value."""
        return b"%d" % n


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


def json_text(s):
    """s as a JSON string, as the summary writes strings (UTF-8, no HTML
    escaping)."""
    return json.dumps(s, ensure_ascii=False)


class Outcomes:
    """--outcomes FILE (drivers/OUTCOMES.md): one JSON line a record, in the
    order the client's reports arrive, then a "none" line for each record
    without one at the end of the wait, by id. p is -1 for a record failed
    before its partition was chosen, off -1 where the client gave none; code
    is a failure's Kafka error code, written only when positive."""

    def __init__(self, f):
        self.f = f

    def success(self, n, p, off):
        # A client that reports no offset may say so with its own negative
        # value (librdkafka's OFFSET_INVALID, -1001, for a message its
        # idempotence acknowledged implicitly): the report's is -1.
        self.f.write('{"id":%d,"p":%d,"off":%d}\n' % (n, p, off if off is not None and off >= 0 else -1))

    def failure(self, n, p, text, code=None):
        if isinstance(code, int) and code > 0:
            self.f.write('{"id":%d,"p":%d,"err":%s,"code":%d}\n' % (n, p, json_text(text), code))
        else:
            self.f.write('{"id":%d,"p":%d,"err":%s}\n' % (n, p, json_text(text)))

    def none(self, n):
        self.f.write('{"id":%d,"none":true}\n' % n)

    def committed(self, tx):
        """Transaction tx's commit returned (drivers/OUTCOMES.md, "Transactions")."""
        self.f.write('{"tx":%d,"commit":true,"res":"committed"}\n' % tx)

    def aborted(self, tx):
        """Transaction tx's abort returned."""
        self.f.write('{"tx":%d,"commit":false,"res":"aborted"}\n' % tx)

    def txn_failed(self, tx, commit, text, code=None):
        """Transaction tx's commit (commit true) or abort failed with text;
        code as for a record, written only when positive."""
        head = '{"tx":%d,"commit":%s,"res":"failed","err":%s' % (tx, "true" if commit else "false", json_text(text))
        if isinstance(code, int) and code > 0:
            self.f.write('%s,"code":%d}\n' % (head, code))
        else:
            self.f.write(head + "}\n")


def open_outcomes(path, prefix):
    """The Outcomes writer of --outcomes path, or if that is "" of
    $KCHECK_OUTCOMES; None if both are empty."""
    path = path or os.environ.get(OUTCOMES_ENV, "")
    if not path:
        return None
    try:
        return Outcomes(open(path, "w", encoding="utf-8"))
    except OSError as e:
        raise SetupError("%s--outcomes: %s" % (prefix, e))


def close_outcomes(out, prefix):
    if out is None:
        return
    try:
        out.f.close()
    except OSError as e:
        raise SetupError("%s--outcomes: %s" % (prefix, e))


class Reports:
    """What the client reported for each of the records, as its reports
    arrive (from any thread): acknowledged, or failed with an error's name
    (failed_errors) and text (first_error, --outcomes). A record is answered
    by its first report; every report counts, as in the Java driver. After
    close() later reports are neither counted nor written."""

    def __init__(self, records, outcomes=None, idle_after=-1):
        self.acked = [False] * records  # by record number
        self.answered = [False] * records
        self.n_acked = 0
        self.failed = 0
        self.errors = {}  # failed_errors: name -> records
        self.first_error = None
        self.open = records  # records not yet answered
        self.closed = False
        self.outcomes = outcomes
        self.gone = set()  # records whose wait close_range ended: later reports are dropped
        self.lock = threading.Lock()
        self.all_answered = threading.Event()
        if records == 0:
            self.all_answered.set()
        # The records before the idle phase (idle_after of them) not yet
        # answered; first_answered is set when there are none.
        self.idle_after = idle_after
        self.first_open = max(idle_after, 0)
        self.first_answered = threading.Event()
        if self.first_open == 0:
            self.first_answered.set()

    def success(self, n, p, off):
        with self.lock:
            if self.closed or n in self.gone:
                return
            self.acked[n] = True
            self.n_acked += 1
            if self.outcomes is not None:
                self.outcomes.success(n, p, off)
            self._answer(n)

    def failure(self, n, p, name, text, code=None):
        with self.lock:
            if self.closed or n in self.gone:
                return
            self._count_failed(name, text, 1)
            if self.outcomes is not None:
                self.outcomes.failure(n, p, text, code)
            self._answer(n)

    def pending(self):
        with self.lock:
            return self.open

    def first_pending(self):
        """Of the records before the idle phase, those not yet answered."""
        with self.lock:
            return self.first_open

    def close(self):
        """Ends the wait: each unanswered record is failed as having had no
        callback, and gets its "none" line."""
        with self.lock:
            self.closed = True
            if self.open > 0:
                self._count_failed(NO_CALLBACK, None, self.open)
                if self.outcomes is not None:
                    for n, a in enumerate(self.answered):
                        if not a:
                            self.outcomes.none(n)

    def note(self, text):
        """An error not of a record (a transaction's end): first_error if it
        is the first."""
        with self.lock:
            if self.first_error is None:
                self.first_error = text

    def pending_in(self, lo, hi):
        """Of records lo to hi-1 (a transaction's), those not yet answered."""
        with self.lock:
            return sum(1 for n in range(lo, hi) if not self.answered[n])

    def close_range(self, lo, hi):
        """Ends the wait for records lo to hi-1 (a transaction's) as close()
        ends it for all: each unanswered one is failed as having had no
        callback and gets its "none" line now, and a later report of it is
        neither counted nor written. Returns how many there were."""
        with self.lock:
            late = [n for n in range(lo, hi) if not self.answered[n]]
            if late:
                self._count_failed(NO_CALLBACK, None, len(late))
                for n in late:
                    self.gone.add(n)
                    if self.outcomes is not None:
                        self.outcomes.none(n)
                    self._answer(n)
            return len(late)

    def _count_failed(self, name, text, count):
        self.failed += count
        if self.first_error is None and text is not None:
            self.first_error = text
        self.errors[name] = self.errors.get(name, 0) + count

    def _answer(self, n):
        if not self.answered[n]:
            self.answered[n] = True
            self.open -= 1
            if self.open == 0:
                self.all_answered.set()
            if n < self.idle_after:
                self.first_open -= 1
                if self.first_open == 0:
                    self.first_answered.set()


class Tally:
    """Counts a read-back as the Java driver does: each partition's records in
    its order; a value not of the records sent is foreign, a record read again
    a duplicate, a record read after a later one on its partition out of
    order (one producer's records keep their send order per partition,
    whatever their keys)."""

    def __init__(self, key_of):
        self.key_of = key_of  # key index by record number, -1 without a key
        self.seen = [0] * len(key_of)
        self.last = {}  # partition -> highest record number read
        self.read_back = self.duplicated = self.out_of_order = self.foreign = 0
        self.lost = self.lost_acked = 0

    def add(self, p, value):
        n = record_number(value)
        if n < 0 or n >= len(self.seen):
            self.foreign += 1
            return
        self.seen[n] += 1
        if self.seen[n] > 1:
            self.duplicated += 1
            return
        self.read_back += 1
        k = p  # one producer's records keep their send order per partition, whatever their keys
        prev = self.last.get(k)
        if prev is not None and n < prev:
            self.out_of_order += 1
        if prev is None or n > prev:
            self.last[k] = n

    def finish(self, sent, acked):
        """Counts the lost: of the first sent records, those never read; and
        of them, those acked says were acknowledged."""
        self.lost = self.lost_acked = 0
        for n in range(sent):
            if self.seen[n] == 0:
                self.lost += 1
                if acked[n]:
                    self.lost_acked += 1


class ReadBack:
    """Reads every partition up to its end offset (end: partition -> end
    offset, the high watermark), each record counted by tally, as

        rb = ReadBack(end, tally, prefix)
        while rb.more():
            for p, offset, value in <the client's next records>:
                rb.add(p, offset, value)

    more() is a setup error once READ_TIMEOUT_S has passed."""

    def __init__(self, end, tally, prefix):
        self.end, self.tally, self.prefix = end, tally, prefix
        self.next = {p: 0 for p in end}  # the next offset to read, by partition
        self.deadline = time.monotonic() + READ_TIMEOUT_S

    def more(self):
        if not any(self.next[p] < self.end[p] for p in self.end):
            return False
        if time.monotonic() > self.deadline:
            raise SetupError("%sread-back did not reach the end offsets in %d s" % (self.prefix, READ_TIMEOUT_S))
        return True

    def add(self, p, offset, value):
        self.next[p] = max(self.next.get(p, 0), offset + 1)
        self.tally.add(p, value)

    def passed(self, p, offset):
        """The client says partition p is read up to offset (its position
        past control records, which it does not return)."""
        self.next[p] = max(self.next.get(p, 0), offset)


class Backoff:
    """A doubling backoff from first_s to cap_s, for timeout_s: next() is the
    next wait, None once timeout_s has passed (for a sleep or an await)."""

    def __init__(self, timeout_s, first_s=0.01, cap_s=0.5):
        self.deadline = time.monotonic() + timeout_s
        self.wait, self.cap = first_s, cap_s

    def next(self):
        if time.monotonic() > self.deadline:
            return None
        w, self.wait = self.wait, min(2 * self.wait, self.cap)
        return w


def poll_until(ready, timeout_s, first_s=0.01, cap_s=0.5):
    """Calls ready() until it returns true, sleeping a Backoff between; False
    if timeout_s passes first."""
    b = Backoff(timeout_s, first_s, cap_s)
    while not ready():
        w = b.next()
        if w is None:
            return False
        time.sleep(w)
    return True


class Idle:
    """The idle phase of a driver's produce loop (drivers/WORKLOADS.md):
    produce the first idle_after records, wait until each has been answered,
    produce nothing for idle_ms, then produce the rest. due(n) says whether
    the phase comes before record n (n == records: after the last); the
    driver then waits for reports.first_pending() to reach 0 (at most
    wait_s()), calls begin(), sleeps sleep_s() and calls end()."""

    def __init__(self, cfg, reports):
        self.after, self.ms, self.reports = cfg["idle_after"], cfg["idle_ms"], reports
        self.wait_bound_s = cfg["delivery_timeout_ms"] / 1000 + GRACE_S
        self.start_ms = self.end_ms = self.unanswered = None

    def due(self, n):
        return n == self.after and self.start_ms is None

    def wait_s(self):
        return self.wait_bound_s

    def sleep_s(self):
        return self.ms / 1000

    def begin(self):
        self.start_ms = int(time.time() * 1000)
        self.unanswered = self.reports.first_pending()

    def end(self):
        self.end_ms = int(time.time() * 1000)

    def run_blocking(self, poll=None):
        """The phase for a driver whose reports arrive on other threads, or
        through poll(seconds)."""
        deadline = time.monotonic() + self.wait_s()
        while self.reports.first_pending() > 0 and time.monotonic() < deadline:
            if poll is not None:
                poll(min(0.05, max(0, deadline - time.monotonic())))
            else:
                self.reports.first_answered.wait(max(0, deadline - time.monotonic()))
        self.begin()
        time.sleep(self.sleep_s())
        self.end()


TXN_DEFAULT_RECORDS = 100  # --txn-records without the flag, as kcheck run's
# Kafka error codes that say the broker (or the client's rights on it) cannot
# run transactions at all, as drivers/txnmode's: CLUSTER_AUTHORIZATION_FAILED,
# UNSUPPORTED_VERSION, UNSUPPORTED_FOR_MESSAGE_FORMAT,
# INVALID_TRANSACTION_TIMEOUT, TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
TXN_CANNOT_RUN = (31, 35, 43, 50, 53)


class Txn:
    """The transactional mode (drivers/WORKLOADS.md, "Transactions"), as
    drivers/txnmode is the Go drivers': its flags, which transactions are
    aborted on purpose, each transaction's end written and counted, and the
    keys it adds to the JSON line. The driver uses its client's own
    transactional API."""

    def __init__(self, records=TXN_DEFAULT_RECORDS, abort_every=0, tid=""):
        self.records, self.abort_every, self.id = records, abort_every, tid
        self.committed = self.aborted = self.failed = 0

    @staticmethod
    def split(argv, prefix):
        """Takes the mode's flags out of argv: (Txn or None without
        --transactional, the rest for parse_args). A value missing or bad,
        or a --txn-* flag without --transactional, is a SetupError."""
        on, given, rest = False, {}, []
        i = 0
        while i < len(argv):
            k = argv[i]
            if k == "--transactional":
                on = True
            elif k in ("--txn-records", "--txn-abort-every", "--transactional-id"):
                if i + 1 == len(argv):
                    raise SetupError("%s%s needs a value" % (prefix, k))
                given[k] = argv[i + 1]
                i += 1
            else:
                rest.append(k)
            i += 1
        if not on:
            for k in ("--txn-records", "--txn-abort-every", "--transactional-id"):
                if k in given:
                    raise SetupError("%s%s needs --transactional" % (prefix, k))
            return None, rest
        t = Txn(tid=given.get("--transactional-id", ""))
        if "--txn-records" in given:
            v = given["--txn-records"]
            if not re.fullmatch(r"\+?[0-9]+", v) or not 1 <= int(v) <= 2**31 - 1:
                raise SetupError("%s--txn-records wants a number of at least 1, not %s" % (prefix, v))
            t.records = int(v)
        if "--txn-abort-every" in given:
            v = given["--txn-abort-every"]
            if not re.fullmatch(r"[+-]?[0-9]+", v) or not 0 <= int(v) <= 2**31 - 1:
                raise SetupError("%s--txn-abort-every wants a number of at least 0 (0: none aborted), not %s"
                                 % (prefix, v))
            t.abort_every = int(v)
        if "--transactional-id" in given and given["--transactional-id"] == "":
            raise SetupError("%s--transactional-id is empty" % prefix)
        return t, rest

    def check(self, cfg, prefix):
        """Refuses an idle phase (a transactional run has none) and sets the
        default transactional id, kcheck-TOPIC."""
        if cfg["idle_after"] >= 0:
            raise SetupError("%s--idle-after with --transactional: a transactional run has no idle phase" % prefix)
        if not self.id:
            self.id = "kcheck-" + cfg["topic"]

    def abort(self, tx):
        """Whether transaction tx (1 for the first) is aborted on purpose."""
        return self.abort_every > 0 and tx % self.abort_every == 0

    def end(self, out, tx, commit, text=None, code=None, count=True):
        """Writes transaction tx's end to out (None: no report): committed or
        aborted as asked (commit), or failed with text and code when text is
        not None; counts it unless count is false (the abort after a failed
        commit, whose transaction is counted failed). Returns whether it
        ended as asked."""
        if text is not None:
            if out is not None:
                out.txn_failed(tx, commit, text, code)
            self.failed += count
            return False
        if commit:
            if out is not None:
                out.committed(tx)
            self.committed += count
        else:
            if out is not None:
                out.aborted(tx)
            self.aborted += count
        return True

    def keys(self):
        """The mode's keys of the JSON line, after the driver's own."""
        return {"transactional_id": self.id, "txn_records": self.records, "txn_abort_every": self.abort_every,
                "txn_committed": self.committed, "txn_aborted": self.aborted, "txn_failed": self.failed}


def shape_keys(cfg, idle=None):
    """The JSON line's keys of the workload's shape, after ms (bench/loadgen's
    SeedResult): batch_records unless it is the default, and the idle phase's
    when it ran (unix ms)."""
    out = {}
    if cfg.get("batch_records", "default") != "default":
        out["batch_records"] = cfg["batch_records"]
    if idle is not None and idle.start_ms is not None:
        out.update({"idle_after": idle.after, "idle_ms": idle.ms, "idle_start_ms": idle.start_ms,
                    "idle_end_ms": idle.end_ms, "idle_unanswered": idle.unanswered})
    return out


def summary(client, version, sent, reports, tally, t0, extra=None, shape=None):
    """Prints the one line of JSON (the Java driver's keys in its order, then
    shape's (shape_keys) and extra's: where a driver's client differs) and
    returns the exit code: 0 clean, 1 anomalies or failed sends."""
    out = {
        "client": client,
        "version": version,
        "sent": sent,
        "acked": reports.n_acked,
        "failed": reports.failed,
        "read_back": tally.read_back,
        "lost": tally.lost,
        "lost_acked": tally.lost_acked,
        "duplicated": tally.duplicated,
        "out_of_order": tally.out_of_order,
        "foreign": tally.foreign,
        "failed_errors": dict(sorted(reports.errors.items())),
    }
    if reports.first_error is not None:
        out["first_error"] = reports.first_error
    out["ms"] = int((time.monotonic() - t0) * 1000)
    out.update(shape or {})
    out.update(extra or {})
    print(json.dumps(out, separators=(",", ":"), ensure_ascii=False), flush=True)
    clean = (out["failed"] == 0 and out["lost"] == 0 and out["duplicated"] == 0
             and out["out_of_order"] == 0 and out["foreign"] == 0 and out.get("txn_failed", 0) == 0)
    return 0 if clean else 1


def exception_name(err):
    """Names an error of kafka-python or aiokafka (its fork, with the same
    error classes) for failed_errors: a broker's error by its code's name as
    the client spells it (NOT_LEADER_FOR_PARTITION), the client's own by its
    class (KafkaTimeoutError)."""
    message = getattr(type(err), "message", None)
    if isinstance(getattr(type(err), "errno", None), int) and isinstance(message, str):
        return message
    return type(err).__name__


def exception_code(err, broker_error):
    """The Kafka error code of an error of kafka-python or aiokafka: the errno
    of a broker_error (the client's errors.BrokerResponseError) when it is
    positive, else None. aiokafka's UnknownError (-1) stands for every code
    it does not know; the client's own errors (KafkaTimeoutError, ...) have
    no errno."""
    errno = getattr(err, "errno", None)
    if isinstance(err, broker_error) and isinstance(errno, int) and errno > 0:
        return errno
    return None


def exception_text(err):
    """An exception's text for first_error and --outcomes: its name, then its
    str if that says more."""
    name, s = exception_name(err), str(err)
    return name if s in ("", name, type(err).__name__) else "%s: %s" % (name, s)


def quiet(logger_name):
    """Drops a client's own log lines (the Java driver's slf4j-nop): failures
    are reported through errors, not logs."""
    log = logging.getLogger(logger_name)
    log.addHandler(logging.NullHandler())
    log.propagate = False


def die(msg):
    print(msg, file=sys.stderr, flush=True)
    sys.exit(2)


def main(argv, prefix, client_module, run, no_broker_default="", transactional=False):
    """A driver's command: parses argv (no_broker_default as parse_args
    takes it; with transactional, the mode's flags too: cfg["txn"] is a Txn,
    None without --transactional), checks that client_module imports (else a setup error naming
    setup.sh) and returns run(cfg, t0)'s exit code; every error of the
    setup, and any exception, is exit 2 with one line on stderr and no
    traceback."""
    t0 = time.monotonic()
    try:
        txn = None
        if transactional:
            txn, argv = Txn.split(argv, prefix)
        cfg = parse_args(argv, prefix, no_broker_default)
        if txn is not None:
            txn.check(cfg, prefix)
        cfg["txn"] = txn
        try:
            __import__(client_module)
        except ImportError as e:
            raise SetupError("%s%s (run drivers/python/setup.sh and use the python it prints)" % (prefix, e))
        return run(cfg, t0)
    except SetupError as e:
        die(str(e))
    except KeyboardInterrupt:
        die("%sinterrupted" % prefix)
    except Exception as e:  # anything else is a setup error too, without a traceback
        die("%s%s: %s" % (prefix, type(e).__name__, e))
