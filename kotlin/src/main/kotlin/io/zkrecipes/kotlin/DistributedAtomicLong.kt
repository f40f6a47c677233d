package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeAtomicLong
import io.zkrecipes.kotlin.ffi.NativeUpdated

/** What a [DistributedAtomicLong] update saw and wrote (Curator's `AtomicValue` of one that succeeded). */
data class Updated(val preValue: Long, val postValue: Long)

/**
 * Curator's `DistributedAtomicLong` on its node (a persistent node holding the value as 8 bytes,
 * big-endian, created by the first write), so zkrecipes and Curator processes count on one value.
 *
 * Every update is one versioned write repeated until it applies: N increments from any mix of
 * coroutines, processes, languages and Curator end at exactly N. A missing or empty node reads as
 * 0; any other length than 8 is [ZkException.InvalidArgument]. Overflow wraps as `Long` does. A
 * write whose reply was lost with the connection is sent again only once the node is seen
 * unchanged; otherwise [ZkException.ConnectionLoss] says it may or may not have applied. An update
 * whose coroutine is cancelled may or may not have applied too; it is never applied twice.
 */
class DistributedAtomicLong(client: Client, path: String) {
    private val native = native { NativeAtomicLong(client.native, path) }

    val path: String get() = native.path()

    /** The value on the server now (0 while the node does not exist). */
    suspend fun get(): Long = native { native.get() }

    suspend fun increment(): Updated = native { native.increment() }.toUpdated()

    suspend fun decrement(): Updated = native { native.decrement() }.toUpdated()

    /** Adds [delta] (negative: subtracts). */
    suspend fun add(delta: Long): Updated = native { native.add(delta) }.toUpdated()

    /** Writes [newValue] if the value is [expected] now (a missing node counts as 0); `false`, nothing written, otherwise. */
    suspend fun compareAndSet(expected: Long, newValue: Long): Boolean = native { native.compareAndSet(expected, newValue) }

    /** Writes [value] whatever the value is. */
    suspend fun forceSet(value: Long) = native { native.forceSet(value) }

    override fun toString() = "DistributedAtomicLong($path)"
}

private fun NativeUpdated.toUpdated() = Updated(preValue, postValue)
