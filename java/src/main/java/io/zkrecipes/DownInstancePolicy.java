package io.zkrecipes;

import java.time.Duration;
import java.util.Objects;

/**
 * When a {@link ServiceProvider} leaves an instance out (Curator's {@code DownInstancePolicy}):
 * after {@code errorThreshold} errors noted for it ({@link ServiceProvider#noteError}), for
 * {@code timeout}. The library checks both when a provider is made (a timeout above zero, a
 * threshold of at least 1: INVALID_ARGUMENT otherwise).
 */
public record DownInstancePolicy(Duration timeout, int errorThreshold) {
    /** Curator's default: 30 seconds after 2 errors. */
    public static final DownInstancePolicy DEFAULT = new DownInstancePolicy(Duration.ofSeconds(30), 2);

    public DownInstancePolicy {
        Objects.requireNonNull(timeout, "timeout");
    }
}
