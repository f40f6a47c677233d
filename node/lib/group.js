'use strict'
// PersistentNode and GroupMember.

const { DISPATCH, EVENT_OF, EventEmitter, KIND, asyncDispose, call, dataOf, deliver, native, nativeEvents, now, optionsOf, payload, requireClient, requireString } = require('./base.js')
const { cacheEventOf } = require('./cache.js')

/**
 * A node that stays (Curator's PersistentNode): created at `start()` and created again whenever
 * it is deleted or its session expires, until `close()`. An ephemeral node of the name held by
 * another session is never taken over: `start()` waits until it is gone. A sequential node gets
 * Curator's protected name (`_c_<uuid>-<name><sequence>`). Missing parents are created as
 * containers.
 */
class PersistentNode {
  constructor (client, path, options) {
    const handle = requireClient(client)
    requireString('path', path)
    const { data, mode = 'ephemeral' } = optionsOf(options, '{ data, mode }')
    const bytes = dataOf('data', data)
    const modeName = requireString('mode', mode)
    this._native = now(() => new native.NativePersistentNode(handle, path, modeName, bytes))
  }

  get path () { return this._native.path() }
  /** The node's path once created (a sequential node's full name), null before and after close(). */
  get actualPath () { return this._native.actualPath() }
  /** The data the node is (re-)created with. */
  get data () { return this._native.data() }
  /** Resolves with the node's path once it exists; CLOSED once closed. Takes effect at the call. */
  async start () { return call(() => this._native.start()) }
  /** Writes `data` now (if the node exists) and for every later re-create. */
  async setData (data) {
    const bytes = dataOf('data', data)
    await call(() => this._native.setData(bytes))
  }

  /** Stops re-creating the node and deletes it, confirmed; idempotent, final. */
  async close () { await call(() => this._native.close()) }
  async [asyncDispose] () { await this.close() }
}

/**
 * Member `id` of the group at `group` (Curator's GroupMember layout: an ephemeral node
 * `<group>/<id>` whose data is the payload). `start()` joins and resolves once this member is
 * in its own view; `members()` is then every member's id with its payload (no request), this one
 * always included. A member whose session expired joins again by itself; one that dies leaves
 * everybody's view when its session ends. Emits the group cache's events: 'created' (joined;
 * `event.node.name` is the id, `event.node.data` the payload), 'changed' (a new payload),
 * 'deleted' (left), 'initialized', 'suspended', 'reconnected', 'lost', and 'event' for each.
 */
class GroupMember extends EventEmitter {
  constructor (client, group, id, options) {
    super()
    const handle = requireClient(client)
    requireString('group', group)
    requireString('id', id)
    const payload = dataOf('payload', optionsOf(options, '{ payload }').payload)
    this._native = now(() => new native.NativeGroupMember(handle, group, id, payload))
    nativeEvents(this)
  }

  [DISPATCH] (event) {
    deliver(this, 'event', [event])
    deliver(this, event.type.toLowerCase(), [event])
  }

  get id () { return this._native.id() }
  get group () { return this._native.group() }
  /** Joins; resolves once this member is in its own view. Takes effect at the call. */
  async start () { await call(() => this._native.start()) }
  /** Every member's id with its payload, sorted by id. */
  members () { return new Map(this._native.members().map((m) => [m.id, m.payload])) }
  /** A new payload, written now and kept for every re-join. */
  async setPayload (payload) {
    const bytes = dataOf('payload', payload)
    await call(() => this._native.setPayload(bytes))
  }

  /** Leaves (the node deleted, confirmed) and stops following the group; idempotent, final. */
  async close () { await call(() => this._native.close()) }
  async [asyncDispose] () { await this.close() }
}

GroupMember.prototype[KIND] = 'GroupMember'
GroupMember.prototype[EVENT_OF] = cacheEventOf

module.exports = { GroupMember, PersistentNode }
