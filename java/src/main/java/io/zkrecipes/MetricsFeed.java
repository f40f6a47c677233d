package io.zkrecipes;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Every metric recording of a client, handed to a {@link Listener} as it happens: for adapters to
 * other metrics APIs ({@link io.zkrecipes.micrometer.ZkrecipesMetrics} is one), which cannot be
 * fed a duration histogram from a snapshot. {@link #initial()} is what the client had recorded
 * when the feed started, taken at the same moment: start the counters and up/down counters from
 * it (a histogram's past durations are gone).
 *
 * <p>The listener runs on the library's delivery thread ("zkrecipes-log", a daemon, which the log
 * records use too), one recording at a time, in the order they were made; never on a thread of
 * the library's runtime or under a recipe's lock, so it may block or call the library, but while
 * it does, the recordings and log records after it wait (past 10,000 of them the newest are
 * dropped: {@link #dropped()}). A listener that throws loses that recording only.
 *
 * <p>The feed goes on until {@link #close()}, or until the client and its recipes are gone: a
 * closed client starts nothing new, but its close's consequences (the holds it ended) still
 * arrive. A feed whose object nobody keeps goes on all the same; it never keeps the client alive.
 */
public final class MetricsFeed extends NativeObject {
    /** Told of each recording, on the library's delivery thread. */
    @FunctionalInterface
    public interface Listener {
        void recorded(Recording recording);
    }

    /**
     * One recording.
     *
     * @param metric     what was recorded
     * @param attributes the attribute names and values, in the metric's order (without {@code path}
     *                   for a client whose {@link ClientOptions#metricPaths(boolean)} is off)
     * @param value      the number added to a counter or up/down counter (a whole number, negative
     *                   for an up/down counter going down), or a histogram's duration in seconds
     */
    public record Recording(Metric metric, Map<String, String> attributes, double value) {
        public Recording {
            Objects.requireNonNull(metric, "metric");
            attributes = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(attributes, "attributes")));
        }
    }

    /** How long {@link #close()} waits for the recordings made before it. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

    private final Target target;
    private final MetricsSnapshot initial;

    /**
     * What the native library calls (through {@code Native.recorded}), and the gate that
     * {@link #close(Duration)} shuts: its monitor is held while a recording is delivered, so that
     * nothing reaches the listener after the close returns. It holds the feed itself: the native
     * side holds it as long as it feeds, and the feed must not be cleaned (its subscription
     * ended) meanwhile.
     */
    static final class Target {
        private final Listener listener;
        private boolean open = true;
        private boolean warned;
        @SuppressWarnings("unused")
        private MetricsFeed feed;

        Target(Listener listener) {
            this.listener = listener;
        }

        synchronized void deliver(int metric, String[] attributes, double value) {
            if (!open) {
                return;
            }
            try {
                Map<String, String> named = new LinkedHashMap<>();
                for (int at = 0; at + 1 < attributes.length; at += 2) {
                    named.put(attributes[at], attributes[at + 1]);
                }
                listener.recorded(new Recording(Metric.at(metric), named, value));
            } catch (Throwable t) {
                if (!warned) {
                    // Once per feed: a listener that throws on every recording would flood the log.
                    warned = true;
                    Native.LOG.log(Level.WARNING, "a zkrecipes metrics listener threw; its recordings are lost "
                        + "(told once per feed)", t);
                }
            }
        }

        synchronized void shut() {
            open = false;
            feed = null;
        }
    }

    private MetricsFeed(long raw, Target target) {
        super(raw, Native::metricsFeedFree);
        this.target = target;
        target.feed = this;
        this.initial = new MetricsSnapshot(Native.metricsFeedInitial(raw));
    }

    /**
     * Hands every recording of {@code client} from now on to {@code listener}.
     * ZkException(CLOSED) for a closed client.
     */
    public static MetricsFeed start(Client client, Listener listener) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(listener, "listener");
        Target target = new Target(listener);
        long raw = client.withHandle(h -> Native.metricsFeedStart(h, target));
        return new MetricsFeed(raw, target);
    }

    /** What the client had recorded when the feed started: the numbers to start from. */
    public MetricsSnapshot initial() {
        return initial;
    }

    /**
     * Ends the feed: the recordings made before reach the listener, waiting up to
     * {@code timeout} for them; nothing reaches it after this returns. False if some could not be
     * delivered in time (they are dropped). Called from the listener itself it does not wait:
     * the recordings after it wait for the listener. Closing twice is harmless.
     * ZkException(INVALID_ARGUMENT) for a timeout that is not positive, or above a day (the feed
     * is closed all the same).
     */
    public boolean close(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        // Freed first: nothing new is queued for the listener from here on.
        super.close();
        try {
            return flush(timeout);
        } finally {
            target.shut();
        }
    }

    /** {@link #close(Duration)}, waiting up to 10 s for the recordings made before. */
    @Override
    public void close() {
        close(CLOSE_TIMEOUT);
    }

    /**
     * Waits until every recording made before this call has reached its feed's listener (every
     * feed's, of every client): for a test or a shutdown. False if {@code timeout} passed first,
     * and at once on the delivery thread itself (it would wait for itself).
     * ZkException(INVALID_ARGUMENT) for a timeout that is not positive, or above a day.
     */
    public static boolean flush(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return Native.recordingsFlush(timeout.getSeconds() + timeout.getNano() / 1e9);
    }

    /**
     * How many recordings were dropped since the process started because the listeners did not
     * keep up (10,000 were waiting): every adapter's numbers are short by these.
     */
    public static long dropped() {
        return Native.recordingsDropped();
    }

    @Override
    public String toString() {
        return describe("feeding " + target.listener);
    }
}
