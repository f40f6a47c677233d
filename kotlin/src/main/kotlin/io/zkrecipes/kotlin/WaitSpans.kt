package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.waitSpans
import java.lang.System.Logger.Level

/** The waits, by the core's names of the recipe calls that wait (its table of waits). */
internal enum class WaitCall(val key: String) {
    LOCK_ACQUIRE("lock.acquire"),
    SEMAPHORE_ACQUIRE("semaphore.acquire"),
    QUEUE_TAKE("queue.take"),
    WORK_QUEUE_CONSUME("work_queue.consume"),
    ELECTION_AWAIT_LEADERSHIP("election.await_leadership"),
    LATCH_AWAIT_LEADERSHIP("latch.await_leadership"),
    BARRIER_WAIT("barrier.wait"),
}

/** One wait's span, started where the wait starts and ended once, with its answer or what ended it. */
internal interface WaitSpan {
    /** Ends it with the wait's [answer] (null, false or empty: nothing came in time) and the [token] read from it. */
    fun answered(answer: Any?, token: Any?)

    /** Ends it with what ended the wait: a cancellation, the caller's `withTimeout`, an error. */
    fun failed(error: Throwable)
}

/**
 * The OpenTelemetry span around each wait (an acquire, a take, a consume, an await of
 * leadership, a barrier's wait), when the application has set a tracer provider: named as the
 * core names the wait (`zkrecipes.lock.acquire`), a child of the caller's context, ended when the
 * answer is known.
 *
 * The OpenTelemetry API is an optional dependency: this object names none of its types, so that
 * it loads without it. Whether the API is on the classpath is looked up once; without it a wait
 * costs the test of a constant. With it, each wait asks [OpenTelemetryTracer] for the
 * application's tracer (one uncontended monitor, no allocation) and makes a span only when a
 * provider was set that is not the no-op; the class that makes spans ([OpenTelemetryWaitSpan])
 * is loaded only then.
 */
internal object WaitSpans {
    private const val API_CLASS = "io.opentelemetry.api.GlobalOpenTelemetry"

    /** Looked up without initializing anything of the API. */
    @JvmField
    val api: Boolean = try {
        Class.forName(API_CLASS, false, WaitSpans::class.java.classLoader)
        true
    } catch (absent: ClassNotFoundException) {
        false
    } catch (absent: LinkageError) {
        false
    }

    /** A wait's span name and success outcome, from the core's table: read once, when tracing. */
    private val named: Map<WaitCall, Pair<String, String>> by lazy {
        val byKey = waitSpans().associate { it.call to (it.span to it.success) }
        // The JAR and its native library are one build (uniffi checks its checksums).
        WaitCall.entries.associateWith { byKey[it.key] ?: error("the native library names no wait ${it.key}") }
    }

    @Volatile
    private var warned = false

    /** The application's tracer, or null when no tracer provider is set (or the API is absent). */
    fun tracer(): Any? = if (api) OpenTelemetryTracer.current() else null

    /** The span of a wait that starts now, with [tracer]; null if the SDK failed to start one. */
    fun start(tracer: Any, call: WaitCall, path: String, kind: String?): WaitSpan? {
        return try {
            val (span, success) = named.getValue(call)
            OpenTelemetryWaitSpan.start(tracer, span, success, path, kind)
        } catch (broken: RuntimeException) {
            // An SDK that fails to start a span costs the application its trace, never its wait.
            warnOnce(broken)
            null
        }
    }

    /** Whether a wait's answer is what it waited for: not null, not false, not an empty batch. */
    fun got(answer: Any?): Boolean = answer != null && answer != false && !(answer is Collection<*> && answer.isEmpty())

    fun warnOnce(broken: Throwable) {
        if (!warned) {
            warned = true
            System.getLogger("io.zkrecipes.kotlin").log(Level.WARNING, "zkrecipes could not trace a wait with OpenTelemetry", broken)
        }
    }
}

/**
 * Runs [wait], one public call's wait, in an OpenTelemetry span when the application set a
 * tracer provider ([WaitSpans]): the one place every recipe's waits go through. [call] names
 * the wait; [path] (asked only when tracing) and [kind] (null: none) are the span's attributes;
 * [token] reads the fencing token from the answer. Inline, so that an untraced wait allocates
 * nothing for it.
 */
internal suspend inline fun <T> waiting(
    call: WaitCall,
    path: () -> String,
    kind: String?,
    token: (T) -> Any?,
    wait: () -> T,
): T {
    // Started before the wait, on the caller's thread: its parent is the context current there,
    // which is the coroutine's own when the application propagates it (`asContextElement()`
    // is a ThreadContextElement, current wherever the coroutine runs).
    val tracer = WaitSpans.tracer()
    val span = if (tracer == null) null else WaitSpans.start(tracer, call, path(), kind)
    val answer = try {
        wait()
    } catch (e: Throwable) {
        span?.failed(e)
        throw e
    }
    span?.answered(answer, if (WaitSpans.got(answer)) token(answer) else null)
    return answer
}
