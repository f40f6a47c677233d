'use strict'
// A client's metrics as Client.metrics() answers them: the core's snapshot, whose lookups check
// the names (a misspelt metric or attribute is INVALID_ARGUMENT, not a silent 0) and whose
// quantiles are the core's estimate. This file converts and checks JavaScript types only.

const { describe, frozen, now, requireString } = require('./base.js')

// An attribute filter as the addon takes it: an object of strings.
function filterOf (attributes) {
  if (attributes === undefined || attributes === null) return undefined
  if (typeof attributes !== 'object' || Array.isArray(attributes)) {
    throw new TypeError(`attributes must be an object like { outcome: 'timeout' }, got ${describe(attributes)}`)
  }
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value !== 'string') throw new TypeError(`attribute ${name} must be a string, got ${describe(value)}`)
  }
  return attributes
}

/** A duration histogram in seconds: `counts[i]` values were at most `bounds[i]`, the last count is everything above. */
class Histogram {
  #native
  constructor (handle) {
    this.#native = handle
    this.count = handle.count
    this.sum = handle.sum
    this.min = handle.min
    this.max = handle.max
    this.bounds = frozen(handle.bounds)
    this.counts = frozen(handle.counts)
    frozen(this)
  }

  /** The `q` quantile (0 to 1) in seconds, estimated within its bucket; null when nothing was recorded. */
  quantile (q) {
    if (typeof q !== 'number') throw new TypeError(`q must be a number from 0 to 1, got ${describe(q)}`)
    return now(() => this.#native.quantile(q))
  }
}

function pointOf (point) {
  const shown = {
    name: point.name,
    instrument: point.instrument,
    unit: point.unit,
    description: point.description,
    attributes: frozen(point.attributes),
  }
  if (point.histogram) shown.histogram = new Histogram(point.histogram)
  else shown.value = point.value
  return frozen(shown)
}

/** Every series a client recorded up to the moment of `client.metrics()`, in the catalog's order. */
class MetricsSnapshot {
  #native
  #points = null
  constructor (handle) {
    this.#native = handle
  }

  /** Every series: a metric with one set of attribute values. */
  get points () {
    if (this.#points === null) this.#points = frozen(this.#native.points().map(pointOf))
    return this.#points
  }

  /** Counter `name` summed over the series whose attributes include `attributes`. */
  counter (name, attributes) {
    requireString('name', name)
    return now(() => this.#native.counter(name, filterOf(attributes)))
  }

  /** Up/down counter `name` (waiters, holders, …) summed as counter() does. */
  gauge (name, attributes) {
    requireString('name', name)
    return now(() => this.#native.gauge(name, filterOf(attributes)))
  }

  /** Histogram `name` merged over the matching series; null when none matched. */
  histogram (name, attributes) {
    requireString('name', name)
    const merged = now(() => this.#native.histogram(name, filterOf(attributes)))
    return merged ? new Histogram(merged) : null
  }

  /** The Prometheus text exposition format (0.0.4). */
  toPrometheus () {
    return this.#native.toPrometheus()
  }
}

module.exports = { Histogram, MetricsSnapshot }
