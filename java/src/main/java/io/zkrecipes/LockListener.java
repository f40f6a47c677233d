package io.zkrecipes;

/**
 * Told about a lock on the client's listener thread (Apache's {@code LockListener} plus {@code lockLost}).
 * A listener that throws is logged; the lock goes on.
 */
public interface LockListener {
    void lockAcquired();

    void lockReleased();

    /**
     * The connection dropped while held: the lock may have passed to somebody else. Stop using the
     * protected resource until {@link #lockReconnected()}; {@link #lockLost} follows otherwise.
     */
    default void lockSuspended() {}

    /** The session is back and the lock is still held. */
    default void lockReconnected() {}

    /** The lock node vanished while held (session expired, deleted by an operator): no longer held. */
    default void lockLost(ZkException cause) {}
}
