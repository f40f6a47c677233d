package io.zkrecipes;

/**
 * Curator's {@code SharedCountListener}, told on the count's listener thread (never a native
 * thread, so a listener may call any method of the count, {@code setCount} and {@code close()}
 * included) of every value the count takes, in order: another process's writes and this
 * object's own. A listener that throws is logged; the count goes on.
 */
@FunctionalInterface
public interface SharedCountListener {
    void countHasChanged(SharedCount sharedCount, int newCount);

    /** The value with its version; by default calls {@link #countHasChanged}. Override it to see the version. */
    default void onChange(SharedCount sharedCount, VersionedValue<Integer> value) {
        countHasChanged(sharedCount, value.value());
    }
}
