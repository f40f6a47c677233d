package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeGroupMember
import kotlinx.coroutines.flow.Flow

/**
 * Curator's `GroupMember`, on its layout (member `<group>/<id>`, an ephemeral node whose data is
 * the member's payload), so zkrecipes and Curator processes are members of one group. The node
 * is kept by a [PersistentNode]: a member whose session expired joins again by itself. The
 * membership is read from a children cache of the group: a member that dies leaves everybody's
 * view once its session expires.
 *
 * The [id] is the node's name: one that is empty, `.`, `..` or holds `/` is
 * [ZkException.InvalidArgument] at once. Two live members with one id are refused by the node
 * rule: the second's [start] waits until the first is gone instead of taking its node over.
 */
class GroupMember(client: Client, group: String, id: String, payload: ByteArray) : AutoCloseable {
    private val native = native { NativeGroupMember(client.native, group, id, payload) }

    val id: String get() = native.id()

    val group: String get() = native.group()

    /**
     * Joins and loads the membership; returns once this member is in its own view. A cancelled
     * call may have joined meanwhile: start again or close. [ZkException.Closed] once closed
     * (also while waiting).
     */
    suspend fun start() = native { native.start() }

    /** Every member's id with its payload, by id; this member included once started. */
    fun members(): Map<String, ByteArray> = native.members().associate { it.id to it.payload }

    /** A new payload, written now and kept for every re-join. */
    suspend fun setPayload(payload: ByteArray) = native { native.setPayload(payload) }

    /**
     * Membership changes: CREATED (joined), CHANGED (a new payload), DELETED (left), whose
     * [CachedNode.name] is the member's id, and the connection events. A cold flow that
     * subscribes when collected (launched with `CoroutineStart.UNDISPATCHED` before [start], it
     * hears this member's own join) and ends once the member or its client is closed.
     */
    val events: Flow<CacheEvent> get() = cacheEventFlow(native::events)

    /** Leaves (the member's node deleted, confirmed) without blocking a thread; the [events] flows end. Twice: harmless. */
    suspend fun closeAsync() = native { native.closeAsync() }

    /** [closeAsync], blocking the thread. */
    override fun close() = native.closeBlocking()

    override fun toString() = "GroupMember($group, $id)"
}
