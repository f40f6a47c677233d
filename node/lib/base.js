'use strict'
// What every recipe module shares: the native addon, ZkError and the error conversion, the
// argument checks of JavaScript types, and the native event subscription of an EventEmitter.

const { AsyncLocalStorage } = require('node:async_hooks')
const { EventEmitter } = require('node:events')
const native = require('../loader.js').load()

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

// By the native handle, not `instanceof Client`: the recipes' modules need no Client module.
function requireClient (client) {
  if (client === null || typeof client !== 'object' || !(client._native instanceof native.NativeClient)) {
    throw new TypeError('client must be a zkrecipes Client')
  }
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
  ServiceDiscovery: new Set(['event', ...lower(NAMES.discoveryEvents)]),
  ServiceCache: new Set(['event', ...lower(NAMES.serviceCacheEvents)]),
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

function payload (data) {
  if (typeof data === 'string') return Buffer.from(data, 'utf8')
  if (Buffer.isBuffer(data)) return data
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  throw new TypeError(`queue items are Buffer, Uint8Array or string, got ${typeof data}`)
}

// A value as a TypeError names it: `2n` is a bigint, not the number 2.
function describe (value) {
  return typeof value === 'bigint' ? `the bigint ${value}n` : `${typeof value} ${String(value)}`
}

/** One held lease of a Semaphore: its fencing token, its node, its release (once). */
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

const frozen = (object) => Object.freeze(object)

// A Client's set of functions to call once it is closed (what lives exactly as long as the
// client, as an OpenTelemetry adapter): their modules need no Client module, as above.
const AT_CLOSE = Symbol('atClose')

/**
 * A 64-bit counter at `path` (Curator's DistributedAtomicLong node: 8 bytes, big-endian), values
 * as bigint. Every update is a versioned write repeated until it applies: N increments from any
 * clients end at exactly N; overflow wraps as Java's long. A missing or empty node reads as 0n,
 * another length rejects with INVALID_ARGUMENT. CONNECTION_LOSS: the connection dropped while a
 * write was on its way and the value changed meanwhile, so that update may or may not have
 * applied (never twice).
 */

module.exports = { AT_CLOSE, AsyncLocalStorage, DISPATCH, ERROR_CODES, EVENT_OF, EventEmitter, KIND, NAMES, ZkError, asyncDispose, call, dataOf, deliver, describe, frozen, native, nativeEvents, now, optionsOf, payload, requireClient, requireString, timeoutOf }
