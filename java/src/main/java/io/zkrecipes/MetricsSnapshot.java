package io.zkrecipes;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a client had counted when {@link Client#metrics()} was called; immutable. Every metric is
 * named {@code zkrecipes.<recipe>.<what>} ({@code zkrecipes.lock.acquisitions},
 * {@code zkrecipes.lock.wait.duration}, {@code zkrecipes.session.state_changes}, ...) with its
 * attributes ({@code path}, {@code kind}, {@code outcome}, ...): docs/observability.md lists them
 * all.
 *
 * <p>The lookups add up the series whose attributes include the ones given, so
 * {@code counter("zkrecipes.lock.acquisitions", Map.of("outcome", "timeout"))} counts the timeouts
 * of every lock. A name that is no metric, one of another instrument, or an attribute the metric
 * does not have is ZkException(INVALID_ARGUMENT), not a silent zero. The numbers stay with the
 * library's native copy, freed once the snapshot is unreachable.
 */
public final class MetricsSnapshot {
    private final Handle handle;
    /** Unpacked at the first {@link #points()}. */
    private volatile List<MetricPoint> points;

    /** The native snapshot, freed by the Cleaner; it owns no thread or session, so no close is needed. */
    private static final class Handle implements Runnable {
        private final long raw;

        Handle(long raw) {
            this.raw = raw;
        }

        @Override
        public void run() {
            Native.metricsFree(raw);
        }
    }

    MetricsSnapshot(long raw) {
        this.handle = new Handle(raw);
        NativeObject.CLEANER.register(this, handle);
    }

    /** Every series, in the catalog's order (the session's, the requests', then each recipe's). */
    public List<MetricPoint> points() {
        List<MetricPoint> unpacked = points;
        if (unpacked == null) {
            byte[] packed;
            try {
                packed = Native.metricsPoints(handle.raw);
            } finally {
                // The Cleaner must not free the snapshot while the native call reads it.
                Reference.reachabilityFence(this);
            }
            unpacked = unpack(packed);
            points = unpacked;
        }
        return unpacked;
    }

    /** The sum of counter {@code name} over the series whose attributes include {@code attributes}. */
    public long counter(String name, Map<String, String> attributes) {
        return value(false, name, attributes);
    }

    /** The sum of counter {@code name} over all its series. */
    public long counter(String name) {
        return counter(name, Map.of());
    }

    /** The sum of up/down counter {@code name} (how many wait or hold now) over the matching series. */
    public long gauge(String name, Map<String, String> attributes) {
        return value(true, name, attributes);
    }

    /** The sum of up/down counter {@code name} over all its series. */
    public long gauge(String name) {
        return gauge(name, Map.of());
    }

    /** Histogram {@code name} merged over the matching series; empty when none has counted anything yet. */
    public Optional<HistogramPoint> histogram(String name, Map<String, String> attributes) {
        Objects.requireNonNull(name, "name");
        String[] filter = flat(attributes);
        byte[] packed;
        try {
            packed = Native.metricsHistogram(handle.raw, name, filter);
        } finally {
            Reference.reachabilityFence(this);
        }
        return packed == null ? Optional.empty() : Optional.of(HistogramPoint.read(ByteBuffer.wrap(packed)));
    }

    /** Histogram {@code name} merged over all its series. */
    public Optional<HistogramPoint> histogram(String name) {
        return histogram(name, Map.of());
    }

    /**
     * The Prometheus text exposition format (0.0.4), for a {@code /metrics} endpoint: names with
     * underscores, {@code _total} for a counter, {@code _seconds} for a duration.
     */
    public String toPrometheus() {
        try {
            return Native.metricsPrometheus(handle.raw);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    private long value(boolean gauge, String name, Map<String, String> attributes) {
        Objects.requireNonNull(name, "name");
        String[] filter = flat(attributes);
        try {
            return Native.metricsValue(handle.raw, gauge, name, filter);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Names and values one after the other; a null in the map is the native side's INVALID_ARGUMENT. */
    private static String[] flat(Map<String, String> attributes) {
        Objects.requireNonNull(attributes, "attributes");
        String[] flat = new String[attributes.size() * 2];
        int at = 0;
        for (Map.Entry<String, String> attribute : attributes.entrySet()) {
            flat[at++] = attribute.getKey();
            flat[at++] = attribute.getValue();
        }
        return flat;
    }

    /** The points as the native library packs them (bindings/java metrics.rs, {@code packed_points}). */
    private static List<MetricPoint> unpack(byte[] packed) {
        ByteBuffer buffer = ByteBuffer.wrap(packed);
        List<MetricPoint> points = new ArrayList<>();
        while (buffer.hasRemaining()) {
            String name = text(buffer);
            MetricPoint.Instrument instrument = MetricPoint.Instrument.named(text(buffer));
            String unit = text(buffer);
            String description = text(buffer);
            Map<String, String> attributes = new LinkedHashMap<>();
            for (int n = buffer.getInt(); n > 0; n--) {
                attributes.put(text(buffer), text(buffer));
            }
            long value = buffer.getLong();
            HistogramPoint histogram = buffer.get() == 1 ? HistogramPoint.read(buffer) : null;
            points.add(new MetricPoint(name, instrument, unit, description, attributes, value, histogram));
        }
        return List.copyOf(points);
    }

    private static String text(ByteBuffer buffer) {
        return new String(ChildData.bytes(buffer), StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "MetricsSnapshot[" + points().size() + " series]";
    }
}
