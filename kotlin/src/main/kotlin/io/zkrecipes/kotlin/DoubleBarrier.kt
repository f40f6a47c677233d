package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeDoubleBarrier
import kotlin.time.Duration

private val ENTER = waitCall("double_barrier.enter")
private val LEAVE = waitCall("double_barrier.leave")

/**
 * Curator's `DistributedDoubleBarrier` (and kazoo's `DoubleBarrier`) on the same nodes:
 * [memberCount] members enter together and leave together. Each object is one member
 * (`<path>/<uuid>`, ephemeral); the member that makes the count creates `<path>/ready`.
 *
 * An [enter] or [leave] that times out (`false`), fails, is cancelled or is ended by [close]
 * withdraws this member's node, so a later round never counts a member that gave up.
 */
class DoubleBarrier(client: Client, path: String, memberCount: Int) : AutoCloseable {
    private val native = native { NativeDoubleBarrier(client.native, path, memberCount.toLong()) }

    val path: String get() = native.path()

    val memberCount: Int get() = native.memberCount().toInt()

    /** This member's node: `<path>/<uuid>`. */
    val nodePath: String get() = native.nodePath()

    /**
     * Enters: `true` once [memberCount] members are in, `false` (our node withdrawn) if [timeout]
     * passed first. Cancelling the coroutine withdraws our node, also when the barrier opened
     * at that very moment.
     */
    suspend fun enter(timeout: Duration = Duration.INFINITE): Boolean =
        waiting(ENTER, { path }, { null }) {
            obtaining({ entered: Boolean -> if (entered) native.withdrawLater() }) {
                native.enter(timeout.toNativeMillis(), it)
            } ?: false
        }

    /** Leaves: `true` once every member left, `false` if [timeout] passed first (our node withdrawn in any case). */
    suspend fun leave(timeout: Duration = Duration.INFINITE): Boolean =
        waiting(LEAVE, { path }, { null }) { native { native.leave(timeout.toNativeMillis()) } }

    /** The member nodes' names now (`ready` not among them), in Curator's order. */
    suspend fun members(): List<String> = native { native.members() }

    /** Whether `ready` exists: the barrier opened and not every member has left. */
    suspend fun isReady(): Boolean = native { native.isReady() }

    /**
     * Ends the [enter]s and [leave]s of other coroutines on this object ([ZkException.Closed]),
     * then withdraws this member if it is in (a leave that does not wait: the others are not
     * held up by a member that went away). Every later call is [ZkException.Closed].
     */
    suspend fun closeAsync() = native { native.closeAsync() }

    /** [closeAsync], blocking the thread. */
    override fun close() = native.closeBlocking()

    override fun toString() = "DoubleBarrier($path, $memberCount members)"
}
