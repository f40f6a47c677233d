package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeCancel
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.withContext
import kotlin.time.Duration
import kotlin.time.DurationUnit

/**
 * A timeout as the native layer takes it: milliseconds as they are, positive infinity for
 * [Duration.INFINITE] (the core reads zero or negative as a try, as `withTimeout` does). A plain
 * number, not an optional one: that would cross the FFI in a buffer, on every call.
 */
internal fun Duration.toNativeMillis(): Double = toDouble(DurationUnit.MILLISECONDS)

/**
 * Runs a native call that obtains something (a hold, an item, a job) so that cancellation can
 * never drop it unseen: uniffi converts a result as soon as the Rust future is done, and a
 * coroutine cancelled after that would throw it away. The call runs outside the caller's Job;
 * the caller's cancellation (also `withTimeout` around it) cancels it through [NativeCancel],
 * waits for it to end, and [undo]es whatever it obtained all the same.
 */
internal suspend fun <T : Any> obtaining(undo: (T) -> Unit, call: suspend (NativeCancel) -> T?): T? {
    val cancel = NativeCancel()
    val detached = CoroutineScope(currentCoroutineContext().minusKey(Job))
    val running = detached.async(start = CoroutineStart.UNDISPATCHED) { native { call(cancel) } }
    try {
        return running.await()
    } catch (e: CancellationException) {
        cancel.cancel()
        val late = withContext(NonCancellable) { runCatching { running.await() }.getOrNull() }
        if (late != null) undo(late)
        throw e
    }
}
