package io.zkrecipes;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.TracerProvider;

/**
 * The application's tracer, when it has set a tracer provider that is not the no-op. Loaded by
 * {@link WaitSpans} only when the OpenTelemetry API is on the classpath (1.57 or later: an older
 * one leaves the waits untraced, with a warning).
 */
final class OpenTelemetryTracer {
    /** The instrumentation scope of the spans: this library, in the JAR's version. */
    static final String SCOPE = "io.zkrecipes";

    /** The global OpenTelemetry last seen and its tracer (null: the no-op's), found once per instance. */
    private record Seen(OpenTelemetry global, Tracer tracer) {}

    private static volatile Seen seen = new Seen(OpenTelemetry.noop(), null);
    private static volatile boolean unusable;

    private OpenTelemetryTracer() {}

    /** The tracer (a {@link Tracer}), or null when no provider was set. */
    static Object current() {
        if (unusable) {
            return null;
        }
        OpenTelemetry global;
        try {
            // Unlike get(), getOrNoop() installs nothing: a provider the application sets later
            // is still seen, and its own GlobalOpenTelemetry.set() does not fail because of us.
            global = GlobalOpenTelemetry.getOrNoop();
        } catch (LinkageError older) {
            unusable = true;
            WaitSpans.warnOnce(older);
            return null;
        }
        Seen last = seen;
        if (last.global() == global) {
            return last.tracer();
        }
        // Set since (or reset, in a test): found once for this instance.
        Tracer tracer = global.getTracerProvider() == TracerProvider.noop() ? null
            : global.tracerBuilder(SCOPE).setInstrumentationVersion(NativeLibrary.jarVersion()).build();
        seen = new Seen(global, tracer);
        return tracer;
    }
}
