#!/usr/bin/env node
// The seed's experiment (KAFKA-14359) run by kafkajs, which kcheck did not
// write: create a new topic, produce to it at once with idempotence on, read
// every partition back and count what was lost, duplicated or reordered. Same
// flags, same one line of JSON on stdout (plus the keys that say where kafkajs
// differs: see producerSettings) and same exit codes as drivers/python and
// drivers/kgo: 0 clean, 1 anomalies or failed sends, 2 setup errors (with a
// message on stderr). Each record carries a kcheck-id header, its number n in
// decimal ASCII, and the value prefix "rec=<n>;". --outcomes FILE (or
// $KCHECK_OUTCOMES) writes what kafkajs reported for each record
// (drivers/OUTCOMES.md). With --transactional it produces in transactions
// with kafkajs's transactional API (produceTxn; drivers/WORKLOADS.md,
// "Transactions").
//
//   node=$(drivers/kafkajs/setup.sh) && "$node" drivers/kafkajs/driver.js --bootstrap HOST:PORT --topic T

'use strict'

const fs = require('fs')
const seed = require('./seed')

const { SetupError, ERR_PREFIX } = seed

const GRACE_MS = 30000 // past the delivery timeout
// Bounds on the setup steps, like the other drivers'.
const REACH_TIMEOUT_MS = 20000 // a broker must answer within this
const CREATE_TIMEOUT_MS = 30000
const LEADER_TIMEOUT_MS = 30000
const READ_TIMEOUT_MS = 120000
const CLOSE_TIMEOUT_MS = 5000
const NO_CALLBACK = `no callback within delivery timeout + ${GRACE_MS / 1000} s` // failed_errors' name for the unanswered

// MAX_IN_FLIGHT_REQUESTS is the connections' maxInFlightRequests, the Java
// client's max.in.flight.requests.per.connection=5. For produce requests it
// is moot: see producerSettings.
const MAX_IN_FLIGHT_REQUESTS = 5
// MAX_IN_FLIGHT is how many produce requests kafkajs's idempotent producer
// has in flight per broker: one (eosManager's broker lock).
const MAX_IN_FLIGHT = 1
// TXN_MAX_IN_FLIGHT_REQUESTS is maxInFlightRequests with --transactional:
// 1, as kafkajs's docs/Transactions.md asks of a transactional producer.
const TXN_MAX_IN_FLIGHT_REQUESTS = 1

/** The JSON line's differs: txn says whether the run is --transactional. */
const differs = txn =>
  'one produce request in flight per broker (kafkajs\'s idempotent producer holds a lock per broker across each ' +
  'produce request: eosManager acquireBrokerLock; ' +
  (txn
    ? 'maxInFlightRequests=1, as kafkajs\'s docs ask of a transactional producer, and a transaction\'s send() calls one after another; '
    : 'maxInFlightRequests=5 is set but only bounds the other requests; ') +
  'Java and kgo: 5); one send() call, so one produce request, per record (--batch-records many: per ' +
  seed.MANY_PER_SEND +
  ' records): kafkajs batches nothing across calls; ' +
  'no delivery timeout: retry.retries with backoffs of 100 ms doubling to 1 s stand for it; ' +
  'records without a key go round-robin (Java: sticky)'

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

/** Resolves with f()'s value, or with undefined after ms. */
function within(ms, f) {
  let t
  return Promise.race([
    Promise.resolve()
      .then(f)
      .catch(() => undefined),
    new Promise(resolve => {
      t = setTimeout(resolve, ms)
    }),
  ]).finally(() => clearTimeout(t))
}

/** kafkajs, from NODE_PATH (setup.sh), or a setup error that says how to get it. */
function loadKafkajs() {
  try {
    const kafkajs = require('kafkajs')
    const version = require(require.resolve('kafkajs').replace(/index\.js$/, 'package.json')).version
    return { kafkajs, version }
  } catch (e) {
    throw new SetupError(`${ERR_PREFIX}${e.message.split('\n')[0]} (run drivers/kafkajs/setup.sh and use the node it prints)`)
  }
}

/**
 * The producer's kafkajs settings for the flags, with what the JSON line says
 * of them.
 *
 * Idempotence: idempotent: true. kafkajs's producer (src/producer/index.js)
 * then defaults retry.retries to Number.MAX_SAFE_INTEGER and refuses fewer
 * than 1, and sendBatch (src/producer/messageProducer.js) refuses acks other
 * than -1. It checks nothing about maxInFlightRequests (src/index.js,
 * producer(), passes it to the cluster's connections unchecked; only
 * docs/Transactions.md asks for 1). What bounds the produce requests is
 * sendMessages (src/producer/sendMessages.js): it takes
 * eosManager.acquireBrokerLock(broker) (src/producer/eosManager/index.js, a
 * Lock per node id, timeout 0xffff ms) before it assigns a request's
 * sequences and holds it until the answer, so one produce request is in
 * flight per broker whatever maxInFlightRequests says. maxInFlightRequests is
 * set to 5, the Java client's max.in.flight.requests.per.connection, as close
 * to 5 as kafkajs goes; the JSON line says 1 (max_in_flight) and 5
 * (max_in_flight_requests).
 *
 * Timeouts: Java's request.timeout.ms (--request-timeout-ms) is both the
 * ProduceRequest's timeout field and how long the client waits for an answer.
 * kafkajs's requestTimeout (the client's, src/network/requestQueue) is the
 * wait and send()'s timeout the field, so both are set to it. kafkajs has no
 * delivery.timeout.ms: a send() is retried retry.retries times
 * (src/retry/index.js), each wait initialRetryTime (100 ms, Java's
 * retry.backoff.ms) times multiplier 2 with jitter factor 0.2, capped at
 * maxRetryTime (1 s, Java's retry.backoff.max.ms); retries is the most
 * whose backoffs add up to the delivery timeout (seed.retriesFor: 7 for
 * 5 s). The time a send() waits for the broker lock or an answer is not
 * counted, so a send() can take longer than the delivery timeout; the wait
 * for the outcomes is bounded (delivery timeout + 30 s), as in the other
 * drivers. kafkajs logs that a limited number of retries "may invalidate EoS
 * guarantees"; the Java client's delivery timeout is such a limit too.
 *
 * Partitioning: Partitioners.DefaultPartitioner is murmur2 over the key, the
 * Java client's (kafkajs 2's default, named so it does not warn); records
 * without a key (--keys 0) go round-robin, where Java's and kgo's are sticky.
 */
function producerSettings(cfg, kafkajs) {
  const retry = {
    retries: seed.retriesFor(cfg.deliveryTimeoutMs),
    initialRetryTime: seed.INITIAL_RETRY_MS,
    maxRetryTime: seed.MAX_RETRY_MS,
    factor: seed.RETRY_FACTOR,
    multiplier: seed.RETRY_MULTIPLIER,
  }
  const compression = {
    none: kafkajs.CompressionTypes.None,
    gzip: kafkajs.CompressionTypes.GZIP,
    snappy: kafkajs.CompressionTypes.Snappy,
  }[cfg.compression]
  return {
    client: {
      clientId: 'kcheck-kafkajs',
      brokers: cfg.bootstrap.split(','),
      requestTimeout: cfg.requestTimeoutMs,
      retry,
      logLevel: kafkajs.logLevel.NOTHING, // failures are reported through errors, not logs
    },
    producer: {
      idempotent: true,
      maxInFlightRequests: cfg.txn ? TXN_MAX_IN_FLIGHT_REQUESTS : MAX_IN_FLIGHT_REQUESTS,
      allowAutoTopicCreation: false,
      createPartitioner: kafkajs.Partitioners.DefaultPartitioner,
      retry,
      // --transactional: the transactional id and nothing else
      // (transactionTimeout stays kafkajs's 60 s).
      ...(cfg.txn ? { transactionalId: cfg.txn.id } : {}),
    },
    send: { acks: -1, timeout: cfg.requestTimeoutMs, compression },
    extra: {
      max_in_flight: MAX_IN_FLIGHT,
      max_in_flight_requests: cfg.txn ? TXN_MAX_IN_FLIGHT_REQUESTS : MAX_IN_FLIGHT_REQUESTS,
      retries: retry.retries,
      initial_retry_ms: retry.initialRetryTime,
      max_retry_ms: retry.maxRetryTime,
      send_per: cfg.batchRecords === 'many' ? `${seed.MANY_PER_SEND} records` : 'record',
      differs: differs(cfg.txn),
    },
  }
}

/** A kafkajs client for the setup steps (topic, read-back): kafkajs's defaults, quiet. */
function setupClient(kafkajs, cfg, clientId) {
  return new kafkajs.Kafka({
    clientId,
    brokers: cfg.bootstrap.split(','),
    connectionTimeout: 5000,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 },
    logLevel: kafkajs.logLevel.NOTHING,
  })
}

/**
 * Waits until a broker answers (a bounded wait), creates the topic with
 * kafkajs's admin and waits until every partition has a leader, as kcheck run
 * does; then the produce starts at once.
 */
async function createTopic(kafkajs, cfg) {
  const admin = setupClient(kafkajs, cfg, 'kcheck-kafkajs-admin').admin()
  const deadline = Date.now() + REACH_TIMEOUT_MS
  for (let backoff = 100; ; backoff = Math.min(2 * backoff, 1000)) {
    try {
      await admin.connect()
      break
    } catch (e) {
      if (Date.now() + backoff > deadline) {
        throw new SetupError(`${ERR_PREFIX}no broker answers at ${cfg.bootstrap} after ${REACH_TIMEOUT_MS / 1000} s: ${seed.errorText(e)}`)
      }
      await sleep(backoff)
    }
  }
  try {
    let created
    try {
      created = await admin.createTopics({
        topics: [{ topic: cfg.topic, numPartitions: cfg.partitions, replicationFactor: cfg.replicationFactor }],
        waitForLeaders: false,
        timeout: CREATE_TIMEOUT_MS,
      })
    } catch (e) {
      const errs = (e.errors || []).map(x => seed.errorText(x)).join('; ')
      throw new SetupError(`${ERR_PREFIX}creating topic "${cfg.topic}" at ${cfg.bootstrap}: ${seed.errorText(e)}${errs ? ': ' + errs : ''}`)
    }
    if (!created) {
      throw new SetupError(`${ERR_PREFIX}topic "${cfg.topic}" already exists: pick a new --topic`)
    }
    const leadersBy = Date.now() + LEADER_TIMEOUT_MS
    for (let backoff = 10; ; backoff = Math.min(2 * backoff, 500)) {
      try {
        const md = await admin.fetchTopicMetadata({ topics: [cfg.topic] })
        const t = md.topics.find(x => x.name === cfg.topic)
        const led = t ? t.partitions.filter(p => p.partitionErrorCode === 0 && p.leader >= 0).length : 0
        if (t && t.partitions.length === cfg.partitions && led === cfg.partitions) return
      } catch (e) {
        // not yet visible; retry
      }
      if (Date.now() > leadersBy) {
        throw new SetupError(`${ERR_PREFIX}topic "${cfg.topic}": partitions have no leaders after ${LEADER_TIMEOUT_MS / 1000} s`)
      }
      await sleep(backoff)
    }
  } finally {
    await within(CLOSE_TIMEOUT_MS, () => admin.disconnect())
  }
}

/**
 * Produces the records, one send() per record, all at once, and counts each
 * call's outcome as its record's; then reads the topic back. out is the
 * --outcomes stream or null.
 */
async function experiment(cfg, out) {
  const { kafkajs, version } = loadKafkajs()
  if (cfg.compression === 'snappy') {
    kafkajs.CompressionCodecs[kafkajs.CompressionTypes.Snappy] = require('kafkajs-snappy')
  }
  await createTopic(kafkajs, cfg)

  const s = producerSettings(cfg, kafkajs)
  const producer = new kafkajs.Kafka(s.client).producer(s.producer)
  try {
    await producer.connect() // and InitProducerId
  } catch (e) {
    await within(CLOSE_TIMEOUT_MS, () => producer.disconnect())
    throw new SetupError(`${ERR_PREFIX}starting the producer: ${seed.errorText(e)}`)
  }

  const res = {
    client: 'kafkajs',
    version,
    sent: 0,
    acked: 0,
    failed: 0,
    readBack: 0,
    lost: 0,
    lostAcked: 0,
    duplicated: 0,
    outOfOrder: 0,
    foreign: 0,
    failedErrors: {},
    firstError: '',
    ms: 0,
    extra: s.extra,
  }
  // The partition kafkajs's DefaultPartitioner gives a key, for a failure's
  // "p": kafkajs's errors name none, and for a key it is murmur2 over the
  // partition count (src/producer/partitioners/legacy/partitioner.js).
  const partitionOf = kafkajs.Partitioners.DefaultPartitioner()
  const partitionMetadata = Array.from({ length: cfg.partitions }, (_, p) => ({ partitionId: p, leader: 0 }))
  const failedPartition = key =>
    key === null ? -1 : partitionOf({ topic: cfg.topic, partitionMetadata, message: { key } })

  const w = new seed.Workload(cfg.valueBytes, cfg.keys) // letters: compressible, like text
  const keyIdx = new Array(cfg.records).fill(-1)
  const acked = new Array(cfg.records).fill(false)
  // ackedEnd: past each partition's highest acknowledged offset, where the
  // read-back must reach at least (readBack).
  const ackedEnd = new Map()
  const answered = new Array(cfg.records).fill(false)
  let open = cfg.records
  let closed = false // past the wait: later outcomes are neither counted nor written
  let allDone
  const done = new Promise(resolve => {
    allDone = resolve
  })
  if (open === 0) allDone()
  // The records before the idle phase not yet answered (drivers/WORKLOADS.md).
  let firstOpen = Math.max(cfg.idleAfter, 0)
  let firstDone
  const firstAnswered = new Promise(resolve => {
    firstDone = resolve
  })
  if (firstOpen === 0) firstDone()
  // report counts record n's outcome: delivered at offset off (a decimal
  // string or -1) of partition p, or failed with err on partition p (-1: not known).
  const report = (n, p, off, err) => {
    if (closed || answered[n]) return
    answered[n] = true
    if (n < cfg.idleAfter && --firstOpen === 0) firstDone()
    if (err == null) {
      acked[n] = true
      res.acked++
      if (p >= 0 && off !== -1 && off !== '-1') ackedEnd.set(p, Math.max(ackedEnd.get(p) || 0, Number(off) + 1))
      if (out) out.write(seed.outcomeSuccess(n, p, off))
    } else {
      res.failed++
      if (!res.firstError) res.firstError = seed.errorText(err)
      const name = seed.errorName(err)
      res.failedErrors[name] = (res.failedErrors[name] || 0) + 1
      if (out) out.write(seed.outcomeFailure(n, p, seed.errorText(err), seed.errorCode(err)))
    }
    if (--open === 0) allDone()
  }
  const offsetOf = (md, i) => (/^-?[0-9]+$/.test(md.baseOffset) && BigInt(md.baseOffset) >= 0n ? String(BigInt(md.baseOffset) + BigInt(i)) : -1)

  // The idle phase: wait (bounded, as for the outcomes) until the records
  // before it are answered, then send nothing for --idle-ms.
  let idle = null
  const idlePhase = async () => {
    let t
    await Promise.race([firstAnswered, new Promise(resolve => (t = setTimeout(resolve, cfg.deliveryTimeoutMs + GRACE_MS)))])
    clearTimeout(t)
    const startMs = Date.now()
    const unanswered = firstOpen
    await sleep(cfg.idleMs)
    idle = { startMs, endMs: Date.now(), unanswered }
  }

  // One send() per record, or with --batch-records many MANY_PER_SEND
  // records per send(), all at once without waiting. In a send() of many,
  // each record's partition is kafkajs's DefaultPartitioner's (murmur2 of
  // the key, as failedPartition) and its offset the partition's baseOffset
  // plus its place among the call's records of that partition (kafkajs keeps
  // their order, groupMessagesPerPartition); a record without a key is given
  // its partition by another DefaultPartitioner, round-robin as kafkajs's
  // own, so that the driver knows it.
  const many = cfg.batchRecords === 'many'
  const roundRobin = kafkajs.Partitioners.DefaultPartitioner()
  // sendRange sends records from to to-1 in one call of send (producer.send,
  // or a transaction's) and returns the promise that reports them.
  const sendRange = (from, to, send) => {
    const recs = []
    for (let n = from; n < to; n++) {
      keyIdx[n] = w.nextKeyIndex()
      const key = keyIdx[n] >= 0 ? seed.keyOf(keyIdx[n]) : null
      const message = { key, value: w.value(n), headers: { [seed.ID_HEADER]: String(n) } }
      let p = failedPartition(key)
      if (many && key === null) {
        p = roundRobin({ topic: cfg.topic, partitionMetadata, message })
        message.partition = p
      }
      recs.push({ n, p, message })
    }
    return send(Object.assign({ topic: cfg.topic, messages: recs.map(r => r.message) }, s.send)).then(
      mds => {
        const mine = (mds || []).filter(m => m.topicName === cfg.topic)
        if (!many) {
          const md = mine[0] || { partition: -1, baseOffset: '-1' }
          report(recs[0].n, md.partition, offsetOf(md, 0), null)
          return
        }
        const place = new Map() // partition -> records of this call so far
        for (const r of recs) {
          const i = place.get(r.p) || 0
          place.set(r.p, i + 1)
          const md = mine.find(m => m.partition === r.p)
          report(r.n, md ? r.p : -1, md ? offsetOf(md, i) : -1, null)
        }
      },
      err => recs.forEach(r => report(r.n, r.p, -1, err || new Error('send rejected without an error')))
    )
  }
  if (cfg.txn) {
    // settle ends the wait for record n (of a transaction) if it has had no
    // report: failed as having had no callback, its none line now.
    const settle = n => {
      if (answered[n]) return false
      answered[n] = true
      res.failed++
      res.failedErrors[NO_CALLBACK] = (res.failedErrors[NO_CALLBACK] || 0) + 1
      if (out) out.write(seed.outcomeNone(n))
      if (--open === 0) allDone()
      return true
    }
    const cannot = await produceTxn(cfg, producer, out, res, sendRange, settle)
    if (cannot) {
      await within(CLOSE_TIMEOUT_MS, () => producer.disconnect())
      throw new SetupError(`${ERR_PREFIX}could not run transactions: ${cannot}`)
    }
  } else {
    for (const [from, to] of seed.sendGroups(cfg.records, cfg.batchRecords, cfg.idleAfter)) {
      if (from === cfg.idleAfter) await idlePhase()
      sendRange(from, to, m => producer.send(m))
      res.sent += to - from
    }
    if (cfg.idleAfter === cfg.records) await idlePhase() // an idle phase after the last record
  }
  // A bounded wait, so a stalled producer is reported rather than waited on forever.
  let timer
  await Promise.race([done, new Promise(resolve => (timer = setTimeout(resolve, cfg.deliveryTimeoutMs + GRACE_MS)))])
  clearTimeout(timer)
  closed = true
  if (open > 0) {
    res.failed += open
    res.failedErrors[NO_CALLBACK] = (res.failedErrors[NO_CALLBACK] || 0) + open
    if (out) answered.forEach((a, n) => a || out.write(seed.outcomeNone(n)))
  }
  await within(CLOSE_TIMEOUT_MS, () => producer.disconnect()) // Java's producer.close(5 s)

  res.shape = seed.shapeKeys(cfg, idle)
  const tally = await readBack(kafkajs, cfg, keyIdx, ackedEnd)
  tally.finish(res.sent, acked)
  Object.assign(res, {
    readBack: tally.readBack,
    lost: tally.lost,
    lostAcked: tally.lostAcked,
    duplicated: tally.duplicated,
    outOfOrder: tally.outOfOrder,
    foreign: tally.foreign,
  })
  return res
}

/**
 * The produce phase of --transactional (drivers/WORKLOADS.md,
 * "Transactions") with kafkajs's transactional API as its
 * docs/Transactions.md shows it: producer.transaction() (which begins it,
 * and before the first runs InitProducerId), the transaction's records sent
 * with its send() (sendRange), each call once the one before has been
 * answered, a wait for each record's
 * report (bounded by the delivery timeout + grace; a record without one
 * gets its none line, its transaction is aborted and is the last), then
 * commit(), or abort() for every --txn-abort-every-th. After a failed
 * commit, abort() if the transaction's isActive() says it can still be
 * used (kafkajs 2.2.4 leaves a failed commit's transaction in COMMITTING,
 * where abort() is refused, so it never is: the phase ends). Each end goes
 * to out. Returns the words of an error that says the broker cannot run
 * kafkajs's transactions (seed.txnCannotRun; any failure of the first
 * transaction's begin, which initialises the producer id), else null.
 */
async function produceTxn(cfg, producer, out, res, sendRange, settle) {
  const n = { committed: 0, aborted: 0, failed: 0 }
  res.extra = Object.assign(res.extra, seed.txnKeys(cfg.txn, n))
  const bound = cfg.deliveryTimeoutMs + GRACE_MS
  let cannot = null
  const note = (tx, what, e) => {
    const text = `transaction ${tx}: ${what}: ${seed.errorText(e)}`
    if (!res.firstError) res.firstError = text
    if (cannot === null && seed.txnCannotRun(e)) cannot = text
  }
  // end writes transaction tx's end and counts it (not the abort after a
  // failed commit: count false); true if it ended as asked.
  const end = async (t, tx, commit, count) => {
    try {
      await (commit ? t.commit() : t.abort())
    } catch (e) {
      note(tx, commit ? 'commit' : count ? 'abort' : 'abort after a failed commit', e)
      if (out) out.write(seed.outcomeTxnFailed(tx, commit, seed.errorText(e), seed.errorCode(e)))
      if (count) n.failed++
      return false
    }
    if (out) out.write(commit ? seed.outcomeCommitted(tx) : seed.outcomeAborted(tx))
    if (count) commit ? n.committed++ : n.aborted++
    return true
  }
  for (let tx = 1, sent = 0; sent < cfg.records; tx++) {
    let t
    try {
      t = await producer.transaction()
    } catch (e) {
      note(tx, 'begin', e)
      if (tx === 1) cannot = cannot || `transaction 1: begin: ${seed.errorText(e)}`
      break
    }
    const first = sent
    const k = Math.min(cfg.txn.records, cfg.records - sent)
    const send = m =>
      t.send(m).catch(e => {
        if (cannot === null && seed.txnCannotRun(e)) cannot = `transaction ${tx}: send: ${seed.errorText(e)}`
        throw e
      })
    // One send() after another: kafkajs keeps no order between concurrent
    // send()s (drivers/CLIENTS.md), and its docs await each in a transaction.
    let chain = Promise.resolve()
    for (const [from, to] of seed.sendGroups(k, cfg.batchRecords)) {
      chain = chain.then(() => sendRange(first + from, first + to, send))
    }
    sent += k
    res.sent += k
    await within(bound, () => chain)
    let stalled = 0
    for (let i = first; i < sent; i++) if (settle(i)) stalled++
    if (cannot !== null) break
    const commit = !seed.txnAbort(cfg.txn, tx) && stalled === 0
    let ended = await end(t, tx, commit, true)
    if (!ended && commit && t.isActive()) ended = await end(t, tx, false, false)
    Object.assign(res.extra, seed.txnKeys(cfg.txn, n))
    if (cannot !== null || !ended || stalled > 0) break
  }
  return cannot
}

/**
 * Reads every partition from the beginning up to its end offset (the high
 * watermark) with kafkajs's consumer, in a group of its own that commits
 * nothing (kafkajs has no assign()), and counts the records as the Java
 * driver does (seed.Tally).
 */
// readBack reads the topic back to each partition's end offset, or past its
// highest acknowledged offset (ackedEnd) when that is further: kafkajs's
// admin lists offsets read_committed, so its end is the last stable offset,
// which a transaction left open (until the coordinator times it out) holds
// behind records already written.
async function readBack(kafkajs, cfg, keyIdx, ackedEnd) {
  const kafka = setupClient(kafkajs, cfg, 'kcheck-kafkajs-readback')
  const admin = kafka.admin()
  const deadline = Date.now() + READ_TIMEOUT_MS
  const end = new Map()
  try {
    // A broker still taking up a new partition's leadership (a loaded
    // machine, seconds after the topic was created) answers with a
    // retriable error: wait for it, up to READ_TIMEOUT_MS.
    for (let backoff = 20; ; backoff = Math.min(2 * backoff, 1000)) {
      try {
        await admin.connect()
        const offsets = await admin.fetchTopicOffsets(cfg.topic)
        for (const o of offsets) end.set(o.partition, Math.max(Number(o.high), ackedEnd.get(o.partition) || 0))
        if (end.size === cfg.partitions) break
        throw new Error(`end offsets of ${end.size} partitions, want ${cfg.partitions}`)
      } catch (e) {
        if (Date.now() > deadline) {
          throw new SetupError(`${ERR_PREFIX}read-back: end offsets of "${cfg.topic}": ${seed.errorText(e)}`)
        }
        await sleep(backoff)
      }
    }
  } finally {
    await within(CLOSE_TIMEOUT_MS, () => admin.disconnect())
  }

  const tally = new seed.Tally(keyIdx)
  const remaining = () => [...end].some(([p, e]) => tally.nextOffset(p) < e)
  if (!remaining()) return tally
  const consumer = kafka.consumer({
    groupId: `kcheck-kafkajs-readback-${cfg.topic}`,
    readUncommitted: true, // as the Java consumer's default
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: 500,
  })
  let finished
  let failed
  const reached = new Promise((resolve, reject) => {
    finished = resolve
    failed = reject
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) failed(payload.error)
  })
  // A transactional run's markers take offsets up to the end that no
  // record's offset reaches; kafkajs hides them, and tells how far a batch
  // went (its last offset, a marker's too) in END_BATCH_PROCESS, sent also
  // for a batch of markers alone, which eachBatch never sees.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    if (payload.topic !== cfg.topic || !/^[0-9]+$/.test(String(payload.lastOffset))) return
    tally.passed(payload.partition, Number(payload.lastOffset))
    if (!remaining()) finished()
  })
  let timer
  try {
    await consumer.connect()
    await consumer.subscribe({ topics: [cfg.topic], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) tally.add(batch.partition, Number(m.offset), m.value)
        if (!remaining()) finished()
      },
    })
    await Promise.race([
      reached,
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new SetupError(`${ERR_PREFIX}read-back did not reach the end offsets in ${READ_TIMEOUT_MS / 1000} s`)),
          Math.max(0, deadline - Date.now())
        )
      }),
    ])
  } catch (e) {
    throw e instanceof SetupError ? e : new SetupError(`${ERR_PREFIX}read-back: ${seed.errorText(e)}`)
  } finally {
    clearTimeout(timer)
    await within(CLOSE_TIMEOUT_MS, () => consumer.disconnect())
  }
  return tally
}

/** The command: 0 clean, 1 anomalies or failed sends, 2 setup errors. */
async function main(argv, stdout, stderr) {
  const t0 = Date.now()
  let out = null
  try {
    const { txn, rest } = seed.splitTxn(argv)
    const cfg = seed.parseArgs(rest)
    if (txn) seed.txnCheck(txn, cfg)
    cfg.txn = txn
    const outcomes = seed.outcomesPath(cfg.outcomes)
    if (outcomes !== '') {
      let fd
      try {
        fd = fs.openSync(outcomes, 'w')
      } catch (e) {
        throw new SetupError(`${ERR_PREFIX}--outcomes: ${e.message}`)
      }
      const lines = []
      out = { fd, lines, write: line => lines.push(line) }
    }
    const res = await experiment(cfg, out)
    if (out) {
      try {
        fs.writeFileSync(out.fd, out.lines.join(''))
        fs.closeSync(out.fd)
      } catch (e) {
        throw new SetupError(`${ERR_PREFIX}--outcomes: ${e.message}`)
      }
    }
    res.ms = Date.now() - t0
    stdout.write(seed.summaryLine(res))
    return seed.clean(res) ? 0 : 1
  } catch (e) {
    // anything else is a setup error too, without a stack trace
    stderr.write((e instanceof SetupError ? e.message : `${ERR_PREFIX}${seed.errorText(e)}`) + '\n')
    return 2
  }
}

module.exports = { main, producerSettings, produceTxn, MAX_IN_FLIGHT, MAX_IN_FLIGHT_REQUESTS }

if (require.main === module) {
  main(process.argv.slice(2), process.stdout, process.stderr).then(code => {
    // kafkajs may leave timers behind: exit once stdout is written.
    process.stdout.write('', () => process.exit(code))
  })
}
