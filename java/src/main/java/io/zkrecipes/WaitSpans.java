package io.zkrecipes;

import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The OpenTelemetry span around each wait (an acquire, a take, a consume, an await of
 * leadership, a barrier's wait), when the application has set a tracer provider: named as the
 * core names the wait ({@code zkrecipes.lock.acquire}, the core's table of waits), a child of
 * the caller's current context, ended when the answer is known.
 *
 * <p>The OpenTelemetry API is an optional dependency: this class names none of its types, so
 * that it loads without it. Whether the API is on the classpath is looked up once; without it a
 * wait costs the test of a constant. With it, each wait asks {@link OpenTelemetryTracer} for the
 * application's tracer (one uncontended monitor, no allocation) and makes a span only when a
 * provider was set ({@code GlobalOpenTelemetry.set}, the agent, autoconfigure) that is not the
 * no-op; the classes that make spans ({@link OpenTelemetryWaitSpan}) are loaded only then.
 */
final class WaitSpans {
    /**
     * One recipe call that waits, as the core names it: its span's name, the outcome of a wait
     * that got what it waited for, and the span's {@code kind}. Each recipe class looks up its
     * calls when it is loaded ({@link #call}), so a call the core does not name fails there.
     */
    record Call(String key, String span, String success, String kind) {}

    /** A wait's answer that carries no fencing token (a take, a barrier, Apache's election). */
    static final Function<Object, Object> NO_TOKEN = answer -> null;
    /** A wait whose answer is its fencing token (a lock's, a latch's; a multi-lock's tokens are not one). */
    static final Function<Object, Object> ANSWER_IS_TOKEN = answer -> answer instanceof Long ? answer : null;

    private static final String API_CLASS = "io.opentelemetry.api.GlobalOpenTelemetry";
    /** Looked up without initializing anything of the API. */
    private static final boolean API = onClasspath(API_CLASS);

    private WaitSpans() {}

    private static boolean onClasspath(String name) {
        try {
            Class.forName(name, false, WaitSpans.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError absent) {
            return false;
        }
    }

    /**
     * The span of a wait that starts now, or null when no tracer provider is set. {@code path}
     * and the call's {@code kind} (as the core names it) become its attributes; {@code token}
     * reads the fencing token (a Long) from the wait's answer.
     */
    static WaitSpan start(Call call, String path, Function<Object, Object> token) {
        if (!API) {
            return null;
        }
        Object tracer = OpenTelemetryTracer.current();
        if (tracer == null) {
            return null;
        }
        try {
            return OpenTelemetryWaitSpan.start(tracer, call.span(), call.success(), path, call.kind(), token);
        } catch (RuntimeException broken) {
            // An SDK that fails to start a span costs the application its trace, never its wait.
            warnOnce(broken);
            return null;
        }
    }

    /** Whether a wait's answer is what it waited for: not null, not false, not an empty batch. */
    static boolean got(Object answer) {
        return answer != null && !Boolean.FALSE.equals(answer)
            && !(answer instanceof Native.Items items && items.items().isEmpty());
    }

    /** The core's table of waits, by call: read once, when the first recipe class loads. */
    private static final class Table {
        static final Map<String, Call> CALLS = read();

        private static Map<String, Call> read() {
            String[] flat = Native.names(7);
            Map<String, Call> calls = new HashMap<>();
            for (int i = 0; i + 3 < flat.length; i += 4) {
                calls.put(flat[i], new Call(flat[i], flat[i + 1], flat[i + 2], flat[i + 3]));
            }
            return Map.copyOf(calls);
        }
    }

    /** The recipe call {@code key} ({@code "read_lock.acquire"}) as the core names it. */
    static Call call(String key) {
        Call call = Table.CALLS.get(key);
        if (call == null) {
            // The JAR and its native library are one build (NativeLibrary checks it).
            throw new IllegalStateException("the native library names no wait " + key);
        }
        return call;
    }

    private static volatile boolean warned;

    static void warnOnce(Throwable broken) {
        if (!warned) {
            warned = true;
            Native.LOG.log(Level.WARNING, "zkrecipes could not trace a wait with OpenTelemetry", broken);
        }
    }
}
