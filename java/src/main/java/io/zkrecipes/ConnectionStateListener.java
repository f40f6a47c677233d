package io.zkrecipes;

/** Told of every connection state change, on a library thread. */
@FunctionalInterface
public interface ConnectionStateListener {
    void stateChanged(Client client, ConnectionState newState);
}
