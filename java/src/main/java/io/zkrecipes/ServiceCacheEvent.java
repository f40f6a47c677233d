package io.zkrecipes;

import java.util.List;

/**
 * One event of a {@link ServiceCache}: {@code ADDED} has the new instance in {@code instance},
 * {@code CHANGED} the instance after in {@code instance} and before in {@code oldInstance},
 * {@code REMOVED} the instance gone in {@code instance}; the other events have none.
 */
public record ServiceCacheEvent(Type type, ServiceInstance instance, ServiceInstance oldInstance) {
    /** The event names shared by every zkrecipes binding. */
    public enum Type {
        /** An instance registered. */
        ADDED,
        /** An instance's registration changed (an update). */
        CHANGED,
        /** An instance went (unregistered, or its registrant's session ended). */
        REMOVED,
        /** The first load is in the cache (once per cache). */
        INITIALIZED,
        /** Disconnected: the cache may fall behind until {@code RECONNECTED}. */
        SUSPENDED,
        /** Connected again and read again; the events before this one brought the cache up to date. */
        RECONNECTED,
        /** The session expired; a new one is opened and the cache read again. */
        LOST
    }

    /** As the native library sends it: the instance, then a change's old one. */
    static ServiceCacheEvent of(String name, byte[] packed) {
        Type type = Type.valueOf(name);
        List<ServiceInstance> instances = ServiceInstance.list(packed);
        return switch (type) {
            case ADDED, REMOVED -> new ServiceCacheEvent(type, instances.get(0), null);
            case CHANGED -> new ServiceCacheEvent(type, instances.get(0), instances.get(1));
            default -> new ServiceCacheEvent(type, null, null);
        };
    }
}
