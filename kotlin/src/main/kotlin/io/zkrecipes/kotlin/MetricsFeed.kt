package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeAttribute
import io.zkrecipes.kotlin.ffi.NativeMetricsFeed
import io.zkrecipes.kotlin.ffi.NativeRecordingSink
import io.zkrecipes.kotlin.ffi.flushMetricRecordings
import io.zkrecipes.kotlin.ffi.metricBuckets
import io.zkrecipes.kotlin.ffi.metricCatalog
import java.lang.System.Logger.Level
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds
import kotlin.time.DurationUnit

/**
 * One metric of the library's catalog, read once from the native library: what an adapter to
 * another metrics API makes one instrument of.
 *
 * @property baseUnit the unit as the APIs that put it into a name take it (Micrometer's base unit):
 * `seconds` for a duration, null for a count.
 */
internal data class CatalogMetric(
    val name: String,
    val instrument: Instrument,
    val unit: String,
    val baseUnit: String?,
    val description: String,
    val attributes: List<String>,
) {
    companion object {
        /** In the order a recording numbers them. */
        val all: List<CatalogMetric> by lazy {
            NativeLibrary.ensure()
            metricCatalog().map {
                CatalogMetric(it.name, Instrument.valueOf(it.instrument.uppercase()), it.unit, it.baseUnit, it.description, it.attributes)
            }
        }

        /** Every duration histogram's bucket bounds, in seconds. */
        val buckets: List<Double> by lazy {
            NativeLibrary.ensure()
            metricBuckets()
        }
    }
}

/**
 * Every metric recording of a client, handed to [listener] as it happens, on the library's
 * delivery thread ("zkrecipes-log"), in order: what feeds an adapter (a duration histogram cannot
 * be fed from a snapshot). [initial] is what the client had recorded when the feed started.
 *
 * It goes on until [close], or until the client and its recipes are gone; one whose object nobody
 * keeps goes on all the same (the native side holds the sink, and the sink the feed).
 */
internal class MetricsFeed private constructor(private val gate: Gate, private val native: NativeMetricsFeed) :
    AutoCloseable {
    /** [value]: the number added to a counter or up/down counter, or a duration in seconds. */
    class Recording(val metric: CatalogMetric, val attributes: Map<String, String>, val value: Double)

    /** What the client had recorded when the feed started: the numbers to start from. */
    val initial: MetricsSnapshot = MetricsSnapshot(native.initial())

    /**
     * The sink the native library calls, and the gate [close] shuts: held while a recording is
     * delivered, so that nothing reaches the listener after the close returns.
     */
    private class Gate(private val listener: (Recording) -> Unit) : NativeRecordingSink {
        private var open = true
        private var warned = false

        /** Keeps the feed (and its native subscription) from being collected while it feeds. */
        var feed: MetricsFeed? = null

        @Synchronized
        override fun recorded(metric: Int, attributes: List<NativeAttribute>, value: Double) {
            if (!open) return
            try {
                listener(Recording(CatalogMetric.all[metric], attributes.associate { it.name to it.value }, value))
            } catch (t: Throwable) {
                if (!warned) {
                    // Once per feed: a listener that throws on every recording would flood the log.
                    warned = true
                    LOG.log(Level.WARNING, "a zkrecipes metrics listener threw; its recordings are lost (told once per feed)", t)
                }
            }
        }

        @Synchronized
        fun shut() {
            open = false
            feed = null
        }
    }

    /**
     * Ends the feed: the recordings made before reach the listener, [timeout] at the most;
     * nothing reaches it after this returns. False if some could not be delivered in time.
     */
    fun close(timeout: Duration): Boolean {
        // Stopped first: nothing new is queued for the listener from here on.
        native.stop()
        try {
            return flush(timeout)
        } finally {
            gate.shut()
            native.close()
        }
    }

    override fun close() {
        close(10.seconds)
    }

    companion object {
        private val LOG: System.Logger = System.getLogger("io.zkrecipes.kotlin")

        fun start(client: Client, listener: (Recording) -> Unit): MetricsFeed {
            val gate = Gate(listener)
            // The sink's callback is attached by JNA as "zkrecipes-log" (NativeLibrary).
            NativeLibrary.ensure()
            return MetricsFeed(gate, client.native.forwardRecordings(gate)).also { gate.feed = it }
        }

        /**
         * Waits until every recording made before this call has reached its feed's listener;
         * false if [timeout] passed first. [ZkException.InvalidArgument] for a timeout that is not
         * positive, or above a day.
         */
        fun flush(timeout: Duration): Boolean = native { flushMetricRecordings(timeout.toDouble(DurationUnit.MILLISECONDS)) }
    }
}
