package io.zkrecipes;

import java.util.List;

/**
 * One event of a {@link Cache} (or a {@link GroupMember}), as {@link CacheListener#onEvent}
 * receives it, with Curator's {@code CuratorCacheListener} data: {@code CREATED} has the new
 * node in {@code data}, {@code CHANGED} the node before in {@code oldData} and after in
 * {@code data}, {@code DELETED} the deleted node in {@code oldData}; the other events have none.
 */
public record CacheEvent(Type type, ChildData oldData, ChildData data) {
    /** The event names shared by every zkrecipes binding. */
    public enum Type {
        /** A node appeared (a member joined). */
        CREATED,
        /** A node's data changed (a member's payload). */
        CHANGED,
        /** A node went (a member left); a node deleted and created again is DELETED then CREATED. */
        DELETED,
        /** The first load is in the cache (once per cache). */
        INITIALIZED,
        /** Disconnected: the cache may fall behind until {@code RECONNECTED}. */
        SUSPENDED,
        /** Connected again and read again: the events before this one brought the cache up to date. */
        RECONNECTED,
        /** The session expired; a new one is opened and the cache read again (then {@code RECONNECTED}). */
        LOST
    }

    /** An event as the native library sends it (bindings/java/src/cache.rs, {@code packed_event}). */
    static CacheEvent of(String name, byte[] packed) {
        Type type = Type.valueOf(name);
        List<ChildData> nodes = ChildData.list(packed);
        return switch (type) {
            case CREATED -> new CacheEvent(type, null, nodes.get(0));
            case CHANGED -> new CacheEvent(type, nodes.get(0), nodes.get(1));
            case DELETED -> new CacheEvent(type, nodes.get(0), null);
            default -> new CacheEvent(type, null, null);
        };
    }
}
