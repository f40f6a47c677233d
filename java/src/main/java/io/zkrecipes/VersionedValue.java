package io.zkrecipes;

/**
 * Curator's {@code VersionedValue}: a value with the version of the node it was read at, what
 * {@link SharedCount#trySetCount} writes over.
 */
public record VersionedValue<T>(int version, T value) {
    /** Curator's name for {@link #version()}. */
    public int getVersion() {
        return version;
    }

    /** Curator's name for {@link #value()}. */
    public T getValue() {
        return value;
    }
}
