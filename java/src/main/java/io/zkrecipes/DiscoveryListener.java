package io.zkrecipes;

/** Hears a {@link ServiceDiscovery}'s {@link DiscoveryEvent}s, on the registry's listener thread. */
@FunctionalInterface
public interface DiscoveryListener {
    void onEvent(DiscoveryEvent event);
}
