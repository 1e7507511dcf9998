// Tests of driver.js's transactional produce phase (produceTxn) against a
// stand-in producer that fails as kafkajs does; no kafkajs, no broker.
//
//   node --test drivers/kafkajs/

'use strict'

const test = require('node:test')
const assert = require('node:assert')
const seed = require('./seed')
const { produceTxn } = require('./driver')

// A stand-in for kafkajs's producer: transaction() begins one whose
// commit() throws the next of commitErrors (null: it commits); after a
// failed commit the transaction is active again only if stillActive.
function fakeProducer(commitErrors = [], stillActive = false) {
  const calls = []
  return {
    calls,
    async transaction() {
      calls.push('begin')
      let active = true
      return {
        send: async () => {},
        isActive: () => active,
        async commit() {
          calls.push('commit')
          active = false
          const e = commitErrors.shift()
          if (e) {
            active = stillActive
            throw e
          }
        },
        async abort() {
          calls.push('abort')
          active = false
        },
      }
    },
  }
}

// run runs produceTxn over records in transactions of per and returns what
// it wrote and counted.
async function run(producer, { records = 6, per = 2, abortEvery = 0 } = {}) {
  const cfg = { records, deliveryTimeoutMs: 1000, batchRecords: 'default', txn: { records: per, abortEvery, id: 'x' } }
  const lines = []
  const out = { write: l => lines.push(l) }
  const res = { sent: 0, firstError: '', extra: {} }
  const answered = new Array(records).fill(false)
  const sendRange = (from, to, send) =>
    send({}).then(() => {
      for (let n = from; n < to; n++) {
        answered[n] = true
        out.write(seed.outcomeSuccess(n, 0, n))
      }
    })
  const settle = n => {
    if (answered[n]) return false
    answered[n] = true
    out.write(seed.outcomeNone(n))
    return true
  }
  const cannot = await produceTxn(cfg, producer, out, res, sendRange, settle)
  return { cannot, lines: lines.join(''), res }
}

const protocolError = (type, code) => Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type, code })

test('produceTxn: commits and aborts, each line after its records', async () => {
  const p = fakeProducer()
  const { cannot, lines, res } = await run(p, { abortEvery: 2 })
  assert.strictEqual(cannot, null)
  assert.strictEqual(
    lines,
    '{"id":0,"p":0,"off":0}\n{"id":1,"p":0,"off":1}\n{"tx":1,"commit":true,"res":"committed"}\n' +
      '{"id":2,"p":0,"off":2}\n{"id":3,"p":0,"off":3}\n{"tx":2,"commit":false,"res":"aborted"}\n' +
      '{"id":4,"p":0,"off":4}\n{"id":5,"p":0,"off":5}\n{"tx":3,"commit":true,"res":"committed"}\n'
  )
  assert.strictEqual(res.sent, 6)
  assert.deepStrictEqual([res.extra.txn_committed, res.extra.txn_aborted, res.extra.txn_failed], [2, 1, 0])
})

test('produceTxn: a failed commit ends the phase unless the transaction is still active', async () => {
  let p = fakeProducer([null, protocolError('INVALID_TXN_STATE', 48)])
  let r = await run(p)
  assert.strictEqual(r.cannot, null)
  assert.ok(r.lines.endsWith('{"tx":2,"commit":true,"res":"failed","err":"KafkaJSProtocolError: INVALID_TXN_STATE (INVALID_TXN_STATE)","code":48}\n'), r.lines)
  assert.deepStrictEqual(p.calls, ['begin', 'commit', 'begin', 'commit'])
  assert.deepStrictEqual([r.res.sent, r.res.extra.txn_committed, r.res.extra.txn_failed], [4, 1, 1])
  assert.strictEqual(r.res.firstError, 'transaction 2: commit: KafkaJSProtocolError: INVALID_TXN_STATE (INVALID_TXN_STATE)')

  p = fakeProducer([protocolError('INVALID_TXN_STATE', 48)], true)
  r = await run(p)
  assert.ok(r.lines.includes('"code":48}\n{"tx":1,"commit":false,"res":"aborted"}\n{"id":2,'), r.lines)
  assert.deepStrictEqual([r.res.sent, r.res.extra.txn_committed, r.res.extra.txn_aborted, r.res.extra.txn_failed], [6, 2, 0, 1])
})

test('produceTxn: a broker without EndTxn could not run', async () => {
  const noKey = Object.assign(new Error('The Kafka server does not support the requested API version'), {
    name: 'KafkaJSServerDoesNotSupportApiKey',
  })
  const r = await run(fakeProducer([noKey]))
  assert.strictEqual(r.cannot, 'transaction 1: commit: KafkaJSServerDoesNotSupportApiKey: The Kafka server does not support the requested API version')
})
