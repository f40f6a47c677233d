package io.zkrecipes.kotlin

import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.api.OpenTelemetry
import io.opentelemetry.api.trace.Tracer
import io.opentelemetry.api.trace.TracerProvider

/**
 * The application's tracer, when it has set a tracer provider that is not the no-op. Loaded by
 * [WaitSpans] only when the OpenTelemetry API is on the classpath (1.57 or later: an older one
 * leaves the waits untraced, with a warning).
 */
internal object OpenTelemetryTracer {
    /** The instrumentation scope of the spans: this library. */
    const val SCOPE = "io.zkrecipes.kotlin"

    /** The global OpenTelemetry last seen and its tracer (null: the no-op's), found once per instance. */
    private class Seen(val global: OpenTelemetry, val tracer: Tracer?)

    @Volatile
    private var seen = Seen(OpenTelemetry.noop(), null)

    @Volatile
    private var unusable = false

    /** The tracer (a [Tracer]), or null when no provider was set. */
    fun current(): Any? {
        if (unusable) return null
        val global = try {
            // Unlike get(), getOrNoop() installs nothing: a provider the application sets later
            // is still seen, and its own GlobalOpenTelemetry.set() does not fail because of us.
            GlobalOpenTelemetry.getOrNoop()
        } catch (older: LinkageError) {
            unusable = true
            WaitSpans.warnOnce(older)
            return null
        }
        val last = seen
        if (last.global === global) return last.tracer
        // Set since (or reset, in a test): found once for this instance.
        val tracer = if (global.tracerProvider === TracerProvider.noop()) null else global.getTracer(SCOPE)
        seen = Seen(global, tracer)
        return tracer
    }
}
