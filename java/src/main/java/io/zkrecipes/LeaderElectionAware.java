package io.zkrecipes;

/** Apache's election listener: called on a library thread for each {@link LeaderElectionSupport.EventType}. */
@FunctionalInterface
public interface LeaderElectionAware {
    void onElectionEvent(LeaderElectionSupport.EventType eventType);
}
