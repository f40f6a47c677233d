'use strict'
// zkrecipes for Node.js: the public API over the native addon (native.js).
// Every recipe decision is made in the Rust core; this file adds what a Node
// user expects: Promises, EventEmitters, ZkError codes, TypeErrors, disposal.

const { AsyncLocalStorage } = require('node:async_hooks')
const { EventEmitter } = require('node:events')
const native = require('./loader.js').load()

// The core's own lists: this file names no code or event of its own.
const NAMES = native.names()
const ERROR_CODES = Object.freeze(NAMES.errorCodes)

const asyncDispose = Symbol.asyncDispose || Symbol.for('nodejs.asyncDispose')

class ZkError extends Error {
  constructor (code, message, options) {
    super(message, options)
    this.name = 'ZkError'
    this.code = code
  }
}

// The addon throws and rejects with Errors that carry the core's `code`; they
// become ZkErrors with the addon's Error as `cause`.
function fromNative (err) {
  if (err instanceof ZkError || !(err instanceof Error) || !ERROR_CODES.includes(err.code)) return err
  return new ZkError(err.code, err.message, { cause: err })
}

// What every lock and election listener receives: the core's event details.
function eventOf (type, fencingToken, reasonCode, reasonMessage) {
  const event = { type }
  if (fencingToken !== null && fencingToken !== undefined) event.fencingToken = fencingToken
  if (reasonCode !== null && reasonCode !== undefined) event.reason = new ZkError(reasonCode, reasonMessage)
  return Object.freeze(event)
}

async function call (fn) {
  try {
    return await fn()
  } catch (err) {
    throw fromNative(err)
  }
}

function now (fn) {
  try {
    return fn()
  } catch (err) {
    throw fromNative(err)
  }
}

function requireString (name, value) {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string, got ${typeof value}`)
  return value
}

function requireClient (client) {
  if (!(client instanceof Client)) throw new TypeError('client must be a zkrecipes Client')
  return client._native
}

function timeoutOf (options) {
  if (options === undefined || options === null) return undefined
  if (typeof options !== 'object') throw new TypeError('options must be an object like { timeoutMs }')
  const { timeoutMs } = options
  if (timeoutMs === undefined || timeoutMs === null) return undefined
  if (typeof timeoutMs !== 'number') throw new TypeError(`timeoutMs must be a number, got ${typeof timeoutMs}`)
  return timeoutMs
}

// A listener that throws becomes an 'error' event, or an uncaught exception
// if nobody listens for errors: never a native crash, never a stuck recipe.
function deliver (emitter, name, args) {
  try {
    emitter.emit(name, ...args)
  } catch (err) {
    if (name !== 'error' && emitter.listenerCount('error') > 0) {
      deliver(emitter, 'error', [err])
    } else {
      process.nextTick(() => { throw err })
    }
  }
}

const lower = (names) => names.map((n) => n.toLowerCase())
const EVENT_NAMES = {
  Client: new Set(['state']),
  Lock: new Set(lower(NAMES.lockEvents)),
  Semaphore: new Set(lower(NAMES.lockEvents)),
  LeaderElectionSupport: new Set(['event', ...lower(NAMES.electionEvents)]),
  LeaderLatch: new Set(['event', ...lower(NAMES.latchEvents)]),
  SharedCount: new Set(['change']),
  NodeCache: new Set(['event', ...lower(NAMES.cacheEvents)]),
  ChildrenCache: new Set(['event', ...lower(NAMES.cacheEvents)]),
  TreeCache: new Set(['event', ...lower(NAMES.cacheEvents)]),
  GroupMember: new Set(['event', ...lower(NAMES.cacheEvents)]),
}

// The user's listeners only: our own 'newListener' and 'removeListener'
// listeners kept every observed object subscribed (and alive) for good.
const OWN_EVENTS = new Set(['error', 'newListener', 'removeListener'])
const SUBSCRIPTION = Symbol('subscription')
const KIND = Symbol('kind')
const DISPATCH = Symbol('dispatch')
// What a class's native callback arguments become (the core's event details unless it says otherwise).
const EVENT_OF = Symbol('eventOf')

const watched = (emitter) => emitter.eventNames().some((n) => !OWN_EVENTS.has(n) && emitter.listenerCount(n) > 0)

// Shared by every object (`this` is the emitter): a lock object per request
// or per entity must not carry closures of its own (issue 17).
function onNewListener (name) {
  const kind = this[KIND]
  if (typeof name === 'string' && !OWN_EVENTS.has(name) && !EVENT_NAMES[kind].has(name)) {
    throw new TypeError(`${kind} has no event '${name}'; it emits ${[...EVENT_NAMES[kind]].map((n) => `'${n}'`).join(', ')} and 'error'`)
  }
  if (!OWN_EVENTS.has(name) && !this[SUBSCRIPTION]) {
    const make = this[EVENT_OF] || eventOf
    this[SUBSCRIPTION] = this._native.subscribe((...details) => this[DISPATCH](make(...details)))
  }
}

function onRemoveListener () {
  setImmediate(() => {
    if (this[SUBSCRIPTION] && !watched(this)) {
      this[SUBSCRIPTION].cancel()
      this[SUBSCRIPTION] = null
    }
  })
}

// Subscribes to the native events only while somebody listens, so that an
// unobserved recipe object holds no subscription and can be collected.
// Listening for an event the object does not offer is a TypeError (a typo
// would otherwise wait forever in silence).
function nativeEvents (emitter) {
  emitter.on('newListener', onNewListener)
  emitter.on('removeListener', onRemoveListener)
}

// A PEM as tls.connect takes it (PEM text or Buffer), or a path; the core tells them apart.
function pem (name, value) {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string' || Buffer.isBuffer(value)) return value
  if (value instanceof Uint8Array) return Buffer.from(value)
  throw new TypeError(`tls.${name} must be a path, PEM text or a Buffer`)
}

// `tls`, `sasl` and `acl` as the native module takes them; the core checks the values.
function security (tls, sasl, acl) {
  const out = {}
  if (tls !== undefined && tls !== null) {
    if (typeof tls !== 'object') throw new TypeError('tls must be { ca, cert?, key?, verifyHostname? }')
    for (const key of Object.keys(tls)) {
      if (!['ca', 'cert', 'key', 'verifyHostname'].includes(key)) throw new TypeError(`unknown tls option ${key}: ca, cert, key, verifyHostname`)
    }
    if (tls.ca === undefined || tls.ca === null) throw new TypeError('tls.ca is required: the CA bundle to trust')
    out.tlsCa = pem('ca', tls.ca)
    out.tlsCert = pem('cert', tls.cert)
    out.tlsKey = pem('key', tls.key)
    if (tls.verifyHostname !== undefined && typeof tls.verifyHostname !== 'boolean') {
      throw new TypeError('tls.verifyHostname must be a boolean')
    }
    out.tlsVerifyHostname = tls.verifyHostname
  }
  if (sasl !== undefined && sasl !== null) {
    if (typeof sasl !== 'object') throw new TypeError("sasl must be { mechanism: 'DIGEST-MD5' | 'GSSAPI', ... }")
    // A misspelt key (`user`, `pass`) would otherwise connect without it and fail far from the typo.
    for (const key of Object.keys(sasl)) {
      if (!['mechanism', 'username', 'password', 'service', 'host', 'principal', 'keytab'].includes(key)) {
        throw new TypeError(`unknown sasl option ${key}: mechanism, username, password, service, host, principal, keytab`)
      }
    }
    out.saslMechanism = requireString('sasl.mechanism', sasl.mechanism)
    for (const key of ['username', 'service', 'host', 'principal', 'keytab']) {
      if (sasl[key] !== undefined) requireString(`sasl.${key}`, sasl[key])
    }
    out.saslUsername = sasl.username
    out.saslService = sasl.service
    out.saslHost = sasl.host
    out.saslPrincipal = sasl.principal
    out.saslKeytab = sasl.keytab
    if (sasl.password !== undefined) {
      if (typeof sasl.password !== 'string' && !Buffer.isBuffer(sasl.password)) {
        throw new TypeError('sasl.password must be a string or a Buffer')
      }
      out.saslPassword = Buffer.from(sasl.password)
    }
  }
  if (typeof acl === 'string') {
    out.aclPolicy = acl
  } else if (Array.isArray(acl) || (acl !== null && typeof acl === 'object')) {
    // One entry is a list of one, as in Python.
    out.aclEntries = (Array.isArray(acl) ? acl : [acl]).map((entry) => {
      if (entry === null || typeof entry !== 'object') throw new TypeError('acl entries must be { perms, scheme, id }')
      const { perms, scheme, id } = entry
      if (typeof perms === 'number' && !Number.isInteger(perms)) {
        throw new TypeError(`acl perms ${perms} is not an integer: a bitmask from 1 (read) to 31 (all), or letters of rwcda`)
      }
      if (typeof perms !== 'string' && typeof perms !== 'number') throw new TypeError('acl perms must be letters or a number')
      return { perms: String(perms), scheme: requireString('acl scheme', scheme), id: requireString('acl id', id) }
    })
  } else if (acl !== undefined && acl !== null) {
    throw new TypeError("acl must be 'open', 'creator', 'creator-world-read' or [{ perms, scheme, id }]")
  }
  return out
}

class Client extends EventEmitter {
  /**
   * Connects to `connectString` ("h1:2181,h2:2181/chroot"). Rejects with
   * CONNECTION_LOSS when no server answers within connectTimeoutMs.
   */
  static async connect (connectString, options = {}) {
    requireString('connectString', connectString)
    if (options === null || typeof options !== 'object') throw new TypeError('options must be an object')
    const { sessionTimeoutMs, connectTimeoutMs, auth, identity, tls, sasl, acl } = options
    for (const [name, value] of [['sessionTimeoutMs', sessionTimeoutMs], ['connectTimeoutMs', connectTimeoutMs]]) {
      if (value !== undefined && typeof value !== 'number') throw new TypeError(`${name} must be a number`)
    }
    if (identity !== undefined) requireString('identity', identity)
    let authScheme, authCredentials
    if (auth !== undefined && auth !== null) {
      if (!Array.isArray(auth) || auth.length !== 2) throw new TypeError('auth must be [scheme, credentials]')
      authScheme = requireString('auth scheme', auth[0])
      authCredentials = requireString('auth credentials', auth[1])
    }
    const handle = await call(() => native.connect(connectString, {
      sessionTimeoutMs, connectTimeoutMs, authScheme, authCredentials, identity, ...security(tls, sasl, acl),
    }))
    return new Client(handle)
  }

  constructor (handle) {
    super()
    if (!(handle instanceof native.NativeClient)) throw new TypeError('use Client.connect(...)')
    this._native = handle
    // An open client keeps the process alive, like a socket; unref() lets it exit.
    this._keepAlive = setInterval(() => {}, 0x7fffffff)
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

  /** Asks the server for this session's identities now. */
  whoami () { return call(() => this._native.whoami()) }

  unref () { if (this._keepAlive) this._keepAlive.unref(); return this }
  ref () { if (this._keepAlive) this._keepAlive.ref(); return this }

  writeLock (dir) { return new WriteLock(this, dir) }
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

  /** Ends the session: locks released, offers withdrawn, latches closed. Closing twice is harmless. */
  async close () {
    try {
      await call(() => this._native.close())
    } finally {
      if (this._keepAlive) clearInterval(this._keepAlive)
      this._keepAlive = null
    }
  }

  async [asyncDispose] () { await this.close() }
}

// The scope of the async flow inside a `withLock`: { owner, active }. Async work started inside
// carries the store along (timers, emitters): the scope ends with its outermost `withLock`, and
// from then on such work acquires as holders of their own, not as the finished scope (a timer
// started in a scope made every later tick reentrant with the others: found by a review).
const flowScope = new AsyncLocalStorage()

function activeScope () {
  const scope = flowScope.getStore()
  return scope !== undefined && scope.active ? scope : undefined
}

function scopeOwner () { return activeScope()?.owner }

// A hold taken inside a scope by a plain acquire belongs to the scope: once the scope ended
// nobody else could release it (a plain release never ends a scope's hold), so the scope's end
// releases what it still holds.
async function endScope (scope) {
  scope.active = false
  for (const lock of scope.locks) {
    while (lock._native.releasesOwed(scope.owner) > 0) {
      try {
        await lock._native.unlockAs(scope.owner)
      } catch {
        break // lost or closed: nothing left to release
      }
    }
  }
}

class Lock extends EventEmitter {
  constructor (handle) {
    super()
    this._native = handle
    nativeEvents(this)
  }

  [DISPATCH] (event) { deliver(this, event.type.toLowerCase(), [event]) }

  /**
   * Resolves true once held, false if timeoutMs passed (nothing left behind). Outside a
   * `withLock` scope every acquire is a holder of its own; inside one, the scope's flow holds.
   */
  async acquire (options) {
    const timeoutMs = timeoutOf(options)
    const scope = activeScope()
    const got = (await call(() => this._native.lock(true, timeoutMs, scope?.owner))) !== null
    if (got && scope) scope.locks.add(this)
    return got
  }

  /** One request when the lock is visibly held. */
  async tryAcquire () {
    const scope = activeScope()
    const got = (await call(() => this._native.lock(false, undefined, scope?.owner))) !== null
    if (got && scope) scope.locks.add(this)
    return got
  }

  /**
   * Resolves once the server confirmed the delete (last hold). Inside a scope that holds this
   * lock: one of the scope's holds; otherwise the oldest hold taken outside any scope (a scope's
   * holds end with the scope, never through a plain release).
   */
  async release () {
    const owner = scopeOwner()
    // By what the scope owes, not by `holdCount`, which says 0 once the server has been silent
    // past the grace (a paused process): the release would then end another flow's hold.
    const own = owner !== undefined && this._native.releasesOwed(owner) > 0
    await call(() => own ? this._native.unlockAs(owner) : this._native.unlock())
  }

  /**
   * Runs `fn` holding the lock and releases it after, also when `fn` throws. `fn` and the async
   * work it starts are one holder while it runs (a scope, like a thread in Java): a nested
   * `withLock` or `acquire` of it is reentrant, the write holder's read request is a downgrade,
   * and the read holder's write request rejects with WOULD_DEADLOCK instead of waiting for
   * itself. What the scope still holds when the outermost `withLock` ends is released. Rejects with TIMEOUT if timeoutMs passed before the lock came; with `fn`'s error if
   * it threw (also when the release failed then); with the release's error if the lock was lost
   * while `fn` ran.
   */
  async withLock (fn, options) {
    if (typeof fn !== 'function') throw new TypeError(`withLock needs a function, got ${typeof fn}`)
    const timeoutMs = timeoutOf(options)
    const outer = activeScope()
    const scope = outer ?? { owner: native.newOwner(), active: true, locks: new Set() }
    const token = await call(() => this._native.lock(true, timeoutMs, scope.owner))
    if (token === null) {
      if (scope !== outer) scope.active = false
      throw new ZkError('TIMEOUT', `the lock on ${this.dir} did not come within ${timeoutMs} ms`)
    }
    let result
    try {
      result = await flowScope.run(scope, fn)
    } catch (err) {
      await call(() => this._native.unlockAs(scope.owner)).catch(() => {})
      if (scope !== outer) await endScope(scope)
      throw err
    }
    try {
      await call(() => this._native.unlockAs(scope.owner))
    } finally {
      if (scope !== outer) await endScope(scope)
    }
    return result
  }

  /** The czxid of our lock node while held; inside a scope, the scope's hold's if it has one. */
  get fencingToken () {
    const owner = scopeOwner()
    const own = owner === undefined ? null : this._native.fencingTokenOf(owner)
    return own ?? this._native.fencingToken()
  }

  get isHeld () { return this._native.isHeld() }
  /** Holders through this object; inside a scope, the scope's hold count. */
  get holdCount () {
    const owner = scopeOwner()
    return owner === undefined ? this._native.holdCount() : this._native.holdCountOf(owner)
  }

  get dir () { return this._native.dir() }

  async participants () { return call(() => this._native.participants()) }

  /** Releases every hold of this object, whoever holds it (scopes' too). */
  async [asyncDispose] () { await call(() => this._native.unlockAll()) }
}

class WriteLock extends Lock {
  constructor (client, dir) {
    const handle = requireClient(client)
    requireString('dir', dir)
    super(now(() => new native.NativeLock(handle, dir)))
  }
}

class ReadWriteLock {
  constructor (client, dir) {
    const handle = requireClient(client)
    requireString('dir', dir)
    const rw = now(() => new native.NativeReadWriteLock(handle, dir))
    this.readLock = new Lock(rw.readLock())
    this.writeLock = new Lock(rw.writeLock())
  }

  /** Releases every hold of both sides (the write side first: a downgraded hold ends last). */
  async [asyncDispose] () {
    await this.writeLock[asyncDispose]()
    await this.readLock[asyncDispose]()
  }
}

function payload (data) {
  if (typeof data === 'string') return Buffer.from(data, 'utf8')
  if (Buffer.isBuffer(data)) return data
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  throw new TypeError(`queue items are Buffer, Uint8Array or string, got ${typeof data}`)
}

class DistributedQueue {
  constructor (client, dir) {
    const handle = requireClient(client)
    requireString('dir', dir)
    this._native = now(() => new native.NativeQueue(handle, dir))
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
    return call(() => this._native.take(timeoutMs))
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
    return call(() => this._native.takeMany(max, timeoutMs))
  }

  async size () { return call(() => this._native.size()) }

  /** Deletes this consumer's claim marker; the queue stays usable. */
  async close () { await call(() => this._native.close()) }
  async [asyncDispose] () { await this.close() }
}

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
    this.data = handle.data()
    this.name = handle.name()
    this.priority = handle.priority()
    this.deliveryCount = handle.deliveryCount()
  }

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
  get deadLetterPath () { return this._native.deadLetterPath() }

  /** Resolves to the job's node path; `{ priority }` 0-999, lower first (default 100). */
  async offer (data, options) { return call(() => this._native.offer(payload(data), priorityOf(options))) }
  /** One transaction per batch under the server's packet limit. */
  async offerAll (items, options) {
    if (!Array.isArray(items)) throw new TypeError('items must be an array')
    return call(() => this._native.offerAll(items.map(payload), priorityOf(options)))
  }

  /** The next job, or null once timeoutMs passed. */
  async next (options) {
    const timeoutMs = timeoutOf(options)
    const handle = await call(() => this._native.consume(timeoutMs))
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

// A value as a TypeError names it: `2n` is a bigint, not the number 2.
function describe (value) {
  return typeof value === 'bigint' ? `the bigint ${value}n` : `${typeof value} ${String(value)}`
}

/** One held lease of a Semaphore: its fencing token, its node, its release (once). */
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
    const handles = await call(() => this._native.acquire(count, timeoutMs))
    return handles === null ? null : handles.map((h) => new Lease(h))
  }

  /** Releases the oldest lease this object holds (NOT_OWNER when it holds none). */
  async release () { await call(() => this._native.release()) }
  async releaseAll () { await call(() => this._native.releaseAll()) }
  /** Every process's lease nodes on the server now. */
  async leaseNodes () { return call(() => this._native.leaseNodes()) }
  async [asyncDispose] () { await this.releaseAll() }
}

class LeaderElectionSupport extends EventEmitter {
  constructor (client, root, hostName) {
    super()
    const handle = requireClient(client)
    requireString('root', root)
    if (hostName === undefined) hostName = client.identity
    requireString('hostName', hostName)
    this._native = now(() => new native.NativeElection(handle, root, hostName))
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
    return call(() => this._native.awaitLeadership(timeoutMs))
  }

  async [asyncDispose] () { await this.stop() }
}

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
    return call(() => this._native.awaitLeadership(timeoutMs))
  }

  /** The current leader, or null when nobody takes part. */
  async leader () { return call(() => this._native.leader()) }
  /** Every participant in line, the leader first: `{ id, node, isLeader }`. */
  async participants () { return call(() => this._native.participants()) }
  async [asyncDispose] () { await this.close() }
}

/** Holds waiters back while it is up (Curator's DistributedBarrier: up while its node exists). */
class Barrier {
  constructor (client, path) {
    const handle = requireClient(client)
    requireString('path', path)
    this._native = now(() => new native.NativeBarrier(handle, path))
  }

  get path () { return this._native.path() }
  async set () { await call(() => this._native.set()) }
  /** Takes the barrier down, releasing every waiter. */
  async remove () { await call(() => this._native.remove()) }
  async isSet () { return call(() => this._native.isSet()) }
  /** true once the barrier is down; false if timeoutMs passed first (0: a check). */
  async wait (options) {
    const timeoutMs = timeoutOf(options)
    return call(() => this._native.wait(timeoutMs))
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
  get memberCount () { return this._native.memberCount() }
  /** This member's node, there while it is in. */
  get nodePath () { return this._native.nodePath() }
  /** true once memberCount members are in; false if timeoutMs passed first (this member withdrawn). */
  async enter (options) {
    const timeoutMs = timeoutOf(options)
    return call(() => this._native.enter(timeoutMs))
  }

  /** true once every member left; false if timeoutMs passed first (this member's node gone anyway). */
  async leave (options) {
    const timeoutMs = timeoutOf(options)
    return call(() => this._native.leave(timeoutMs))
  }

  async members () { return call(() => this._native.members()) }
  async isReady () { return call(() => this._native.isReady()) }
}

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
const frozen = (object) => Object.freeze(object)

/**
 * A 64-bit counter at `path` (Curator's DistributedAtomicLong node: 8 bytes, big-endian), values
 * as bigint. Every update is a versioned write repeated until it applies: N increments from any
 * clients end at exactly N; overflow wraps as Java's long. A missing or empty node reads as 0n,
 * another length rejects with INVALID_ARGUMENT. CONNECTION_LOSS: the connection dropped while a
 * write was on its way and the value changed meanwhile, so that update may or may not have
 * applied (never twice).
 */
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

// A node's data as the native module takes it: a Buffer (a Uint8Array is viewed, a string is
// UTF-8); the core decides the size.
function dataOf (name, data) {
  if (data === undefined || data === null) return Buffer.alloc(0)
  if (typeof data === 'string') return Buffer.from(data, 'utf8')
  if (Buffer.isBuffer(data)) return data
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  throw new TypeError(`${name} must be a Buffer, Uint8Array or string, got ${typeof data}`)
}

function optionsOf (options, like) {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object') throw new TypeError(`options must be an object like ${like}`)
  return options
}

// A cached node as a listener and get() give it: `name` is the last part of the path (a
// child's name, a member's id); the object and its stat are frozen (the Buffer is the caller's).
function nodeOf (node) {
  if (node === null || node === undefined) return null
  node.name = node.path.slice(node.path.lastIndexOf('/') + 1)
  Object.freeze(node.stat)
  return Object.freeze(node)
}

// What every cache and group member listener receives: the node of CREATED, CHANGED (as it is
// now) and DELETED (as it was), the old node of CHANGED.
function cacheEventOf (type, node, old) {
  const event = { type }
  if (node !== null && node !== undefined) event.node = nodeOf(node)
  if (old !== null && old !== undefined) event.old = nodeOf(old)
  return Object.freeze(event)
}

/**
 * A local copy of part of the tree kept in sync by one watch; NodeCache, ChildrenCache and
 * TreeCache say which part. `start()` resolves once the first load is in the copy; `get`,
 * `has`, `snapshot`, `children` and `size` then answer from memory. After every reconnect and
 * new session the part is read again and exactly the difference is emitted (a node deleted and
 * created again meanwhile is 'deleted' then 'created'). Emits 'created', 'changed' (with `old`),
 * 'deleted', 'initialized', 'suspended', 'reconnected', 'lost', and 'event' for each. Nothing is
 * created: a missing node is an empty cache until it appears. `close()` stops following and
 * frees the copy (final).
 */
class Cache extends EventEmitter {
  constructor (handle) {
    super()
    if (!(handle instanceof native.NativeCache)) throw new TypeError('use NodeCache, ChildrenCache or TreeCache')
    this._native = handle
    nativeEvents(this)
  }

  [DISPATCH] (event) {
    deliver(this, 'event', [event])
    deliver(this, event.type.toLowerCase(), [event])
  }

  get path () { return this._native.path() }
  get isInitialized () { return this._native.isInitialized() }
  /** Resolves once the first load is in the copy; CLOSED once closed. Takes effect at the call. */
  async start () { await call(() => this._native.start()) }
  /** Resolves once the first load is in; rejects with TIMEOUT after timeoutMs. */
  async awaitInitialized (options) {
    const timeoutMs = timeoutOf(options)
    await call(() => this._native.awaitInitialized(timeoutMs))
  }

  /** Stops following and frees the copy, at once; idempotent, final. */
  close () { this._native.close() }
  /** The cached node at `path`, or null. */
  get (path) { return nodeOf(this._native.get(requireString('path', path))) }
  has (path) { return typeof path === 'string' && this._native.has(path) }
  /** Every cached node, sorted by path. */
  snapshot () { return this._native.snapshot().map(nodeOf) }
  /** The names of the cached children of `path` (default: the cache's path), sorted. */
  children (path) {
    return this._native.childrenOf(path === undefined ? this._native.path() : requireString('path', path))
  }

  /** How many nodes are cached. */
  get size () { return this._native.size() }
  async [asyncDispose] () { this.close() }
}

/** A cache of the node at `path` alone (Curator's NodeCache). */
class NodeCache extends Cache {
  constructor (client, path) {
    const handle = requireClient(client)
    requireString('path', path)
    super(now(() => native.NativeCache.node(handle, path)))
  }

  /** The node as cached now, null while it does not exist. */
  get node () { return this.get(this.path) }
}

/** A cache of the children of `path` with their data, never of `path` itself (Curator's PathChildrenCache). */
class ChildrenCache extends Cache {
  constructor (client, path) {
    const handle = requireClient(client)
    requireString('path', path)
    super(now(() => native.NativeCache.children(handle, path)))
  }
}

/** A cache of the subtree at `path`, `maxDepth` levels deep (default: all; 0: the node alone) (Curator's TreeCache). */
class TreeCache extends Cache {
  constructor (client, path, options) {
    const handle = requireClient(client)
    requireString('path', path)
    const { maxDepth } = optionsOf(options, '{ maxDepth }')
    let depth
    if (maxDepth !== undefined && maxDepth !== null) {
      if (!Number.isInteger(maxDepth)) throw new TypeError(`maxDepth must be an integer number, got ${describe(maxDepth)}`)
      depth = maxDepth
    }
    super(now(() => native.NativeCache.tree(handle, path, depth)))
  }
}

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

Client.prototype[KIND] = 'Client'
Lock.prototype[KIND] = 'Lock'
Semaphore.prototype[KIND] = 'Semaphore'
LeaderElectionSupport.prototype[KIND] = 'LeaderElectionSupport'
LeaderLatch.prototype[KIND] = 'LeaderLatch'
SharedCount.prototype[KIND] = 'SharedCount'
SharedCount.prototype[EVENT_OF] = versionedOf
NodeCache.prototype[KIND] = 'NodeCache'
ChildrenCache.prototype[KIND] = 'ChildrenCache'
TreeCache.prototype[KIND] = 'TreeCache'
Cache.prototype[EVENT_OF] = cacheEventOf
GroupMember.prototype[KIND] = 'GroupMember'
GroupMember.prototype[EVENT_OF] = cacheEventOf

module.exports = {
  Client,
  Lock,
  WriteLock,
  ReadWriteLock,
  DistributedQueue,
  WorkQueue,
  Job,
  Semaphore,
  Lease,
  LeaderElectionSupport,
  LeaderLatch,
  Barrier,
  DoubleBarrier,
  SharedCount,
  DistributedAtomicLong,
  Cache,
  NodeCache,
  ChildrenCache,
  TreeCache,
  PersistentNode,
  GroupMember,
  ZkError,
  ERROR_CODES,
  LOCK_EVENTS: Object.freeze(NAMES.lockEvents),
  ELECTION_EVENTS: Object.freeze(NAMES.electionEvents),
  LATCH_EVENTS: Object.freeze(NAMES.latchEvents),
  CACHE_EVENTS: Object.freeze(NAMES.cacheEvents),
  CONNECTION_STATES: Object.freeze(NAMES.connectionStates),
}
