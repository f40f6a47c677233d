package io.zkrecipes;

/**
 * A participant of a {@link LeaderLatch} as {@code getParticipants()} lists it, the leader first
 * (Curator's {@code Participant}: {@code id()} and {@code isLeader()}, plus its node's name, as
 * {@link Participant#node()} gives a lock contender's).
 */
public record LatchParticipant(String id, String node, boolean isLeader) {}
