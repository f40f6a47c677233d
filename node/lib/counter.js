'use strict'
// DistributedAtomicLong and SharedCount, with the JavaScript types of their numbers.

const { DISPATCH, EVENT_OF, EventEmitter, KIND, asyncDispose, call, deliver, describe, frozen, native, nativeEvents, now, requireClient, requireString } = require('./base.js')

// The numbers a counter's node holds: a Java int (a shared count's, as a number) or long (an
// atomic long's, as a bigint; a safe integer number is taken too). Only the type is checked
// here; the core decides the width (INVALID_ARGUMENT, as in every language).
function int32 (name, value) {
  if (!Number.isInteger(value)) throw new TypeError(`${name} must be an integer number, got ${describe(value)}`)
  return value
}

function int64 (name, value) {
  if (typeof value === 'number' && Number.isSafeInteger(value)) value = BigInt(value)
  if (typeof value !== 'bigint') throw new TypeError(`${name} must be a bigint or a safe integer number, got ${describe(value)}`)
  return value
}

const versionedOf = (value, version) => Object.freeze({ value, version })
class DistributedAtomicLong {
  constructor (client, path) {
    const handle = requireClient(client)
    requireString('path', path)
    this._native = now(() => new native.NativeAtomicLong(handle, path))
  }

  get path () { return this._native.path() }
  /** The value now (0n while the node does not exist). */
  async get () { return call(() => this._native.get()) }
  /** `{ preValue, postValue }` */
  async increment () { return frozen(await call(() => this._native.increment())) }
  async decrement () { return frozen(await call(() => this._native.decrement())) }
  async add (delta) {
    const d = int64('delta', delta)
    return frozen(await call(() => this._native.add(d)))
  }

  /** Writes `newValue` if the value is `expected` now; false (nothing written) otherwise. */
  async compareAndSet (expected, newValue) {
    const e = int64('expected', expected)
    const n = int64('newValue', newValue)
    return call(() => this._native.compareAndSet(e, n))
  }

  /** Writes `value` whatever the value was. */
  async forceSet (value) {
    const v = int64('value', value)
    await call(() => this._native.forceSet(v))
  }
}

/**
 * A 32-bit count at `path` (Curator's SharedCount node: 4 bytes, big-endian; kazoo's
 * Counter(support_curator=True)), cached and followed by a watch once started. `start()`
 * creates the node with `seed` if it is missing (never overwriting a value); `count` is then the
 * newest value seen (read again after every change and reconnect, never an older one), and
 * 'change' carries `{ value, version }` for every value it takes. `close()` stops following at
 * once (`count` keeps its last value). A node kazoo created empty reads as the seed; another
 * length than 4 is INVALID_ARGUMENT.
 */
class SharedCount extends EventEmitter {
  constructor (client, path, seed = 0) {
    super()
    const handle = requireClient(client)
    requireString('path', path)
    const s = int32('seed', seed)
    this._native = now(() => new native.NativeSharedCount(handle, path, s))
    nativeEvents(this)
  }

  [DISPATCH] (change) { deliver(this, 'change', [change]) }

  get path () { return this._native.path() }
  /** Creates the node with the seed if missing, reads it and follows it; twice does nothing more. */
  async start () { await call(() => this._native.start()) }
  /** Stops following, at once; idempotent (start() follows again). */
  close () { this._native.close() }
  /** The newest value seen (no request); INVALID_ARGUMENT before start(). */
  get count () { return now(() => this._native.get()) }
  get () { return this.count }
  /** `count` with the node version it was read at, for trySet. */
  versioned () { return frozen(now(() => this._native.versioned())) }
  /** The value on the server now (no start needed, nothing created): the seed while missing or empty. */
  async read () { return call(() => this._native.read()) }
  /** Writes `value` whatever the count is. */
  async set (value) {
    const v = int32('value', value)
    await call(() => this._native.set(v))
  }

  /** Writes `value` only if the node is still at `expected`'s version; false otherwise (count refreshed). */
  async trySet (expected, value) {
    if (expected === null || typeof expected !== 'object') {
      throw new TypeError('expected must be { value, version } as versioned() returns it')
    }
    const [ev, ever] = [int32('expected.value', expected.value), int32('expected.version', expected.version)]
    const v = int32('value', value)
    return call(() => this._native.trySet(ev, ever, v))
  }

  /** Adds `delta` (wrapping as Java's int) with versioned writes until one applies: `{ value, version }` written. */
  async add (delta) {
    const d = int32('delta', delta)
    return frozen(await call(() => this._native.add(d)))
  }

  async [asyncDispose] () { this.close() }
}

SharedCount.prototype[KIND] = 'SharedCount'
SharedCount.prototype[EVENT_OF] = versionedOf

module.exports = { DistributedAtomicLong, SharedCount }
