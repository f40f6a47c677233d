package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativePersistentNode

/** How a [PersistentNode] is created (ZooKeeper's `CreateMode`s it supports). */
enum class NodeMode { EPHEMERAL, EPHEMERAL_SEQUENTIAL, PERSISTENT, PERSISTENT_SEQUENTIAL }

/**
 * Curator's `PersistentNode`: a node that stays, created at [start] and created again whenever
 * it is deleted or its session expires, until [close].
 *
 * An ephemeral node of the name held by another session is never taken over (Curator's adopts
 * it, so two processes believe they own one node): [start] waits until that one is gone, then
 * creates its own. A persistent node of the name is adopted and given this node's data, as
 * Curator does. A sequential node is created under Curator's protected name
 * (`_c_<uuid>-<prefix><seq>`), so a create whose reply was lost is found again, never made twice.
 * Missing parents are created as containers. [ZkException.NoAuth] and the like stop the node and
 * [start] throws them. [path] is the node's path (for a sequential mode, the prefix of its name);
 * [ZkException.InvalidPath] (the root too) and oversized [data] at once.
 */
class PersistentNode(client: Client, path: String, val mode: NodeMode, data: ByteArray) : AutoCloseable {
    private val native = native { NativePersistentNode(client.native, path, mode.name, data) }

    val path: String get() = native.path()

    /**
     * Starts keeping the node and returns its actual path once it exists (a sequential node's
     * name); starting again only waits for it. A cancelled call leaves the node being kept
     * (created once it can be): [close] stops it. [ZkException.Closed] once closed (also while
     * waiting).
     */
    suspend fun start(): String = native { native.start() }

    /** The node's full path while it exists as far as this object knows; `null` before the first create and after close. */
    val actualPath: String? get() = native.actualPath()

    /** The data the node is (re-)created with. */
    val data: ByteArray get() = native.data()

    /** Writes [data] now if the node exists, and keeps it for every re-create. */
    suspend fun setData(data: ByteArray) = native { native.setData(data) }

    /** Stops re-creating the node and deletes it, confirmed (waiting through a reconnect). Twice: harmless. */
    suspend fun closeAsync() = native { native.closeAsync() }

    /** [closeAsync], blocking the thread (a failed delete is not thrown: an ephemeral node then goes with its session). */
    override fun close() = native.closeBlocking()

    override fun toString() = "PersistentNode($path, $mode)"
}
