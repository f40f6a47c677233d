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
 * A timeout as the native layer takes it: `null` for [Duration.INFINITE], else milliseconds as
 * they are (the core reads zero or negative as a try, as `withTimeout` does).
 */
internal fun Duration.toMillisOrNull(): Double? = when {
    isInfinite() && isPositive() -> null
    else -> toDouble(DurationUnit.MILLISECONDS)
}

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
