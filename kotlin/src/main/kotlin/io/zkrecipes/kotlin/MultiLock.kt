package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeHold
import io.zkrecipes.kotlin.ffi.NativeMultiLock
import kotlin.time.Duration

private val ACQUIRE = waitCall("multi_lock.acquire")

/**
 * Every lock of a [MultiLock], held. [release] once (a second is [ZkException.NotOwner]); `use {}`
 * releases too. One fencing token per path, in the order the paths were given.
 */
class MultiLockHold internal constructor(private val native: NativeHold, val fencingTokens: List<Long>) : AutoCloseable {
    /** Not released and not lost. */
    val isHeld: Boolean get() = native.isHeld()

    /** Returns once every lock node is gone, the last taken first. */
    suspend fun release() = native { native.release() }

    /** Releases, blocking the thread, unless released already. */
    override fun close() = native.releaseBlocking()

    override fun toString() = "MultiLockHold(fencingTokens=$fencingTokens, held=$isHeld)"
}

/**
 * Exclusive locks on several paths held together, all or none: Curator's `InterProcessMultiLock`,
 * interoperable with it and with single locks on the same paths. The locks are taken in the
 * order of their paths, sorted, whatever order they were given in, so two multi-locks over the
 * same paths never wait for each other in a circle. On a timeout, a failure or a cancellation
 * the locks already taken are given back. Every acquire is an owner of its own, as [Lock]'s.
 * The client's events tell a connection's loss.
 */
class MultiLock(client: Client, dirs: List<String>) : AutoCloseable {
    private val native: NativeMultiLock = native { NativeMultiLock(client.native, dirs) }

    /** The lock directories, in the order given. */
    val paths: List<String> get() = native.dirs()

    /** Whether any hold of this object is in place. */
    val isHeld: Boolean get() = native.isHeld()

    /**
     * The hold, or `null` if [timeout] passed first ([Duration.INFINITE]: as long as it takes;
     * zero: a try). Cancelling the coroutine gives back what was taken.
     */
    suspend fun acquire(timeout: Duration = Duration.INFINITE): MultiLockHold? =
        waiting(ACQUIRE, { native.observedPath() }, { null }) {
            val (hold, tokens) = intoHold { hold -> native.acquire(timeout.toNativeMillis(), hold) }
            if (tokens.isNotEmpty()) MultiLockHold(hold, tokens) else null
        }

    /** `null` unless every lock is free now. */
    suspend fun tryAcquire(): MultiLockHold? = acquire(Duration.ZERO)

    /**
     * Runs [block] holding every lock and releases them afterwards, also when [block] throws or
     * the coroutine is cancelled. Not obtained within [timeout]: [ZkException.Timeout].
     */
    suspend fun <T> withLock(timeout: Duration = Duration.INFINITE, block: suspend (MultiLockHold) -> T): T {
        val hold = acquire(timeout) ?: throw ZkException.Timeout("locks $paths not acquired within $timeout")
        return holding(hold, { it.release() }, block)
    }

    /** Releases every hold of this object. */
    suspend fun releaseAll() = native { native.releaseAll() }

    /** [releaseAll], blocking the thread. */
    override fun close() = native.releaseAllBlocking()
}
