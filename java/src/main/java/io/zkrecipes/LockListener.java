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

    /**
     * Every event with its details (the fencing token of an {@code ACQUIRED}, the reason of a
     * {@code LOST}); by default calls the method named after the event. Override it to see the details.
     */
    default void onEvent(LockEvent event) {
        switch (event.type()) {
            case ACQUIRED -> lockAcquired();
            case RELEASED -> lockReleased();
            case SUSPENDED -> lockSuspended();
            case RECONNECTED -> lockReconnected();
            case LOST -> lockLost(event.reason());
        }
    }
}
