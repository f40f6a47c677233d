package io.zkrecipes.kotlin.micrometer

import io.micrometer.core.instrument.Counter
import io.micrometer.core.instrument.Gauge
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.Tags
import io.micrometer.core.instrument.Timer
import io.zkrecipes.kotlin.CatalogMetric
import io.zkrecipes.kotlin.Instrument
import io.zkrecipes.kotlin.MetricsFeed
import io.zkrecipes.kotlin.MetricsSnapshot
import java.time.Duration
import java.util.WeakHashMap
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import kotlin.math.roundToLong

/**
 * One registry's meters of one client: a meter per series (a metric with one set of attribute
 * values), made at its first recording. Fed on the library's delivery thread and seeded on the
 * thread that binds, so every meter is looked up under this object's lock.
 */
internal class Meters(private val registry: MeterRegistry, private val common: Tags) {
    /** A metric with one set of attribute values, and the common tags. */
    private data class Series(val metric: String, val attributes: Map<String, String>, val common: Tags)

    private val meters = HashMap<Series, (Double) -> Unit>()

    /** One recording of the client's, on the delivery thread. */
    @Synchronized
    fun record(recording: MetricsFeed.Recording) {
        meter(recording.metric, recording.attributes)(recording.value)
    }

    /** Starts the counters and gauges from what the client had recorded before the feed. */
    @Synchronized
    fun seed(initial: MetricsSnapshot) {
        for (point in initial.points) {
            // A histogram's past durations are gone: its timer starts with the next one.
            if (point.instrument != Instrument.HISTOGRAM && point.value != 0L) {
                meter(BY_NAME.getValue(point.name), point.attributes)(point.value.toDouble())
            }
        }
    }

    private fun meter(metric: CatalogMetric, attributes: Map<String, String>): (Double) -> Unit {
        val series = Series(metric.name, attributes, common)
        return meters.getOrPut(series) { register(metric, series) }
    }

    private fun register(metric: CatalogMetric, series: Series): (Double) -> Unit {
        val tags = series.attributes.entries.fold(common) { tags, (name, value) -> tags.and(name, value) }
        when (metric.instrument) {
            Instrument.COUNTER -> {
                val counter = Counter.builder(metric.name).description(metric.description)
                    .baseUnit(metric.baseUnit).tags(tags).register(registry)
                return { value -> counter.increment(value) }
            }
            Instrument.UP_DOWN_COUNTER -> {
                val level = synchronized(LEVELS) {
                    val levels = LEVELS.getOrPut(registry) { HashMap() }
                    levels[series] ?: AtomicLong().also { level ->
                        // The first client of the registry with this series registers its gauge
                        // (a second registration would only get Micrometer's warning).
                        levels[series] = level
                        Gauge.builder(metric.name, level, AtomicLong::toDouble).description(metric.description)
                            .baseUnit(metric.baseUnit).tags(tags).strongReference(true).register(registry)
                    }
                }
                return { value -> level.addAndGet(value.toLong()) }
            }
            Instrument.HISTOGRAM -> {
                val timer = Timer.builder(metric.name).description(metric.description).tags(tags)
                    .serviceLevelObjectives(*OBJECTIVES).register(registry)
                return { seconds -> timer.record((seconds * 1e9).roundToLong(), TimeUnit.NANOSECONDS) }
            }
        }
    }

    private companion object {
        /** The library's bucket bounds as a timer's service level objectives. */
        val OBJECTIVES: Array<Duration> = CatalogMetric.buckets.map { Duration.ofNanos((it * 1e9).roundToLong()) }.toTypedArray()
        val BY_NAME: Map<String, CatalogMetric> = CatalogMetric.all.associateBy { it.name }

        /**
         * The up/down counters' values, per registry and gauge, shared by every client bound to
         * the registry: Micrometer answers a second registration of a gauge with the first gauge,
         * which reads the first client's number, so two clients bound without a tag that tells
         * them apart would show one client's waiters. Shared, they add up, as their counters do.
         * Weak on the registry: a registry dropped takes its values along.
         */
        val LEVELS = WeakHashMap<MeterRegistry, MutableMap<Series, AtomicLong>>()
    }
}
