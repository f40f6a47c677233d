package io.zkrecipes;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One metric of the library's catalog: what every client may record under that name. The
 * catalog is the native library's, read once; docs/observability.md lists it. An adapter to
 * another metrics API ({@link io.zkrecipes.micrometer.ZkrecipesMetrics}) makes one instrument per
 * metric from it and feeds each {@link MetricsFeed.Recording} to it.
 *
 * @param name        e.g. {@code zkrecipes.lock.acquisitions}
 * @param instrument  what kind of number it is
 * @param unit        UCUM, as OpenTelemetry writes it: {@code s}, or a count's {@code {acquisition}}
 * @param baseUnit    the unit as the APIs that put it into a name take it (Micrometer's base unit,
 *                    which Prometheus names end with): {@code seconds} for a duration, null for a count
 * @param description what it counts
 * @param attributes  its attribute names, in order; a client whose {@link ClientOptions#metricPaths(boolean)}
 *                    is off leaves {@code path} out of what it records
 */
public record Metric(String name, MetricPoint.Instrument instrument, String unit, String baseUnit, String description,
                     List<String> attributes) {
    private static final List<Metric> CATALOG = unpack(Native.metricCatalog());
    private static final List<Double> BUCKETS = Arrays.stream(Native.metricBuckets()).boxed().toList();

    public Metric {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(instrument, "instrument");
        Objects.requireNonNull(unit, "unit");
        Objects.requireNonNull(description, "description");
        attributes = List.copyOf(Objects.requireNonNull(attributes, "attributes"));
    }

    /** Every metric, in the order the native library numbers them (and snapshots list them). */
    public static List<Metric> catalog() {
        return CATALOG;
    }

    /** The upper bounds, in seconds, of every duration histogram's buckets (the last bucket is everything above). */
    public static List<Double> histogramBounds() {
        return BUCKETS;
    }

    /** The metric the native library numbers {@code index}: a recording names its metric so. */
    static Metric at(int index) {
        return CATALOG.get(index);
    }

    /** The catalog as the native library packs it (bindings/java recordings.rs, {@code packed_catalog}). */
    private static List<Metric> unpack(byte[] packed) {
        ByteBuffer buffer = ByteBuffer.wrap(packed);
        List<Metric> metrics = new ArrayList<>();
        while (buffer.hasRemaining()) {
            String name = text(buffer);
            MetricPoint.Instrument instrument = MetricPoint.Instrument.named(text(buffer));
            String unit = text(buffer);
            String baseUnit = text(buffer);
            String description = text(buffer);
            List<String> attributes = new ArrayList<>();
            for (int n = buffer.getInt(); n > 0; n--) {
                attributes.add(text(buffer));
            }
            metrics.add(new Metric(name, instrument, unit, baseUnit.isEmpty() ? null : baseUnit, description, attributes));
        }
        return List.copyOf(metrics);
    }

    private static String text(ByteBuffer buffer) {
        return new String(ChildData.bytes(buffer), StandardCharsets.UTF_8);
    }
}
