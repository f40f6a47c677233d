package io.zkrecipes.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.zkrecipes.Client;
import io.zkrecipes.MetricsFeed;
import io.zkrecipes.ZkException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A client's metrics in a Micrometer {@link MeterRegistry}: {@code new ZkrecipesMetrics(client).bindTo(registry)}.
 * Every series the client records becomes a meter as its first recording arrives, named as the
 * library's catalog names it ({@code zkrecipes.lock.acquisitions}) and tagged with its attributes
 * ({@code path}, {@code kind}, {@code outcome}, ...) and the common tags given here:
 * <ul>
 *   <li>a counter is a {@code Counter}, started from what the client had counted before
 *       {@code bindTo};</li>
 *   <li>an up/down counter (how many wait or hold now) is a {@code Gauge}, started likewise;</li>
 *   <li>a duration histogram is a {@code Timer} whose service level objectives are the library's
 *       bucket bounds, so that a Prometheus registry shows the same {@code le} buckets as
 *       {@link io.zkrecipes.MetricsSnapshot#toPrometheus()}; the durations before {@code bindTo}
 *       are not in it.</li>
 * </ul>
 * With Micrometer's Prometheus registry the names are the library's own Prometheus names
 * ({@code zkrecipes_lock_acquisitions_total}, {@code zkrecipes_lock_wait_duration_seconds_bucket},
 * {@code zkrecipes_lock_holders}).
 *
 * <p>The recordings reach the meters on the library's delivery thread ({@link MetricsFeed}), a
 * moment after they are made: {@link #flush(Duration)} waits for them. The meters are fed until
 * {@link #close()}, or until the client and its recipes are gone; they stay in the registry with
 * their last values. An instance may be bound to several registries. Two clients bound to one
 * registry add up, gauges included; a common tag ({@code Tags.of("client", "orders")}) keeps
 * them apart. Micrometer is an optional dependency of zkrecipes: this class needs
 * {@code io.micrometer:micrometer-core} on the classpath, the rest of the library does not.
 */
public final class ZkrecipesMetrics implements MeterBinder, AutoCloseable {
    private final Client client;
    private final Tags tags;
    private final List<MetricsFeed> feeds = new ArrayList<>();
    private boolean closed;

    /** The meters of {@code client}, tagged with their attributes only. */
    public ZkrecipesMetrics(Client client) {
        this(client, Tags.empty());
    }

    /** The meters of {@code client}, tagged with {@code tags} besides their attributes. */
    public ZkrecipesMetrics(Client client, Iterable<Tag> tags) {
        this.client = Objects.requireNonNull(client, "client");
        this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
    }

    /**
     * Feeds {@code registry} from now on, starting its counters and gauges from what the client
     * has recorded so far (a closed client's: its last numbers, fed no more). ZkException(CLOSED)
     * once this is closed.
     */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        if (closed) {
            throw new ZkException(ZkException.Code.CLOSED, "this ZkrecipesMetrics is closed");
        }
        Meters meters = new Meters(registry, tags);
        MetricsFeed feed;
        try {
            feed = MetricsFeed.start(client, meters::record);
        } catch (ZkException closed) {
            if (closed.code() != ZkException.Code.CLOSED) {
                throw closed;
            }
            // A closed client records nothing more: its meters show its last numbers.
            meters.seed(client.metrics());
            return;
        }
        feeds.add(feed);
        // After the feed started: what it brings adds to the same meters in any order.
        meters.seed(feed.initial());
    }

    /**
     * Waits until every recording made before this call is in the meters: for a test, or before
     * a last scrape. False if {@code timeout} passed first. ZkException(INVALID_ARGUMENT) for a
     * timeout that is not positive, or above a day.
     */
    public boolean flush(Duration timeout) {
        return MetricsFeed.flush(timeout);
    }

    /**
     * Stops feeding the registries: what the client recorded before reaches the meters (up to
     * 10 s), nothing after. The meters stay registered. Closing twice is harmless.
     */
    @Override
    public synchronized void close() {
        closed = true;
        for (MetricsFeed feed : feeds) {
            feed.close();
        }
        feeds.clear();
    }

    @Override
    public String toString() {
        return "ZkrecipesMetrics[" + client + (tags.stream().findAny().isPresent() ? ", " + tags : "")
            + (closed ? ", closed]" : "]");
    }
}
