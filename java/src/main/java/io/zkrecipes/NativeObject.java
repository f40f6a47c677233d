package io.zkrecipes;

import java.lang.ref.Cleaner;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Owns one native handle. Calls run under a read lock and {@link #close()} frees the handle
 * under the write lock, so a handle is never used after it was freed; a {@link Cleaner} frees
 * it if the object becomes unreachable without being closed.
 */
abstract class NativeObject implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

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

    final boolean isClosed() {
        return handle.raw == 0;
    }

    /**
     * Ends the recipe with {@code ending}, then stops {@code events} (if any) once what they saw
     * is delivered, then frees the handle. A CLOSED answer (the client was closed first) is no
     * failure; the core's own close does not fail otherwise. Closing twice is harmless.
     */
    final void closeAfter(Runnable ending, EventSink<?> events) {
        if (isClosed()) {
            return;
        }
        try {
            ending.run();
        } catch (ZkException e) {
            if (e.getCode() != ZkException.Code.CLOSED) {
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

    private void free() {
        guard.writeLock().lock();
        try {
            cleanable.clean();
        } finally {
            guard.writeLock().unlock();
        }
    }
}
