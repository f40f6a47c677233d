package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeWaitSpan
import io.zkrecipes.kotlin.ffi.waitSpans
import java.lang.System.Logger.Level

/**
 * The recipe call [key] that waits (`"read_lock.acquire"`), as the core's table of waits names it:
 * its span's name, the outcome of a wait that got what it waited for, and the span's `kind`.
 * Each recipe looks up its calls when its class loads, so a call the core does not name fails there.
 */
internal fun waitCall(key: String): NativeWaitSpan =
    WaitSpans.calls[key] ?: error("the native library names no wait $key")

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

    /** The core's table of waits, by call; the JAR and its native library are one build (uniffi checks its checksums). */
    val calls: Map<String, NativeWaitSpan> by lazy { waitSpans().associateBy { it.call } }

    @Volatile
    private var warned = false

    /** The application's tracer, or null when no tracer provider is set (or the API is absent). */
    fun tracer(): Any? = if (api) OpenTelemetryTracer.current() else null

    /** The span of a wait that starts now, with [tracer]; null if the SDK failed to start one. */
    fun start(tracer: Any, call: NativeWaitSpan, path: String): WaitSpan? {
        return try {
            OpenTelemetryWaitSpan.start(tracer, call.span, call.success, path, call.kind)
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
 * the wait (and its span's kind); [path] (asked only when tracing) is the span's path; [token]
 * reads the fencing token from the answer. Inline, so that an untraced wait allocates
 * nothing for it.
 */
internal suspend inline fun <T> waiting(
    call: NativeWaitSpan,
    path: () -> String,
    token: (T) -> Any?,
    wait: () -> T,
): T {
    // Started before the wait, on the caller's thread: its parent is the context current there,
    // which is the coroutine's own when the application propagates it (`asContextElement()`
    // is a ThreadContextElement, current wherever the coroutine runs).
    val tracer = WaitSpans.tracer()
    val span = if (tracer == null) null else WaitSpans.start(tracer, call, path())
    val answer = try {
        wait()
    } catch (e: Throwable) {
        span?.failed(e)
        throw e
    }
    span?.answered(answer, if (WaitSpans.got(answer)) token(answer) else null)
    return answer
}
