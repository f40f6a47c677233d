package io.zkrecipes;

import java.util.OptionalLong;

/**
 * One event of a {@link LeaderLatch}, as {@link LeaderLatchListener#onEvent} receives it:
 * {@code IS_LEADER} carries the leader's fencing token, {@code NOT_LEADER} the reason when the
 * leadership was lost (none when the latch was closed).
 */
public record LatchEvent(Type type, OptionalLong fencingToken, ZkException reason) {
    /** The event names shared by every zkrecipes binding. */
    public enum Type {
        /** This participant leads from now on (with its fencing token). */
        IS_LEADER,
        /** It no longer leads: its node is gone, its session expired or it was disconnected too long, or it closed. */
        NOT_LEADER,
        /** The leader's connection dropped: stop acting as the leader until {@code RECONNECTED}. */
        SUSPENDED,
        /** The same session is back and this participant still leads. */
        RECONNECTED
    }

    static LatchEvent of(String name, long fencingToken, ZkException reason) {
        return new LatchEvent(Type.valueOf(name),
            fencingToken < 0 ? OptionalLong.empty() : OptionalLong.of(fencingToken), reason);
    }
}
