package io.zkrecipes.kotlin

import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.api.trace.Span
import io.opentelemetry.api.trace.StatusCode
import io.opentelemetry.api.trace.Tracer
import io.opentelemetry.context.Context
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.coroutines.cancellation.CancellationException

/**
 * A wait's span: started with `path` and `kind`, a child of [Context.current] at the call;
 * ended with `outcome` (the core's success word, `timeout`, `cancelled` or `error`), `waited_ms`
 * and the `fencing_token` the wait got (a multi-lock's tokens are not one), with status ERROR and the
 * exception recorded when the caller got one. Loaded only when a tracer provider is set
 * ([WaitSpans]).
 */
internal class OpenTelemetryWaitSpan private constructor(private val span: Span, private val success: String) : WaitSpan {
    private val started = System.nanoTime()
    private val ended = AtomicBoolean()

    override fun answered(answer: Any?, token: Any?) = end {
        if (!WaitSpans.got(answer)) {
            span.setAttribute(OUTCOME, "timeout")
            return@end
        }
        span.setAttribute(OUTCOME, success)
        if (token is Long) span.setAttribute(FENCING_TOKEN, token)
    }

    /**
     * A cancellation is `cancelled`, the caller's own deadline (`withTimeout`) included: the wait
     * was given up from outside, as the core's metrics count it (`timeout` is the wait's own
     * deadline). Anything else went to the caller as an error.
     */
    override fun failed(error: Throwable) = end {
        when (error) {
            is CancellationException -> span.setAttribute(OUTCOME, "cancelled")
            else -> {
                span.setAttribute(OUTCOME, "error")
                span.recordException(error)
                span.setStatus(StatusCode.ERROR, error.message.toString())
            }
        }
    }

    private inline fun end(outcome: () -> Unit) {
        if (!ended.compareAndSet(false, true)) return
        try {
            span.setAttribute(WAITED_MS, (System.nanoTime() - started) / 1_000_000)
            outcome()
        } catch (broken: RuntimeException) {
            WaitSpans.warnOnce(broken)
        } finally {
            try {
                span.end()
            } catch (broken: RuntimeException) {
                WaitSpans.warnOnce(broken)
            }
        }
    }

    companion object {
        private val PATH: AttributeKey<String> = AttributeKey.stringKey("path")
        private val KIND: AttributeKey<String> = AttributeKey.stringKey("kind")
        private val OUTCOME: AttributeKey<String> = AttributeKey.stringKey("outcome")
        private val WAITED_MS: AttributeKey<Long> = AttributeKey.longKey("waited_ms")
        private val FENCING_TOKEN: AttributeKey<Long> = AttributeKey.longKey("fencing_token")

        /** [tracer]: the [Tracer] that [OpenTelemetryTracer.current] found. */
        fun start(tracer: Any, name: String, success: String, path: String, kind: String): WaitSpan {
            val builder = (tracer as Tracer).spanBuilder(name).setParent(Context.current())
                .setAttribute(PATH, path).setAttribute(KIND, kind)
            return OpenTelemetryWaitSpan(builder.startSpan(), success)
        }
    }
}
