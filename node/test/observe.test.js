'use strict'
// Logs and metrics from Node.js: the library's events through real diagnostics_channel
// subscribers and loggers, each client's numbers through client.metrics(), checked against what
// each test did. The logging state is the process's: every test leaves no subscriber and no logger.
const test = require('node:test')
const assert = require('node:assert/strict')
const dc = require('node:diagnostics_channel')
const { zk, connectString, unique, withClients, eventually, assertEsmExports, hundredAcquisitionsTenTimedOut } = require('./helpers')

// Every message published on `channel` from now on; `until(what, find)` resolves with what
// `find(messages)` returns once truthy, rejects after `timeoutMs`; `stop()` unsubscribes.
function listen (channel, timeoutMs = 20000) {
  const heard = []
  const waiters = new Set()
  const onMessage = (message) => {
    heard.push(message)
    for (const check of [...waiters]) check()
  }
  dc.subscribe(channel, onMessage)
  heard.until = (what, find) => new Promise((resolve, reject) => {
    const done = () => { clearTimeout(timer); waiters.delete(check) }
    const check = () => {
      const found = find(heard)
      if (found) { done(); resolve(found) }
    }
    const timer = setTimeout(() => {
      done()
      reject(new Error(`${what}: not within ${timeoutMs} ms; heard ${heard.length}, the last: ${heard.slice(-10).map((m) => m.message).join(' | ')}`))
    }, timeoutMs)
    waiters.add(check)
    check()
  })
  heard.stop = () => dc.unsubscribe(channel, onMessage)
  return heard
}

// `a` acquires the lock at `dir` while `b` holds it (released once `a`'s node is in line behind
// it): a contended acquire. Resolves with `a`'s fencing token.
async function contended (a, b, dir) {
  const mine = a.writeLock(dir)
  const theirs = b.writeLock(dir)
  assert.equal(await theirs.acquire(), true)
  const waiting = mine.acquire({ timeoutMs: 20000 })
  await eventually('the waiter in line', async () => (await theirs.participants()).length === 2, 10000)
  assert.equal(a.metrics().gauge('zkrecipes.lock.waiters', { path: dir }), 1)
  await theirs.release()
  assert.equal(await waiting, true)
  const token = mine.fencingToken
  await mine.release()
  return token
}

const acquiredAt = (dir) => (messages) => messages.find((m) => m.fields.path === dir && m.fields.outcome === 'acquired')

test('the package exports the logging and metrics API', async () => {
  await assertEsmExports(['configureLogging', 'setLogLevel', 'activeLogLevel', 'flushLogs', 'LOGGERS', 'LOG_CHANNELS', 'MetricsSnapshot', 'Histogram'])
  assert.ok(zk.LOGGERS.includes('zkrecipes.lock'))
  assert.deepEqual(zk.LOG_CHANNELS, zk.LOGGERS.map((l) => l.replace('.', ':')))
  assert.ok(zk.LOG_CHANNELS.includes('zkrecipes:work_queue'))
})

test('100 acquisitions of which 10 time out behind another client: counted, gauges back to 0, published at info', async () => {
  const heard = listen('zkrecipes:lock')
  try {
    await withClients(2, async (a, b) => {
      assert.equal(zk.activeLogLevel('zkrecipes.lock'), 'info', 'a subscriber before connect is seen at connect')
      const dir = unique('observe-lock')
      const mine = a.writeLock(dir)
      const theirs = b.writeLock(dir)
      await hundredAcquisitionsTenTimedOut(mine, theirs)
      const at = { path: dir }
      const seen = a.metrics()
      assert.equal(seen.counter('zkrecipes.lock.acquisitions', { ...at, outcome: 'timeout' }), 10)
      assert.equal(seen.counter('zkrecipes.lock.acquisitions', { ...at, outcome: 'acquired' }), 90)
      assert.equal(seen.counter('zkrecipes.lock.acquisitions', at), 100)
      assert.equal(seen.gauge('zkrecipes.lock.waiters', at), 0)
      assert.equal(seen.gauge('zkrecipes.lock.holders', at), 0)
      const waits = seen.histogram('zkrecipes.lock.wait.duration', at)
      assert.equal(waits.count, 100)
      assert.equal(waits.counts.reduce((x, y) => x + y, 0), 100)
      const timeouts = seen.histogram('zkrecipes.lock.wait.duration', { ...at, outcome: 'timeout' })
      assert.equal(timeouts.count, 10)
      assert.ok(timeouts.min >= 0.3, `a timed-out wait lasts its timeout: ${timeouts.min}`)
      const p99 = waits.quantile(0.99)
      assert.ok(p99 >= waits.min && p99 <= waits.max, `${p99} within [${waits.min}, ${waits.max}]`)
      assert.equal(seen.histogram('zkrecipes.lock.hold.duration', at).count, 90)
      assert.equal(b.metrics().counter('zkrecipes.lock.acquisitions', { ...at, outcome: 'acquired' }), 10)

      // The ten timed-out waits were queued behind the other client: told at info.
      await heard.until('ten timeouts at info', (messages) => {
        const told = messages.filter((m) => m.fields.path === dir && m.fields.outcome === 'timeout')
        return told.length === 10 && told.every((m) => m.level === 'info')
      })

      const token = await contended(a, b, dir)
      const acquired = await heard.until('the contended acquire', acquiredAt(dir))
      assert.equal(acquired.level, 'info')
      assert.equal(acquired.logger, 'zkrecipes.lock')
      assert.equal(acquired.fields.fencing_token, Number(token))
      assert.equal(typeof acquired.fields.waited_ms, 'number')
      assert.match(acquired.message, new RegExp(`${dir}: acquired after waiting \\d+ ms`))
      assert.ok(Object.isFrozen(acquired) && Object.isFrozen(acquired.fields))
      // At 'info', the uncontended acquires (debug) never crossed.
      assert.deepEqual(heard.filter((m) => m.level === 'debug' || m.level === 'trace'), [])
    })
  } finally {
    heard.stop()
  }
})

test('with nobody subscribed nothing crosses; subscribers and levels are followed', async () => {
  await withClients(2, async (a, b) => {
    for (const logger of zk.LOGGERS) assert.equal(zk.activeLogLevel(logger), 'off', logger)
    const unheard = unique('unheard')
    await contended(a, b, unheard)
    // Subscribed late: an event of that work that had crossed would be published before the
    // flush's marker, to this subscriber.
    const late = listen('zkrecipes:lock')
    try {
      assert.equal(await zk.flushLogs(), true)
      assert.deepEqual(late.filter((m) => m.fields.path === unheard), [])
      // diagnostics_channel tells nobody of a subscriber: the next look (every second) finds it.
      await eventually('the subscriber is seen', () => zk.activeLogLevel('zkrecipes:lock') === 'info', 5000)
      assert.equal(zk.activeLogLevel('zkrecipes.queue'), 'off', 'other loggers stay off')

      const heard = unique('heard')
      await contended(a, b, heard)
      await late.until('the contended acquire', acquiredAt(heard))

      // Debug for the lock alone: an uncontended acquire is told at debug.
      zk.setLogLevel('debug', 'zkrecipes.lock')
      assert.equal(zk.activeLogLevel('zkrecipes.lock'), 'debug')
      const quiet = unique('quiet')
      const lock = a.writeLock(quiet)
      await lock.acquire()
      await lock.release()
      await late.until('an acquire at debug', (messages) => messages.find((m) => m.fields.path === quiet && m.level === 'debug'))

      // At warn, a contended acquire (info) does not cross.
      zk.setLogLevel('WARNING', 'zkrecipes:lock')
      assert.equal(zk.activeLogLevel('zkrecipes.lock'), 'warn')
      const warned = unique('warned')
      await contended(a, b, warned)
      assert.equal(await zk.flushLogs(), true)
      assert.deepEqual(late.filter((m) => m.fields.path === warned), [])
    } finally {
      zk.setLogLevel('info')
      late.stop()
    }
    await eventually('the unsubscription is seen', () => zk.activeLogLevel('zkrecipes.lock') === 'off', 5000)
  })
})

test('a pino-like and a console-like logger receive the records; a throwing one loses only its own', async () => {
  const pinoCalls = []
  const pinoLike = { levels: { values: { info: 30 } }, child () { return this } }
  for (const level of ['trace', 'debug', 'info', 'warn', 'error']) pinoLike[level] = (...args) => pinoCalls.push([level, ...args])
  zk.configureLogging({ logger: pinoLike })
  try {
    await withClients(2, async (a, b) => {
      assert.equal(zk.activeLogLevel('zkrecipes.session'), 'info', 'a logger listens to every logger')
      const dir = unique('pino')
      const token = await contended(a, b, dir)
      assert.equal(await zk.flushLogs(), true)
      const [level, fields, message] = pinoCalls.find(([, f]) => f.path === dir && f.outcome === 'acquired')
      assert.equal(level, 'info')
      assert.equal(fields.logger, 'zkrecipes.lock')
      assert.equal(fields.fencing_token, Number(token))
      assert.match(message, /acquired after waiting/)
      const connected = pinoCalls.find(([, f]) => f.logger === 'zkrecipes.session' && f.state === 'CONNECTED')
      assert.ok(connected, 'the session state change is logged')
    })

    // Given to Client.connect, the logger is the process's (it replaces the pino-like one).
    const consoleCalls = []
    const consoleLike = {}
    for (const level of ['debug', 'info', 'warn', 'error']) consoleLike[level] = (...args) => consoleCalls.push([level, ...args])
    const before = pinoCalls.length
    await withClients(2, async (a, b) => {
      const dir = unique('console')
      const token = await contended(a, b, dir)
      assert.equal(await zk.flushLogs(), true)
      const [level, message, fields] = consoleCalls.find(([, , f]) => f.path === dir && f.outcome === 'acquired')
      assert.equal(level, 'info')
      assert.equal(typeof message, 'string')
      assert.equal(fields.fencing_token, Number(token))
      assert.equal(pinoCalls.length, before, 'one logger at a time')
    }, { logger: consoleLike })

    // A logger that throws: one process warning, the channels still get everything.
    const warnings = []
    const onWarning = (warning) => warnings.push(warning)
    process.on('warning', onWarning)
    const heard = listen('zkrecipes:lock')
    try {
      zk.configureLogging({ logger: { info () { throw new Error('disk full') } } })
      await withClients(2, async (a, b) => {
        const dir = unique('throwing')
        await contended(a, b, dir)
        await heard.until('the contended acquire', acquiredAt(dir))
        const again = unique('throwing-again')
        await contended(a, b, again)
        await heard.until('the next contended acquire', acquiredAt(again))
      })
      await eventually('the warning', () => warnings.some((w) => w.code === 'ZKRECIPES_LOGGER_THREW'), 5000)
      assert.equal(warnings.filter((w) => w.code === 'ZKRECIPES_LOGGER_THREW').length, 1)
      assert.match(warnings.find((w) => w.code === 'ZKRECIPES_LOGGER_THREW').message, /disk full/)
    } finally {
      heard.stop()
      process.off('warning', onWarning)
    }
  } finally {
    zk.configureLogging({ logger: null })
  }
})

test('points, the Prometheus text, session state changes, and metricPaths: false', async () => {
  await withClients(1, async (c) => {
    const dir = unique('points')
    const lock = c.writeLock(dir)
    assert.equal(await lock.acquire(), true)
    await lock.release()
    const seen = c.metrics()
    assert.ok(seen instanceof zk.MetricsSnapshot)
    assert.equal(seen.counter('zkrecipes.session.state_changes', { to: 'connected' }), 1)
    assert.ok(seen.counter('zkrecipes.requests', { op: 'create' }) >= 1)
    const line = `zkrecipes_lock_acquisitions_total{path="${dir}",kind="lock",outcome="acquired"} 1`
    assert.ok(seen.toPrometheus().split('\n').includes(line), seen.toPrometheus())

    const counted = seen.points.find((p) => p.name === 'zkrecipes.lock.acquisitions' && p.attributes.path === dir)
    assert.deepEqual(counted, {
      name: 'zkrecipes.lock.acquisitions',
      instrument: 'counter',
      unit: '{acquisition}',
      description: counted.description,
      attributes: { path: dir, kind: 'lock', outcome: 'acquired' },
      value: 1,
    })
    assert.deepEqual(Object.keys(counted.attributes), ['path', 'kind', 'outcome'], "the catalog's order")
    assert.ok(Object.isFrozen(counted) && Object.isFrozen(seen.points))
    const waited = seen.points.find((p) => p.name === 'zkrecipes.lock.wait.duration' && p.attributes.path === dir)
    assert.equal(waited.instrument, 'histogram')
    assert.equal(waited.value, undefined)
    assert.ok(waited.histogram instanceof zk.Histogram)
    assert.equal(waited.histogram.count, 1)
    assert.equal(waited.histogram.counts.length, waited.histogram.bounds.length + 1)
    assert.equal(waited.histogram.quantile(1), waited.histogram.max)
    const holders = seen.points.find((p) => p.name === 'zkrecipes.lock.holders' && p.attributes.path === dir)
    assert.equal(holders.instrument, 'up_down_counter')
    assert.equal(holders.value, 0)
    assert.equal(seen.histogram('zkrecipes.lock.wait.duration', { path: unique('never') }), null)
  })

  await withClients(1, async (c) => {
    const dir = unique('pathless')
    const lock = c.writeLock(dir)
    assert.equal(await lock.acquire(), true)
    await lock.release()
    const seen = c.metrics()
    const lockPoints = seen.points.filter((p) => p.name.startsWith('zkrecipes.lock.'))
    assert.ok(lockPoints.length >= 3)
    for (const point of lockPoints) assert.equal('path' in point.attributes, false, point.name)
    assert.equal(seen.counter('zkrecipes.lock.acquisitions', { outcome: 'acquired' }), 1)
    assert.equal(seen.toPrometheus().includes(dir), false)
  }, { metricPaths: false })
})

test('a job nacked twice then acked: two redeliveries', () => withClients(1, async (c) => {
  const path = unique('observe-work')
  const work = c.workQueue(path)
  await work.offer('job')
  for (let delivery = 1; delivery <= 3; delivery++) {
    const job = await work.next({ timeoutMs: 10000 })
    assert.equal(job.deliveryCount, delivery)
    if (delivery < 3) await job.nack()
    else await job.ack()
  }
  await work.close()
  const seen = c.metrics()
  assert.equal(seen.counter('zkrecipes.work_queue.redeliveries'), 2)
  assert.equal(seen.counter('zkrecipes.work_queue.deliveries', { path }), 3)
  assert.equal(seen.gauge('zkrecipes.work_queue.in_flight', { path }), 0)
}))

test('bad input is a clear TypeError, RangeError or INVALID_ARGUMENT, never a crash', async () => {
  assert.throws(() => zk.setLogLevel('verbose'), (err) => err instanceof RangeError && /one of off, error, warn, info, debug, trace; got "verbose"/.test(err.message))
  assert.throws(() => zk.setLogLevel(3), TypeError)
  assert.throws(() => zk.setLogLevel('info', 'zkrecipes.nothing'), (err) => err instanceof RangeError && /zkrecipes\.lock/.test(err.message))
  assert.throws(() => zk.setLogLevel('info', 7), TypeError)
  assert.throws(() => zk.activeLogLevel('zkrecipes'), RangeError)
  assert.throws(() => zk.configureLogging(null), TypeError)
  assert.throws(() => zk.configureLogging({ logger: 42 }), TypeError)
  assert.throws(() => zk.configureLogging({ logger: {} }), /info\(\) method/)
  assert.throws(() => zk.configureLogging({ level: 'loud' }), RangeError)
  await assert.rejects(zk.flushLogs({ timeoutMs: -1 }), (err) => err.code === 'INVALID_ARGUMENT')
  await assert.rejects(zk.Client.connect(connectString, { metricPaths: 'no' }), TypeError)
  await assert.rejects(zk.Client.connect(connectString, { logger: { warn () {} } }), TypeError)

  await withClients(1, async (c) => {
    const lock = c.writeLock(unique('bad'))
    await lock.acquire()
    await lock.release()
    const seen = c.metrics()
    const invalid = (pattern) => (err) => err instanceof zk.ZkError && err.code === 'INVALID_ARGUMENT' && pattern.test(err.message)
    assert.throws(() => seen.counter(42), TypeError)
    assert.throws(() => seen.counter('zkrecipes.lock.acquisition'), invalid(/no metric is named/))
    assert.throws(() => seen.gauge('zkrecipes.lock.acquisitions'), invalid(/is a counter metric/))
    assert.throws(() => seen.counter('zkrecipes.lock.acquisitions', { outcom: 'timeout' }), invalid(/path, kind, outcome/))
    assert.throws(() => seen.counter('zkrecipes.lock.acquisitions', { outcome: 1 }), TypeError)
    assert.throws(() => seen.counter('zkrecipes.lock.acquisitions', 'timeout'), TypeError)
    const waits = seen.histogram('zkrecipes.lock.wait.duration')
    assert.throws(() => waits.quantile(1.5), invalid(/within \[0, 1\]/))
    assert.throws(() => waits.quantile(NaN), invalid(/within \[0, 1\]/))
    assert.throws(() => waits.quantile('0.5'), TypeError)
  })
})

test("a worker thread's clients are told on the main thread's channels, and a worker that ends with a client open harms nothing", async () => {
  const { Worker } = require('node:worker_threads')
  const heard = listen('zkrecipes:session')
  // Sets the level the subscriber wants now (without it, the next look, within a second, would).
  zk.setLogLevel('info', 'zkrecipes.session')
  const connectedAs = (session) => (messages) => messages.find((m) => m.fields.session === session && m.fields.state === 'CONNECTED')
  const hex = (id) => '0x' + BigInt.asUintN(64, BigInt(id)).toString(16)
  try {
    const worker = new Worker(`
      const { parentPort, workerData } = require('node:worker_threads')
      const zk = require(workerData.pkg)
      zk.Client.connect(workerData.connect).then((client) => parentPort.postMessage(String(client.sessionId)))
    `, { eval: true, workerData: { pkg: require.resolve('zkrecipes'), connect: connectString } })
    const failed = new Promise((resolve, reject) => worker.once('error', reject))
    const [session] = await Promise.race([require('node:events').once(worker, 'message'), failed])
    await heard.until("the worker's session CONNECTED", connectedAs(hex(session)))
    // Ended with its client still open: its native objects go with its environment.
    await worker.terminate()
    await withClients(1, async (c) => {
      await heard.until("the main thread's session CONNECTED, after the worker ended", connectedAs(hex(c.sessionId)))
    })
  } finally {
    heard.stop()
  }
})

test('events a stalled subscriber could not take are told by a warning on every subscribed channel', async () => {
  const heard = listen('zkrecipes:request')
  zk.setLogLevel('debug', 'zkrecipes.request')
  const REQUESTS = 12000
  let stall = () => {}
  const stalling = (message) => stall(message)
  dc.subscribe('zkrecipes:request', stalling)
  try {
    await withClients(1, async (c) => {
      const queue = c.queue(unique('dropped'))
      const before = c.metrics().counter('zkrecipes.requests')
      // The event loop stops at the first event until every request was sent, as a slow
      // subscriber's does: the events pile up past the 10,000 kept for it. (The 5 minutes only
      // keep a broken test from hanging: 20 s could end before the requests on a loaded machine.)
      stall = () => {
        stall = () => {}
        const deadline = Date.now() + 300000
        const pause = new Int32Array(new SharedArrayBuffer(4))
        while (c.metrics().counter('zkrecipes.requests') - before < REQUESTS && Date.now() < deadline) {
          Atomics.wait(pause, 0, 0, 10)
        }
      }
      // Each request is one event of zkrecipes.request.
      await Promise.all(Array.from({ length: REQUESTS }, () => queue.size()))
      // No event after the lost ones to come after their warning: the flush tells them.
      assert.equal(await zk.flushLogs(), true)
      const told = await heard.until('the warning that events were dropped', (messages) => messages.find((m) => m.logger === 'zkrecipes'))
      assert.equal(told.level, 'warn')
      assert.ok(told.fields.dropped >= 500, `dropped ${told.fields.dropped}`)
      assert.match(told.message, new RegExp(`^${told.fields.dropped} zkrecipes log events were dropped`))
    })
  } finally {
    dc.unsubscribe('zkrecipes:request', stalling)
    heard.stop()
    zk.setLogLevel('info', 'zkrecipes.request')
  }
})
