package io.zkrecipes;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * A duration histogram, in seconds: {@code counts.get(i)} durations were at most
 * {@code bounds.get(i)} (and above the bound before); the last count is everything above the last
 * bound. Immutable.
 *
 * @param count  how many durations
 * @param sum    their sum, in seconds
 * @param min    the shortest, in seconds (0 when none)
 * @param max    the longest, in seconds (0 when none)
 * @param bounds the buckets' upper bounds, in seconds: the library's, the same for every histogram
 * @param counts the durations in each bucket, one more than there are bounds
 */
public record HistogramPoint(long count, double sum, double min, double max, List<Double> bounds, List<Long> counts) {
    public HistogramPoint {
        bounds = List.copyOf(Objects.requireNonNull(bounds, "bounds"));
        counts = List.copyOf(Objects.requireNonNull(counts, "counts"));
    }

    /**
     * The {@code q} quantile (0 to 1: 0.99 is the 99th percentile) in seconds, estimated by the
     * library as Prometheus' {@code histogram_quantile} does, within the recorded minimum and
     * maximum; empty when the histogram counted nothing. ZkException(INVALID_ARGUMENT) for a
     * {@code q} outside [0, 1], or a histogram the library did not make.
     */
    public OptionalDouble quantile(double q) {
        double[] bounds = this.bounds.stream().mapToDouble(Double::doubleValue).toArray();
        long[] counts = this.counts.stream().mapToLong(Long::longValue).toArray();
        double estimate = Native.histogramQuantile(count, min, max, bounds, counts, q);
        return Double.isNaN(estimate) ? OptionalDouble.empty() : OptionalDouble.of(estimate);
    }

    /** One packed by the native library (bindings/java metrics.rs, {@code pack_histogram}). */
    static HistogramPoint read(ByteBuffer buffer) {
        long count = buffer.getLong();
        double sum = buffer.getDouble();
        double min = buffer.getDouble();
        double max = buffer.getDouble();
        List<Double> bounds = new ArrayList<>();
        for (int n = buffer.getInt(); n > 0; n--) {
            bounds.add(buffer.getDouble());
        }
        List<Long> counts = new ArrayList<>();
        for (int n = buffer.getInt(); n > 0; n--) {
            counts.add(buffer.getLong());
        }
        return new HistogramPoint(count, sum, min, max, bounds, counts);
    }
}
