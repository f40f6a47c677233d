package io.zkrecipes;

/**
 * Curator's vocabulary. SUSPENDED: disconnected, the session may live on. LOST: the session
 * expired and its ephemeral nodes are gone; the client then opens a new session by itself and
 * reports RECONNECTED.
 */
public enum ConnectionState {
    CONNECTED, SUSPENDED, RECONNECTED, LOST, CLOSED
}
