'use strict'
// Barrier and DoubleBarrier.

const { call, describe, native, now, requireClient, requireString, timeoutOf } = require('./base.js')
const { WAIT_PATH, traced, waitSpan } = require('./wait_spans.js')

const WAIT = waitSpan('barrier.wait')
const ENTER = waitSpan('double_barrier.enter')
const LEAVE = waitSpan('double_barrier.leave')

/** Holds waiters back while it is up (Curator's DistributedBarrier: up while its node exists). */
class Barrier {
  constructor (client, path) {
    const handle = requireClient(client)
    requireString('path', path)
    this._native = now(() => new native.NativeBarrier(handle, path))
  }

  get path () { return this._native.path() }
  get [WAIT_PATH] () { return this._native.path() }
  async set () { await call(() => this._native.set()) }
  /** Takes the barrier down, releasing every waiter. */
  async remove () { await call(() => this._native.remove()) }
  async isSet () { return call(() => this._native.isSet()) }
  /** true once the barrier is down; false if timeoutMs passed first (0: a check). */
  async wait (options) {
    const timeoutMs = timeoutOf(options)
    return traced(this, WAIT, () => call(() => this._native.wait(timeoutMs)))
  }
}

/** `memberCount` members enter together and leave together (Curator's DistributedDoubleBarrier nodes). */
class DoubleBarrier {
  constructor (client, path, memberCount) {
    const handle = requireClient(client)
    requireString('path', path)
    if (!Number.isInteger(memberCount)) throw new TypeError(`memberCount must be an integer number, got ${describe(memberCount)}`)
    this._native = now(() => new native.NativeDoubleBarrier(handle, path, memberCount))
  }

  get path () { return this._native.path() }
  get [WAIT_PATH] () { return this._native.path() }
  get memberCount () { return this._native.memberCount() }
  /** This member's node, there while it is in. */
  get nodePath () { return this._native.nodePath() }
  /** true once memberCount members are in; false if timeoutMs passed first (this member withdrawn). */
  async enter (options) {
    const timeoutMs = timeoutOf(options)
    return traced(this, ENTER, () => call(() => this._native.enter(timeoutMs)))
  }

  /** true once every member left; false if timeoutMs passed first (this member's node gone anyway). */
  async leave (options) {
    const timeoutMs = timeoutOf(options)
    return traced(this, LEAVE, () => call(() => this._native.leave(timeoutMs)))
  }

  async members () { return call(() => this._native.members()) }
  async isReady () { return call(() => this._native.isReady()) }
}

module.exports = { Barrier, DoubleBarrier }
