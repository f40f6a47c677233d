package io.zkrecipes;

import java.util.OptionalLong;

/**
 * One event of a lock, as {@link LockListener#onEvent} receives it: {@code ACQUIRED} carries the
 * hold's fencing token, {@code LOST} the reason.
 */
public record LockEvent(Type type, OptionalLong fencingToken, ZkException reason) {
    /** The event names shared by every zkrecipes binding. */
    public enum Type { ACQUIRED, RELEASED, SUSPENDED, RECONNECTED, LOST }

    static LockEvent of(String name, long fencingToken, ZkException reason) {
        return new LockEvent(Type.valueOf(name),
            fencingToken < 0 ? OptionalLong.empty() : OptionalLong.of(fencingToken), reason);
    }
}
