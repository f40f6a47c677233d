package io.zkrecipes;

/** How a {@link PersistentNode} is created (ZooKeeper's {@code CreateMode}s it supports). */
public enum NodeMode {
    // The native library reads the ordinal: keep the order.
    EPHEMERAL,
    EPHEMERAL_SEQUENTIAL,
    PERSISTENT,
    PERSISTENT_SEQUENTIAL
}
