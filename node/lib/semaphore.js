'use strict'
// Semaphore and its Lease.

const { DISPATCH, EventEmitter, KIND, asyncDispose, call, deliver, describe, native, nativeEvents, now, requireClient, requireString, timeoutOf } = require('./base.js')
const { WAIT_PATH, traced, waitSpan } = require('./wait_spans.js')

const ACQUIRE = waitSpan('semaphore.acquire')
// The fencing token of an acquire's span: its first lease's, as the core's own span says.
const firstToken = (handles) => handles[0].fencingToken()

class Lease {
  constructor (handle) { this._native = handle }
  get fencingToken () { return this._native.fencingToken() }
  get nodePath () { return this._native.nodePath() }
  /** Not released and not lost (the semaphore's 'lost' event tells when it is lost). */
  get isHeld () { return this._native.isHeld() }
  /** Resolves once the server confirmed the delete; rejects with the loss's error if it was lost. */
  async release () { await call(() => this._native.release()) }
  async [asyncDispose] () { if (this.isHeld) await this.release() }
}

/**
 * At most `maxLeases` leases held at once among every process on `path` (Curator's
 * InterProcessSemaphoreV2 nodes). Emits 'acquired', 'released', 'suspended', 'reconnected'
 * and 'lost' for its leases, as a lock does.
 */
class Semaphore extends EventEmitter {
  constructor (client, path, maxLeases) {
    super()
    const handle = requireClient(client)
    requireString('path', path)
    if (!Number.isInteger(maxLeases)) throw new TypeError(`maxLeases must be an integer number, got ${describe(maxLeases)}`)
    this._native = now(() => new native.NativeSemaphore(handle, path, maxLeases))
    nativeEvents(this)
  }

  [DISPATCH] (event) { deliver(this, event.type.toLowerCase(), [event]) }

  get path () { return this._native.path() }
  get [WAIT_PATH] () { return this._native.path() }
  get maxLeases () { return this._native.maxLeases() }
  /** How many leases this object holds now. */
  get held () { return this._native.held() }

  /** One lease, or null once timeoutMs passed (nothing left behind; 0: a try). */
  async acquire (options) {
    const leases = await this.acquireMany(1, options)
    return leases === null ? null : leases[0]
  }

  /** `count` leases, all or none; null once timeoutMs passed. */
  async acquireMany (count, options) {
    if (!Number.isInteger(count)) throw new TypeError(`count must be an integer number, got ${describe(count)}`)
    const timeoutMs = timeoutOf(options)
    const handles = await traced(this, ACQUIRE, () => call(() => this._native.acquire(count, timeoutMs)), firstToken)
    return handles === null ? null : handles.map((h) => new Lease(h))
  }

  /** Releases the oldest lease this object holds (NOT_OWNER when it holds none). */
  async release () { await call(() => this._native.release()) }
  async releaseAll () { await call(() => this._native.releaseAll()) }
  /** Every process's lease nodes on the server now. */
  async leaseNodes () { return call(() => this._native.leaseNodes()) }
  async [asyncDispose] () { await this.releaseAll() }
}

Semaphore.prototype[KIND] = 'Semaphore'

module.exports = { Lease, Semaphore }
