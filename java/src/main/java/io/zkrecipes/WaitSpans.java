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
    /** The waits, by the core's names of the recipe calls that wait. */
    enum Call {
        LOCK_ACQUIRE("lock.acquire"),
        SEMAPHORE_ACQUIRE("semaphore.acquire"),
        QUEUE_TAKE("queue.take"),
        WORK_QUEUE_CONSUME("work_queue.consume"),
        ELECTION_AWAIT_LEADERSHIP("election.await_leadership"),
        LATCH_AWAIT_LEADERSHIP("latch.await_leadership"),
        BARRIER_WAIT("barrier.wait");

        final String key;

        Call(String key) {
            this.key = key;
        }
    }

    /** A wait's answer that carries no fencing token (a take, a barrier, Apache's election). */
    static final Function<Object, Object> NO_TOKEN = answer -> null;
    /** A wait whose answer is its fencing token (a lock's, a latch's) or tokens (a multi-lock's). */
    static final Function<Object, Object> ANSWER_IS_TOKEN = answer -> answer;

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
     * and {@code kind} (null: the call has none) become its attributes; {@code token} reads the
     * fencing token (a Long, or a long[] for a multi-lock) from the wait's answer.
     */
    static WaitSpan start(Call call, String path, String kind, Function<Object, Object> token) {
        if (!API) {
            return null;
        }
        Object tracer = OpenTelemetryTracer.current();
        if (tracer == null) {
            return null;
        }
        Named named = Named.TABLE.get(call);
        try {
            return OpenTelemetryWaitSpan.start(tracer, named.span(), named.success(), path, kind, token);
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

    /** A wait's span name and success outcome, from the core's table (looked up once, when tracing). */
    record Named(String span, String success) {
        static final Map<Call, Named> TABLE = read();

        private static Map<Call, Named> read() {
            String[] flat = Native.names(7);
            Map<String, Named> byKey = new HashMap<>();
            for (int i = 0; i + 2 < flat.length; i += 3) {
                byKey.put(flat[i], new Named(flat[i + 1], flat[i + 2]));
            }
            Map<Call, Named> table = new java.util.EnumMap<>(Call.class);
            for (Call call : Call.values()) {
                Named named = byKey.get(call.key);
                if (named == null) {
                    // The JAR and its native library are one build (NativeLibrary checks it).
                    throw new IllegalStateException("the native library names no wait " + call.key);
                }
                table.put(call, named);
            }
            return table;
        }
    }

    private static volatile boolean warned;

    static void warnOnce(Throwable broken) {
        if (!warned) {
            warned = true;
            Native.LOG.log(Level.WARNING, "zkrecipes could not trace a wait with OpenTelemetry", broken);
        }
    }
}
