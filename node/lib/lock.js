'use strict'
// Lock, WriteLock, MultiLock and ReadWriteLock, with the async-flow scopes of withLock.

const { AsyncLocalStorage, DISPATCH, EventEmitter, KIND, ZkError, asyncDispose, call, deliver, native, nativeEvents, now, requireClient, requireString, timeoutOf } = require('./base.js')
const { WAIT_CALL, WAIT_PATH, traced, waitSpan } = require('./wait_spans.js')

// Every acquire of a lock or a multi-lock (acquire, tryAcquire, withLock): the token (a
// multi-lock's tokens), null if not obtained; inside the wait's span when tracing is on.
function locked (lock, blocking, timeoutMs, owner) {
  return traced(lock, lock[WAIT_CALL], () => call(() => lock._native.lock(blocking, timeoutMs, owner)))
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

// What a lock and a multi-lock share: acquire, release, `withLock` scopes, disposal. Lock
// takes these methods too (it is an EventEmitter, so it cannot extend this class).
class Owned {
  /**
   * Resolves true once held, false if timeoutMs passed (nothing left behind). Outside a
   * `withLock` scope every acquire is a holder of its own; inside one, the scope's flow holds.
   */
  async acquire (options) {
    const timeoutMs = timeoutOf(options)
    const scope = activeScope()
    const got = (await locked(this, true, timeoutMs, scope?.owner)) !== null
    if (got && scope) scope.locks.add(this)
    return got
  }

  /** One request when the lock is visibly held. */
  async tryAcquire () {
    const scope = activeScope()
    const got = (await locked(this, false, undefined, scope?.owner)) !== null
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
   * Runs `fn(fencingToken)` holding the lock (a multi-lock: `fn(fencingTokens)`) and releases it
   * after, also when `fn` throws. `fn` and the async
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
    const token = await locked(this, true, timeoutMs, scope.owner)
    if (token === null) {
      if (scope !== outer) scope.active = false
      throw new ZkError('TIMEOUT', `the lock on ${this._what} did not come within ${timeoutMs} ms`)
    }
    let result
    try {
      result = await flowScope.run(scope, fn, token)
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

  get isHeld () { return this._native.isHeld() }
  /** Holders through this object; inside a scope, the scope's hold count. */
  get holdCount () {
    const owner = scopeOwner()
    return owner === undefined ? this._native.holdCount() : this._native.holdCountOf(owner)
  }

  /** Releases every hold of this object, whoever holds it (scopes' too). */
  async [asyncDispose] () { await call(() => this._native.unlockAll()) }
}

class Lock extends EventEmitter {
  constructor (handle) {
    super()
    this._native = handle
    nativeEvents(this)
  }

  [DISPATCH] (event) { deliver(this, event.type.toLowerCase(), [event]) }

  /** The czxid of our lock node while held; inside a scope, the scope's hold's if it has one. */
  get fencingToken () {
    const owner = scopeOwner()
    const own = owner === undefined ? null : this._native.fencingTokenOf(owner)
    return own ?? this._native.fencingToken()
  }

  get dir () { return this._native.dir() }
  get _what () { return this.dir }
  get [WAIT_PATH] () { return this._native.dir() }

  async participants () { return call(() => this._native.participants()) }
}

for (const [name, property] of Object.entries(Object.getOwnPropertyDescriptors(Owned.prototype))) {
  if (name !== 'constructor') Object.defineProperty(Lock.prototype, name, property)
}
Object.defineProperty(Lock.prototype, asyncDispose, Object.getOwnPropertyDescriptor(Owned.prototype, asyncDispose))

/**
 * Exclusive locks on several paths held together, all or none (Curator's InterProcessMultiLock,
 * interoperable with it). Taken in the order of their paths, sorted, whatever order they were
 * given in: two multi-locks over the same paths never wait for each other in a circle. On a
 * timeout, a failure or a cancel the locks already taken are given back before the answer;
 * release deletes the nodes last-taken first. The client's events tell a connection's loss.
 */
class MultiLock extends Owned {
  constructor (client, dirs) {
    super()
    const handle = requireClient(client)
    if (!Array.isArray(dirs)) throw new TypeError(`dirs must be an array of paths, got ${typeof dirs}`)
    // By index: forEach skips the holes of a sparse array, which the addon then refused obscurely.
    for (let i = 0; i < dirs.length; i++) requireString(`dirs[${i}]`, dirs[i])
    this._native = now(() => new native.NativeMultiLock(handle, dirs))
  }

  /** One czxid per path, in the order given, while held; inside a scope, the scope's. */
  get fencingTokens () {
    const owner = scopeOwner()
    const own = owner === undefined ? null : this._native.fencingTokensOf(owner)
    return own ?? this._native.fencingTokens()
  }

  get dirs () { return this._native.dirs() }
  get _what () { return this.dirs.join(', ') }
  get [WAIT_PATH] () { return this._native.observedPath() }
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
    Object.defineProperty(this.readLock, WAIT_CALL, { value: waitSpan('read_lock.acquire') })
    Object.defineProperty(this.writeLock, WAIT_CALL, { value: waitSpan('write_lock.acquire') })
  }

  /** Releases every hold of both sides (the write side first: a downgraded hold ends last). */
  async [asyncDispose] () {
    await this.writeLock[asyncDispose]()
    await this.readLock[asyncDispose]()
  }
}

Lock.prototype[KIND] = 'Lock'
MultiLock.prototype[KIND] = 'MultiLock'
Lock.prototype[WAIT_CALL] = waitSpan('lock.acquire')
MultiLock.prototype[WAIT_CALL] = waitSpan('multi_lock.acquire')

module.exports = { Lock, MultiLock, ReadWriteLock, WriteLock }
