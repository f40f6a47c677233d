package io.zkrecipes;

/**
 * Curator's {@code CuratorCacheListener}, told on the cache's listener thread (never a native
 * thread, so a listener may call any method of the cache, {@code close()} included) of every
 * change in the order the cache saw it. A listener that throws is logged; the cache goes on.
 */
@FunctionalInterface
public interface CacheListener {
    /**
     * A node was {@code CREATED} ({@code oldData} null), {@code CHANGED}, or {@code DELETED}
     * ({@code data} null).
     */
    void event(CacheEvent.Type type, ChildData oldData, ChildData data);

    /** The first load is in the cache. */
    default void initialized() {}

    /** Disconnected: the cache may fall behind until {@link #reconnected()}. */
    default void suspended() {}

    /** Connected again and read again: the events before this one brought the cache up to date. */
    default void reconnected() {}

    /** The session expired: a new one is opened and the cache read again, then {@link #reconnected()}. */
    default void lost() {}

    /** Every event; by default calls the method named after it. */
    default void onEvent(CacheEvent event) {
        switch (event.type()) {
            case CREATED, CHANGED, DELETED -> event(event.type(), event.oldData(), event.data());
            case INITIALIZED -> initialized();
            case SUSPENDED -> suspended();
            case RECONNECTED -> reconnected();
            case LOST -> lost();
        }
    }
}
