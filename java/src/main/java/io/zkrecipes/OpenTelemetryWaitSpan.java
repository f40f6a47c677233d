package io.zkrecipes;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * A wait's span: started with {@code path} and {@code kind}, a child of the caller's
 * {@link Context#current()}; ended with {@code outcome} (the core's success word, {@code timeout},
 * {@code cancelled} or {@code error}), {@code waited_ms} and the {@code fencing_token} the wait
 * got, with status ERROR and the exception recorded when the caller got one. Loaded only when a
 * tracer provider is set ({@link WaitSpans}).
 */
final class OpenTelemetryWaitSpan implements WaitSpan {
    private static final AttributeKey<String> PATH = AttributeKey.stringKey("path");
    private static final AttributeKey<String> KIND = AttributeKey.stringKey("kind");
    private static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("outcome");
    private static final AttributeKey<Long> WAITED_MS = AttributeKey.longKey("waited_ms");
    private static final AttributeKey<Long> FENCING_TOKEN = AttributeKey.longKey("fencing_token");

    private final Span span;
    private final long started = System.nanoTime();
    private final String success;
    private final Function<Object, Object> token;
    private final AtomicBoolean ended = new AtomicBoolean();

    private OpenTelemetryWaitSpan(Span span, String success, Function<Object, Object> token) {
        this.span = span;
        this.success = success;
        this.token = token;
    }

    /** {@code tracer}: the {@link Tracer} that {@link OpenTelemetryTracer#current()} found. */
    static WaitSpan start(Object tracer, String name, String success, String path, String kind,
            Function<Object, Object> token) {
        SpanBuilder builder = ((Tracer) tracer).spanBuilder(name).setParent(Context.current())
            .setAttribute(PATH, path).setAttribute(KIND, kind);
        return new OpenTelemetryWaitSpan(builder.startSpan(), success, token);
    }

    @Override
    public void end(Object answer, Throwable error) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        long waitedMs = (System.nanoTime() - started) / 1_000_000;
        try {
            span.setAttribute(WAITED_MS, waitedMs);
            if (error == null) {
                answered(answer);
            } else {
                failed(unwrapped(error));
            }
        } catch (RuntimeException broken) {
            WaitSpans.warnOnce(broken);
        } finally {
            try {
                span.end();
            } catch (RuntimeException broken) {
                WaitSpans.warnOnce(broken);
            }
        }
    }

    private void answered(Object answer) {
        if (!WaitSpans.got(answer)) {
            span.setAttribute(OUTCOME, "timeout");
            return;
        }
        span.setAttribute(OUTCOME, success);
        Object got = token.apply(answer);
        if (got instanceof Long one) {
            span.setAttribute(FENCING_TOKEN, one);
        }
    }

    /**
     * A cancel (an interrupt cancels too) is {@code cancelled}, and so is the caller's own deadline
     * on the future ({@code orTimeout}): the wait was given up from outside, as the core's
     * metrics count it; {@code timeout} is the wait's own deadline. Anything else went to the
     * caller as an error.
     */
    private void failed(Throwable error) {
        if (error instanceof CancellationException || error instanceof TimeoutException) {
            span.setAttribute(OUTCOME, "cancelled");
        } else {
            span.setAttribute(OUTCOME, "error");
            span.recordException(error);
            span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
        }
    }

    private static Throwable unwrapped(Throwable error) {
        while ((error instanceof CompletionException || error instanceof ExecutionException) && error.getCause() != null) {
            error = error.getCause();
        }
        return error;
    }
}
