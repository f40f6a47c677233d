package io.zkrecipes.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.zkrecipes.Metric;
import io.zkrecipes.MetricPoint;
import io.zkrecipes.MetricsFeed;
import io.zkrecipes.MetricsSnapshot;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * One registry's meters of one client: a meter per series (a metric with one set of attribute
 * values), made at its first recording. Fed on the library's delivery thread and seeded on the
 * thread that binds, so every meter is looked up under this object's lock.
 */
final class Meters {
    /** The library's bucket bounds as a timer's service level objectives. */
    private static final Duration[] OBJECTIVES = Metric.histogramBounds().stream()
        .map(seconds -> Duration.ofNanos(Math.round(seconds * 1e9)))
        .toArray(Duration[]::new);
    private static final Map<String, Metric> BY_NAME = Metric.catalog().stream()
        .collect(Collectors.toUnmodifiableMap(Metric::name, Function.identity()));

    /**
     * The up/down counters' values, per registry and gauge, shared by every client bound to the
     * registry: Micrometer answers a second registration of a gauge with the first gauge, which
     * reads the first client's number, so two clients bound without a tag that tells them apart
     * would show one client's waiters. Shared, they add up, as their counters do. Weak on the
     * registry: a registry dropped takes its values along.
     */
    private static final Map<MeterRegistry, Map<Series, AtomicLong>> LEVELS = new WeakHashMap<>();

    /** A metric with one set of attribute values, and the common tags. */
    private record Series(String metric, Map<String, String> attributes, Tags common) {}

    /** How a meter takes a recording's value. */
    private interface Fed {
        void add(double value);
    }

    private final MeterRegistry registry;
    private final Tags common;
    private final Map<Series, Fed> meters = new HashMap<>();

    Meters(MeterRegistry registry, Tags common) {
        this.registry = registry;
        this.common = common;
    }

    /** One recording of the client's, on the delivery thread. */
    synchronized void record(MetricsFeed.Recording recording) {
        Metric metric = recording.metric();
        meter(metric, recording.attributes()).add(recording.value());
    }

    /** Starts the counters and gauges from what the client had recorded before the feed. */
    synchronized void seed(MetricsSnapshot initial) {
        for (MetricPoint point : initial.points()) {
            // A histogram's past durations are gone: its timer starts with the next one.
            if (point.instrument() != MetricPoint.Instrument.HISTOGRAM && point.value() != 0) {
                meter(BY_NAME.get(point.name()), point.attributes()).add(point.value());
            }
        }
    }

    private Fed meter(Metric metric, Map<String, String> attributes) {
        Series series = new Series(metric.name(), attributes, common);
        Fed fed = meters.get(series);
        if (fed == null) {
            fed = register(metric, series);
            meters.put(series, fed);
        }
        return fed;
    }

    private Fed register(Metric metric, Series series) {
        Tags tags = common;
        for (Map.Entry<String, String> attribute : series.attributes().entrySet()) {
            tags = tags.and(attribute.getKey(), attribute.getValue());
        }
        switch (metric.instrument()) {
            case COUNTER -> {
                Counter counter = Counter.builder(metric.name()).description(metric.description())
                    .baseUnit(metric.baseUnit()).tags(tags).register(registry);
                return counter::increment;
            }
            case UP_DOWN_COUNTER -> {
                AtomicLong level;
                synchronized (LEVELS) {
                    Map<Series, AtomicLong> levels = LEVELS.computeIfAbsent(registry, r -> new HashMap<>());
                    level = levels.get(series);
                    if (level == null) {
                        // The first client of the registry with this series registers its gauge
                        // (a second registration would only get Micrometer's warning).
                        level = new AtomicLong();
                        levels.put(series, level);
                        Gauge.builder(metric.name(), level, AtomicLong::get).description(metric.description())
                            .baseUnit(metric.baseUnit()).tags(tags).strongReference(true).register(registry);
                    }
                }
                AtomicLong shared = level;
                return value -> shared.addAndGet((long) value);
            }
            default -> {
                Timer timer = Timer.builder(metric.name()).description(metric.description()).tags(tags)
                    .serviceLevelObjectives(OBJECTIVES).register(registry);
                return seconds -> timer.record(Math.round(seconds * 1e9), TimeUnit.NANOSECONDS);
            }
        }
    }
}
