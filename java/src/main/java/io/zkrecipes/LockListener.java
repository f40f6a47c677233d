package io.zkrecipes;

/**
 * Told about a lock on a library thread (Apache's {@code LockListener} plus {@code lockLost}).
 * A listener that throws is logged; the lock goes on.
 */
public interface LockListener {
    void lockAcquired();

    void lockReleased();

    /** The lock node vanished while held (session expired, deleted by an operator): no longer held. */
    default void lockLost(ZkException cause) {}
}
