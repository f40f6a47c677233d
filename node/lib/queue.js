'use strict'
// DistributedQueue.

const { asyncDispose, call, describe, native, now, payload, requireClient, requireString, timeoutOf } = require('./base.js')
const { WAIT_PATH, traced, waitSpan } = require('./wait_spans.js')

const TAKE = waitSpan('queue.take')

class DistributedQueue {
  constructor (client, dir) {
    const handle = requireClient(client)
    requireString('dir', dir)
    this._native = now(() => new native.NativeQueue(handle, dir))
    Object.defineProperty(this, WAIT_PATH, { value: dir })
  }

  get maxPayload () { return this._native.maxPayload() }

  /** Resolves to the item's node path. A CONNECTION_LOSS rejection may or may not have enqueued it. */
  async offer (data) { return call(() => this._native.offer(payload(data))) }
  async peek () { return call(() => this._native.peek()) }
  async poll () { return call(() => this._native.poll()) }
  async element () { return call(() => this._native.element()) }
  async remove () { return call(() => this._native.remove()) }
  /** Waits for an item; null if timeoutMs passed first. */
  async take (options) {
    const timeoutMs = timeoutOf(options)
    return traced(this, TAKE, () => call(() => this._native.take(timeoutMs)))
  }

  /** Up to `max` head items (1 to 1000) in queue order, taken in one transaction; [] when empty. */
  async pollMany (max) {
    if (!Number.isInteger(max)) throw new TypeError(`max must be an integer number, got ${describe(max)}`)
    return call(() => this._native.pollMany(max))
  }

  /** Waits for an item as take() does, then takes up to `max` as pollMany(); [] if timeoutMs passed first. */
  async takeMany (max, options) {
    if (!Number.isInteger(max)) throw new TypeError(`max must be an integer number, got ${describe(max)}`)
    const timeoutMs = timeoutOf(options)
    return traced(this, TAKE, () => call(() => this._native.takeMany(max, timeoutMs)))
  }

  async size () { return call(() => this._native.size()) }

  /** Deletes this consumer's claim marker; the queue stays usable. */
  async close () { await call(() => this._native.close()) }
  async [asyncDispose] () { await this.close() }
}

module.exports = { DistributedQueue }
