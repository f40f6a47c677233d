'use strict'
// OpenTelemetry spans around the waits, read back from the real SDK (@opentelemetry/sdk-trace-base
// with its in-memory exporter, @opentelemetry/context-async-hooks for the context across awaits,
// both installed beside the package by `make test-node`) after each test waited on a real
// ZooKeeper: a span per wait, named as the core names it, a child of the caller's span, with what
// the wait did. And with no tracer provider registered, none at all: no tracer asked for, the SDK
// never loaded. (Node's waits have no cancel: no test of a `cancelled` outcome here.)
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { context, trace, SpanStatusCode } = require('@opentelemetry/api')
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks')
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base')
const { zk, connectString, copyInstalledPackage, unique, withClients, sleep, eventually, assertEsmExports } = require('./helpers')

const PACKAGE_DIR = path.dirname(require.resolve('zkrecipes'))
// How long a holder keeps the lock once the waiter is queued: the waiter's span must say it
// waited at least that long.
const HOLD_MS = 300
const DEADLINE_MS = 20000

const NAMES = Object.fromEntries(zk.WAIT_SPANS.map(({ call, name }) => [call, name]))

// This test file's process (node --test runs each file in its own) registers the SDK globally.
const exporter = new InMemorySpanExporter()
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
const application = trace.getTracer('test-application')

// Runs `fn(span)` inside a span of the application's, the active one across its awaits.
function inSpan (fn) {
  return application.startActiveSpan('request', async (span) => {
    try {
      return await fn(span)
    } finally {
      span.end()
    }
  })
}

// The library's spans whose path is `where` (each test has its own), in the order they ended,
// once there are `count` of them.
async function spansOf (where, count = 1) {
  const found = () => exporter.getFinishedSpans().filter((s) => s.instrumentationScope.name === 'zkrecipes' && s.attributes.path === where)
  await eventually(`${count} spans of ${where}`, () => found().length >= count)
  return found()
}

async function onlySpan (where) {
  const spans = await spansOf(where)
  assert.equal(spans.length, 1, JSON.stringify(spans.map((s) => s.attributes)))
  return spans[0]
}

function assertChildOf (span, parent) {
  assert.ok(span.parentSpanContext, "the wait's span has no parent")
  assert.equal(span.parentSpanContext.spanId, parent.spanContext().spanId)
  assert.equal(span.spanContext().traceId, parent.spanContext().traceId)
}

test('the span names are the core\'s, exported as WAIT_SPANS', async () => {
  assert.deepEqual(Object.fromEntries(zk.WAIT_SPANS.map(({ call, kind }) => [call, kind])), {
    'lock.acquire': 'lock',
    'read_lock.acquire': 'read',
    'write_lock.acquire': 'write',
    'multi_lock.acquire': 'multi',
    'semaphore.acquire': 'lease',
    'queue.take': 'item',
    'work_queue.consume': 'delivery',
    'election.await_leadership': 'leadership',
    'latch.await_leadership': 'leadership',
    'barrier.wait': 'single',
    'double_barrier.enter': 'enter',
    'double_barrier.leave': 'leave',
  })
  assert.equal(NAMES['lock.acquire'], 'zkrecipes.lock.acquire')
  assert.equal(NAMES['read_lock.acquire'], 'zkrecipes.lock.acquire')
  assert.ok(Object.isFrozen(zk.WAIT_SPANS))
  await assertEsmExports(['WAIT_SPANS'])
})

test("a contended acquire is a child of the caller's span, with the lock's token and the wait", () => withClients(2, async (a, b) => {
  const dir = unique('traced')
  const holder = a.writeLock(dir)
  const lock = b.writeLock(dir)
  assert.equal(await holder.acquire(), true)
  const request = inSpan(async (parent) => {
    assert.equal(await lock.acquire({ timeoutMs: DEADLINE_MS }), true)
    const token = lock.fencingToken
    await lock.release()
    return { parent, token }
  })
  await eventually('the waiter queued', async () => (await holder.participants()).length === 2, DEADLINE_MS)
  const waitingSince = performance.now()
  await sleep(HOLD_MS) // the hold itself: how long the waiter must wait
  const held = performance.now() - waitingSince
  await holder.release()
  const { parent, token } = await request

  const [holding, span] = await spansOf(dir, 2) // the holder's acquire first
  assert.equal(holding.parentSpanContext, undefined)
  assert.equal(holding.attributes.outcome, 'acquired')
  assert.equal(span.name, 'zkrecipes.lock.acquire')
  assertChildOf(span, parent)
  assert.equal(span.attributes.outcome, 'acquired')
  assert.equal(typeof token, 'bigint')
  assert.equal(span.attributes.fencing_token, Number(token))
  assert.ok(span.attributes.waited_ms >= Math.floor(held), `waited ${span.attributes.waited_ms} ms, held ${held} ms`)
  assert.equal(span.attributes.kind, 'lock', "as the core's metrics name a plain lock's acquire")
  assert.equal(span.status.code, SpanStatusCode.UNSET)
}))

test('a timed-out acquire and a failed try have no token', () => withClients(2, async (a, b) => {
  const dir = unique('timeout')
  const holder = a.writeLock(dir)
  const lock = b.writeLock(dir)
  assert.equal(await holder.acquire(), true)
  assert.equal(await lock.acquire({ timeoutMs: 200 }), false)
  assert.equal(await lock.tryAcquire(), false)
  await holder.release()

  const spans = (await spansOf(dir, 3)).slice(1) // the holder's acquire first
  assert.deepEqual(spans.map((s) => s.attributes.outcome), ['timeout', 'timeout'])
  assert.ok(spans.every((s) => !('fencing_token' in s.attributes)))
  assert.ok(spans[0].attributes.waited_ms >= 200, `${spans[0].attributes.waited_ms}`)
  assert.ok(spans.every((s) => s.status.code === SpanStatusCode.UNSET))
}))

test('an error sets the status and records the exception; the sides of a read/write lock are kinds', () => withClients(1, async (c) => {
  const dir = unique('error')
  const rw = c.readWriteLock(dir)
  await inSpan(() => rw.readLock.withLock(async () => {
    await assert.rejects(rw.writeLock.acquire(), { code: 'WOULD_DEADLOCK' })
  }))

  const [read, write] = await spansOf(dir, 2)
  assert.deepEqual([read.attributes.kind, read.attributes.outcome], ['read', 'acquired'])
  assert.equal(write.attributes.kind, 'write')
  assert.equal(write.attributes.outcome, 'error')
  assert.equal(write.attributes['error.type'], 'WOULD_DEADLOCK')
  assert.equal(write.status.code, SpanStatusCode.ERROR)
  const [event] = write.events.filter((e) => e.name === 'exception')
  assert.ok(event, 'the exception is recorded')
  assert.equal(event.attributes['exception.type'], 'WOULD_DEADLOCK')
}))

test('a multi-lock (kind multi) and a semaphore (its lease\'s token)', () => withClients(1, async (c) => {
  const dir = unique('multi')
  const dirs = [`${dir}/b`, `${dir}/a`]
  const multi = c.multiLock(dirs)
  await multi.withLock(async () => {})
  const span = await onlySpan(dirs.join(','))
  assert.deepEqual([span.attributes.kind, span.attributes.outcome], ['multi', 'acquired'])
  assert.equal('fencing_token' in span.attributes, false, "one per path: the core's span has none either")
  // The span names the wait as the metrics do: the same path, kind and outcome.
  const wait = c.metrics().histogram('zkrecipes.lock.wait.duration', { path: dirs.join(','), kind: 'multi', outcome: 'acquired' })
  assert.equal(wait?.count, 1)

  const semaphore = c.semaphore(`${dir}/s`, 2)
  const lease = await semaphore.acquire()
  const token = lease.fencingToken
  await lease.release()
  const leased = await onlySpan(`${dir}/s`)
  assert.equal(leased.name, NAMES['semaphore.acquire'])
  assert.deepEqual([leased.attributes.outcome, leased.attributes.fencing_token], ['acquired', Number(token)])
}))

test('take, takeMany, a take that times out', () => withClients(1, async (c) => {
  const dir = unique('queue')
  const queue = c.queue(dir)
  await queue.offer('one')
  await queue.offer('two')
  const parent = await inSpan(async (span) => {
    assert.equal((await queue.take({ timeoutMs: DEADLINE_MS })).toString(), 'one')
    return span
  })
  assert.deepEqual((await queue.takeMany(5, { timeoutMs: DEADLINE_MS })).map(String), ['two'])
  assert.equal(await queue.take({ timeoutMs: 50 }), null)
  const spans = await spansOf(dir, 3)
  assert.deepEqual(spans.map((s) => s.name), Array(3).fill(NAMES['queue.take']))
  assert.deepEqual(spans.map((s) => s.attributes.outcome), ['taken', 'taken', 'timeout'])
  assertChildOf(spans[0], parent)
}))

test('next and a consume loop of a work queue', () => withClients(1, async (c) => {
  const dir = unique('work')
  const queue = c.workQueue(dir)
  await queue.offer('job 1')
  await queue.offer('job 2')
  const job = await queue.next({ timeoutMs: DEADLINE_MS })
  await job.ack()
  for await (const next of queue.consume({ timeoutMs: 50 })) await next.ack()
  const spans = await spansOf(dir, 3)
  assert.deepEqual(spans.map((s) => s.name), Array(3).fill(NAMES['work_queue.consume']))
  assert.deepEqual(spans.map((s) => s.attributes.outcome), ['delivered', 'delivered', 'timeout'])
}))

test('awaitLeadership of an election and of a latch', () => withClients(1, async (c) => {
  const root = unique('election')
  const election = c.leaderElection(root)
  await election.start()
  assert.equal(await election.awaitLeadership({ timeoutMs: DEADLINE_MS }), true)
  await election.stop()
  const elected = await onlySpan(root)
  assert.deepEqual([elected.name, elected.attributes.outcome], [NAMES['election.await_leadership'], 'leader'])

  const where = unique('latch')
  const latch = c.leaderLatch(where)
  await latch.start()
  const token = await latch.awaitLeadership({ timeoutMs: DEADLINE_MS })
  assert.equal(token, latch.fencingToken)
  await latch.close()
  const led = await onlySpan(where)
  assert.equal(led.name, NAMES['latch.await_leadership'])
  assert.deepEqual([led.attributes.outcome, led.attributes.fencing_token], ['leader', Number(token)])
}))

test('a barrier, and a double barrier (kinds enter and leave)', () => withClients(1, async (c) => {
  const where = unique('barrier')
  const barrier = c.barrier(where)
  await barrier.set()
  assert.equal(await barrier.wait({ timeoutMs: 50 }), false)
  await barrier.remove()
  assert.equal(await barrier.wait({ timeoutMs: DEADLINE_MS }), true)
  const waits = await spansOf(where, 2)
  assert.deepEqual(waits.map((s) => [s.name, s.attributes.kind, s.attributes.outcome]), [[NAMES['barrier.wait'], 'single', 'timeout'], [NAMES['barrier.wait'], 'single', 'passed']])

  const twice = unique('double')
  const double = c.doubleBarrier(twice, 1)
  assert.equal(await double.enter({ timeoutMs: DEADLINE_MS }), true)
  assert.equal(await double.leave({ timeoutMs: DEADLINE_MS }), true)
  const spans = await spansOf(twice, 2)
  assert.deepEqual(spans.map((s) => [s.attributes.kind, s.attributes.outcome]), [['enter', 'passed'], ['leave', 'passed']])
}))

// Waits of several kinds the package spans, in a child process of `project`; it prints what it
// found of OpenTelemetry afterwards.
function waitInAChild (project, before, after) {
  const script = `
    ${before}
    const zk = require('zkrecipes')
    ;(async () => {
      const client = await zk.Client.connect(${JSON.stringify(connectString)})
      try {
        const base = '/node-test/untraced-' + require('node:crypto').randomUUID()
        await client.writeLock(base + '/lock').withLock(async () => {})
        const queue = client.queue(base + '/queue')
        await queue.offer('x')
        if (String(await queue.take({ timeoutMs: 20000 })) !== 'x') throw new Error('no item')
        if (!(await client.barrier(base + '/barrier').wait({ timeoutMs: 20000 }))) throw new Error('barrier')
      } finally {
        await client.close()
      }
      ${after}
    })()
  `
  const env = { ...process.env }
  delete env.NODE_PATH
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: project, env, timeout: 60000 }).toString().trim())
}

test('without @opentelemetry/api a wait loads nothing of OpenTelemetry', () => {
  // The installed package alone, in a project without OpenTelemetry.
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'zkrecipes-no-otel-'))
  try {
    copyInstalledPackage(project)
    const answer = waitInAChild(project, '', `
      console.log(JSON.stringify({ loaded: Object.keys(require.cache).filter((p) => p.includes('@opentelemetry')) }))
    `)
    assert.deepEqual(answer, { loaded: [] })
  } finally {
    fs.rmSync(project, { recursive: true, force: true })
  }
})

test('with the API but no provider registered, no tracer is asked for and no span made', () => {
  // This test project, which has the API and the SDK: the child registers nothing.
  const project = path.dirname(path.dirname(PACKAGE_DIR))
  const answer = waitInAChild(project, `
    const api = require('@opentelemetry/api')
    const asked = []
    const hook = (name) => function () { asked.push(name); throw new Error(name) }
    // Every way to a span with nothing registered goes through these: the proxy provider, its
    // tracers, and the no-op provider it answers for want of a delegate.
    api.ProxyTracerProvider.prototype.getTracer = hook('ProxyTracerProvider.getTracer')
    api.ProxyTracer.prototype.startSpan = hook('ProxyTracer.startSpan')
    api.ProxyTracer.prototype.startActiveSpan = hook('ProxyTracer.startActiveSpan')
    Object.getPrototypeOf(new api.ProxyTracerProvider().getDelegate()).getTracer = hook('NoopTracerProvider.getTracer')
  `, `
    const sdk = Object.keys(require.cache).filter((p) => p.includes('sdk-trace') || p.includes('context-async-hooks'))
    console.log(JSON.stringify({ asked, sdk }))
  `)
  assert.deepEqual(answer, { asked: [], sdk: [] })
})
