'use strict'
// NodeCache, ChildrenCache and TreeCache, and the nodes and events they give.

const { DISPATCH, EVENT_OF, EventEmitter, KIND, asyncDispose, call, deliver, describe, native, nativeEvents, now, optionsOf, requireClient, requireString, timeoutOf } = require('./base.js')

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

NodeCache.prototype[KIND] = 'NodeCache'
ChildrenCache.prototype[KIND] = 'ChildrenCache'
TreeCache.prototype[KIND] = 'TreeCache'
Cache.prototype[EVENT_OF] = cacheEventOf

module.exports = { Cache, ChildrenCache, NodeCache, TreeCache, cacheEventOf }
