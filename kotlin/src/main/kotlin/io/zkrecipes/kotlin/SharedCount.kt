package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeSharedCount
import io.zkrecipes.kotlin.ffi.NativeVersionedCount
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow

/** A count's value with the version of the node it was read at: what [SharedCount.trySet] writes over. */
data class VersionedCount(val value: Int, val version: Int)

/**
 * Curator's `SharedCount` on its node (a persistent node holding a 4-byte big-endian int;
 * kazoo's `Counter(support_curator=True)` too), so zkrecipes, Curator and kazoo processes share
 * one count.
 *
 * [start] creates the node with [seed] when it is missing (never overwriting a value) and reads
 * it; from then on the value is cached ([count] asks no server) and followed: read again after
 * every change and every reconnect or new session, a read never replacing a newer one. An empty
 * node (kazoo's) reads as the seed; any other length than 4 is [ZkException.InvalidArgument].
 *
 * [set] writes whatever the count is; [trySet] only over the version it was given, answering
 * `false` (with the cache refreshed) when another write came first. A versioned write whose reply
 * was lost with the connection is sent again only if the node is unchanged; otherwise
 * [ZkException.ConnectionLoss] says its outcome is unknown, as it is for a write whose coroutine
 * was cancelled on its way.
 */
class SharedCount(client: Client, path: String, seed: Int = 0) : AutoCloseable {
    private val native = native { NativeSharedCount(client.native, path, seed) }

    val path: String get() = native.path()

    /** Creates the node with the seed if it is missing, reads it and follows it. Twice: nothing more. */
    suspend fun start() = native { native.start() }

    /**
     * The cached value. [ZkException.InvalidArgument] before [start], [ZkException.Closed] once
     * this count is closed; after its client's close it answers the last value read (as Curator's
     * `SharedCount` does), and every write is [ZkException.Closed].
     */
    val count: Int get() = versioned().value

    /** The cached value with its version, for [trySet]. */
    fun versioned(): VersionedCount = native { native.versioned() }.toVersioned()

    /** Writes [value] whatever the count is (creating the node if it was deleted). */
    suspend fun set(value: Int) = native { native.set(value) }

    /** Writes [value] only if the count is still at [expected]'s version: `false` otherwise, the cache then holding the newer value. */
    suspend fun trySet(expected: VersionedCount, value: Int): Boolean =
        native { native.trySet(NativeVersionedCount(expected.value, expected.version), value) }

    /**
     * Adds [delta] (wrapping as `Int` does) with versioned writes repeated until one applies: exact
     * however many processes add at once. Answers the value written and its version.
     */
    suspend fun add(delta: Int): VersionedCount = native { native.add(delta) }.toVersioned()

    /**
     * Every value the count takes (another process's writes and this object's own), in order: a
     * cold flow that subscribes when collected (launch it with `CoroutineStart.UNDISPATCHED`
     * before [start] to see the first value) and ends once the count or its client is closed.
     */
    val changes: Flow<VersionedCount>
        get() = flow {
            native.values().use { values ->
                while (true) {
                    emit(values.next()?.toVersioned() ?: break)
                }
            }
        }

    /** Stops following the node and ends the [changes] flows; every later call is [ZkException.Closed]. Twice: harmless. */
    override fun close() = native.end()

    override fun toString() = "SharedCount($path)"
}

private fun NativeVersionedCount.toVersioned() = VersionedCount(value, version)
