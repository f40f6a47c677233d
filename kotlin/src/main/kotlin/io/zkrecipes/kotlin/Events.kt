package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeEvent
import io.zkrecipes.kotlin.ffi.NativeEvents
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow

/** What a lock tells its collectors; the same events as in every other language. */
data class LockEvent(val type: Type, val fencingToken: Long? = null, val reason: ZkException? = null) {
    enum class Type { ACQUIRED, RELEASED, SUSPENDED, RECONNECTED, LOST }
}

/** Apache's election events, plus SUSPENDED / RECONNECTED for a leader's connection. */
data class ElectionEvent(val type: Type, val reason: ZkException? = null) {
    enum class Type {
        START, OFFER_START, OFFER_COMPLETE, DETERMINE_START, DETERMINE_COMPLETE, ELECTED_START,
        ELECTED_COMPLETE, READY_START, READY_COMPLETE, FAILED, STOP_START, STOP_COMPLETE, SUSPENDED, RECONNECTED,
    }
}

/**
 * What a [LeaderLatch] tells its collectors: IS_LEADER (with the fencing token), NOT_LEADER (with
 * the reason when the leadership was lost; none when the latch was closed), SUSPENDED (the
 * leader's connection dropped: stop acting as the leader until RECONNECTED) and RECONNECTED.
 */
data class LatchEvent(val type: Type, val fencingToken: Long? = null, val reason: ZkException? = null) {
    enum class Type { IS_LEADER, NOT_LEADER, SUSPENDED, RECONNECTED }
}

/**
 * A cold flow: each collector subscribes when its collection starts (launch it with
 * `CoroutineStart.UNDISPATCHED` to be sure to see what happens next) and ends with the source.
 */
internal fun <E> eventFlow(subscribe: () -> NativeEvents, convert: (NativeEvent) -> E): Flow<E> = flow {
    subscribe().use { events ->
        while (true) {
            val event = events.next() ?: break
            emit(convert(event))
        }
    }
}

internal fun NativeEvent.reasonException(): ZkException? =
    reasonCode?.let { ZkException.of(it, reason ?: "") }
