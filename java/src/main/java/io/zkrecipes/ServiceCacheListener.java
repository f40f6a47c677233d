package io.zkrecipes;

/** Hears a {@link ServiceCache}'s {@link ServiceCacheEvent}s, in order, on the cache's listener thread. */
@FunctionalInterface
public interface ServiceCacheListener {
    void onEvent(ServiceCacheEvent event);
}
