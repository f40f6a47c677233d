'use strict'
// instrumentOpenTelemetry with OpenTelemetry's own SDK (@opentelemetry/sdk-metrics, installed
// beside the package by `make test-node`): a MeterProvider with a MetricReader read by collect(),
// its numbers checked against what each test did and against the client's own snapshot.
// Delivery is awaited with the instrumentation's flush(), never a sleep.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics')
const { zk, connectString, copyInstalledPackage, unique, withClients, assertEsmExports, hundredAcquisitionsTenTimedOut } = require('./helpers')

const PACKAGE_DIR = path.dirname(require.resolve('zkrecipes'))
const { version: PACKAGE_VERSION } = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8'))

// The SDK's reader for pull exporters: collect() answers what the meters hold now.
class CollectingReader extends MetricReader {
  async onForceFlush () {}
  async onShutdown () {}
}

function sdk () {
  const reader = new CollectingReader()
  return { reader, meterProvider: new MeterProvider({ readers: [reader] }) }
}

// The metrics of the meter 'zkrecipes', by name, as the SDK exports them now.
async function collected (reader) {
  const { resourceMetrics, errors } = await reader.collect()
  assert.deepEqual(errors, [])
  const scopes = resourceMetrics.scopeMetrics.filter((s) => s.scope.name === 'zkrecipes')
  assert.ok(scopes.length <= 1, 'one meter named zkrecipes')
  const metrics = new Map()
  for (const scope of scopes) {
    assert.equal(scope.scope.version, PACKAGE_VERSION, "the meter carries the package's version")
    for (const metric of scope.metrics) metrics.set(metric.descriptor.name, metric)
  }
  return metrics
}

const matching = (attributes) => (point) => Object.entries(attributes).every(([k, v]) => point.attributes[k] === v)

// A counter's or up/down counter's value summed over the points whose attributes include
// `attributes`; undefined when the SDK has no point of it.
function sumOf (metrics, name, attributes = {}) {
  const points = (metrics.get(name)?.dataPoints ?? []).filter(matching(attributes))
  return points.length === 0 ? undefined : points.reduce((total, p) => total + p.value, 0)
}

// A histogram merged over the matching points: { count, sum, min, max, boundaries, counts }.
function histogramOf (metrics, name, attributes = {}) {
  const points = (metrics.get(name)?.dataPoints ?? []).filter(matching(attributes))
  if (points.length === 0) return undefined
  const boundaries = points[0].value.buckets.boundaries
  const merged = { count: 0, sum: 0, min: Infinity, max: -Infinity, boundaries, counts: boundaries.map(() => 0).concat(0) }
  for (const { value } of points) {
    assert.deepEqual(value.buckets.boundaries, boundaries)
    merged.count += value.count
    merged.sum += value.sum
    merged.min = Math.min(merged.min, value.min)
    merged.max = Math.max(merged.max, value.max)
    value.buckets.counts.forEach((n, i) => { merged.counts[i] += n })
  }
  return merged
}

async function flushed (otel) {
  assert.equal(await otel.flush({ timeoutMs: 20000 }), true, 'every recording fed within 20 s')
}

test('the package exports the OpenTelemetry adapter', async () => {
  await assertEsmExports(['instrumentOpenTelemetry', 'OpenTelemetryInstrumentation'])
  assert.equal(typeof zk.instrumentOpenTelemetry, 'function')
})

test('100 acquisitions of which 10 time out behind another client, as the SDK exports them', async () => {
  await withClients(2, async (a, b) => {
    const { reader, meterProvider } = sdk()
    const otel = zk.instrumentOpenTelemetry(a, { meterProvider })
    assert.ok(otel instanceof zk.OpenTelemetryInstrumentation)
    const dir = unique('otel-lock')
    const mine = a.writeLock(dir)
    const theirs = b.writeLock(dir)
    await hundredAcquisitionsTenTimedOut(mine, theirs)
    await flushed(otel)
    const seen = await collected(reader)
    const at = { path: dir }
    const acquisitions = 'zkrecipes.lock.acquisitions'
    assert.equal(sumOf(seen, acquisitions, { ...at, outcome: 'timeout' }), 10)
    assert.equal(sumOf(seen, acquisitions, { ...at, outcome: 'acquired' }), 90)
    // Only the instrumented client: b's ten acquisitions are not on this meter.
    assert.equal(sumOf(seen, acquisitions), 100)
    assert.equal(sumOf(seen, 'zkrecipes.lock.holders', at), 0)
    assert.equal(sumOf(seen, 'zkrecipes.lock.waiters', at), 0)

    // The wait histogram in the catalog's buckets, value for value the client's own.
    const snapshot = a.metrics()
    const own = snapshot.histogram('zkrecipes.lock.wait.duration', at)
    const waits = histogramOf(seen, 'zkrecipes.lock.wait.duration', at)
    assert.equal(waits.count, 100)
    assert.deepEqual(waits.boundaries, [...own.bounds])
    assert.deepEqual(waits.counts, [...own.counts])
    assert.ok(Math.abs(waits.sum - own.sum) < 1e-9, `${waits.sum} vs ${own.sum}`)
    assert.equal(waits.min, own.min)
    assert.equal(waits.max, own.max)
    const timeouts = histogramOf(seen, 'zkrecipes.lock.wait.duration', { ...at, outcome: 'timeout' })
    assert.equal(timeouts.count, 10)
    assert.ok(timeouts.min >= 0.3, `a timed-out wait lasts its timeout: ${timeouts.min}`)
    assert.equal(histogramOf(seen, 'zkrecipes.lock.hold.duration', at).count, 90)

    // Names, units and descriptions are the catalog's, as the snapshot has them.
    for (const name of [acquisitions, 'zkrecipes.lock.holders', 'zkrecipes.lock.wait.duration']) {
      const point = snapshot.points.find((p) => p.name === name)
      const { descriptor } = seen.get(name)
      assert.equal(descriptor.unit, point.unit, name)
      assert.equal(descriptor.description, point.description, name)
    }
    assert.equal(seen.get('zkrecipes.lock.wait.duration').descriptor.unit, 's')
    assert.equal(otel.dropped, 0)
    otel.close()
  })
})

test("counters and up/down counters start at the client's totals; histograms from the call on", async () => {
  await withClients(1, async (a) => {
    const dir = unique('otel-seed')
    const lock = a.writeLock(dir)
    for (let i = 0; i < 3; i++) {
      assert.equal(await lock.acquire(), true)
      await lock.release()
    }
    assert.equal(await lock.acquire(), true) // held across the call: holders starts at 1
    const { reader, meterProvider } = sdk()
    const otel = zk.instrumentOpenTelemetry(a, { meterProvider })
    // Seeded within the call, before any recording crossed: no flush needed.
    let seen = await collected(reader)
    assert.equal(sumOf(seen, 'zkrecipes.lock.acquisitions', { path: dir, outcome: 'acquired' }), 4)
    assert.equal(sumOf(seen, 'zkrecipes.lock.holders', { path: dir }), 1)
    assert.equal(histogramOf(seen, 'zkrecipes.lock.wait.duration', { path: dir }), undefined, 'past durations are gone')

    await lock.release()
    assert.equal(await lock.acquire(), true)
    await lock.release()
    await flushed(otel)
    seen = await collected(reader)
    assert.equal(sumOf(seen, 'zkrecipes.lock.acquisitions', { path: dir, outcome: 'acquired' }), 5)
    assert.equal(sumOf(seen, 'zkrecipes.lock.holders', { path: dir }), 0)
    assert.equal(histogramOf(seen, 'zkrecipes.lock.wait.duration', { path: dir }).count, 1)
    assert.equal(histogramOf(seen, 'zkrecipes.lock.hold.duration', { path: dir }).count, 2)
    otel.close()
  })
})

test('nothing more after close(); closing the client closes it after what the client recorded', async () => {
  const a = await zk.Client.connect(connectString)
  const { reader, meterProvider } = sdk()
  const otel = zk.instrumentOpenTelemetry(a, { meterProvider })
  const later = sdk()
  let second
  try {
    const dir = unique('otel-close')
    const lock = a.writeLock(dir)
    const twice = async (n) => {
      for (let i = 0; i < n; i++) {
        assert.equal(await lock.acquire(), true)
        await lock.release()
      }
    }
    await twice(2)
    await flushed(otel)
    assert.equal(sumOf(await collected(reader), 'zkrecipes.lock.acquisitions', { path: dir }), 2)
    assert.equal(otel.closed, false)
    otel.close()
    otel.close() // harmless
    assert.equal(otel.closed, true)
    await twice(3)
    await flushed(otel) // the flush still answers, with nothing more to feed
    assert.equal(sumOf(await collected(reader), 'zkrecipes.lock.acquisitions', { path: dir }), 2)
    assert.equal(a.metrics().counter('zkrecipes.lock.acquisitions', { path: dir }), 5)

    second = zk.instrumentOpenTelemetry(a, { meterProvider: later.meterProvider })
    assert.equal(sumOf(await collected(later.reader), 'zkrecipes.lock.acquisitions', { path: dir }), 5)
  } finally {
    await a.close()
  }
  // The client's close records its CLOSED state before it ends the feed: that still arrives.
  assert.equal(second.closed, true)
  await flushed(second)
  const seen = await collected(later.reader)
  const states = a.metrics().points.filter((p) => p.name === 'zkrecipes.session.state_changes')
  const closed = states.find((p) => p.attributes.to.toUpperCase() === 'CLOSED')
  assert.ok(closed, `a CLOSED state change in ${JSON.stringify(states.map((p) => p.attributes))}`)
  assert.equal(sumOf(seen, 'zkrecipes.session.state_changes', closed.attributes), 1)
  for (const point of states) assert.equal(sumOf(seen, point.name, point.attributes), point.value)

  // A closed client: its totals, and a feed closed from the start.
  const third = sdk()
  const late = zk.instrumentOpenTelemetry(a, { meterProvider: third.meterProvider })
  assert.equal(late.closed, true)
  assert.equal(sumOf(await collected(third.reader), 'zkrecipes.session.state_changes', closed.attributes), 1)
})

test('a job nacked twice then acked: 2 redeliveries, 3 deliveries, settled by outcome', async () => {
  await withClients(1, async (a) => {
    const { reader, meterProvider } = sdk()
    const otel = zk.instrumentOpenTelemetry(a, { meterProvider })
    const where = unique('otel-work')
    const work = a.workQueue(where, { maxDeliveries: 5 })
    try {
      await work.offer('job 1')
      for (let delivery = 1; delivery <= 3; delivery++) {
        const job = await work.next({ timeoutMs: 20000 })
        assert.ok(job, `delivery ${delivery}`)
        assert.equal(job.deliveryCount, delivery)
        if (delivery < 3) await job.nack()
        else await job.ack()
      }
    } finally {
      await work.close()
    }
    await flushed(otel)
    const seen = await collected(reader)
    const at = { path: where }
    assert.equal(sumOf(seen, 'zkrecipes.work_queue.offers', at), 1)
    assert.equal(sumOf(seen, 'zkrecipes.work_queue.redeliveries', at), 2)
    assert.equal(sumOf(seen, 'zkrecipes.work_queue.deliveries', at), 3)
    assert.equal(sumOf(seen, 'zkrecipes.work_queue.settled', { ...at, outcome: 'nack' }), 2)
    assert.equal(sumOf(seen, 'zkrecipes.work_queue.settled', { ...at, outcome: 'ack' }), 1)
    assert.equal(sumOf(seen, 'zkrecipes.work_queue.in_flight', at), 0)
    assert.equal(histogramOf(seen, 'zkrecipes.work_queue.process.duration', at).count, 3)
    otel.close()
  })
})

test('bad arguments are TypeErrors; a meter that throws costs its recordings, not the process', async () => {
  await withClients(1, async (a) => {
    assert.throws(() => zk.instrumentOpenTelemetry({}), { name: 'TypeError', message: /zkrecipes Client/ })
    assert.throws(() => new zk.OpenTelemetryInstrumentation(a, {}, new Map()), { name: 'TypeError', message: /instrumentOpenTelemetry/ })
    assert.throws(() => zk.instrumentOpenTelemetry(a, 'provider'), TypeError)
    assert.throws(() => zk.instrumentOpenTelemetry(a, { meterprovider: {} }), { name: 'TypeError', message: /meterprovider/ })
    assert.throws(() => zk.instrumentOpenTelemetry(a, { meterProvider: {} }), { name: 'TypeError', message: /getMeter/ })
    const fine = zk.instrumentOpenTelemetry(a, { meterProvider: sdk().meterProvider })
    await assert.rejects(fine.flush({ timeoutMs: -1 }), { name: 'ZkError', code: 'INVALID_ARGUMENT' })
    await assert.rejects(fine.flush({ timeoutMs: '1' }), TypeError)
    fine.close()

    // Every instrument throws: one process warning, then the feed goes on (its flush answers).
    const throwing = { add () { throw new Error('meter down') }, record () { throw new Error('meter down') } }
    const broken = { getMeter: () => ({ createCounter: () => throwing, createUpDownCounter: () => throwing, createHistogram: () => throwing }) }
    const warnings = []
    const onWarning = (warning) => warnings.push(warning)
    process.on('warning', onWarning)
    try {
      const otel = zk.instrumentOpenTelemetry(a, { meterProvider: broken })
      const lock = a.writeLock(unique('otel-broken'))
      assert.equal(await lock.acquire(), true)
      await lock.release()
      // The warning is emitted on the tick after the first failed recording, long before the
      // flush's marker comes.
      await flushed(otel)
      const ours = warnings.filter((w) => w.code === 'ZKRECIPES_METER_THREW')
      assert.equal(ours.length, 1, 'one warning, however many recordings failed')
      assert.match(ours[0].message, /meter down/)
      otel.close()
    } finally {
      process.off('warning', onWarning)
    }
  })
})

test("require('zkrecipes') never needs @opentelemetry/api; instrumentOpenTelemetry names it when missing", () => {
  // The installed package alone, in a project without OpenTelemetry.
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'zkrecipes-no-otel-'))
  try {
    copyInstalledPackage(project)
    const script = `
      const zk = require('zkrecipes')
      const loaded = Object.keys(require.cache).filter((p) => p.includes('@opentelemetry'))
      ;(async () => {
        const client = await zk.Client.connect(${JSON.stringify(connectString)})
        try {
          zk.instrumentOpenTelemetry(client)
          console.log(JSON.stringify({ loaded, threw: false }))
        } catch (err) {
          console.log(JSON.stringify({ loaded, threw: true, name: err.name, code: err.code, message: err.message }))
        } finally {
          await client.close()
        }
      })()
    `
    const env = { ...process.env }
    delete env.NODE_PATH
    const out = execFileSync(process.execPath, ['-e', script], { cwd: project, env, timeout: 60000 }).toString().trim()
    const answer = JSON.parse(out)
    assert.deepEqual(answer.loaded, [])
    assert.equal(answer.threw, true)
    assert.equal(answer.name, 'Error')
    assert.equal(answer.code, 'ZKRECIPES_NO_OPENTELEMETRY')
    assert.match(answer.message, /npm install @opentelemetry\/api/)
  } finally {
    fs.rmSync(project, { recursive: true, force: true })
  }
})
