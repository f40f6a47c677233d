'use strict'
// A client's metrics fed to OpenTelemetry as they happen: one instrument per metric of the core's
// catalog (names, units, descriptions and histogram bounds all come from the addon) on the meter
// 'zkrecipes', then every recording of the client as an add() or a record() with its attributes.
// A duration histogram can only be fed value by value, which is why this is not built on
// client.metrics() snapshots.
//
// @opentelemetry/api is an optional peer dependency: it is required at the first call, never by
// require('zkrecipes'), and it must be the application's own copy (the one its SDK registered
// with), which a plain require from inside this package finds.

const { AT_CLOSE, asyncDispose, call, native, requireClient, timeoutOf } = require('./base.js')
const { version } = require('../package.json')

const API = '@opentelemetry/api'

function loadApi () {
  try {
    return require(API)
  } catch (err) {
    // Only the package itself missing: a broken installation of it says so in its own error.
    if (err?.code !== 'MODULE_NOT_FOUND' || !String(err.message).startsWith(`Cannot find module '${API}'`)) throw err
    const missing = new Error(
      `instrumentOpenTelemetry needs the package ${API} (an optional peer dependency of zkrecipes): ` +
        `npm install ${API}, with an SDK such as @opentelemetry/sdk-metrics`,
      { cause: err }
    )
    missing.code = 'ZKRECIPES_NO_OPENTELEMETRY'
    throw missing
  }
}

let catalog = null
// The core's catalog, asked once: { metrics: [{ name, instrument, unit, description }], buckets }.
function metricCatalog () {
  if (catalog === null) catalog = native.metricCatalog()
  return catalog
}

// A meter's instruments, in catalog order (a recording names its metric by index). Made once per
// meter: two clients on one meter feed the same instruments, as OpenTelemetry means them to.
const instrumentsOfMeter = new WeakMap()

function instrumentsOn (meter, api) {
  let made = instrumentsOfMeter.get(meter)
  if (made) return made
  const { metrics, buckets } = metricCatalog()
  made = metrics.map(({ name, instrument, unit, description }) => {
    switch (instrument) {
      case 'counter':
        return { add: meter.createCounter(name, { unit, description, valueType: api.ValueType.INT }) }
      case 'up_down_counter':
        return { add: meter.createUpDownCounter(name, { unit, description, valueType: api.ValueType.INT }) }
      case 'histogram':
        return {
          record: meter.createHistogram(name, {
            unit,
            description,
            valueType: api.ValueType.DOUBLE,
            advice: { explicitBucketBoundaries: buckets },
          }),
        }
      default:
        throw new Error(`zkrecipes: no OpenTelemetry instrument for the ${instrument} metric ${name}`)
    }
  })
  instrumentsOfMeter.set(meter, made)
  return made
}

function meterProviderOf (options, api) {
  if (options === undefined || options === null) return api.metrics.getMeterProvider()
  if (typeof options !== 'object') throw new TypeError(`options must be an object like { meterProvider }, got ${typeof options}`)
  const unknown = Object.keys(options).find((key) => key !== 'meterProvider')
  if (unknown !== undefined) throw new TypeError(`instrumentOpenTelemetry takes { meterProvider }, not ${JSON.stringify(unknown)}`)
  const { meterProvider } = options
  if (meterProvider === undefined || meterProvider === null) return api.metrics.getMeterProvider()
  if (typeof meterProvider?.getMeter !== 'function') {
    throw new TypeError(`meterProvider must be an OpenTelemetry MeterProvider (with getMeter()), got ${meterProvider === null ? 'null' : typeof meterProvider}`)
  }
  return meterProvider
}

// What a recording does to its instrument. Never throws: it runs as the delivery's callback,
// where a throw would be the process's uncaught exception; a meter that throws loses its
// recordings (one process warning), never the delivery of the others.
function feeder (instruments) {
  let warned = false
  return ({ metric, attributes, value }) => {
    try {
      const one = instruments[metric]
      if (one.add) one.add.add(value, attributes)
      else one.record.record(value, attributes)
    } catch (err) {
      if (!warned) {
        warned = true
        process.emitWarning(`the OpenTelemetry meter given to zkrecipes threw; its recordings are skipped: ${err}`, {
          code: 'ZKRECIPES_METER_THREW',
        })
      }
    }
  }
}

/**
 * The OpenTelemetry feed of one client, from instrumentOpenTelemetry(): closed by close() or when
 * the client closes.
 */
class OpenTelemetryInstrumentation {
  #native
  #client
  #flushes
  #lastFlush = 0
  #closing

  constructor (client, handle, flushes) {
    if (!(handle instanceof native.NativeRecordings)) throw new TypeError('use instrumentOpenTelemetry(client, options)')
    this.#client = client
    this.#native = handle
    this.#flushes = flushes
    this.#closing = () => this.close()
    if (!handle.closed) client[AT_CLOSE].add(this.#closing)
  }

  /** Whether the feed has stopped (close(), or the client closed). */
  get closed () { return this.#native.closed }

  /**
   * Recordings of this process that never reached a meter because the meters did not keep up
   * (the library's delivery queue or the event loop's was full): the meters are short by these.
   */
  get dropped () { return native.droppedRecordings() }

  /**
   * Stops the feed: nothing the client records from now on reaches the meter (what it recorded
   * before still does; flush() waits for it). Closing twice is harmless.
   */
  close () {
    this.#native.close()
    this.#client[AT_CLOSE].delete(this.#closing)
  }

  /**
   * Resolves true once every recording the client made before the call has been fed to the
   * meter; false if `timeoutMs` (default 5000) passed first. Then read or export the meter
   * (e.g. `await meterProvider.forceFlush()`): for a shutdown, or a test.
   */
  async flush (options) {
    const timeoutMs = timeoutOf(options) ?? 5000
    this.#lastFlush = (this.#lastFlush % 0xffffffff) + 1
    const marker = this.#lastFlush
    let timer
    // The timer keeps the process alive until the marker comes (the delivery itself never does).
    const flushed = new Promise((resolve) => {
      this.#flushes.set(marker, () => resolve(true))
      timer = setTimeout(() => resolve(false), timeoutMs)
    })
    try {
      // Sent, the marker comes after every earlier recording, on this thread.
      return (await call(() => this.#native.flush(marker, timeoutMs))) && (await flushed)
    } finally {
      clearTimeout(timer)
      this.#flushes.delete(marker)
    }
  }

  async [asyncDispose] () { this.close() }
}

/**
 * Feeds every recording of `client` to OpenTelemetry instruments on the meter 'zkrecipes' of
 * `meterProvider` (default: the global one, `metrics.getMeterProvider()` of @opentelemetry/api),
 * counters and up/down counters starting at the client's totals so far.
 */
function instrumentOpenTelemetry (client, options) {
  const nativeClient = requireClient(client)
  const api = loadApi()
  const meter = meterProviderOf(options, api).getMeter('zkrecipes', version)
  const feed = feeder(instrumentsOn(meter, api))
  const flushes = new Map()
  // No closure over the instrumentation or its handle: the core holds this function (a root for
  // the collector) until the feed closes, and a handle reachable from it could never be collected.
  const receive = (delivery) => {
    if (typeof delivery === 'number') {
      const flushed = flushes.get(delivery)
      flushes.delete(delivery)
      if (flushed) flushed()
    } else {
      feed(delivery)
    }
  }
  const handle = native.forwardClientRecordings(nativeClient, receive)
  // Before any recording: those come through the event loop, after this call returns.
  for (const seed of handle.initial()) feed(seed)
  return new OpenTelemetryInstrumentation(client, handle, flushes)
}

module.exports = { OpenTelemetryInstrumentation, instrumentOpenTelemetry }
