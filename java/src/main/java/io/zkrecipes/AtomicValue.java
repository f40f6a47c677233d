package io.zkrecipes;

/**
 * Curator's {@code AtomicValue}: what a {@link DistributedAtomicLong} operation saw and left.
 * An update that applied has {@code succeeded()} with the value before and after it; a
 * {@link DistributedAtomicLong#compareAndSet} that found another value has neither (both
 * {@code null}: the value it saw is not told).
 */
public record AtomicValue<T>(boolean succeeded, T preValue, T postValue) {}
