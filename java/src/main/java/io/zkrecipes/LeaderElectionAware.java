package io.zkrecipes;

/** Apache's election listener: called on a library thread for each {@link LeaderElectionSupport.EventType}. */
@FunctionalInterface
public interface LeaderElectionAware {
    void onElectionEvent(LeaderElectionSupport.EventType eventType);

    /** The event with its details (the reason of a {@code FAILED}); by default calls the method above. */
    default void onElectionEvent(ElectionEvent event) {
        onElectionEvent(event.type());
    }
}
