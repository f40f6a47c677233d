'use strict'
// An OpenTelemetry span around each wait of the library (a lock's or a semaphore's acquire, a
// queue's take, a work queue's consume, an election's or a latch's awaitLeadership, a barrier's
// wait, a double barrier's enter and leave), made here in JavaScript so that its parent is the
// caller's active context: a slow request shows where it waited.
//
// Off unless the application registered a tracer provider globally. @opentelemetry/api is an
// optional peer dependency: the first wait tries to require it, once (never require('zkrecipes')
// itself); without it every wait costs one comparison. With it, a wait asks the API's global
// proxy provider for its delegate: none registered, no tracer is asked for and no span is made.
// The application's own copy of the API is the one found (its registration is global anyway).
//
// Span names and the outcome of a wait that got what it waited for come from the core
// (native.waitSpans()). A span carries `path`, `kind` (as the core names it: `lock`, `read`,
// `multi`, `single`, `enter`, `lease`, …), `outcome` (that word, or `timeout`, `cancelled`, `error`),
// `fencing_token` when the wait got one, and `waited_ms`; an error that went to the caller sets
// its status to ERROR and is recorded on it.

const { native } = require('./base.js')
const { version } = require('../package.json')

const API = '@opentelemetry/api'
const TRACER_NAME = 'zkrecipes'

// What a class answers for the `path` of its waits' spans (asked only when a span is made).
const WAIT_PATH = Symbol('waitPath')
// Which acquire a lock's is (`waitSpan('read_lock.acquire')`, …): its span's name and kind.
const WAIT_CALL = Symbol('waitCall')

const SPANS = new Map(native.waitSpans().map((span) => [span.call, Object.freeze(span)]))

/** Every wait with a span: `{ call, name, success, kind }`, in the core's order. */
const WAIT_SPANS = Object.freeze([...SPANS.values()])

/** The span of the recipe call `call` ('lock.acquire'): looked up when a recipe module loads. */
function waitSpan (call) {
  const span = SPANS.get(call)
  if (span === undefined) throw new Error(`zkrecipes: the core names no wait '${call}'`)
  return span
}

// undefined: not tried yet; null: not installed (or broken: said once, then off for good).
let api
// The tracer of the provider last found registered, with that provider.
let knownProvider = null
let knownTracer = null

function loadApi () {
  try {
    api = require(API)
  } catch (err) {
    api = null
    // The package missing is the usual case; anything else is a broken installation of it,
    // said once: waits go on without spans, never fail for it.
    if (err?.code !== 'MODULE_NOT_FOUND' || !String(err.message).startsWith(`Cannot find module '${API}'`)) {
      process.emitWarning(`zkrecipes: ${API} could not be loaded; waits have no spans: ${err}`, { code: 'ZKRECIPES_NO_TRACING' })
    }
  }
}

/** The library's tracer on the globally registered provider; null when none is. */
function tracer () {
  if (api === undefined) loadApi()
  if (api === null) return null
  // The API's global is always its proxy; a registration gives the proxy a delegate.
  const proxy = api.trace.getTracerProvider()
  const provider = proxy.getDelegate()
  if (provider === knownProvider) return knownTracer
  // undefined while the proxy has no delegate: no tracer is made then, not even a no-op one.
  const made = proxy.getDelegateTracer(TRACER_NAME, version)
  if (made === undefined) return null
  knownProvider = provider
  knownTracer = made
  return made
}

// OpenTelemetry's attribute values are numbers, strings and booleans: a token (an i64, a bigint
// here) is a number while it is exact, else its decimal string.
function attributeOf (token) {
  const number = Number(token)
  return Number.isSafeInteger(number) ? number : String(token)
}

// What every wait answers when its deadline passed, or its try found nothing.
const timedOut = (answer) => answer === null || answer === false || (Array.isArray(answer) && answer.length === 0)

// A lock's or a latch's answer is its fencing token; a boolean (a barrier, an election) is not.
const tokenItself = (answer) => (typeof answer === 'bigint' ? answer : null)

function ended (span, started, outcome) {
  span.setAttribute('outcome', outcome)
  span.setAttribute('waited_ms', Math.floor(performance.now() - started))
  span.end()
}

/**
 * `wait()`'s answer (a promise), inside a span named `span` when a tracer provider is
 * registered. `recipe[WAIT_PATH]` names what is waited for; `tokenOf(answer)` finds the fencing
 * token in an answer that got it (by default a bigint answer is one). `null`, `false` or an
 * empty array is a wait that timed out.
 */
async function traced (recipe, span, wait, tokenOf = tokenItself) {
  const found = tracer()
  if (found === null) return wait()
  const attributes = { path: recipe[WAIT_PATH], kind: span.kind }
  const made = found.startSpan(span.name, { attributes }, api.context.active())
  const started = performance.now()
  let answer
  try {
    answer = await wait()
  } catch (err) {
    // The core's INTERRUPTED: the caller stopped waiting, no error of the wait's.
    if (err?.code === 'INTERRUPTED') {
      ended(made, started, 'cancelled')
    } else {
      made.setAttribute('error.type', err?.code ?? err?.name ?? 'Error')
      if (err instanceof Error) made.recordException(err)
      made.setStatus({ code: api.SpanStatusCode.ERROR, message: String(err?.message ?? err) })
      ended(made, started, 'error')
    }
    throw err
  }
  if (timedOut(answer)) {
    ended(made, started, 'timeout')
  } else {
    const token = tokenOf(answer)
    if (token !== null && token !== undefined) made.setAttribute('fencing_token', attributeOf(token))
    ended(made, started, span.success)
  }
  return answer
}

module.exports = { WAIT_CALL, WAIT_PATH, WAIT_SPANS, traced, waitSpan }
