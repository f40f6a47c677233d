'use strict'
// The at-least-once WorkQueue from Node.js: for await with ack, a throwing
// body gives the job back, priorities, batches, dead letters.
const test = require('node:test')
const assert = require('node:assert/strict')
const { zk, unique, withClients } = require('./helpers')

test('for await delivers by priority; an unsettled or thrown-out job comes back', () => withClients(1, async (c) => {
  const path = unique('work')
  const work = c.workQueue(path)
  await work.offerAll(['a', 'b'])
  await work.offer('urgent', { priority: 1 })
  assert.equal(await work.size(), 3)
  const seen = []
  // Four deliveries are expected; the loop ends after them (a quiet period of 200 ms ended it
  // early when the job left unsettled was slow to come back).
  for await (const job of work.consume({ timeoutMs: 10000 })) {
    seen.push([job.data.toString(), job.deliveryCount])
    if (job.data.toString() === 'a' && job.deliveryCount === 1) continue // left unsettled: back
    await job.ack()
    if (seen.length === 4) break
  }
  assert.deepEqual(seen, [['urgent', 1], ['a', 1], ['a', 2], ['b', 1]])
  assert.equal(await work.size(), 0)
  await work.offer('boom')
  await assert.rejects(async () => {
    for await (const job of work.consume()) {
      throw new Error(`failed on ${job.data}`)
    }
  }, /failed on boom/)
  const again = await work.next({ timeoutMs: 1000 })
  assert.equal(again.deliveryCount, 2)
  await again.ack()
  await assert.rejects(again.ack(), (err) => err.code === 'INVALID_ARGUMENT')
  assert.equal(await work.next({ timeoutMs: 0 }), null)
  await assert.rejects(work.offer('x', { priority: 1000 }), (err) => err.code === 'INVALID_ARGUMENT')
  assert.throws(() => c.workQueue(path, { prefetch: 1.5 }), TypeError)
  // The range is the core's rule, with its message, as in every language.
  for (const bad of [{ prefetch: 0 }, { prefetch: 1001 }, { maxDeliveries: 0 }]) {
    assert.throws(() => c.workQueue(path, bad), (err) => err.code === 'INVALID_ARGUMENT' && /got (0|1001)/.test(err.message))
  }
}))

test('a job dropped by a closed client is delivered to another; dead letters after maxDeliveries', () => withClients(2, async (a, b) => {
  const path = unique('work-death')
  await a.workQueue(path).offerAll(['1', '2', '3'])
  const doomed = a.workQueue(path, { prefetch: 3 })
  const held = await doomed.next({ timeoutMs: 1000 })
  assert.equal(held.data.toString(), '1')
  const other = b.workQueue(path, { maxDeliveries: 2 })
  assert.equal(await other.next({ timeoutMs: 100 }), null, 'all three are claimed by the first')
  await a.close()
  const got = []
  for await (const job of other.consume({ timeoutMs: 10000 })) {
    got.push(job.data.toString())
    if (job.data.toString() === '2') await job.nack()
    else await job.ack()
    if (got.length === 3) break
  }
  // '2' was delivered twice (the dead consumer's claim, then ours) and nacked: dead letter
  // (moved there by the next claim: this one, which must then find nothing).
  assert.deepEqual(got, ['1', '2', '3'])
  assert.equal(await other.next({ timeoutMs: 500 }), null)
  assert.equal(await other.size(), 0)
  assert.equal(other.deadLetterPath, `${path}/dead`)
  assert.ok(zk.WorkQueue && zk.Job)
}))

test('close rejects later calls and a waiting next with CLOSED; a job in hand can still be acked', () => withClients(1, async (c) => {
  const path = unique('work-closed')
  const work = c.workQueue(path, { prefetch: 4 })
  await work.offerAll(['a', 'b', 'c'])
  const held = await work.next({ timeoutMs: 1000 })
  assert.equal(held.data.toString(), 'a')
  const idle = c.workQueue(unique('work-idle'))
  const waiting = assert.rejects(idle.next(), (err) => err.code === 'CLOSED')
  // Not a synchronisation: a chance for the next() to be waiting when close() comes (one
  // that was not yet is rejected with CLOSED all the same).
  await new Promise((resolve) => setTimeout(resolve, 200))
  await idle.close()
  await waiting
  await work.close()
  await work.close()
  for (const call of [() => work.next({ timeoutMs: 100 }), () => work.offer('d'), () => work.size()]) {
    await assert.rejects(call(), (err) => err.code === 'CLOSED')
  }
  await held.ack()
  const other = c.workQueue(path)
  assert.equal(await other.size(), 2)
  const next = await other.next({ timeoutMs: 1000 })
  assert.equal(next.data.toString(), 'b')
  await next.ack()
}))

test('many next() calls in flight on one object share the jobs, each acked once', () => withClients(1, async (c) => {
  const path = unique('work-shared')
  const work = c.workQueue(path, { prefetch: 8 })
  await work.offerAll(Array.from({ length: 300 }, (_, i) => String(i)))
  const got = []
  // Each loop goes on until all 300 came (a quiet period of 300 ms ended every loop early
  // under load); a job missing for 30 s fails.
  const deadline = Date.now() + 30000
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (got.length < 300 && Date.now() < deadline) {
      const job = await work.next({ timeoutMs: 200 })
      if (job === null) continue
      got.push(Number(job.data.toString()))
      await job.ack()
    }
  }))
  assert.deepEqual(got.sort((x, y) => x - y), Array.from({ length: 300 }, (_, i) => i))
  assert.equal(await work.size(), 0)
}))

test('a job is read-only and readable after it is settled; a sparse batch is refused whole', () => withClients(1, async (c) => {
  const work = c.workQueue(unique('work'))
  await assert.rejects(work.offerAll(['a', , 'b']), TypeError) // eslint-disable-line no-sparse-arrays
  assert.equal(await work.size(), 0, 'nothing of a refused batch is offered')
  await work.offer('x', { priority: 3 })
  const job = await work.next({ timeoutMs: 10000 })
  assert.ok(job)
  assert.throws(() => { job.data = Buffer.from('changed') }, TypeError)
  job.data[0] = 0x41 // a copy: the job's own data stays
  await job.ack()
  assert.deepEqual([job.data.toString(), job.priority, job.deliveryCount], ['x', 3, 1])
  assert.equal(job.settled, true)
}))
