'use strict'
// Client: the session, its state events, and a factory method per recipe.

const { AT_CLOSE, DISPATCH, EventEmitter, KIND, ZkError, asyncDispose, call, deliver, native, nativeEvents, now, requireString } = require('./base.js')
const { security } = require('./security.js')
const { MultiLock, ReadWriteLock, WriteLock } = require('./lock.js')
const { DistributedQueue } = require('./queue.js')
const { WorkQueue } = require('./work_queue.js')
const { Semaphore } = require('./semaphore.js')
const { LeaderElectionSupport } = require('./election.js')
const { LeaderLatch } = require('./latch.js')
const { Barrier, DoubleBarrier } = require('./barrier.js')
const { DistributedAtomicLong, SharedCount } = require('./counter.js')
const { ChildrenCache, NodeCache, TreeCache } = require('./cache.js')
const { GroupMember, PersistentNode } = require('./group.js')
const { ServiceDiscovery } = require('./discovery.js')
const { configureLogging, watchLogLevels } = require('./logging.js')
const { MetricsSnapshot } = require('./metrics.js')

class Client extends EventEmitter {
  /**
   * Connects to `connectString` ("h1:2181,h2:2181/chroot"). Rejects with
   * CONNECTION_LOSS when no server answers within connectTimeoutMs.
   */
  static async connect (connectString, options = {}) {
    requireString('connectString', connectString)
    if (options === null || typeof options !== 'object') throw new TypeError('options must be an object')
    const { sessionTimeoutMs, connectTimeoutMs, auth, identity, tls, sasl, acl, logger, metricPaths } = options
    for (const [name, value] of [['sessionTimeoutMs', sessionTimeoutMs], ['connectTimeoutMs', connectTimeoutMs]]) {
      if (value !== undefined && typeof value !== 'number') throw new TypeError(`${name} must be a number`)
    }
    if (identity !== undefined) requireString('identity', identity)
    if (metricPaths !== undefined && typeof metricPaths !== 'boolean') throw new TypeError(`metricPaths must be a boolean, got ${typeof metricPaths}`)
    let authScheme, authCredentials
    if (auth !== undefined && auth !== null) {
      if (!Array.isArray(auth) || auth.length !== 2) throw new TypeError('auth must be [scheme, credentials]')
      authScheme = requireString('auth scheme', auth[0])
      authCredentials = requireString('auth credentials', auth[1])
    }
    const settings = { sessionTimeoutMs, connectTimeoutMs, authScheme, authCredentials, identity, metricPaths, ...security(tls, sasl, acl) }
    // The process's logger (the events carry no client); the levels then follow who listens.
    if (logger !== undefined && logger !== null) configureLogging({ logger })
    watchLogLevels()
    const handle = await call(() => native.connect(connectString, settings))
    return new Client(handle)
  }

  constructor (handle) {
    super()
    if (!(handle instanceof native.NativeClient)) throw new TypeError('use Client.connect(...)')
    this._native = handle
    // An open client keeps the process alive, like a socket; unref() lets it exit.
    this._keepAlive = setInterval(() => {}, 0x7fffffff)
    this[AT_CLOSE] = new Set()
    nativeEvents(this)
  }

  [DISPATCH] (event) { deliver(this, 'state', [event.type]) }

  get state () { return this._native.state() }
  get sessionId () { return now(() => this._native.sessionId()) }
  get identity () { return this._native.identity() }
  /** Whether the session runs over TLS. */
  get isTls () { return this._native.isTls() }
  /** The identities the server authenticated this session as, e.g. ['sasl:alice', 'x509:CN=app']. */
  get authenticatedAs () { return this._native.authenticatedAs() }
  /**
   * Why there is no session after 'LOST': the server's refusal of the last attempt at a new one
   * (a rotated password, an expired ticket or certificate) as a ZkError; null once one succeeds.
   */
  get sessionError () {
    const err = this._native.sessionError()
    return err ? new ZkError(err[0], err[1]) : null
  }

  /**
   * What this client recorded so far: every recipe's waits, holds and outcomes, the requests
   * sent and the connection state changes.
   */
  metrics () { return new MetricsSnapshot(this._native.metrics()) }

  /** Asks the server for this session's identities now. */
  whoami () { return call(() => this._native.whoami()) }

  unref () { if (this._keepAlive) this._keepAlive.unref(); return this }
  ref () { if (this._keepAlive) this._keepAlive.ref(); return this }

  writeLock (dir) { return new WriteLock(this, dir) }
  multiLock (dirs) { return new MultiLock(this, dirs) }
  readWriteLock (dir) { return new ReadWriteLock(this, dir) }
  queue (dir) { return new DistributedQueue(this, dir) }
  workQueue (path, options) { return new WorkQueue(this, path, options) }
  semaphore (path, maxLeases) { return new Semaphore(this, path, maxLeases) }
  leaderElection (root, hostName) { return new LeaderElectionSupport(this, root, hostName) }
  leaderLatch (path, options) { return new LeaderLatch(this, path, options) }
  barrier (path) { return new Barrier(this, path) }
  doubleBarrier (path, memberCount) { return new DoubleBarrier(this, path, memberCount) }
  sharedCount (path, seed) { return new SharedCount(this, path, seed) }
  atomicLong (path) { return new DistributedAtomicLong(this, path) }
  nodeCache (path) { return new NodeCache(this, path) }
  childrenCache (path) { return new ChildrenCache(this, path) }
  treeCache (path, options) { return new TreeCache(this, path, options) }
  persistentNode (path, options) { return new PersistentNode(this, path, options) }
  groupMember (group, id, options) { return new GroupMember(this, group, id, options) }
  serviceDiscovery (basePath) { return new ServiceDiscovery(this, basePath) }

  /** Ends the session: locks released, offers withdrawn, latches closed. Closing twice is harmless. */
  async close () {
    try {
      await call(() => this._native.close())
    } finally {
      if (this._keepAlive) clearInterval(this._keepAlive)
      this._keepAlive = null
      // Each never throws; a copy, since each removes itself.
      for (const closing of [...this[AT_CLOSE]]) closing()
    }
  }

  async [asyncDispose] () { await this.close() }
}

Client.prototype[KIND] = 'Client'

module.exports = { Client }
