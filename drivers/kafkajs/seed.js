// The pure parts of the kafkajs driver (driver.js): its flags, the records
// every driver draws (java.util.Random(1), as drivers/python and
// bench/loadgen), the mapping of the flags onto kafkajs's settings, how the
// read-back is counted (loadgen.Tally's rules), the names of errors and the
// lines of the JSON summary and of --outcomes. No I/O and no kafkajs here, so
// that seed.test.js runs without the npm install.

'use strict'

const PREFIX = 'rec=' // value = "rec=<n>;" + letters
const ID_HEADER = 'kcheck-id' // header: the record's number n in decimal ASCII
const ERR_PREFIX = 'kafkajs driver: '
const USAGE =
  'usage: --bootstrap HOST:PORT --topic T [--partitions N] [--replication-factor N] [--records N] ' +
  '[--value-bytes N] [--keys N] [--compression C] [--delivery-timeout-ms N] [--request-timeout-ms N] ' +
  '[--batch-records one|many|default] [--idle-after N --idle-ms D] [--outcomes FILE] ' +
  '[--transactional [--txn-records N] [--txn-abort-every K] [--transactional-id ID]]'
const DEFAULTS = {
  partitions: '64',
  'replication-factor': '1',
  records: '3000',
  'value-bytes': '10240',
  keys: '1024',
  compression: 'gzip',
  'delivery-timeout-ms': '5000',
  'request-timeout-ms': '2000',
}
// The numeric flags, in the order they are checked, with their minimums.
const MINIMUMS = [
  ['partitions', 1],
  ['records', 0],
  ['value-bytes', 0],
  ['keys', 0],
  ['delivery-timeout-ms', 1],
  ['request-timeout-ms', 1],
]
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd']
// --replication-factor: 1 to CreateTopics' int16 maximum. Not -1 (the
// brokers' default.replication.factor, KIP-464): that came with CreateTopics
// version 4, and kafkajs 2.2.4 sends version 3 at most.
const MAX_REPLICATION_FACTOR = 32767
// The workload shapes (drivers/WORKLOADS.md). kafkajs has no linger and no
// batch size: a send() call is one produce request, with one batch per
// partition of the messages it was given. So --batch-records default and one
// are both one message per send() (a record a batch), and many is
// MANY_PER_SEND messages per send() (a batch per partition of those).
const BATCH_SHAPES = ['one', 'many', 'default']
const MANY_PER_SEND = 100
// The codecs this driver runs: kafkajs has gzip built in, snappy comes from
// the pinned kafkajs-snappy (pure JavaScript, package.json). kafkajs-lz4 and
// @kafkajs/zstd build native code or fetch a prebuilt binary, so they are not
// installed, and lz4 and zstd are refused (exit 2).
const SUPPORTED_CODECS = ['none', 'gzip', 'snappy']

// The retry settings that stand for the Java client's retry.backoff.ms (100)
// and retry.backoff.max.ms (1000): kafkajs waits initialRetryTime, then each
// wait times multiplier with a jitter of factor, capped at maxRetryTime
// (src/retry/index.js), as Java's exponential backoff (KIP-580).
const INITIAL_RETRY_MS = 100
const MAX_RETRY_MS = 1000
const RETRY_FACTOR = 0.2
const RETRY_MULTIPLIER = 2

/** A setup error: exit 2 with its message. */
class SetupError extends Error {}

/**
 * Reads "--flag value" pairs as the Java driver (and loadgen.ParseSeed) does:
 * an unknown flag, a flag without a value, a bad number or an unknown
 * compression is a SetupError. Returns the configuration.
 */
function parseArgs(argv) {
  const a = Object.assign(
    { bootstrap: '', topic: '', outcomes: '', 'batch-records': 'default', 'idle-after': '', 'idle-ms': '' },
    DEFAULTS
  )
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]
    if (!k.startsWith('--') || i + 1 === argv.length) {
      throw new SetupError(USAGE)
    }
    if (!Object.prototype.hasOwnProperty.call(a, k.slice(2))) {
      throw new SetupError(`${ERR_PREFIX}unknown flag ${k}\n${USAGE}`)
    }
    a[k.slice(2)] = argv[++i]
  }
  if (a.bootstrap === '') throw new SetupError(`${ERR_PREFIX}--bootstrap is required`)
  if (a.topic === '') throw new SetupError(`${ERR_PREFIX}--topic is required`)
  const cfg = { bootstrap: a.bootstrap, topic: a.topic, compression: a.compression, outcomes: a.outcomes }
  const number = (k, lo) => {
    const v = a[k]
    // strconv.Atoi's syntax; above int32 is no number, as in Java.
    if (!/^[+-]?[0-9]+$/.test(v) || Number(v) > 2 ** 31 - 1) {
      throw new SetupError(`${ERR_PREFIX}--${k} wants a number, not ${v}`)
    }
    if (Number(v) < lo) {
      throw new SetupError(`${ERR_PREFIX}--${k} wants a number of at least ${lo}, not ${v}`)
    }
    return Number(v)
  }
  for (const [k, lo] of MINIMUMS) {
    cfg[k.replace(/-([a-z])/g, (_, c) => c.toUpperCase())] = number(k, lo)
  }
  cfg.replicationFactor = number('replication-factor', -(2 ** 31))
  if (cfg.replicationFactor < 1 || cfg.replicationFactor > MAX_REPLICATION_FACTOR) {
    const v = a['replication-factor']
    const why = cfg.replicationFactor === -1
      ? " (kafkajs 2.2.4 cannot ask for the brokers' default.replication.factor: its CreateTopics predates it)"
      : ''
    throw new SetupError(`${ERR_PREFIX}--replication-factor wants a number from 1 to ${MAX_REPLICATION_FACTOR}, not ${v}${why}`)
  }
  const after = a['idle-after'] !== ''
  const ms = a['idle-ms'] !== ''
  cfg.idleAfter = after ? number('idle-after', 0) : -1
  cfg.idleMs = ms ? number('idle-ms', 0) : 0
  if (!CODECS.includes(cfg.compression)) {
    throw new SetupError(
      `${ERR_PREFIX}--compression wants none, gzip, snappy, lz4 or zstd, not ${cfg.compression}`
    )
  }
  if (!SUPPORTED_CODECS.includes(cfg.compression)) {
    throw new SetupError(
      `${ERR_PREFIX}--compression ${cfg.compression}: kafkajs 2.2.4 has no ${cfg.compression} codec of its own ` +
        'and this driver installs none for it (kafkajs-lz4 and @kafkajs/zstd build native code); ' +
        'it runs none, gzip (kafkajs\'s own) and snappy (kafkajs-snappy 1.1.0)'
    )
  }
  cfg.batchRecords = a['batch-records']
  if (!BATCH_SHAPES.includes(cfg.batchRecords)) {
    throw new SetupError(`${ERR_PREFIX}--batch-records wants one, many or default, not ${cfg.batchRecords}`)
  }
  if (after && !ms) throw new SetupError(`${ERR_PREFIX}--idle-after needs --idle-ms (how long the idle phase lasts)`)
  if (ms && !after) {
    throw new SetupError(`${ERR_PREFIX}--idle-ms needs --idle-after (how many records come before the idle phase)`)
  }
  if (cfg.idleAfter > cfg.records) {
    throw new SetupError(`${ERR_PREFIX}--idle-after wants a number of at most --records (${cfg.records}), not ${cfg.idleAfter}`)
  }
  return cfg
}

// The transactional mode (drivers/WORKLOADS.md, "Transactions"), as
// drivers/txnmode is the Go drivers'.
const TXN_DEFAULT_RECORDS = 100 // --txn-records without the flag, as kcheck run's
const TXN_FLAGS = ['--txn-records', '--txn-abort-every', '--transactional-id']
// Kafka error codes that say the broker (or the client's rights on it)
// cannot run transactions at all, as drivers/txnmode's:
// CLUSTER_AUTHORIZATION_FAILED, UNSUPPORTED_VERSION,
// UNSUPPORTED_FOR_MESSAGE_FORMAT, INVALID_TRANSACTION_TIMEOUT,
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
const TXN_CANNOT_RUN = [31, 35, 43, 50, 53]

/**
 * Takes the transactional mode's flags out of argv: { txn, rest }, txn null
 * without --transactional, else { records, abortEvery, id } (id '' until
 * txnCheck), rest for parseArgs. A value missing or bad, or a --txn-* flag
 * without --transactional, is a SetupError.
 */
function splitTxn(argv) {
  let on = false
  const given = new Map()
  const rest = []
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]
    if (k === '--transactional') {
      on = true
    } else if (TXN_FLAGS.includes(k)) {
      if (i + 1 === argv.length) throw new SetupError(`${ERR_PREFIX}${k} needs a value`)
      given.set(k, argv[++i])
    } else {
      rest.push(k)
    }
  }
  if (!on) {
    for (const k of TXN_FLAGS) {
      if (given.has(k)) throw new SetupError(`${ERR_PREFIX}${k} needs --transactional`)
    }
    return { txn: null, rest }
  }
  const txn = { records: TXN_DEFAULT_RECORDS, abortEvery: 0, id: given.get('--transactional-id') || '' }
  if (given.has('--txn-records')) {
    const v = given.get('--txn-records')
    if (!/^[+]?[0-9]+$/.test(v) || Number(v) < 1 || Number(v) > 2 ** 31 - 1) {
      throw new SetupError(`${ERR_PREFIX}--txn-records wants a number of at least 1, not ${v}`)
    }
    txn.records = Number(v)
  }
  if (given.has('--txn-abort-every')) {
    const v = given.get('--txn-abort-every')
    if (!/^[+-]?[0-9]+$/.test(v) || Number(v) < 0 || Number(v) > 2 ** 31 - 1) {
      throw new SetupError(`${ERR_PREFIX}--txn-abort-every wants a number of at least 0 (0: none aborted), not ${v}`)
    }
    txn.abortEvery = Number(v)
  }
  if (given.get('--transactional-id') === '') throw new SetupError(`${ERR_PREFIX}--transactional-id is empty`)
  return { txn, rest }
}

/**
 * Refuses what the mode cannot run with (an idle phase: a transactional run
 * has none) and sets the default transactional id, kcheck-TOPIC.
 */
function txnCheck(txn, cfg) {
  if (cfg.idleAfter >= 0) {
    throw new SetupError(`${ERR_PREFIX}--idle-after with --transactional: a transactional run has no idle phase`)
  }
  if (txn.id === '') txn.id = `kcheck-${cfg.topic}`
}

/** Whether transaction tx (1 for the first) is aborted on purpose: every abortEvery-th. */
const txnAbort = (txn, tx) => txn.abortEvery > 0 && tx % txn.abortEvery === 0

/**
 * Whether a kafkajs error says the broker cannot run its transactions: a
 * Kafka code TXN_CANNOT_RUN names, or kafkajs's own
 * KafkaJSServerDoesNotSupportApiKey (a request the broker does not know)
 * anywhere in the .cause chain.
 */
function txnCannotRun(e) {
  for (let r = e, i = 0; r != null && i < 10; r = r.cause === r ? null : r.cause, i++) {
    if (r.name === 'KafkaJSServerDoesNotSupportApiKey') return true
  }
  return TXN_CANNOT_RUN.includes(errorCode(e))
}

/**
 * The mode's keys of the JSON line, after the driver's own: the flags, and
 * the transactions as their ends were told ({ committed, aborted, failed }).
 */
const txnKeys = (txn, n) => ({
  transactional_id: txn.id,
  txn_records: txn.records,
  txn_abort_every: txn.abortEvery,
  txn_committed: n.committed,
  txn_aborted: n.aborted,
  txn_failed: n.failed,
})

/**
 * The send() calls of the run, as [from, to) ranges of record numbers, in
 * order: one record each for --batch-records one and default, up to
 * MANY_PER_SEND for many; none crosses the idle phase (idleAfter, -1: none),
 * which comes before the call that starts at idleAfter.
 */
function sendGroups(records, batchRecords, idleAfter = -1) {
  const per = batchRecords === 'many' ? MANY_PER_SEND : 1
  const groups = []
  for (let from = 0; from < records; ) {
    let to = Math.min(from + per, records)
    if (from < idleAfter && to > idleAfter) to = idleAfter
    groups.push([from, to])
    from = to
  }
  return groups
}

/**
 * The JSON line's keys of the workload's shape, after ms (bench/loadgen's
 * SeedResult): batch_records unless it is the default, and the idle phase's
 * when it ran (idle: { startMs, endMs, unanswered }, unix ms; null: none).
 */
function shapeKeys(cfg, idle = null) {
  const out = {}
  if (cfg.batchRecords !== 'default') out.batch_records = cfg.batchRecords
  if (idle) {
    Object.assign(out, {
      idle_after: cfg.idleAfter,
      idle_ms: cfg.idleMs,
      idle_start_ms: idle.startMs,
      idle_end_ms: idle.endMs,
      idle_unanswered: idle.unanswered,
    })
  }
  return out
}

/**
 * java.util.Random, so that this driver draws the same letters and keys as
 * the Java driver's new Random(1). The 48-bit state is a BigInt.
 */
class JavaRandom {
  constructor(seed) {
    this.seed = (BigInt(seed) ^ 0x5deece66dn) & ((1n << 48n) - 1n)
  }

  next(bits) {
    this.seed = (this.seed * 0x5deece66dn + 0xbn) & ((1n << 48n) - 1n)
    return Number(BigInt.asIntN(32, this.seed >> BigInt(48 - bits))) // as a Java int
  }

  /** Random.nextInt(bound), bound a positive int. */
  nextInt(bound) {
    let r = this.next(31)
    const m = bound - 1
    if ((bound & m) === 0) {
      return Number((BigInt(bound) * BigInt(r)) >> 31n)
    }
    for (let u = r; ; u = this.next(31)) {
      r = u % bound
      if (u - r + m < 2 ** 31) return r // no int overflow, as in Java
    }
  }
}

/**
 * The records every driver produces: the value's letters drawn first, then
 * one key index a record (-1: no key, no draw), from java.util.Random(1).
 */
class Workload {
  constructor(valueBytes, keys) {
    this.rng = new JavaRandom(1)
    this.keys = keys
    const letters = Buffer.alloc(valueBytes)
    for (let i = 0; i < valueBytes; i++) letters[i] = 0x61 + this.rng.nextInt(26)
    this.letters = letters
  }

  /** The next record's key index, -1 without keys. */
  nextKeyIndex() {
    return this.keys > 0 ? this.rng.nextInt(this.keys) : -1
  }

  /** Record n's value: the letters with "rec=<n>;" over their start, cut to their length. */
  value(n) {
    const v = Buffer.from(this.letters)
    v.write(`${PREFIX}${n};`.slice(0, v.length), 0, 'latin1')
    return v
  }
}

/** Key i: "key-<i>". */
const keyOf = i => Buffer.from(`key-${i}`)

/** n from a value that starts "rec=<n>;", or -1. */
function recordNumber(v) {
  if (v == null || v.length < PREFIX.length + 2 || v.toString('latin1', 0, PREFIX.length) !== PREFIX) {
    return -1
  }
  let n = 0
  for (let i = PREFIX.length; i < v.length && i < PREFIX.length + 11; i++) {
    const c = v[i]
    if (c === 0x3b) return n // ';'
    if (c < 0x30 || c > 0x39) return -1
    n = n * 10 + c - 0x30
  }
  return -1
}

/**
 * Counts a read-back as the Java driver does (loadgen.Tally): a value that is
 * no record of this run is foreign; a record seen again is duplicated (and
 * not read back again); a record read after a higher-numbered one on the
 * same partition is out of order, whatever their keys. A partition's records are added
 * in offset order; an offset already added (a fetch the consumer repeated) is
 * skipped, so that duplicates are copies in the log, not in the reads.
 */
class Tally {
  constructor(keyIdx) {
    this.keyIdx = keyIdx // record n's key index, -1 for none
    this.seen = new Array(keyIdx.length).fill(0)
    this.last = new Map() // "p" -> the highest n read
    this.next = new Map() // p -> the next offset to read
    this.readBack = 0
    this.duplicated = 0
    this.outOfOrder = 0
    this.foreign = 0
    this.lost = 0
    this.lostAcked = 0
  }

  /** Counts the record at offset off (a number) of partition p. */
  add(p, off, value) {
    if (off < (this.next.get(p) || 0)) return
    this.next.set(p, off + 1)
    const n = recordNumber(value)
    if (n < 0 || n >= this.seen.length) {
      this.foreign++
      return
    }
    if (++this.seen[n] > 1) {
      this.duplicated++
      return
    }
    this.readBack++
    const k = `${p}` // one producer's records keep their send order per partition, whatever their keys
    const prev = this.last.get(k)
    if (prev !== undefined && n < prev) this.outOfOrder++
    if (prev === undefined || n > prev) this.last.set(k, n)
  }

  /**
   * The consumer has passed offset off (a number) of partition p: the last
   * of a fetched batch, which may be a control record it does not return.
   */
  passed(p, off) {
    if (off + 1 > this.nextOffset(p)) this.next.set(p, off + 1)
  }

  /** The next offset to read of partition p. */
  nextOffset(p) {
    return this.next.get(p) || 0
  }

  /** Counts the lost: of the first sent records, those never read; and of them, the acknowledged. */
  finish(sent, acked) {
    this.lost = 0
    this.lostAcked = 0
    for (let n = 0; n < sent; n++) {
      if (this.seen[n] === 0) {
        this.lost++
        if (acked[n]) this.lostAcked++
      }
    }
  }
}

/**
 * retry.retries for a delivery timeout: kafkajs has no delivery.timeout.ms,
 * only a number of retries (src/retry/index.js), so it is the most retries
 * whose backoffs (100 ms, doubling, capped at 1 s, without the jitter) add up
 * to at most the delivery timeout, and at least 1 (kafkajs refuses fewer for
 * the idempotent producer: src/producer/index.js). 5000 ms: 7 retries.
 */
function retriesFor(deliveryTimeoutMs) {
  let retries = 0
  let total = 0
  for (let wait = INITIAL_RETRY_MS; total + wait <= deliveryTimeoutMs; wait = Math.min(wait * RETRY_MULTIPLIER, MAX_RETRY_MS)) {
    total += wait
    retries++
  }
  return Math.max(1, retries)
}

/** The innermost cause of a kafkajs error (KafkaJSError keeps it in .cause). */
function rootCause(e) {
  let r = e
  for (let i = 0; i < 10 && r && r.cause && r.cause !== r; i++) r = r.cause
  return r
}

/**
 * Names a failed record's error for failed_errors: Kafka's error code name
 * (kafkajs's type, e.g. NOT_LEADER_FOR_PARTITION, the name kerr gives code 6)
 * or kafkajs's error class, inside KafkaJSNumberOfRetriesExceeded(...) when
 * the retries ran out.
 */
function errorName(e) {
  if (e == null) return 'unknown'
  const r = rootCause(e)
  const base = (r && (r.type || r.name)) || String(r)
  return e.name === 'KafkaJSNumberOfRetriesExceeded' && r !== e ? `KafkaJSNumberOfRetriesExceeded(${base})` : base
}

/** A failed record's error text: its class and message, and the root cause's class and Kafka type. */
function errorText(e) {
  if (e == null) return 'unknown'
  const r = rootCause(e)
  let s = e.name ? `${e.name}: ${e.message}` : String(e)
  if (r !== e && r) s += ` (cause: ${r.name || 'Error'}${r.type ? ' ' + r.type : ''})`
  else if (r && r.type) s += ` (${r.type})`
  return s
}

/** A Kafka protocol error as kafkajs makes it (KafkaJSProtocolError and its subclasses): a Kafka type and an integer code. */
const isProtocolError = e => e != null && typeof e.type === 'string' && Number.isInteger(e.code)

/**
 * The Kafka error code of a failed record's error for --outcomes
 * (drivers/OUTCOMES.md): the code of the innermost KafkaJSProtocolError in
 * the .cause chain (KafkaJSNumberOfRetriesExceeded and
 * KafkaJSNonRetriableError wrap it), when positive; else null.
 * KafkaJSConnectionError's code is a string (ECONNREFUSED), no Kafka code;
 * kafkajs gives a code it does not know -99 (KAFKAJS_UNKNOWN_ERROR_CODE),
 * UNKNOWN_SERVER_ERROR is -1: neither is written.
 */
function errorCode(e) {
  let code = null
  for (let r = e, i = 0; r != null && i < 10; r = r.cause === r ? null : r.cause, i++) {
    if (isProtocolError(r)) code = r.code
  }
  return code !== null && code > 0 && code <= 32767 ? code : null
}

/** The outcomes file: --outcomes, or if that is '' $KCHECK_OUTCOMES; '' for none. */
const outcomesPath = (flag, env = process.env) => flag || env.KCHECK_OUTCOMES || ''

/**
 * JSON as Go's encoding/json writes it with SetEscapeHTML(false), as the
 * other drivers' lines: JSON.stringify also escapes U+2028 and U+2029.
 */
function goJSON(v) {
  return JSON.stringify(v).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
}

/** The JSON summary line, with its newline: the Java driver's keys in its order, then kafkajs's. */
function summaryLine(r) {
  const out = {
    client: r.client,
    version: r.version,
    sent: r.sent,
    acked: r.acked,
    failed: r.failed,
    read_back: r.readBack,
    lost: r.lost,
    lost_acked: r.lostAcked,
    duplicated: r.duplicated,
    out_of_order: r.outOfOrder,
    foreign: r.foreign,
    failed_errors: Object.fromEntries(Object.entries(r.failedErrors).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  }
  if (r.firstError) out.first_error = r.firstError
  out.ms = r.ms
  Object.assign(out, r.shape, r.extra)
  return goJSON(out) + '\n'
}

/** Clean: nothing failed, lost, duplicated, reordered or foreign, and no transaction failed. */
function clean(r) {
  return r.failed === 0 && r.lost === 0 && r.duplicated === 0 && r.outOfOrder === 0 && r.foreign === 0 &&
    !(r.extra && r.extra.txn_failed > 0)
}

// The lines of --outcomes (drivers/OUTCOMES.md); a failure's code is written when positive.
const outcomeSuccess = (n, p, off) => `{"id":${n},"p":${p},"off":${off}}\n`
const outcomeFailure = (n, p, text, code = null) =>
  `{"id":${n},"p":${p},"err":${goJSON(String(text))}${Number.isInteger(code) && code > 0 ? `,"code":${code}` : ''}}\n`
const outcomeNone = n => `{"id":${n},"none":true}\n`
// A transaction's end (drivers/OUTCOMES.md, "Transactions"): committed,
// aborted, or the commit (commit true) or abort failed.
const outcomeCommitted = tx => `{"tx":${tx},"commit":true,"res":"committed"}\n`
const outcomeAborted = tx => `{"tx":${tx},"commit":false,"res":"aborted"}\n`
const outcomeTxnFailed = (tx, commit, text, code = null) =>
  `{"tx":${tx},"commit":${commit ? 'true' : 'false'},"res":"failed","err":${goJSON(String(text))}${Number.isInteger(code) && code > 0 ? `,"code":${code}` : ''}}\n`

module.exports = {
  PREFIX,
  ID_HEADER,
  ERR_PREFIX,
  USAGE,
  INITIAL_RETRY_MS,
  MAX_RETRY_MS,
  RETRY_FACTOR,
  RETRY_MULTIPLIER,
  MANY_PER_SEND,
  SetupError,
  parseArgs,
  sendGroups,
  shapeKeys,
  JavaRandom,
  Workload,
  keyOf,
  recordNumber,
  Tally,
  retriesFor,
  errorName,
  errorText,
  errorCode,
  outcomesPath,
  goJSON,
  summaryLine,
  clean,
  outcomeSuccess,
  outcomeFailure,
  outcomeNone,
  outcomeCommitted,
  outcomeAborted,
  outcomeTxnFailed,
  TXN_DEFAULT_RECORDS,
  TXN_CANNOT_RUN,
  splitTxn,
  txnCheck,
  txnAbort,
  txnKeys,
  txnCannotRun,
}
