package io.zkrecipes;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One series of a {@link MetricsSnapshot}: a metric with one set of attribute values. Immutable.
 *
 * @param name        the metric's name, e.g. {@code zkrecipes.lock.acquisitions}
 * @param instrument  what kind of number it is
 * @param unit        UCUM, as OpenTelemetry writes it: {@code s}, or a count's {@code {acquisition}}
 * @param description what it counts
 * @param attributes  the attribute names and values, in the metric's order ({@code path} left out when
 *                    {@link ClientOptions#metricPaths(boolean)} is off)
 * @param value       a counter's count, an up/down counter's value, a histogram's count
 * @param histogram   a histogram's buckets; null for the other instruments
 */
public record MetricPoint(String name, Instrument instrument, String unit, String description,
                          Map<String, String> attributes, long value, HistogramPoint histogram) {
    /** The kinds of number, as OpenTelemetry names them. */
    public enum Instrument {
        /** Only goes up (a Prometheus counter). */
        COUNTER,
        /** Goes up and down: how many wait or hold now (a Prometheus gauge). */
        UP_DOWN_COUNTER,
        /** A distribution of durations in seconds, in the library's fixed buckets. */
        HISTOGRAM;

        /** By the core's name ({@code counter}, {@code up_down_counter}, {@code histogram}). */
        static Instrument named(String name) {
            return valueOf(name.toUpperCase(java.util.Locale.ROOT));
        }
    }

    public MetricPoint {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(instrument, "instrument");
        Objects.requireNonNull(unit, "unit");
        Objects.requireNonNull(description, "description");
        // A copy in the given order: Map.copyOf would lose the metric's attribute order.
        attributes = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(attributes, "attributes")));
    }
}
