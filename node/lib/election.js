'use strict'
// LeaderElectionSupport: Apache's election recipe.

const { DISPATCH, EventEmitter, KIND, asyncDispose, call, deliver, native, nativeEvents, now, requireClient, requireString, timeoutOf } = require('./base.js')
const { WAIT_PATH, traced, waitSpan } = require('./wait_spans.js')

const AWAIT = waitSpan('election.await_leadership')

class LeaderElectionSupport extends EventEmitter {
  constructor (client, root, hostName) {
    super()
    const handle = requireClient(client)
    requireString('root', root)
    if (hostName === undefined) hostName = client.identity
    requireString('hostName', hostName)
    this._native = now(() => new native.NativeElection(handle, root, hostName))
    Object.defineProperty(this, WAIT_PATH, { value: root })
    nativeEvents(this)
  }

  [DISPATCH] (event) {
    deliver(this, 'event', [event])
    deliver(this, event.type.toLowerCase(), [event])
  }

  async start () { await call(() => this._native.start()) }
  async stop () { await call(() => this._native.stop()) }
  isLeader () { return this._native.isLeader() }
  async leaderHostName () { return call(() => this._native.leaderHostName()) }
  /** Resolves true once leading, false if timeoutMs passed first. */
  async awaitLeadership (options) {
    const timeoutMs = timeoutOf(options)
    return traced(this, AWAIT, () => call(() => this._native.awaitLeadership(timeoutMs)))
  }

  async [asyncDispose] () { await this.stop() }
}

LeaderElectionSupport.prototype[KIND] = 'LeaderElectionSupport'

module.exports = { LeaderElectionSupport }
