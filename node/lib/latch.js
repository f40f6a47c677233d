'use strict'
// LeaderLatch: Curator's leader latch.

const { DISPATCH, EventEmitter, KIND, asyncDispose, call, deliver, native, nativeEvents, now, requireClient, requireString, timeoutOf } = require('./base.js')
const { WAIT_PATH, traced, waitSpan } = require('./wait_spans.js')

const AWAIT = waitSpan('latch.await_leadership')

/**
 * One participant of the leader latch at `path` (Curator's LeaderLatch nodes). `start()` takes
 * part, `close()` leaves for good (a closed latch cannot start again, as in Curator). Emits
 * 'is_leader' (with the fencing token), 'not_leader' (with the reason when the leadership was
 * lost), 'suspended' and 'reconnected' while leading, and 'event' for each of them.
 */
class LeaderLatch extends EventEmitter {
  constructor (client, path, options) {
    super()
    const handle = requireClient(client)
    requireString('path', path)
    // The id alone, as the other languages take it (and as leaderElection(path, hostName) does).
    if (typeof options === 'string') options = { id: options }
    if (options !== undefined && (options === null || typeof options !== 'object')) {
      throw new TypeError('options must be an object like { id } or the id as a string')
    }
    const id = options && options.id !== undefined && options.id !== null ? requireString('id', options.id) : undefined
    this._native = now(() => new native.NativeLeaderLatch(handle, path, id))
    nativeEvents(this)
  }

  [DISPATCH] (event) {
    deliver(this, 'event', [event])
    deliver(this, event.type.toLowerCase(), [event])
  }

  get path () { return this._native.path() }
  get [WAIT_PATH] () { return this._native.path() }
  /** This participant's id (default: the client's identity). */
  get id () { return this._native.id() }
  /** Our node while leading, else null. */
  get nodePath () { return this._native.nodePath() }
  /** The leader's fencing token (its node's czxid) while this participant leads, else null. */
  get fencingToken () { return this._native.fencingToken() }
  get isStarted () { return this._native.isStarted() }
  get isClosed () { return this._native.isClosed() }

  /** Resolves once in line (leading or not); a closed latch rejects with CLOSED. */
  async start () { await call(() => this._native.start()) }
  /** Withdraws the node; a leader hands over with 'not_leader'. Idempotent. */
  async close () { await call(() => this._native.close()) }
  hasLeadership () { return this._native.hasLeadership() }
  /** The fencing token once leading; null if timeoutMs passed first (0: a check). */
  async awaitLeadership (options) {
    const timeoutMs = timeoutOf(options)
    return traced(this, AWAIT, () => call(() => this._native.awaitLeadership(timeoutMs)))
  }

  /** The current leader, or null when nobody takes part. */
  async leader () { return call(() => this._native.leader()) }
  /** Every participant in line, the leader first: `{ id, node, isLeader }`. */
  async participants () { return call(() => this._native.participants()) }
  async [asyncDispose] () { await this.close() }
}

LeaderLatch.prototype[KIND] = 'LeaderLatch'

module.exports = { LeaderLatch }
