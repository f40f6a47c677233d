package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeLatch
import io.zkrecipes.kotlin.ffi.NativeLatchParticipant
import kotlinx.coroutines.flow.Flow
import kotlin.time.Duration

private val AWAIT_LEADERSHIP = waitCall("latch.await_leadership")

/** One participant of a [LeaderLatch], the leader first: its id, its node's name, whether it leads. */
data class LatchParticipant(val id: String, val node: String, val isLeader: Boolean)

/**
 * Curator's `LeaderLatch`, on its nodes (`<path>/_c_<uuid>-latch-<seq>` holding the id), so
 * zkrecipes and Curator processes take part in one election. The leader gets a fencing token
 * (its node's czxid, increasing across leaders) and is told SUSPENDED when its connection drops,
 * RECONNECTED when the same session is back, and NOT_LEADER once another participant may lead;
 * it then lines up again by itself, until closed. [id] `null`: the client's identity.
 */
class LeaderLatch(client: Client, path: String, id: String? = null) : AutoCloseable {
    private val native = native { NativeLatch(client.native, path, id) }

    /** Curator's states: a latch is started once and cannot start again once closed. */
    enum class State { LATENT, STARTED, CLOSED }

    val path: String get() = native.path()

    /** The id this participant takes part with (its node's data). */
    val id: String get() = native.id()

    /**
     * Takes part: returns once in line (leading or not), or throws what kept it out (the latch
     * can then be started again). Starting a started latch does nothing; a closed one throws
     * [ZkException.Closed].
     */
    suspend fun start() = native { native.start() }

    /** Whether this participant leads now (its node first, held in the client's current session). */
    val hasLeadership: Boolean get() = native.hasLeadership()

    /** The fencing token while leading. */
    val fencingToken: Long? get() = native.fencingToken()

    /** Our node's path while leading. */
    val nodePath: String? get() = native.nodePath()

    val state: State get() = State.entries[native.state().toInt()]

    /**
     * The fencing token once this participant leads, or `null` if [timeout] passed first
     * (zero or negative: a check). [ZkException.InvalidArgument] if never started,
     * [ZkException.Closed] once closed (also while waiting). Cancelling it ends the wait only:
     * the participant stays in line.
     */
    suspend fun awaitLeadership(timeout: Duration = Duration.INFINITE): Long? =
        waiting(AWAIT_LEADERSHIP, { path }, { it }) {
            native { native.awaitLeadership(timeout.toNativeMillis()) }
        }

    /** Every participant in line, the leader first (Curator's and ours alike). */
    suspend fun participants(): List<LatchParticipant> = native { native.participants() }.map { it.toParticipant() }

    /** The current leader, `null` when nobody takes part. */
    suspend fun leader(): LatchParticipant? = native { native.leader() }?.toParticipant()

    /**
     * IS_LEADER (with its token), NOT_LEADER, SUSPENDED, RECONNECTED: a cold flow that
     * subscribes when collected (launch it with `CoroutineStart.UNDISPATCHED` before [start] to
     * see every event) and ends once the latch or its client is closed.
     */
    val events: Flow<LatchEvent>
        get() = eventFlow(native::events) {
            LatchEvent(LatchEvent.Type.valueOf(it.name), it.fencingToken, it.reasonException())
        }

    /**
     * Leaves without blocking a thread: the node is withdrawn and a leader is told NOT_LEADER.
     * Closing twice is harmless; a closed latch cannot be started again.
     */
    suspend fun closeAsync() = native { native.closeAsync() }

    /** [closeAsync], blocking the thread. */
    override fun close() = native.closeBlocking()

    override fun toString() = "LeaderLatch($path, $state${if (hasLeadership) ", leader" else ""})"
}

private fun NativeLatchParticipant.toParticipant() = LatchParticipant(id, node, isLeader)
