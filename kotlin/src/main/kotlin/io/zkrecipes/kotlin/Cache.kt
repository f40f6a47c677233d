package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeCache
import io.zkrecipes.kotlin.ffi.NativeCacheEvents
import io.zkrecipes.kotlin.ffi.NativeCachedNode
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow

/** A node's `Stat` as the server sent it. */
data class NodeStat(
    val czxid: Long,
    val mzxid: Long,
    val pzxid: Long,
    val ctime: Long,
    val mtime: Long,
    val version: Int,
    val cversion: Int,
    val aversion: Int,
    /** The session that owns an ephemeral node; 0 for a persistent one. */
    val ephemeralOwner: Long,
    val dataLength: Int,
    val numChildren: Int,
)

/** What a [Cache] holds of one node: its full path, its data and its stat, read together. */
class CachedNode(val path: String, val data: ByteArray, val stat: NodeStat) {
    /** The node's name: the last part of its path (a group member's id). */
    val name: String get() = path.substringAfterLast('/')

    override fun equals(other: Any?) =
        other is CachedNode && path == other.path && stat == other.stat && data.contentEquals(other.data)

    override fun hashCode() = (path.hashCode() * 31 + stat.hashCode()) * 31 + data.contentHashCode()

    override fun toString() = "CachedNode($path, version ${stat.version}, ${data.size} bytes)"
}

/**
 * What a [Cache] (or a [GroupMember]) tells its collectors, in the order it saw it: CREATED,
 * CHANGED (with the [old] node) and DELETED, whose [node] is the node as it is now or was, and
 * INITIALIZED, SUSPENDED, RECONNECTED, LOST without one.
 */
data class CacheEvent(val type: Type, val node: CachedNode? = null, val old: CachedNode? = null) {
    enum class Type {
        /** A node appeared (a member joined). */
        CREATED,
        /** A node's data changed (a member's payload). */
        CHANGED,
        /** A node went (a member left); one deleted and created again is DELETED then CREATED. */
        DELETED,
        /** The first load is in the cache (once per cache). */
        INITIALIZED,
        /** Disconnected: the cache may fall behind until RECONNECTED. */
        SUSPENDED,
        /** Connected again and read again: the events before this one brought the cache up to date. */
        RECONNECTED,
        /** The session expired; a new one is opened and the cache read again (then RECONNECTED). */
        LOST,
    }
}

/**
 * A local copy of a node ([node]: Curator's `NodeCache`), of a node's children ([children]:
 * `PathChildrenCache`) or of a subtree ([tree]: `TreeCache`), kept in sync by one persistent
 * recursive watch (ZooKeeper 3.6+; one-shot watches on older servers) added before the first
 * read, so no change falls between the two.
 *
 * After every reconnect and every new session the subtree is read again and exactly the
 * difference is told (SUSPENDED, the changes, RECONNECTED; LOST first after an expiry): a node
 * deleted and created again meanwhile is a DELETED and a CREATED. A node is shown only from a
 * read that found it; nothing is told twice; a change undone between two reads is not seen
 * (changes are coalesced, as in every ZooKeeper cache). Nothing is created: a missing root is an
 * empty cache until it appears. A children cache never shows its parent.
 */
class Cache private constructor(private val native: NativeCache) : AutoCloseable {
    companion object {
        /** A cache of the node at [path]. [ZkException.InvalidPath] at once; nothing is sent before [start]. */
        fun node(client: Client, path: String) = Cache(native { NativeCache.node(client.native, path) })

        /** A cache of the children of [path] (with their data), not of [path]. */
        fun children(client: Client, path: String) = Cache(native { NativeCache.children(client.native, path) })

        /** A cache of the subtree at [path], [maxDepth] levels below it (`null`: all of it; 0: the node only). */
        fun tree(client: Client, path: String, maxDepth: Int? = null) =
            Cache(native { NativeCache.tree(client.native, path, maxDepth?.toLong()) })
    }

    val path: String get() = native.path()

    /**
     * Starts following and returns once the first load is in the cache; starting again only
     * waits for that load. A cancelled call leaves the cache going (loading, then following):
     * [close] stops it. [ZkException.Closed] once closed (also while waiting); the server's error
     * ([ZkException.NoAuth]) if the root cannot be read, after which the cache stops.
     */
    suspend fun start() = native { native.start() }

    /** Whether the first load is in the cache. */
    val isInitialized: Boolean get() = native.isInitialized()

    /** The cached node at [path] (`null` if not cached, or outside the cache's scope). */
    operator fun get(path: String): CachedNode? = native.get(path)?.toNode()

    /** Every cached node, sorted by path (empty once closed). */
    fun snapshot(): List<CachedNode> = native.snapshot().map { it.toNode() }

    /** The names of the cached children of [path], sorted. */
    fun childrenOf(path: String): List<String> = native.childrenOf(path)

    /** How many nodes are cached (and shown: a children cache does not count its parent). */
    val size: Int get() = native.size().toInt()

    /**
     * Every event, none dropped: a cold flow that subscribes when collected (launch it with
     * `CoroutineStart.UNDISPATCHED` before [start] to see every node arrive, then INITIALIZED)
     * and ends once the cache or its client is closed.
     */
    val events: Flow<CacheEvent> get() = cacheEventFlow(native::events)

    /** Stops following and frees the copy; the [events] flows end, a waiting [start] is [ZkException.Closed]. Twice: harmless. */
    override fun close() = native.end()

    override fun toString() = "Cache($path)"
}

internal fun cacheEventFlow(subscribe: () -> NativeCacheEvents): Flow<CacheEvent> = flow {
    subscribe().use { events ->
        while (true) {
            val event = events.next() ?: break
            emit(CacheEvent(CacheEvent.Type.valueOf(event.name), event.node?.toNode(), event.old?.toNode()))
        }
    }
}

internal fun NativeCachedNode.toNode() = CachedNode(
    path,
    data,
    NodeStat(
        stat.czxid, stat.mzxid, stat.pzxid, stat.ctime, stat.mtime, stat.version, stat.cversion, stat.aversion,
        stat.ephemeralOwner, stat.dataLength, stat.numChildren,
    ),
)
