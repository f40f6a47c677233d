package io.zkrecipes;

/** A contender of a lock as {@code getParticipants()} lists it, holder first. */
public record Participant(String node, String identity, boolean reader) {}
