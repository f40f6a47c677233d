'use strict'
// WorkQueue and its Job: at-least-once delivery with ack and nack.

const { asyncDispose, call, native, now, payload, requireClient, requireString, timeoutOf } = require('./base.js')
const { WAIT_PATH, traced, waitSpan } = require('./wait_spans.js')

const CONSUME = waitSpan('work_queue.consume')

function priorityOf (options) {
  if (options === undefined || options === null) return undefined
  if (typeof options !== 'object') throw new TypeError('options must be an object like { priority }')
  const { priority } = options
  if (priority === undefined || priority === null) return undefined
  if (!Number.isInteger(priority)) throw new TypeError(`priority must be an integer, got ${priority}`)
  return priority
}

// Only the type is checked here; the range is the core's rule (INVALID_ARGUMENT naming it).
function optionalCount (name, value) {
  if (value === undefined || value === null) return undefined
  if (!Number.isSafeInteger(value)) throw new TypeError(`${name} must be an integer, got ${value}`)
  return value
}

/** A job claimed for this worker: `ack()` when done, `nack()` to give it back. */
class Job {
  constructor (handle) {
    this._native = handle
  }

  // Read-only, as typed, and kept by the core after the job is settled; `data` is a fresh
  // Buffer at every read (as Java's getData() is a copy), so no caller can change another's.
  get data () { return this._native.data() }
  get name () { return this._native.name() }
  get priority () { return this._native.priority() }
  get deliveryCount () { return this._native.deliveryCount() }

  get settled () { return this._native.isSettled() }
  /** Deletes the job. Rejects with SESSION_EXPIRED if the claim went with its session. */
  async ack () { await call(() => this._native.ack()) }
  /** Gives the job back at its place in line. */
  async nack () { await call(() => this._native.nack()) }
  async [asyncDispose] () { if (!this.settled) await this.nack() }
}

class WorkQueue {
  constructor (client, path, options) {
    const handle = requireClient(client)
    requireString('path', path)
    if (options !== undefined && (options === null || typeof options !== 'object')) {
      throw new TypeError('options must be an object like { prefetch, maxDeliveries }')
    }
    const prefetch = optionalCount('prefetch', options && options.prefetch)
    const maxDeliveries = optionalCount('maxDeliveries', options && options.maxDeliveries)
    this._native = now(() => new native.NativeWorkQueue(handle, path, prefetch, maxDeliveries))
    this.path = path
  }

  get maxPayload () { return this._native.maxPayload() }
  get [WAIT_PATH] () { return this.path }
  get deadLetterPath () { return this._native.deadLetterPath() }

  /** Resolves to the job's node path; `{ priority }` 0-999, lower first (default 100). */
  async offer (data, options) { return call(() => this._native.offer(payload(data), priorityOf(options))) }
  /** One transaction per batch under the server's packet limit. */
  async offerAll (items, options) {
    if (!Array.isArray(items)) throw new TypeError('items must be an array')
    // Array.from, not map: map skips the holes of a sparse array, and each must be refused.
    return call(() => this._native.offerAll(Array.from(items, payload), priorityOf(options)))
  }

  /** The next job, or null once timeoutMs passed. */
  async next (options) {
    const timeoutMs = timeoutOf(options)
    const handle = await traced(this, CONSUME, () => call(() => this._native.consume(timeoutMs)))
    return handle === null ? null : new Job(handle)
  }

  /**
   * `for await (const job of queue.consume())`: jobs as they come (until
   * `timeoutMs` passes without one, if given). A job the loop body neither
   * acknowledged nor gave back, or left by `break` or an exception, goes back.
   */
  async * consume (options) {
    for (;;) {
      const job = await this.next(options)
      if (job === null) return
      try {
        yield job
      } finally {
        if (!job.settled) await job.nack()
      }
    }
  }

  async size () { return call(() => this._native.size()) }
  /**
   * Gives back the jobs prefetched and not handed out. Afterwards every call rejects with CLOSED
   * (a consume waiting at that moment too); jobs already handed out can still be settled.
   */
  async close () { await call(() => this._native.close()) }
  async [asyncDispose] () { await this.close() }
}

module.exports = { Job, WorkQueue }
