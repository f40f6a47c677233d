package io.zkrecipes;

/** How a {@link ServiceProvider} picks an instance (Curator's strategies). */
public enum ProviderStrategy {
    /** Each instance in turn. */
    ROUND_ROBIN,
    /** Any instance, at random. */
    RANDOM,
    /** The same instance while it is there, then the next one round robin. */
    STICKY
}
