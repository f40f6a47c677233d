package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeHistogram
import io.zkrecipes.kotlin.ffi.NativeMetrics
import io.zkrecipes.kotlin.ffi.histogramQuantile

/**
 * What a client had counted when [Client.metrics] was called; immutable. Every metric is named
 * `zkrecipes.<recipe>.<what>` (`zkrecipes.lock.acquisitions`, `zkrecipes.lock.wait.duration`,
 * `zkrecipes.session.state_changes`, ...) with its attributes (`path`, `kind`, `outcome`, ...):
 * docs/observability.md lists them all.
 *
 * The lookups add up the series whose attributes include the ones given, so
 * `counter("zkrecipes.lock.acquisitions", mapOf("outcome" to "timeout"))` counts the timeouts of
 * every lock. A name that is no metric, one of another instrument, or an attribute the metric
 * does not have is [ZkException.InvalidArgument], not a silent zero.
 */
class MetricsSnapshot internal constructor(private val native: NativeMetrics) {
    /** Every series, in the catalog's order (the session's, the requests', then each recipe's). */
    val points: List<MetricPoint> by lazy {
        native.points().map { point ->
            MetricPoint(
                name = point.name,
                instrument = Instrument.valueOf(point.instrument.uppercase()),
                unit = point.unit,
                description = point.description,
                attributes = point.attributes.associate { it.name to it.value },
                value = point.value,
                histogram = point.histogram?.let { HistogramPoint(it) },
            )
        }
    }

    /** The sum of counter [name] over the series whose attributes include [attributes]. */
    fun counter(name: String, attributes: Map<String, String> = emptyMap()): Long =
        native { native.counter(name, attributes) }

    /** The sum of up/down counter [name] (how many wait or hold now) over the matching series. */
    fun gauge(name: String, attributes: Map<String, String> = emptyMap()): Long =
        native { native.gauge(name, attributes) }

    /** Histogram [name] merged over the matching series; null when none has counted anything yet. */
    fun histogram(name: String, attributes: Map<String, String> = emptyMap()): HistogramPoint? =
        native { native.histogram(name, attributes) }?.let { HistogramPoint(it) }

    /**
     * The Prometheus text exposition format (0.0.4), for a `/metrics` endpoint: names with
     * underscores, `_total` for a counter, `_seconds` for a duration.
     */
    fun toPrometheus(): String = native.toPrometheus()

    override fun toString(): String = "MetricsSnapshot(${points.size} series)"
}

/** The kinds of number, as OpenTelemetry names them. */
enum class Instrument {
    /** Only goes up (a Prometheus counter). */
    COUNTER,

    /** Goes up and down: how many wait or hold now (a Prometheus gauge). */
    UP_DOWN_COUNTER,

    /** A distribution of durations in seconds, in the library's fixed buckets. */
    HISTOGRAM,
}

/**
 * One series of a [MetricsSnapshot]: a metric with one set of attribute values.
 *
 * @property unit UCUM, as OpenTelemetry writes it: `s`, or a count's `{acquisition}`.
 * @property attributes in the metric's order (`path` left out when [ClientOptions.metricPaths] is off).
 * @property value a counter's count, an up/down counter's value, a histogram's count.
 * @property histogram a histogram's buckets; null for the other instruments.
 */
data class MetricPoint(
    val name: String,
    val instrument: Instrument,
    val unit: String,
    val description: String,
    val attributes: Map<String, String>,
    val value: Long,
    val histogram: HistogramPoint? = null,
)

/**
 * A duration histogram, in seconds: `counts[i]` durations were at most `bounds[i]` (and above the
 * bound before); the last count is everything above the last bound.
 *
 * @property bounds the buckets' upper bounds: the library's, the same for every histogram.
 * @property counts one more than there are bounds.
 */
data class HistogramPoint(
    val count: Long,
    val sum: Double,
    val min: Double,
    val max: Double,
    val bounds: List<Double>,
    val counts: List<Long>,
) {
    internal constructor(native: NativeHistogram) :
        this(native.count, native.sum, native.min, native.max, native.bounds, native.counts)

    /**
     * The [q] quantile (0 to 1: 0.99 is the 99th percentile) in seconds, estimated by the library
     * as Prometheus' `histogram_quantile` does, within the recorded minimum and maximum; null when
     * the histogram counted nothing. [ZkException.InvalidArgument] for a [q] outside [0, 1], or a
     * histogram the library did not make.
     */
    fun quantile(q: Double): Double? =
        native { histogramQuantile(NativeHistogram(count, sum, min, max, bounds, counts), q) }
}
