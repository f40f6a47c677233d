package io.zkrecipes.kotlin

import com.sun.jna.Callback
import com.sun.jna.CallbackThreadInitializer
import com.sun.jna.Native
import io.zkrecipes.kotlin.ffi.NativeHold
import io.zkrecipes.kotlin.ffi.NativeLock
import io.zkrecipes.kotlin.ffi.nativeFailure
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.suspendCancellableCoroutine
import java.lang.ref.Reference
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

/**
 * A lock's acquire and a hold's release, called outside uniffi's future protocol (see the
 * native side, `bindings/kotlin/src/completion.rs`): one crossing with lent handles, and one
 * callback from the runtime's thread with the outcome, where uniffi's protocol crossed about
 * seven times and called back twice per call. These two calls are the uncontended lock cycle.
 */
internal object LockCalls {
    // The outcomes in the callback's byte.
    private const val DONE: Byte = 0
    private const val FAILED: Byte = 1
    private const val NOT_ACQUIRED: Byte = 2

    /** The continuation of every call under way, by the number the native side calls back with. */
    private val waiting = ConcurrentHashMap<Long, CancellableContinuation<Byte>>()
    private val numbers = AtomicLong(1)

    /** How the native side answers: called once per call, from one of the runtime's threads. */
    interface Answer : Callback {
        fun invoke(call: Long, outcome: Byte)
    }

    private object Answering : Answer {
        override fun invoke(call: Long, outcome: Byte) {
            // A caller gone by now (cancelled) leaves a failure behind: drop it.
            waiting.remove(call)?.resume(outcome) { _, _, _ ->
                if (outcome == FAILED) runCatching { nativeFailure(call.toULong()) }
            }
        }
    }

    private val answer: Answer = Answering

    init {
        NativeLibrary.ensure()
        // As for uniffi's callback: the runtime's threads stay attached to the JVM, as daemons.
        Native.setCallbackThreadInitializer(answer, CallbackThreadInitializer(true, false, "zkrecipes-callback"))
        Native.register(LockCalls::class.java, NativeLibrary.path())
    }

    @JvmStatic private external fun zkrecipes_kotlin_lock_acquire(lock: Long, timeoutMs: Double, hold: Long, answer: Answer, call: Long)

    @JvmStatic private external fun zkrecipes_kotlin_hold_release(hold: Long, answer: Answer, call: Long)

    @JvmStatic private external fun zkrecipes_kotlin_hold_cancel(hold: Long)

    @JvmStatic private external fun zkrecipes_kotlin_hold_token(hold: Long): Long

    /**
     * Acquires [lock] into [hold]: the fencing token, or `null` when the timeout passed first. A
     * cancelled caller ends the acquire (its node withdrawn); a hold that came first stays in
     * [hold], for the caller to abandon.
     */
    suspend fun acquire(lock: NativeLock, timeoutMs: Double, hold: NativeHold): Long? {
        var call = 0L
        val outcome = suspendCancellableCoroutine { continuation ->
            call = numbers.getAndIncrement()
            waiting[call] = continuation
            continuation.invokeOnCancellation { lent(hold) { zkrecipes_kotlin_hold_cancel(it) } }
            lent(lock) { l -> lent(hold) { h -> zkrecipes_kotlin_lock_acquire(l, timeoutMs, h, answer, call) } }
        }
        return when (outcome) {
            DONE -> lent(hold) { zkrecipes_kotlin_hold_token(it) }
            NOT_ACQUIRED -> null
            FAILED -> failure(call)
            else -> throw CancellationException("the acquire was cancelled")
        }
    }

    /** Releases [hold]: returns once its node is gone. */
    suspend fun release(hold: NativeHold) {
        var call = 0L
        val outcome = suspendCancellableCoroutine { continuation ->
            call = numbers.getAndIncrement()
            waiting[call] = continuation
            lent(hold) { zkrecipes_kotlin_hold_release(it, answer, call) }
        }
        if (outcome != DONE) failure(call)
    }

    /** Throws why call [call] failed. */
    private fun failure(call: Long): Nothing {
        native { nativeFailure(call.toULong()) }
        throw ZkException.of("INTERNAL", "call $call failed without a reason", null)
    }

    /** Runs [use] with [obj]'s handle, lent (not cloned): [obj] stays reachable until it returns. */
    private inline fun <T> lent(obj: NativeLock, use: (Long) -> T): T = try {
        use(obj.uniffiLentHandle)
    } finally {
        Reference.reachabilityFence(obj)
    }

    private inline fun <T> lent(obj: NativeHold, use: (Long) -> T): T = try {
        use(obj.uniffiLentHandle)
    } finally {
        Reference.reachabilityFence(obj)
    }
}
