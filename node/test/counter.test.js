'use strict'
// The counters from Node.js: atomic longs exact under concurrent increments of two clients
// (bigint values, wrapping, compare-and-set); shared counts seeded once, 'change' events heard
// from another client (a listener may call back into the count), trySet races, close with adds
// in flight, use after close, and bad input and bad nodes as typed errors.
const test = require('node:test')
const assert = require('node:assert/strict')
const { zk, unique, withClients, assertEsmExports } = require('./helpers')

const DEADLINE_MS = 20000

// Resolves with the first 'change' that `match`es; rejects after DEADLINE_MS.
function changeTo (count, value) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      count.off('change', listener)
      reject(new Error(`no change to ${value} within ${DEADLINE_MS} ms`))
    }, DEADLINE_MS)
    function listener (change) {
      if (change.value !== value) return
      clearTimeout(timer)
      count.off('change', listener)
      resolve(change)
    }
    count.on('change', listener)
  })
}

test('the ESM entry exports the counters', async () => {
  await assertEsmExports(['SharedCount', 'DistributedAtomicLong'])
})

test('increments of two clients end exact, each seeing its own value', () => withClients(2, async (a, b) => {
  const path = unique('long')
  const counters = [a.atomicLong(path), new zk.DistributedAtomicLong(b, path)]
  assert.equal(await counters[0].get(), 0n, 'a missing node reads as 0n')
  // Twenty increments in flight at once on each object.
  const updates = await Promise.all(counters.flatMap((c) => Array.from({ length: 20 }, () => c.increment())))
  for (const u of updates) assert.equal(u.postValue, u.preValue + 1n)
  assert.deepEqual(updates.map((u) => u.postValue).sort((x, y) => (x < y ? -1 : 1)),
    Array.from({ length: 40 }, (_, i) => BigInt(i + 1)), 'none lost, none twice')
  assert.equal(await counters[1].get(), 40n)
}))

test('atomic long updates wrap, compare and take numbers or bigints', () => withClients(1, async (c) => {
  const counter = c.atomicLong(unique('long-ops'))
  assert.deepEqual(await counter.decrement(), { preValue: 0n, postValue: -1n })
  assert.deepEqual(await counter.add(5), { preValue: -1n, postValue: 4n })
  assert.equal(await counter.compareAndSet(3n, 100n), false)
  assert.equal(await counter.compareAndSet(4, 100), true)
  assert.equal(await counter.get(), 100n)
  await counter.forceSet(2n ** 63n - 1n)
  assert.deepEqual(await counter.increment(), { preValue: 2n ** 63n - 1n, postValue: -(2n ** 63n) }, "wraps as Java's long")
  assert.ok(Object.isFrozen(await counter.add(0n)))
  for (const wrong of ['1', 1.5, 2 ** 53, null, undefined]) {
    await assert.rejects(counter.add(wrong), TypeError)
  }
  await assert.rejects(counter.add(2n ** 63n), (err) => err.code === 'INVALID_ARGUMENT' && err.message.includes('delta must be a 64-bit integer'))
  await assert.rejects(counter.forceSet(-(2n ** 63n) - 1n), (err) => err.code === 'INVALID_ARGUMENT')
  await assert.rejects(counter.add(2n ** 200n), (err) => err.code === 'INVALID_ARGUMENT' && err.message.includes('delta'))
  assert.throws(() => c.atomicLong('no-slash'), { code: 'INVALID_PATH' })
  assert.throws(() => c.atomicLong(5), TypeError)
}))

test('bad nodes and bad input are typed errors', () => withClients(1, async (c) => {
  const path = unique('count-bad')
  const count = c.sharedCount(`${path}/count`)
  assert.throws(() => count.count, (err) => err instanceof zk.ZkError && err.code === 'INVALID_ARGUMENT')
  assert.throws(() => count.versioned(), { code: 'INVALID_ARGUMENT' })
  await count.set(5)
  // A count's 4 bytes are no atomic long, an atomic long's 8 no count: each names the length.
  await assert.rejects(c.atomicLong(`${path}/count`).get(), (err) => err.code === 'INVALID_ARGUMENT' && err.message.includes('this one 4'))
  const long = c.atomicLong(`${path}/long`)
  await long.forceSet(1n)
  await assert.rejects(c.sharedCount(`${path}/long`).start(), (err) => err.code === 'INVALID_ARGUMENT' && err.message.includes('this one 8'))
  await assert.rejects(c.sharedCount(`${path}/long`).read(), { code: 'INVALID_ARGUMENT' })
  assert.throws(() => c.sharedCount(path, 2 ** 31), (err) => err.code === 'INVALID_ARGUMENT' && err.message.includes('seed must be a 32-bit integer'))
  assert.throws(() => c.sharedCount(path, 1n), TypeError)
  assert.throws(() => c.sharedCount('/trailing/'), { code: 'INVALID_PATH' })
  await assert.rejects(count.set(-(2 ** 31) - 1), (err) => err.code === 'INVALID_ARGUMENT')
  await assert.rejects(count.trySet({ value: 0, version: 2 ** 31 }, 1), (err) => err.code === 'INVALID_ARGUMENT' && err.message.includes('expected.version'))
  await assert.rejects(count.add(0.5), TypeError)
  await assert.rejects(count.trySet(null, 1), TypeError)
  await assert.rejects(count.trySet({ value: 1, version: '0' }, 1), TypeError)
  assert.throws(() => count.on('chnage', () => {}), TypeError, 'a misspelt event is refused')
}))

test('a count is seeded once; trySet races answer false', () => withClients(2, async (a, b) => {
  const path = unique('count')
  const ours = a.sharedCount(path, 7)
  assert.equal(await ours.read(), 7, 'the seed before anything exists, nothing created')
  await ours.start()
  const theirs = new zk.SharedCount(b, path, 100)
  await theirs.start()
  assert.equal(ours.count, 7)
  assert.equal(theirs.get(), 7, 'the second seed never overwrites')
  assert.deepEqual(ours.versioned(), { value: 7, version: 0 })
  const mine = ours.versioned()
  assert.equal(await theirs.trySet(theirs.versioned(), 8), true)
  assert.equal(await ours.trySet(mine, 9), false)
  assert.equal(ours.count, 8, 'a lost trySet refreshes the count')
  assert.equal(await ours.trySet(ours.versioned(), 9), true)
  assert.deepEqual(await ours.add(-4), { value: 5, version: 3 })
  const wrapped = changeTo(ours, 2 ** 31 - 1)
  await theirs.set(-(2 ** 31))
  assert.equal((await theirs.add(-1)).value, 2 ** 31 - 1, "wraps as Java's int")
  assert.deepEqual(await wrapped, { value: 2 ** 31 - 1, version: 5 })
  ours.close()
  await theirs[Symbol.asyncDispose]()
}))

test('a listener hears another client and may call back into the count', () => withClients(2, async (a, b) => {
  const path = unique('count-listen')
  const count = a.sharedCount(path)
  const writer = b.sharedCount(path)
  const seen = []
  const done = new Promise((resolve, reject) => {
    count.on('change', (change) => {
      seen.push([change.value, count.count, count.versioned().value])
      if (change.value === 1) count.set(2).catch(reject)
      if (change.value === 2) resolve()
    })
  })
  await count.start()
  await writer.set(1)
  await done
  assert.deepEqual(seen, [[0, 0, 0], [1, 1, 1], [2, 2, 2]])
  assert.equal(await writer.read(), 2)
  // A throwing listener is an 'error' event (the listeners after it miss that change, as with
  // any EventEmitter), and the count goes on.
  const three = changeTo(count, 3)
  const failed = new Promise((resolve) => count.once('error', resolve))
  const thrower = (change) => { if (change.value === 3) throw new Error('listener failed') }
  count.on('change', thrower)
  const four = changeTo(count, 4)
  await writer.set(3)
  assert.deepEqual(await three, { value: 3, version: 3 })
  assert.equal((await failed).message, 'listener failed')
  await writer.set(4)
  await four
  count.removeAllListeners('change')
  count.close()
}))

test('adds in flight on one object, close meanwhile, use after close', () => withClients(1, async (c) => {
  const path = unique('count-close')
  const count = c.sharedCount(path)
  await count.start()
  const adds = Array.from({ length: 20 }, () => count.add(1))
  count.close() // for good, as Curator's: an add on its way finishes, a later one is refused
  count.close()
  const outcomes = await Promise.allSettled(adds)
  const written = outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value.value)
  for (const o of outcomes) if (o.status === 'rejected') assert.equal(o.reason.code, 'CLOSED')
  assert.deepEqual(written.sort((x, y) => x - y), Array.from({ length: written.length }, (_, i) => i + 1))
  assert.equal(await c.sharedCount(path).read(), written.length, 'nothing lost, nothing counted twice')
  await assert.rejects(count.set(40), { code: 'CLOSED' })
  await assert.rejects(count.start(), { code: 'CLOSED' })
  assert.throws(() => count.count, { code: 'CLOSED' })
  await count[Symbol.asyncDispose]()
  const other = c.sharedCount(path)
  await other.start()
  const counter = c.atomicLong(`${path}-long`)
  const inFlight = Promise.allSettled([counter.increment(), other.add(1)])
  await c.close()
  // Each either applied before the close or was refused with CLOSED: none hangs.
  for (const outcome of await inFlight) {
    if (outcome.status === 'rejected') assert.equal(outcome.reason.code, 'CLOSED')
  }
  await assert.rejects(counter.get(), { code: 'CLOSED' })
  await assert.rejects(other.set(1), { code: 'CLOSED' })
  assert.throws(() => c.sharedCount(path), { code: 'CLOSED' })
  assert.equal(typeof other.count, 'number', 'with its client closed the count keeps its last value')
}))
