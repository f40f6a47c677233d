package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeBarrier
import kotlin.time.Duration

private val WAIT = waitCall("barrier.wait")

/**
 * Curator's `DistributedBarrier` (and kazoo's `Barrier`) on the same node: up while [path]
 * exists. Waiters are released once it is removed, also when that happened while they were
 * disconnected (they look again at the reconnect).
 */
class Barrier(client: Client, path: String) : AutoCloseable {
    private val native = native { NativeBarrier(client.native, path) }

    val path: String get() = native.path()

    /** Puts the barrier up (creates its node; missing parents too). A barrier already up stays up. */
    suspend fun set() = native { native.set() }

    /** Takes the barrier down, releasing every waiter. Already down: nothing; [ZkException.NotEmpty] if its node has children. */
    suspend fun remove() = native { native.remove() }

    /** Whether the barrier is up now. */
    suspend fun isSet(): Boolean = native { native.isSet() }

    /** `true` once the barrier is down (at once if it is not up), `false` if [timeout] passed first (zero or negative: a check). */
    suspend fun wait(timeout: Duration = Duration.INFINITE): Boolean =
        waiting(WAIT, { path }, { null }) { native { native.wait(timeout.toNativeMillis()) } }

    /** Ends the [wait]s of other coroutines on this object ([ZkException.Closed]); every later call is [ZkException.Closed]. */
    override fun close() = native.end()

    override fun toString() = "Barrier($path)"
}
