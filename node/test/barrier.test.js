'use strict'
// The barrier and the double barrier from Node.js: waiters released by a removal, members that
// enter and leave together across clients, a timed-out enter that withdraws, and bad input.
const test = require('node:test')
const assert = require('node:assert/strict')
const { zk, unique, withClients, eventually } = require('./helpers')

test('a barrier holds its waiters until removed', () => withClients(2, async (a, b) => {
  const path = unique('barrier')
  const barrier = a.barrier(path)
  const theirs = new zk.Barrier(b, path)
  assert.equal(await barrier.wait({ timeoutMs: 0 }), true, 'a barrier that is down holds nobody')
  await barrier.set()
  await barrier.set() // up stays up
  assert.ok(await theirs.isSet())
  assert.equal(await theirs.wait({ timeoutMs: 0 }), false)
  assert.equal(await theirs.wait({ timeoutMs: 200 }), false)
  const released = theirs.wait({ timeoutMs: 20000 })
  await barrier.remove()
  assert.equal(await released, true)
  await barrier.remove() // down stays down
  assert.equal(await barrier.isSet(), false)
  await assert.rejects(barrier.wait({ timeoutMs: -1 }), { code: 'INVALID_ARGUMENT' })
  await assert.rejects(barrier.wait({ timeoutMs: NaN }), { code: 'INVALID_ARGUMENT' })
  assert.throws(() => a.barrier('no-slash'), { code: 'INVALID_PATH' })
}))

test('members enter together and leave together', () => withClients(3, async (...clients) => {
  const path = unique('double')
  const members = clients.map((c) => c.doubleBarrier(path, 3))
  const early = members.slice(0, 2).map((m) => m.enter({ timeoutMs: 20000 }))
  await eventually('two members in', async () => (await members[2].members()).length === 2)
  assert.equal(await members[2].isReady(), false, 'two of three are not let in')
  assert.deepEqual(await Promise.all([...early, members[2].enter({ timeoutMs: 20000 })]), [true, true, true])
  assert.ok(await members[0].isReady())
  assert.ok(members[0].nodePath.startsWith(`${path}/`) && members[0].memberCount === 3)
  assert.deepEqual(await Promise.all(members.map((m) => m.leave({ timeoutMs: 20000 }))), [true, true, true])
  assert.deepEqual(await members[0].members(), [])
  assert.equal(await members[0].isReady(), false)
}))

test('a timed-out enter withdraws; bad counts and timeouts are typed errors', () => withClients(1, async (c) => {
  const path = unique('double-bad')
  const barrier = c.doubleBarrier(path, 2)
  assert.equal(await barrier.enter({ timeoutMs: 0 }), false)
  assert.equal(await barrier.enter({ timeoutMs: 200 }), false)
  assert.deepEqual(await barrier.members(), [], 'a member that timed out is withdrawn')
  for (const bad of [0, -1, 2 ** 31, 2 ** 40]) {
    assert.throws(() => c.doubleBarrier(path, bad), (err) => err.code === 'INVALID_ARGUMENT' && err.message.includes('memberCount'))
  }
  for (const wrong of ['3', 1.5, 3n, NaN, undefined]) {
    assert.throws(() => c.doubleBarrier(path, wrong), TypeError)
  }
  await assert.rejects(barrier.enter({ timeoutMs: -5 }), { code: 'INVALID_ARGUMENT' })
  await assert.rejects(barrier.leave({ timeoutMs: NaN }), { code: 'INVALID_ARGUMENT' })
  await assert.rejects(barrier.enter(5000), TypeError)
  assert.deepEqual(await barrier.members(), [])
}))
