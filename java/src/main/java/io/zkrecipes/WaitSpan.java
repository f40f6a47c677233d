package io.zkrecipes;

/**
 * One wait's OpenTelemetry span, started by {@link WaitSpans#start} where the wait starts. Its
 * first end counts: a wait ends once, whether by its answer or by its caller giving up, and the
 * two may meet.
 */
interface WaitSpan {
    /**
     * Ends the span with the wait's {@code answer} as the native operation completed it (null,
     * false or an empty batch: nothing came in time), or with the {@code error} that ended it.
     */
    void end(Object answer, Throwable error);
}
