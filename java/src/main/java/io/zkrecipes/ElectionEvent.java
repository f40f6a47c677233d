package io.zkrecipes;

/**
 * One election event with its details, as {@link LeaderElectionAware#onElectionEvent(ElectionEvent)}
 * receives it: {@code FAILED} carries the reason, other events none.
 */
public record ElectionEvent(LeaderElectionSupport.EventType type, ZkException reason) {}
