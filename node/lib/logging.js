'use strict'
// The library's events for JavaScript: each is published on diagnostics_channel, one channel per
// logger ('zkrecipes:lock' for the logger 'zkrecipes.lock'), as { level, logger, message, fields,
// dropped }, and handed to the process's logger if one is configured. The events carry no client:
// the channels and the logger are the process's.
//
// Cheap when nobody listens: the core hands a logger's events to JavaScript only while its
// channel has subscribers or a logger is configured (at the level setLogLevel chose, 'info' by
// default); otherwise its level in the core is 'off' and an event costs one comparison there.
// Whether a channel has subscribers is looked at on load, when a client connects, when the
// logger or a level is set, and every second (diagnostics_channel tells nobody of a new one).
//
// The core's levels and its delivery are the process's, and each worker thread has channels of
// its own: the main thread's copy of this module drives them, and the events of every thread's
// clients are published on the main thread's channels and logger (a worker's copy forwards
// nothing and sets no level, so that two threads never take turns at the core's levels).

const dc = require('node:diagnostics_channel')
const { isMainThread } = require('node:worker_threads')
const { NAMES, call, native, timeoutOf } = require('./base.js')

const LOGGERS = Object.freeze([...NAMES.loggers])
// The logger of the core's warning that events were dropped.
const ROOT_LOGGER = NAMES.rootLogger
// 'zkrecipes.work_queue' -> 'zkrecipes:work_queue': the package's name, then the recipe.
const channelOf = (logger) => logger.replace('.', ':')
const LOG_CHANNELS = Object.freeze(LOGGERS.map(channelOf))
// Held here, so that diagnostics_channel keeps each channel (and its subscribers) for good.
const CHANNELS = new Map(LOGGERS.map((logger) => [logger, dc.channel(channelOf(logger))]))

// What a logger forwards while somebody listens.
const wanted = new Map(LOGGERS.map((logger) => [logger, 'info']))
// The configured logger, adapted: (message) => void, never throwing.
let handOver = null
let watching = null
const flushes = new Map()
let lastFlush = 0

/** Sets each logger's level in the core from who listens now. */
function refreshLogLevels () {
  if (!isMainThread) return
  for (const [logger, channel] of CHANNELS) {
    native.setLogLevel(logger, handOver || channel.hasSubscribers ? wanted.get(logger) : 'off')
  }
}

// Called at load and by every Client.connect: levels right for the client's first events, and a
// look every second (unref'd: it never keeps the process alive), which also finds the
// subscribers of a process whose clients are all in worker threads.
function watchLogLevels () {
  refreshLogLevels()
  if (!watching && isMainThread) {
    watching = setInterval(refreshLogLevels, 1000)
    watching.unref()
  }
}

// Records arrive one at a time on the JavaScript thread (bindings/node/src/log.rs); this
// must never throw (a throw here would be the process's uncaught exception). A subscriber that
// throws is diagnostics_channel's business: it reports it as an uncaught exception on the next
// tick, and the other subscribers still get the message.
function receive (message) {
  if (typeof message === 'number') {
    const flushed = flushes.get(message)
    flushes.delete(message)
    if (flushed) flushed()
    return
  }
  Object.freeze(message.fields)
  Object.freeze(message)
  if (message.logger === ROOT_LOGGER) {
    // The core's warning that events were dropped, of any logger: every subscriber hears it.
    for (const channel of CHANNELS.values()) if (channel.hasSubscribers) channel.publish(message)
  } else {
    const channel = CHANNELS.get(message.logger)
    if (channel && channel.hasSubscribers) channel.publish(message)
  }
  if (handOver) handOver(message)
}

if (isMainThread) native.forwardLogs(receive)
watchLogLevels()

// A logger's method for a level, most fitting first. console.trace prints a stack trace, so a
// console-like logger gets trace records through debug.
const METHODS = {
  error: ['error', 'log', 'info'],
  warn: ['warn', 'log', 'info'],
  info: ['info'],
  debug: ['debug', 'log', 'info'],
  trace: ['debug', 'log', 'info'],
}
const STRUCTURED_METHODS = { ...METHODS, trace: ['trace', 'debug', 'info'] }

function describe (value) {
  return value === null ? 'null' : typeof value
}

// pino and bunyan (a `child` method and `levels`) take (fields, message); console, winston and
// the rest take (message, fields). The fields name the logger too: the process has one logger
// for every recipe.
function adapt (logger) {
  if ((typeof logger !== 'object' && typeof logger !== 'function') || logger === null || typeof logger.info !== 'function') {
    throw new TypeError(`logger must be an object with an info() method (console, pino, winston, ...), got ${describe(logger)}`)
  }
  const structured = typeof logger.child === 'function' && logger.levels !== undefined
  const methods = structured ? STRUCTURED_METHODS : METHODS
  let warned = false
  return (message) => {
    try {
      const name = methods[message.level].find((m) => typeof logger[m] === 'function')
      const fields = { logger: message.logger, ...message.fields }
      if (message.dropped > 0) fields.dropped = message.dropped
      if (structured) logger[name](fields, message.message)
      else logger[name](message.message, fields)
    } catch (err) {
      // The logger's own failure: its records are skipped, never the delivery to the others.
      if (!warned) {
        warned = true
        process.emitWarning(`the logger configured for zkrecipes threw; its records are skipped: ${err}`, {
          code: 'ZKRECIPES_LOGGER_THREW',
        })
      }
    }
  }
}

// A level's name as the core reads it ('warning' and any case accepted), or a RangeError.
function levelOf (level) {
  if (typeof level !== 'string') throw new TypeError(`level must be a string ('error', 'warn', 'info', 'debug', 'trace' or 'off'), got ${describe(level)}`)
  try {
    return native.logLevelName(level)
  } catch (err) {
    throw new RangeError(err.message, { cause: err })
  }
}

// 'zkrecipes' (every logger), a logger's name or its channel's name, as the loggers it names.
function loggersOf (logger) {
  if (typeof logger !== 'string') throw new TypeError(`logger must be a string, got ${describe(logger)}`)
  if (logger === 'zkrecipes') return LOGGERS
  const at = Math.max(LOGGERS.indexOf(logger), LOG_CHANNELS.indexOf(logger))
  if (at < 0) throw new RangeError(`no logger is named ${JSON.stringify(logger)}; the loggers are 'zkrecipes' (all of them), ${LOGGERS.join(', ')}`)
  return [LOGGERS[at]]
}

/**
 * The level of the events handed to JavaScript while somebody listens: 'error', 'warn', 'info'
 * (the default), 'debug', 'trace' or 'off', for every logger or one ('zkrecipes.lock' or its
 * channel 'zkrecipes:lock').
 */
function setLogLevel (level, logger = 'zkrecipes') {
  const name = levelOf(level)
  for (const one of loggersOf(logger)) wanted.set(one, name)
  refreshLogLevels()
}

/**
 * The level at which the core hands `logger`'s events to JavaScript now: 'off' while its channel
 * has no subscriber and no logger is configured.
 */
function activeLogLevel (logger) {
  if (logger === 'zkrecipes') throw new RangeError("activeLogLevel takes one logger, e.g. 'zkrecipes.lock'")
  return native.activeLogLevel(loggersOf(logger)[0])
}

/**
 * The process's logger for the library's events ({ logger }: console-like or pino-like; null
 * removes it) and their level ({ level }: as setLogLevel's, for every logger).
 */
function configureLogging (options) {
  if (options === null || typeof options !== 'object') throw new TypeError('configureLogging takes an object like { logger, level }')
  const { logger, level } = options
  const adapted = logger === undefined || logger === null ? null : adapt(logger)
  const name = level === undefined ? undefined : levelOf(level)
  if (logger !== undefined) handOver = adapted
  if (name !== undefined) for (const one of LOGGERS) wanted.set(one, name)
  watchLogLevels()
}

/**
 * Resolves true once every event emitted before the call has been published and handed to the
 * logger; false if `timeoutMs` (default 5000) passed first. For a shutdown or a test.
 */
async function flushLogs (options) {
  const timeoutMs = timeoutOf(options) ?? 5000
  // A worker's events go to the main thread's copy: the core's handing over is all it waits for.
  if (!isMainThread) return call(() => native.flushLogs(null, timeoutMs))
  lastFlush = (lastFlush % 0xffffffff) + 1
  const marker = lastFlush
  let timer
  // The timer keeps the process alive until the marker comes (the delivery itself never does).
  const flushed = new Promise((resolve) => {
    flushes.set(marker, () => resolve(true))
    timer = setTimeout(() => resolve(false), timeoutMs)
  })
  try {
    // Sent, the marker comes after every earlier record, on this thread.
    return (await call(() => native.flushLogs(marker, timeoutMs))) && (await flushed)
  } finally {
    clearTimeout(timer)
    flushes.delete(marker)
  }
}

module.exports = { LOGGERS, LOG_CHANNELS, activeLogLevel, configureLogging, flushLogs, setLogLevel, watchLogLevels }
