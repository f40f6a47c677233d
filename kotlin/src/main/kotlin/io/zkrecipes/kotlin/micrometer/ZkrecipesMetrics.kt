package io.zkrecipes.kotlin.micrometer

import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.Tag
import io.micrometer.core.instrument.Tags
import io.micrometer.core.instrument.binder.MeterBinder
import io.zkrecipes.kotlin.Client
import io.zkrecipes.kotlin.MetricsFeed
import io.zkrecipes.kotlin.ZkException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import kotlin.time.Duration

/**
 * A client's metrics in a Micrometer [MeterRegistry]: `ZkrecipesMetrics(client).bindTo(registry)`.
 * Every series the client records becomes a meter as its first recording arrives, named as the
 * library's catalog names it (`zkrecipes.lock.acquisitions`) and tagged with its attributes
 * (`path`, `kind`, `outcome`, ...) and the common [tags]:
 * - a counter is a `Counter`, started from what the client had counted before [bindTo];
 * - an up/down counter (how many wait or hold now) is a `Gauge`, started likewise;
 * - a duration histogram is a `Timer` whose service level objectives are the library's bucket
 *   bounds, so that a Prometheus registry shows the same `le` buckets as
 *   [io.zkrecipes.kotlin.MetricsSnapshot.toPrometheus]; the durations before [bindTo] are not in it.
 *
 * With Micrometer's Prometheus registry the names are the library's own Prometheus names
 * (`zkrecipes_lock_acquisitions_total`, `zkrecipes_lock_wait_duration_seconds_bucket`,
 * `zkrecipes_lock_holders`).
 *
 * The recordings reach the meters on the library's delivery thread ("zkrecipes-log"), a moment
 * after they are made: [flush] waits for them. The meters are fed until [close], or until the
 * client and its recipes are gone; they stay in the registry with their last values. An instance
 * may be bound to several registries. Two clients bound to one registry add up, gauges included;
 * a common tag (`Tags.of("client", "orders")`) keeps them apart. Micrometer is an optional
 * dependency: this class needs `io.micrometer:micrometer-core` on the classpath, the rest of the
 * library does not.
 */
class ZkrecipesMetrics @JvmOverloads constructor(
    private val client: Client,
    tags: Iterable<Tag> = Tags.empty(),
) : MeterBinder, AutoCloseable {
    private val tags: Tags = Tags.of(tags)
    private val feeds = mutableListOf<MetricsFeed>()
    private var closed = false

    /**
     * Feeds [registry] from now on, starting its counters and gauges from what the client has
     * recorded so far. [ZkException.Closed] once this is closed.
     */
    @Synchronized
    override fun bindTo(registry: MeterRegistry) {
        if (closed) throw ZkException.Closed("this ZkrecipesMetrics is closed")
        val meters = Meters(registry, tags)
        val feed = MetricsFeed.start(client, meters::record)
        feeds += feed
        // After the feed started: what it brings adds to the same meters in any order.
        meters.seed(feed.initial)
    }

    /**
     * Waits until every recording made before this call is in the meters: for a test, or before
     * a last scrape. False if [timeout] passed first; [ZkException.InvalidArgument] for a timeout
     * that is not positive, or above a day.
     */
    suspend fun flush(timeout: Duration): Boolean = withContext(Dispatchers.IO) { MetricsFeed.flush(timeout) }

    /**
     * Stops feeding the registries: what the client recorded before reaches the meters (up to
     * 10 s), nothing after. The meters stay registered. Closing twice is harmless.
     */
    @Synchronized
    override fun close() {
        closed = true
        feeds.forEach { it.close() }
        feeds.clear()
    }

    override fun toString(): String =
        "ZkrecipesMetrics[" + (if (tags.stream().findAny().isPresent) "$tags" else "") + (if (closed) " closed]" else "]")
}
