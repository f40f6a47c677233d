package io.zkrecipes;

/**
 * Curator's {@code LeaderLatchListener}, told on the latch's listener thread (never a native
 * thread, so a listener may call any method of the latch, {@code close()} included). A listener
 * that throws is logged; the latch goes on.
 */
public interface LeaderLatchListener {
    /** This participant leads from now on. */
    void isLeader();

    /** This participant no longer leads (lost, or closed). */
    void notLeader();

    /**
     * The leader's connection dropped: another participant may lead soon. Stop acting as the
     * leader until {@link #reconnected()}; {@link #notLeader()} follows otherwise.
     */
    default void suspended() {}

    /** The same session is back and this participant still leads. */
    default void reconnected() {}

    /**
     * Every event with its details (the fencing token of an {@code IS_LEADER}, the reason of a
     * {@code NOT_LEADER}); by default calls the method named after the event. Override it to see
     * the details.
     */
    default void onEvent(LatchEvent event) {
        switch (event.type()) {
            case IS_LEADER -> isLeader();
            case NOT_LEADER -> notLeader();
            case SUSPENDED -> suspended();
            case RECONNECTED -> reconnected();
        }
    }
}
