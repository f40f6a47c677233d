package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeElection
import kotlinx.coroutines.flow.Flow
import kotlin.time.Duration

private val AWAIT_LEADERSHIP = waitCall("election.await_leadership")

/** Apache's `LeaderElectionSupport`: the lowest offer leads; a leader that goes hands over. */
class LeaderElectionSupport(client: Client, private val root: String, hostName: String = client.identity) : AutoCloseable {
    private val native = native { NativeElection(client.native, root, hostName) }

    /** Offers this member; returns once it knows whether it leads. Takes effect when called. */
    suspend fun start() = native { native.start() }

    /** Withdraws the offer (a leader hands over); returns once no offer of this member is left. */
    suspend fun stop() = native { native.stop() }

    val isLeader: Boolean get() = native.isLeader()

    /** The host name in the leader's offer; `null` with no members. */
    suspend fun leaderHostName(): String? = native { native.leaderHostName() }

    /** `true` once leading; `false` if [timeout] passed first. */
    suspend fun awaitLeadership(timeout: Duration = Duration.INFINITE): Boolean =
        waiting(AWAIT_LEADERSHIP, { root }, { null }) {
            native { native.awaitLeadership(timeout.toNativeMillis()) }
        }

    val events: Flow<ElectionEvent>
        get() = eventFlow(native::events) { ElectionEvent(ElectionEvent.Type.valueOf(it.name), it.reasonException()) }

    /** [stop], blocking the thread. */
    override fun close() = native.stopBlocking()
}
