package io.zkrecipes;

import java.lang.ref.Cleaner;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Owns one native handle. Calls run under a read lock and {@link #close()} frees the handle
 * under the write lock, so a handle is never used after it was freed; a {@link Cleaner} frees
 * it if the object becomes unreachable without being closed.
 */
abstract class NativeObject implements AutoCloseable {
    /** Also frees what is not a NativeObject: a {@link MetricsSnapshot}'s copy of the core's numbers. */
    static final Cleaner CLEANER = Cleaner.create();

    /** A close whose ending met this goes on: the client was closed first. */
    static final Predicate<ZkException> CLIENT_CLOSED = e -> e.getCode() == ZkException.Code.CLOSED;
    /** A close whose ending met any failure goes on: the session took what it would undo with it. */
    static final Predicate<ZkException> ANY_FAILURE = e -> true;
    /** A close whose ending failed throws. */
    static final Predicate<ZkException> NO_FAILURE = e -> false;

    /** A native call that starts an operation on a handle and completes {@code f}. */
    interface Task {
        long start(long handle, CompletableFuture<Object> f);
    }

    /** A native call that subscribes {@code sink} to a handle's events. */
    interface Subscribe {
        long subscribe(long handle, Object sink);
    }

    private final ReentrantReadWriteLock guard = new ReentrantReadWriteLock();
    private final Handle handle;
    private final Cleaner.Cleanable cleanable;

    /** Holder of the raw handle, also the Cleaner's action (must not reference the owner). */
    private static final class Handle implements Runnable {
        private volatile long raw;
        private final LongConsumer free;
        /** Run first when cleaned: ends the native event subscription, if any. */
        private volatile Runnable before;

        Handle(long raw, LongConsumer free) {
            this.raw = raw;
            this.free = free;
        }

        @Override
        public void run() {
            long r = raw;
            raw = 0;
            if (r != 0) {
                Runnable b = before;
                if (b != null) {
                    b.run();
                }
                free.accept(r);
            }
        }
    }

    NativeObject(long raw, LongConsumer free) {
        this.handle = new Handle(raw, free);
        this.cleanable = CLEANER.register(this, handle);
    }

    /** The object's events: the native side holds the sink, the Cleaner ends its subscription. */
    final <L> EventSink<L> events(String what, EventSink.Dispatch<L> dispatch) {
        EventSink<L> sink = new EventSink<>(what, dispatch);
        handle.before = () -> sink.cancel(false);
        return sink;
    }

    /** As {@link #events}, for events that carry data (a cache's nodes). */
    final <L> EventSink<L> dataEvents(String what, EventSink.DataDispatch<L> dispatch) {
        EventSink<L> sink = new EventSink<>(what, dispatch);
        handle.before = () -> sink.cancel(false);
        return sink;
    }

    /** Runs {@code call} with the live handle; CLOSED once closed. */
    final <T> T with(LongFunction<T> call) {
        guard.readLock().lock();
        try {
            long raw = handle.raw;
            if (raw == 0) {
                throw new ZkException(ZkException.Code.CLOSED, this instanceof Client
                    ? "the client is closed" : "this " + getClass().getSimpleName() + " is closed");
            }
            return call.apply(raw);
        } finally {
            guard.readLock().unlock();
        }
    }

    /** As {@link #with}, for a call that answers nothing. */
    final void use(LongConsumer call) {
        with(h -> {
            call.accept(h);
            return null;
        });
    }

    /** Starts {@code task} on the live handle; CLOSED once closed. */
    final <T> Native.Op<T> begin(Task task) {
        return begin(task, null);
    }

    /** As {@link #begin(Task)}; a result its caller gave up on is handed to {@code undo}. */
    final <T> Native.Op<T> begin(Task task, Consumer<Object> undo) {
        return with(h -> Native.<T>start(f -> task.start(h, f), undo));
    }

    /**
     * Starts a wait: {@code task} on the live handle, in an OpenTelemetry span when the
     * application set a tracer provider ({@link WaitSpans}), which ends when the caller's future
     * does, whichever form (blocking, interruptible, async) waits on it. The one place every
     * recipe's waits go through. {@code call} names the wait (and its span's kind), {@code path}
     * is the span's path, {@code token} reads the fencing token from the
     * answer; {@code undo} as in {@link #begin(Task, Consumer)}.
     */
    final <T> Native.Op<T> beginWait(WaitSpans.Call call, String path, Function<Object, Object> token,
            Task task, Consumer<Object> undo) {
        WaitSpan span = WaitSpans.start(call, path, token);
        try {
            return with(h -> Native.<T>start(f -> task.start(h, f), undo, span));
        } catch (RuntimeException | Error failed) {
            // The wait never started (a closed object, bad input): its span says why.
            if (span != null) {
                span.end(null, failed);
            }
            throw failed;
        }
    }

    /** Starts {@code task} and waits for it as {@link Native#join} does. */
    final <T> T join(Task task) {
        return Native.join(this.<T>begin(task));
    }

    /**
     * The future of {@code op}, failed instead of thrown when the operation cannot start (bad
     * input, a closed object): a caller of an async method handles one kind of failure.
     */
    static <T> CompletableFuture<T> async(Supplier<Native.Op<T>> op) {
        try {
            return op.get().future();
        } catch (ZkException | NullPointerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Adds {@code listener} to {@code sink}; the first one subscribes the sink to this handle. */
    final <L> void listen(EventSink<L> sink, L listener, Subscribe subscribe) {
        Objects.requireNonNull(listener, "listener");
        sink.add(listener, () -> with(h -> subscribe.subscribe(h, sink)));
    }

    final boolean isClosed() {
        return handle.raw == 0;
    }

    /** For {@code toString()}: {@code Name[details]}, {@code Name[details, closed]} once closed. */
    final String describe(String details) {
        return getClass().getSimpleName() + "[" + details + (isClosed() ? ", closed]" : "]");
    }

    /**
     * Ends the recipe with {@code ending}, then stops {@code events} (if any) once what they saw
     * is delivered, then frees the handle. A CLOSED answer (the client was closed first) is no
     * failure; the core's own close does not fail otherwise. Closing twice is harmless.
     */
    final void closeAfter(Runnable ending, EventSink<?> events) {
        closeAfter(ending, events, CLIENT_CLOSED);
    }

    /** As {@link #closeAfter(Runnable, EventSink)}, with the failures of {@code ending} that are {@code harmless}. */
    final void closeAfter(Runnable ending, EventSink<?> events, Predicate<ZkException> harmless) {
        if (isClosed()) {
            return;
        }
        try {
            ending.run();
        } catch (ZkException e) {
            if (!harmless.test(e)) {
                throw e;
            }
        } finally {
            if (events != null) {
                events.cancel(true);
            }
            free();
        }
    }

    /** Frees the native handle. Closing twice is harmless. */
    @Override
    public void close() {
        free();
    }

    /**
     * Frees the handle without the work of this object's {@code close()}, which may wait: for
     * callback threads, which must never block on an operation whose completion they would
     * deliver themselves. The native side does in the background what is left (a lease's
     * release, a job's return).
     */
    final void abandon() {
        free();
    }

    private void free() {
        guard.writeLock().lock();
        try {
            cleanable.clean();
        } finally {
            guard.writeLock().unlock();
        }
    }
}
