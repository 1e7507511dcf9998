// Tests of the kafkajs driver's pure parts (seed.js) and of its bad flags;
// none needs kafkajs or a broker:
//
//   node --test drivers/kafkajs/

'use strict'

const test = require('node:test')
const assert = require('node:assert')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const seed = require('./seed')

// The Java driver's draws, as drivers/kgo's TestJavaRandom asserts them
// (values printed by Java's new java.util.Random(1)): the letters'
// String.hashCode, then a hash of 3,000 nextInt(1024) draws (the seed's
// keys), then five draws of a bound that is no power of two.
test('JavaRandom draws what java.util.Random(1) draws', () => {
  const r = new seed.JavaRandom(1)
  let h = 0
  for (let i = 0; i < 10240; i++) h = (Math.imul(31, h) + 0x61 + r.nextInt(26)) | 0
  assert.strictEqual(h, -272447338, 'letters hash')
  let s = 0n
  for (let i = 0; i < 3000; i++) s = BigInt.asIntN(64, s * 31n + BigInt(r.nextInt(1024)))
  assert.strictEqual(s, -4138879308510851376n, 'keys hash')
  assert.deepStrictEqual(
    Array.from({ length: 5 }, () => r.nextInt(1000000007)),
    [775073953, 96911320, 206625761, 506627155, 720236926]
  )
})

test('Workload draws the letters first, then a key a record', () => {
  const w = new seed.Workload(10240, 1024)
  let h = 0
  for (const c of w.letters) h = (Math.imul(31, h) + c) | 0
  assert.strictEqual(h, -272447338)
  let s = 0n
  for (let i = 0; i < 3000; i++) s = BigInt.asIntN(64, s * 31n + BigInt(w.nextKeyIndex()))
  assert.strictEqual(s, -4138879308510851376n)
  assert.strictEqual(new seed.Workload(0, 0).nextKeyIndex(), -1)

  const v = w.value(42)
  assert.strictEqual(v.length, 10240)
  assert.strictEqual(v.toString('latin1', 0, 7), 'rec=42;')
  assert.ok(v.subarray(7).equals(w.letters.subarray(7)))
  assert.strictEqual(new seed.Workload(5, 0).value(12345).toString('latin1'), 'rec=1', 'cut to the value size')
  assert.strictEqual(seed.keyOf(7).toString(), 'key-7')
})

test('recordNumber reads "rec=<n>;" as loadgen.RecordNumber', () => {
  const b = s => Buffer.from(s, 'latin1')
  assert.strictEqual(seed.recordNumber(b('rec=0;abc')), 0)
  assert.strictEqual(seed.recordNumber(b('rec=2999;')), 2999)
  for (const s of ['rec=', 'rec=1', 'rec=x;', 'rex=1;', 'rec=12345678901;', ';rec=1;']) {
    assert.strictEqual(seed.recordNumber(b(s)), -1, s)
  }
  assert.strictEqual(seed.recordNumber(null), -1)
})

// A hand-built log of two partitions: record n's value, in offset order.
test('Tally counts a hand-built log as loadgen.Tally', () => {
  const v = n => Buffer.from(`rec=${n};zz`)
  // Records 0..7; keys: 0,1 -> key 0; 2,3 -> key 1; 4,5,6 -> key 2; 7 -> none.
  const keyIdx = [0, 0, 1, 1, 2, 2, 2, -1]
  const t = new seed.Tally(keyIdx)
  t.add(0, 0, v(0))
  t.add(0, 1, v(1))
  t.add(0, 2, v(1)) // a copy in the log: duplicated
  t.add(0, 3, Buffer.from('other')) // foreign
  t.add(0, 3, v(7)) // offset 3 again (a fetch repeated): skipped
  t.add(0, 4, v(99)) // no record of this run: foreign
  t.add(1, 0, v(3))
  t.add(1, 1, v(2)) // 2 after 3, out of order
  t.add(1, 2, v(6))
  t.add(1, 3, v(4)) // 4 after 6, out of order
  t.add(1, 1, v(5)) // an offset already read: skipped
  assert.strictEqual(t.nextOffset(0), 5)
  assert.strictEqual(t.nextOffset(1), 4)
  assert.strictEqual(t.nextOffset(2), 0)
  const acked = [true, true, true, true, true, true, false, false]
  acked[5] = true
  t.finish(8, acked) // 5 and 7 never read; 5 acknowledged
  assert.deepStrictEqual(
    {
      readBack: t.readBack,
      duplicated: t.duplicated,
      outOfOrder: t.outOfOrder,
      foreign: t.foreign,
      lost: t.lost,
      lostAcked: t.lostAcked,
    },
    { readBack: 6, duplicated: 1, outOfOrder: 2, foreign: 2, lost: 2, lostAcked: 1 }
  )
  t.finish(4, acked) // only the first 4 were sent: none lost
  assert.strictEqual(t.lost, 0)
})

// drivers/OUTCOMES.md's lines, byte for byte (as bench/loadgen's
// TestOutcomeLines).
test('outcome lines', () => {
  const got =
    seed.outcomeSuccess(7, 3, 41) +
    seed.outcomeFailure(8, -1, 'kafka: "quoted" <text>') +
    seed.outcomeNone(9) +
    seed.outcomeFailure(10, 2, 'tab\there\u2028&\\') +
    seed.outcomeFailure(11, 4, 'INVALID_RECORD', 87) +
    seed.outcomeFailure(12, 4, 'UNKNOWN', -1) +
    seed.outcomeFailure(13, 4, 'x', null) +
    seed.outcomeSuccess(14, 0, -1)
  const want =
    '{"id":7,"p":3,"off":41}\n' +
    '{"id":8,"p":-1,"err":"kafka: \\"quoted\\" <text>"}\n' +
    '{"id":9,"none":true}\n' +
    '{"id":10,"p":2,"err":"tab\\there\\u2028&\\\\"}\n' +
    '{"id":11,"p":4,"err":"INVALID_RECORD","code":87}\n' +
    '{"id":12,"p":4,"err":"UNKNOWN"}\n' +
    '{"id":13,"p":4,"err":"x"}\n' +
    '{"id":14,"p":0,"off":-1}\n'
  assert.strictEqual(got, want)
  const keys = [['id', 'p', 'off'], ['id', 'p', 'err'], ['id', 'none'], ['id', 'p', 'err'], ['id', 'p', 'err', 'code']]
  got.split('\n').slice(0, 5).forEach((l, i) => assert.deepStrictEqual(Object.keys(JSON.parse(l)), keys[i], l))
})

test("a transaction's end lines (drivers/OUTCOMES.md, Transactions)", () => {
  const got =
    seed.outcomeCommitted(1) +
    seed.outcomeAborted(2) +
    seed.outcomeTxnFailed(3, true, 'KafkaJSProtocolError: "x" (INVALID_PRODUCER_EPOCH)', 47) +
    seed.outcomeTxnFailed(3, false, 'tab\there\u2028', -1) +
    seed.outcomeTxnFailed(4, true, 'z', null)
  const want =
    '{"tx":1,"commit":true,"res":"committed"}\n' +
    '{"tx":2,"commit":false,"res":"aborted"}\n' +
    '{"tx":3,"commit":true,"res":"failed","err":"KafkaJSProtocolError: \\"x\\" (INVALID_PRODUCER_EPOCH)","code":47}\n' +
    '{"tx":3,"commit":false,"res":"failed","err":"tab\\there\\u2028"}\n' +
    '{"tx":4,"commit":true,"res":"failed","err":"z"}\n'
  assert.strictEqual(got, want)
  const keys = [['tx', 'commit', 'res'], ['tx', 'commit', 'res'], ['tx', 'commit', 'res', 'err', 'code'], ['tx', 'commit', 'res', 'err']]
  got.split('\n').slice(0, 4).forEach((l, i) => assert.deepStrictEqual(Object.keys(JSON.parse(l)), keys[i], l))
})

test('splitTxn and txnCheck: the transactional flags, as drivers/txnmode', () => {
  let { txn, rest } = seed.splitTxn(['--topic', 't', '--records', '5'])
  assert.strictEqual(txn, null)
  assert.deepStrictEqual(rest, ['--topic', 't', '--records', '5'])
  ;({ txn, rest } = seed.splitTxn(['--topic', 't', '--transactional', '--records', '5', '--txn-records', '7', '--txn-abort-every', '2']))
  assert.deepStrictEqual(txn, { records: 7, abortEvery: 2, id: '' })
  assert.deepStrictEqual(rest, ['--topic', 't', '--records', '5'])
  const cfg = seed.parseArgs(['--bootstrap', 'h:1', ...rest])
  seed.txnCheck(txn, cfg)
  assert.strictEqual(txn.id, 'kcheck-t')
  assert.deepStrictEqual([1, 2, 3, 4].map(tx => seed.txnAbort(txn, tx)), [false, true, false, true])
  ;({ txn } = seed.splitTxn(['--transactional', '--transactional-id', 'x']))
  seed.txnCheck(txn, cfg)
  assert.deepStrictEqual(txn, { records: seed.TXN_DEFAULT_RECORDS, abortEvery: 0, id: 'x' })
  assert.ok(!seed.txnAbort(txn, 1) && !seed.txnAbort(txn, 3))
  assert.deepStrictEqual(Object.entries(seed.txnKeys(txn, { committed: 5, aborted: 2, failed: 1 })), [
    ['transactional_id', 'x'],
    ['txn_records', 100],
    ['txn_abort_every', 0],
    ['txn_committed', 5],
    ['txn_aborted', 2],
    ['txn_failed', 1],
  ])
  assert.throws(() => seed.txnCheck(txn, Object.assign({}, cfg, { idleAfter: 4 })), {
    message: 'kafkajs driver: --idle-after with --transactional: a transactional run has no idle phase',
  })
  for (const [argv, want] of [
    [['--txn-records', '5'], 'kafkajs driver: --txn-records needs --transactional'],
    [['--transactional-id', 'x'], 'kafkajs driver: --transactional-id needs --transactional'],
    [['--transactional', '--txn-records'], 'kafkajs driver: --txn-records needs a value'],
    [['--transactional', '--txn-records', '0'], 'kafkajs driver: --txn-records wants a number of at least 1, not 0'],
    [['--transactional', '--txn-abort-every', '-1'], 'kafkajs driver: --txn-abort-every wants a number of at least 0 (0: none aborted), not -1'],
    [['--transactional', '--transactional-id', ''], 'kafkajs driver: --transactional-id is empty'],
  ]) {
    assert.throws(() => seed.splitTxn(argv), { message: want }, argv.join(' '))
  }
})

test('txnCannotRun: a cannot-run code, or kafkajs\'s request the broker does not know', () => {
  const protocol = (type, code) => Object.assign(new Error(type), { type, code })
  assert.ok(seed.txnCannotRun(protocol('UNSUPPORTED_VERSION', 35)))
  assert.ok(seed.txnCannotRun(Object.assign(new Error('retries'), { cause: protocol('TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 53) })))
  const noKey = Object.assign(new Error('The broker does not support the requested API'), { name: 'KafkaJSServerDoesNotSupportApiKey' })
  assert.ok(seed.txnCannotRun(Object.assign(new Error('x'), { cause: noKey })))
  assert.ok(!seed.txnCannotRun(protocol('INVALID_PRODUCER_EPOCH', 47)))
  assert.ok(!seed.txnCannotRun(new Error('plain')))
})

test('Tally.passed: past the markers kafkajs does not return', () => {
  const t = new seed.Tally([-1, -1])
  t.add(0, 0, Buffer.from('rec=0;'))
  t.passed(0, 1) // the marker at offset 1
  assert.strictEqual(t.nextOffset(0), 2)
  t.passed(0, 0) // never backwards
  assert.strictEqual(t.nextOffset(0), 2)
  t.add(0, 1, Buffer.from('rec=1;')) // an offset already passed is not counted
  assert.strictEqual(t.readBack, 1)
})

test('outcomesPath: --outcomes, else $KCHECK_OUTCOMES, else none', () => {
  assert.strictEqual(seed.outcomesPath('f', { KCHECK_OUTCOMES: 'e' }), 'f')
  assert.strictEqual(seed.outcomesPath('', { KCHECK_OUTCOMES: 'e' }), 'e')
  assert.strictEqual(seed.outcomesPath('', { KCHECK_OUTCOMES: '' }), '')
  assert.strictEqual(seed.outcomesPath('', {}), '')
})

// kafkajs itself, where setup.sh installed it (its cache), for the error
// types; null when it is not installed there (then the test says so).
function kafkajsErrors() {
  const dir = path.join(process.env.KCHECK_CACHE || path.join(os.homedir(), '.cache', 'kcheck'), 'kafkajs', 'node_modules')
  try {
    return {
      errors: require(path.join(dir, 'kafkajs', 'src', 'errors')),
      protocol: require(path.join(dir, 'kafkajs', 'src', 'protocol', 'error')),
    }
  } catch (e) {
    return null
  }
}

test("errorCode: kafkajs's own errors", t => {
  const k = kafkajsErrors()
  if (k === null) {
    t.skip('kafkajs not installed: run drivers/kafkajs/setup.sh')
    return
  }
  const { errors, protocol } = k
  const invalid = protocol.createErrorFromCode(87) // as a ProduceResponse's partition error is made
  assert.ok(invalid instanceof errors.KafkaJSProtocolError)
  assert.strictEqual(invalid.type, 'INVALID_RECORD')
  const notLeader = protocol.createErrorFromCode(6)
  for (const [e, want] of [
    [invalid, 87],
    [protocol.createErrorFromCode(7), 7],
    [notLeader, 6],
    [new errors.KafkaJSNumberOfRetriesExceeded(notLeader, { retryCount: 7, retryTime: 1000 }), 6],
    [new errors.KafkaJSNonRetriableError(invalid, { cause: invalid }), 87],
    [new errors.KafkaJSNumberOfRetriesExceeded(new errors.KafkaJSNonRetriableError(invalid, { cause: invalid }), { retryCount: 1, retryTime: 1 }), 87],
    [protocol.createErrorFromCode(-1), null], // UNKNOWN_SERVER_ERROR
    [protocol.createErrorFromCode(9999), null], // kafkajs: -99, KAFKAJS_UNKNOWN_ERROR_CODE
    [new errors.KafkaJSRequestTimeoutError('Request Produce timed out'), null],
    [new errors.KafkaJSNumberOfRetriesExceeded(new errors.KafkaJSRequestTimeoutError('timed out'), { retryCount: 7, retryTime: 1 }), null],
    [new errors.KafkaJSConnectionError('Connection error: connect ECONNREFUSED', { broker: 'h:1', code: 'ECONNREFUSED' }), null],
    [new errors.KafkaJSLockTimeout('Timeout while acquiring lock'), null],
    [new Error('plain'), null],
  ]) {
    assert.strictEqual(seed.errorCode(e), want, seed.errorText(e))
  }
  assert.strictEqual(seed.errorName(new errors.KafkaJSNumberOfRetriesExceeded(notLeader, { retryCount: 7, retryTime: 1 })), 'KafkaJSNumberOfRetriesExceeded(NOT_LEADER_FOR_PARTITION)')
})

test('errorCode: the innermost protocol error, without kafkajs', () => {
  const inner = Object.assign(new Error('i'), { name: 'KafkaJSProtocolError', type: 'INVALID_RECORD', code: 87 })
  const middle = Object.assign(new Error('m'), { name: 'KafkaJSProtocolError', type: 'NOT_LEADER_FOR_PARTITION', code: 6, cause: inner })
  const outer = Object.assign(new Error('o'), { name: 'KafkaJSNumberOfRetriesExceeded', cause: middle })
  assert.strictEqual(seed.errorCode(outer), 87)
  assert.strictEqual(seed.errorCode(middle), 87)
  const loop = Object.assign(new Error('l'), { type: 'X', code: 3 })
  loop.cause = loop
  assert.strictEqual(seed.errorCode(loop), 3)
  assert.strictEqual(seed.errorCode(null), null)
  assert.strictEqual(seed.errorCode(Object.assign(new Error('c'), { code: 'ECONNREFUSED' })), null)
})

test('summary line: the keys in the Java driver\'s order, then kafkajs\'s', () => {
  const line = seed.summaryLine({
    client: 'kafkajs',
    version: '2.2.4',
    sent: 3,
    acked: 2,
    failed: 1,
    readBack: 2,
    lost: 1,
    lostAcked: 0,
    duplicated: 0,
    outOfOrder: 0,
    foreign: 0,
    failedErrors: { 'b<x>': 1, a: 2 },
    firstError: 'KafkaJSError: x',
    ms: 12,
    extra: { max_in_flight: 1, differs: 'd' },
  })
  assert.strictEqual(
    line,
    '{"client":"kafkajs","version":"2.2.4","sent":3,"acked":2,"failed":1,"read_back":2,"lost":1,' +
      '"lost_acked":0,"duplicated":0,"out_of_order":0,"foreign":0,"failed_errors":{"a":2,"b<x>":1},' +
      '"first_error":"KafkaJSError: x","ms":12,"max_in_flight":1,"differs":"d"}\n'
  )
  const noError = seed.summaryLine({ failedErrors: {}, firstError: '', ms: 1, extra: {} })
  assert.ok(!noError.includes('first_error'))
})

test('parseArgs: defaults', () => {
  const cfg = seed.parseArgs(['--bootstrap', 'h:1', '--topic', 't'])
  assert.deepStrictEqual(cfg, {
    bootstrap: 'h:1',
    topic: 't',
    compression: 'gzip',
    outcomes: '',
    partitions: 64,
    records: 3000,
    valueBytes: 10240,
    keys: 1024,
    deliveryTimeoutMs: 5000,
    requestTimeoutMs: 2000,
    batchRecords: 'default',
    idleAfter: -1,
    idleMs: 0,
    replicationFactor: 1,
  })
})

test('parseArgs: --replication-factor', () => {
  const ok = ['--bootstrap', 'h:1', '--topic', 't']
  for (const v of ['1', '3', '32767']) {
    assert.strictEqual(seed.parseArgs([...ok, '--replication-factor', v]).replicationFactor, Number(v), v)
  }
  for (const [v, want] of [
    ['0', 'kafkajs driver: --replication-factor wants a number from 1 to 32767, not 0'],
    ['32768', 'kafkajs driver: --replication-factor wants a number from 1 to 32767, not 32768'],
    ['-1', "kafkajs driver: --replication-factor wants a number from 1 to 32767, not -1 (kafkajs 2.2.4 cannot ask for the brokers' default.replication.factor: its CreateTopics predates it)"],
    ['three', 'kafkajs driver: --replication-factor wants a number, not three'],
  ]) {
    assert.throws(() => seed.parseArgs([...ok, '--replication-factor', v]), e => e instanceof seed.SetupError && e.message === want, v)
  }
})

test('parseArgs: the workload shapes', () => {
  const ok = ['--bootstrap', 'h:1', '--topic', 't']
  for (const [argv, want] of [
    [['--batch-records', 'one'], ['one', -1, 0]],
    [['--batch-records', 'many', '--idle-after', '100', '--idle-ms', '1500'], ['many', 100, 1500]],
    [['--batch-records', 'default', '--idle-after', '0', '--idle-ms', '0'], ['default', 0, 0]],
    [['--records', '7', '--idle-after', '7', '--idle-ms', '1'], ['default', 7, 1]],
  ]) {
    const cfg = seed.parseArgs([...ok, ...argv])
    assert.deepStrictEqual([cfg.batchRecords, cfg.idleAfter, cfg.idleMs], want, argv.join(' '))
  }
  // The messages of bench/loadgen/seed_test.go's TestParseSeed.
  for (const [argv, want] of [
    [['--batch-records', 'few'], 'kafkajs driver: --batch-records wants one, many or default, not few'],
    [['--idle-after', '-1', '--idle-ms', '5'], 'kafkajs driver: --idle-after wants a number of at least 0, not -1'],
    [['--idle-after', '1', '--idle-ms', '-5'], 'kafkajs driver: --idle-ms wants a number of at least 0, not -5'],
    [['--idle-after', 'x', '--idle-ms', '5'], 'kafkajs driver: --idle-after wants a number, not x'],
    [['--records', '10', '--idle-after', '11', '--idle-ms', '5'], 'kafkajs driver: --idle-after wants a number of at most --records (10), not 11'],
    [['--idle-after', '10'], 'kafkajs driver: --idle-after needs --idle-ms (how long the idle phase lasts)'],
    [['--idle-ms', '10'], 'kafkajs driver: --idle-ms needs --idle-after (how many records come before the idle phase)'],
  ]) {
    assert.throws(() => seed.parseArgs([...ok, ...argv]), e => e instanceof seed.SetupError && e.message === want, argv.join(' '))
  }
})

test('sendGroups: a record a send(), or MANY_PER_SEND, none across the idle phase', () => {
  assert.strictEqual(seed.MANY_PER_SEND, 100)
  const one = [[0, 1], [1, 2], [2, 3]]
  assert.deepStrictEqual(seed.sendGroups(3, 'one'), one)
  assert.deepStrictEqual(seed.sendGroups(3, 'default', 1), one)
  assert.deepStrictEqual(seed.sendGroups(250, 'many'), [[0, 100], [100, 200], [200, 250]])
  assert.deepStrictEqual(seed.sendGroups(250, 'many', 120), [[0, 100], [100, 120], [120, 220], [220, 250]])
  assert.deepStrictEqual(seed.sendGroups(250, 'many', 0), [[0, 100], [100, 200], [200, 250]])
  assert.deepStrictEqual(seed.sendGroups(0, 'many', 0), [])
})

test('shapeKeys: after ms, before kafkajs\'s own; none by default', () => {
  const cfg = seed.parseArgs(['--bootstrap', 'h:1', '--topic', 't', '--batch-records', 'many', '--idle-after', '5', '--idle-ms', '30'])
  assert.deepStrictEqual(seed.shapeKeys(seed.parseArgs(['--bootstrap', 'h:1', '--topic', 't'])), {})
  assert.deepStrictEqual(seed.shapeKeys(cfg), { batch_records: 'many' }) // the idle phase did not run
  const shape = seed.shapeKeys(cfg, { startMs: 1000, endMs: 1031, unanswered: 0 })
  const line = seed.summaryLine({ failedErrors: {}, firstError: '', ms: 12, shape, extra: { differs: 'd' } })
  assert.ok(
    line.endsWith(
      '"ms":12,"batch_records":"many","idle_after":5,"idle_ms":30,"idle_start_ms":1000,"idle_end_ms":1031,' +
        '"idle_unanswered":0,"differs":"d"}\n'
    ),
    line
  )
})

test('retriesFor: backoffs of 100 ms doubling to 1 s within the delivery timeout', () => {
  assert.strictEqual(seed.retriesFor(5000), 7) // 100+200+400+800+1000+1000+1000 = 4500
  assert.strictEqual(seed.retriesFor(4499), 6)
  assert.strictEqual(seed.retriesFor(100), 1)
  assert.strictEqual(seed.retriesFor(1), 1) // kafkajs refuses fewer with idempotence
  assert.strictEqual(seed.retriesFor(120000), 122) // 1500 ms, then 118 of 1 s
})

test('errorName and errorText name the cause', () => {
  const cause = Object.assign(new Error('This server is not the leader for that topic-partition'), {
    name: 'KafkaJSProtocolError',
    type: 'NOT_LEADER_FOR_PARTITION',
  })
  const outer = Object.assign(new Error(cause.message), { name: 'KafkaJSNumberOfRetriesExceeded', cause })
  assert.strictEqual(seed.errorName(outer), 'KafkaJSNumberOfRetriesExceeded(NOT_LEADER_FOR_PARTITION)')
  assert.strictEqual(seed.errorName(cause), 'NOT_LEADER_FOR_PARTITION')
  assert.strictEqual(
    seed.errorText(outer),
    'KafkaJSNumberOfRetriesExceeded: This server is not the leader for that topic-partition ' +
      '(cause: KafkaJSProtocolError NOT_LEADER_FOR_PARTITION)'
  )
  assert.strictEqual(
    seed.errorText(cause),
    'KafkaJSProtocolError: This server is not the leader for that topic-partition (NOT_LEADER_FOR_PARTITION)'
  )
  const timeout = Object.assign(new Error('Request Produce(key: 0, version: 7) timed out'), {
    name: 'KafkaJSRequestTimeoutError',
  })
  assert.strictEqual(seed.errorName(timeout), 'KafkaJSRequestTimeoutError')
})

// Each bad command line is exit 2 with a message on stderr and nothing on
// stdout, before kafkajs is loaded or a broker asked (port 1 answers nothing).
test('bad flags: exit 2 with a message', () => {
  const driver = path.join(__dirname, 'driver.js')
  const ok = ['--bootstrap', '127.0.0.1:1', '--topic', 't']
  for (const [argv, want] of [
    [[...ok, '--bogus', '1'], `kafkajs driver: unknown flag --bogus\n${seed.USAGE}\n`],
    [['--bootstrap', '127.0.0.1:1', '--topic'], `${seed.USAGE}\n`],
    [['bootstrap', '127.0.0.1:1'], `${seed.USAGE}\n`],
    [['--topic', 't'], 'kafkajs driver: --bootstrap is required\n'],
    [['--bootstrap', '127.0.0.1:1'], 'kafkajs driver: --topic is required\n'],
    [[...ok, '--records', 'x'], 'kafkajs driver: --records wants a number, not x\n'],
    [[...ok, '--records', '2147483648'], 'kafkajs driver: --records wants a number, not 2147483648\n'],
    [[...ok, '--partitions', '0'], 'kafkajs driver: --partitions wants a number of at least 1, not 0\n'],
    [[...ok, '--replication-factor', '0'], 'kafkajs driver: --replication-factor wants a number from 1 to 32767, not 0\n'],
    [[...ok, '--delivery-timeout-ms', '-5'], 'kafkajs driver: --delivery-timeout-ms wants a number of at least 1, not -5\n'],
    [[...ok, '--compression', 'brotli'], 'kafkajs driver: --compression wants none, gzip, snappy, lz4 or zstd, not brotli\n'],
    [[...ok, '--compression', 'lz4'], 'kafkajs driver: --compression lz4: kafkajs 2.2.4 has no lz4 codec'],
    [[...ok, '--compression', 'zstd'], 'kafkajs driver: --compression zstd: kafkajs 2.2.4 has no zstd codec'],
    [[...ok, '--batch-records', 'two'], 'kafkajs driver: --batch-records wants one, many or default, not two\n'],
    [[...ok, '--idle-ms', '5'], 'kafkajs driver: --idle-ms needs --idle-after'],
    [[...ok, '--outcomes', path.join(__dirname, 'no', 'such', 'dir', 'f')], 'kafkajs driver: --outcomes: '],
    [ok, 'kafkajs driver: --outcomes: '], // $KCHECK_OUTCOMES, below, without --outcomes
    [[...ok, '--txn-records', '5'], 'kafkajs driver: --txn-records needs --transactional\n'],
    [[...ok, '--transactional', '--idle-after', '1', '--idle-ms', '1'], 'kafkajs driver: --idle-after with --transactional'],
  ]) {
    const env = Object.assign({}, process.env, { KCHECK_OUTCOMES: path.join(__dirname, 'no', 'such', 'dir', 'env') })
    const r = spawnSync(process.execPath, [driver, ...argv], { encoding: 'utf8', timeout: 30000, env })
    assert.strictEqual(r.status, 2, `${argv.join(' ')}: exit ${r.status}, stderr ${r.stderr}`)
    assert.strictEqual(r.stdout, '', argv.join(' '))
    assert.ok(r.stderr.startsWith(want), `${argv.join(' ')}: stderr ${JSON.stringify(r.stderr)}, want ${JSON.stringify(want)}`)
  }
})

// setup.sh without node, or without npm: exit 2, a message naming the client
// and what to do, nothing on stdout. PATH holds only what the script needs
// before it looks for them (bash, dirname).
test('setup.sh: no node, no npm', () => {
  const fs = require('node:fs')
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'kcheck-setup-'))
  try {
    for (const tool of ['bash', 'dirname']) {
      const found = ['/usr/bin', '/bin'].map(d => path.join(d, tool)).find(f => fs.existsSync(f))
      fs.symlinkSync(found, path.join(bin, tool))
    }
    const run = () =>
      spawnSync(path.join(bin, 'bash'), [path.join(__dirname, 'setup.sh')], {
        encoding: 'utf8',
        env: { PATH: bin, HOME: bin, KCHECK_CACHE: path.join(bin, 'cache') },
      })
    let r = run()
    assert.strictEqual(r.status, 2, r.stderr)
    assert.strictEqual(r.stdout, '')
    assert.match(r.stderr, /^drivers\/kafkajs\/setup.sh: node not found, needed for the kafkajs driver's client \(kafkajs 2.2.4.*install Node.js/)
    fs.symlinkSync(process.execPath, path.join(bin, 'node'))
    r = run()
    assert.strictEqual(r.status, 2, r.stderr)
    assert.strictEqual(r.stdout, '')
    assert.match(r.stderr, /^drivers\/kafkajs\/setup.sh: npm not found, needed to install the kafkajs driver's client .*install npm/)
  } finally {
    fs.rmSync(bin, { recursive: true, force: true })
  }
})
