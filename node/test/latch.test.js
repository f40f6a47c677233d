'use strict'
// The leader latch from Node.js: hand-over with increasing fencing tokens and events, a leader
// whose node an operator deletes, listeners that call back (close included), await using,
// start/close unawaited, and bad input.
const test = require('node:test')
const assert = require('node:assert/strict')
const { zk, unique, withClients, eventually, harness } = require('./helpers')

test('event names are the core\'s; the ESM entry exports what the CommonJS one does', async () => {
  assert.deepEqual([...zk.LATCH_EVENTS], ['IS_LEADER', 'NOT_LEADER', 'SUSPENDED', 'RECONNECTED'])
  const esm = await import('zkrecipes')
  const missing = Object.keys(zk).filter((name) => !(name in esm) || esm[name] !== zk[name])
  assert.deepEqual(missing, [])
})

test('two participants hand over with increasing fencing tokens', () => withClients(2, async (a, b) => {
  const path = unique('latch')
  const first = a.leaderLatch(path, { id: 'a' })
  const second = new zk.LeaderLatch(b, path, { id: 'b' })
  const events = []
  const both = new Promise((resolve) => first.on('event', (e) => { events.push(e); if (events.length === 2) resolve() }))
  const isLeader = new Promise((resolve) => first.once('is_leader', resolve))
  assert.equal(first.isStarted, false)
  assert.equal(first.fencingToken, null)
  await first.start()
  const token = await first.awaitLeadership({ timeoutMs: 5000 })
  assert.equal(typeof token, 'bigint')
  assert.ok(first.hasLeadership() && first.fencingToken === token)
  assert.ok(first.nodePath.startsWith(`${path}/_c_`) && first.nodePath.includes('-latch-'))
  assert.deepEqual(await isLeader, { type: 'IS_LEADER', fencingToken: token })
  await second.start()
  assert.equal(await second.awaitLeadership({ timeoutMs: 0 }), null)
  assert.equal(await second.awaitLeadership({ timeoutMs: 200 }), null)
  assert.ok(!second.hasLeadership() && second.fencingToken === null && second.nodePath === null)
  assert.deepEqual(await second.leader(), { id: 'a', node: first.nodePath.split('/').pop(), isLeader: true })
  assert.deepEqual((await second.participants()).map((p) => [p.id, p.isLeader]), [['a', true], ['b', false]])
  await first.close()
  const next = await second.awaitLeadership({ timeoutMs: 10000 })
  assert.ok(next > token)
  await both
  assert.deepEqual(events, [{ type: 'IS_LEADER', fencingToken: token }, { type: 'NOT_LEADER' }])
  assert.ok(first.isClosed && !first.isStarted && !first.hasLeadership())
  await first.close() // twice is harmless
  await assert.rejects(first.start(), { code: 'CLOSED' })
  await assert.rejects(first.awaitLeadership(), { code: 'CLOSED' })
  await second[Symbol.asyncDispose]()
  assert.deepEqual(await second.participants(), [])
  assert.equal(await second.leader(), null)
}))

test('a deleted leader node is not_leader with the reason, then leads again', () => withClients(1, async (c) => {
  const path = unique('latch-lost')
  const latch = c.leaderLatch(path, { id: 'only' })
  const seen = []
  const listed = []
  const three = new Promise((resolve) => latch.on('event', async (e) => {
    seen.push(e)
    if (seen.length === 3) resolve()
    // A listener may call back into the latch.
    listed.push((await latch.participants()).map((p) => p.id))
  }))
  await latch.start()
  const token = await latch.awaitLeadership({ timeoutMs: 5000 })
  harness('rm', latch.nodePath)
  await three
  assert.deepEqual(seen.map((e) => e.type), ['IS_LEADER', 'NOT_LEADER', 'IS_LEADER'])
  assert.ok(seen[1].reason instanceof zk.ZkError, 'NOT_LEADER carries why')
  assert.ok(seen[2].fencingToken > token)
  assert.equal(await latch.awaitLeadership({ timeoutMs: 0 }), seen[2].fencingToken)
  await eventually('the listeners looked', () => listed.length === 3)
  latch.removeAllListeners('event')
  await latch.close()
}))

test('a listener may close the latch; start and close unawaited keep their order', () => withClients(2, async (a, b) => {
  const path = unique('latch-close')
  const leader = a.leaderLatch(path)
  assert.equal(leader.id, a.identity)
  const closed = new Promise((resolve, reject) => leader.on('is_leader', () => leader.close().then(resolve, reject)))
  await leader.start()
  await closed
  assert.ok(leader.isClosed)
  const other = b.leaderLatch(path)
  const started = other.start()
  const closing = other.close()
  // The start took effect first and the close ended it: in line, or closed before it was; never
  // the start of a latch already closed.
  const outcome = await started.then(() => 'in line', (err) => err.message)
  assert.ok(outcome === 'in line' || !outcome.includes('cannot be started again'), outcome)
  await closing
  assert.ok(other.isClosed)
  assert.deepEqual(await other.participants(), [])
  const late = b.leaderLatch(path)
  const lateClose = late.close()
  await assert.rejects(late.start(), { code: 'CLOSED' })
  await lateClose
}))

test('bad input is a typed error', () => withClients(1, async (c) => {
  const path = unique('latch-bad')
  assert.throws(() => c.leaderLatch('relative'), { code: 'INVALID_PATH' })
  assert.throws(() => c.leaderLatch(path, { id: 42 }), TypeError)
  assert.equal(c.leaderLatch(path, 'named').id, 'named', 'the id alone, as the other languages take it')
  assert.throws(() => c.leaderLatch(path, 7), TypeError)
  assert.throws(() => c.leaderLatch(42), TypeError)
  assert.throws(() => c.leaderLatch(path).on('leader', () => {}), TypeError)
  const latch = c.leaderLatch(path)
  await assert.rejects(latch.awaitLeadership({ timeoutMs: 100 }), { code: 'INVALID_ARGUMENT' })
  await latch.start()
  await assert.rejects(latch.awaitLeadership({ timeoutMs: -1 }), { code: 'INVALID_ARGUMENT' })
  await assert.rejects(latch.awaitLeadership({ timeoutMs: NaN }), { code: 'INVALID_ARGUMENT' })
  await assert.rejects(latch.awaitLeadership({ timeoutMs: '5' }), TypeError)
  assert.equal(typeof await latch.awaitLeadership({ timeoutMs: Infinity }), 'bigint')
  await latch.close()
}))
