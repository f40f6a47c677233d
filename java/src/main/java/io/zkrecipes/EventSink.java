package io.zkrecipes;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.function.LongSupplier;

/**
 * A native object's listeners and the native subscription that feeds them. The native side holds
 * this sink, never the public object, so that an unreachable object with listeners is still
 * cleaned; its Cleaner ends the subscription ({@link #cancel()}).
 */
final class EventSink<L> {
    /** Calls one listener for one event; never references the public object strongly. */
    interface Dispatch<L> {
        void deliver(L listener, String name, long fencingToken, ZkException reason);
    }

    /** Calls one listener for one event that carries data (a cache's nodes, packed). */
    interface DataDispatch<L> {
        void deliver(L listener, String name, byte[] data);
    }

    /** Set on a listener thread while it runs listeners: a close there must not wait for itself. */
    private static final ThreadLocal<Boolean> IN_LISTENER = ThreadLocal.withInitial(() -> false);

    private final CopyOnWriteArrayList<L> listeners = new CopyOnWriteArrayList<>();
    private final Dispatch<L> dispatch;
    private final DataDispatch<L> dataDispatch;
    private final String what;
    /**
     * Where the listeners run, in event order: the object's own daemon thread, made on first use,
     * so that a listener of another object that blocks cannot hold back this object's events.
     */
    private ExecutorService thread;
    private long subscription;

    EventSink(String what, Dispatch<L> dispatch) {
        this.what = what;
        this.dispatch = dispatch;
        this.dataDispatch = null;
    }

    EventSink(String what, DataDispatch<L> dataDispatch) {
        this.what = what;
        this.dispatch = null;
        this.dataDispatch = dataDispatch;
    }

    /** Adds {@code listener}; subscribes (the native side gets this sink) on the first one. */
    synchronized void add(L listener, LongSupplier subscribe) {
        listeners.addIfAbsent(listener);
        if (subscription == 0) {
            subscription = subscribe.getAsLong();
        }
    }

    void remove(L listener) {
        listeners.remove(listener);
    }

    synchronized Executor executor() {
        if (thread == null) {
            thread = Native.listenerThread();
        }
        return thread;
    }

    /** Called on {@link #executor()} by {@link Native}: every listener, each failure logged. */
    void deliver(String name, long fencingToken, ZkException reason) {
        each(name, l -> dispatch.deliver(l, name, fencingToken, reason));
    }

    /** As {@link #deliver(String, long, ZkException)}, for a sink made with a {@link DataDispatch}. */
    void deliver(String name, byte[] data) {
        each(name, l -> dataDispatch.deliver(l, name, data));
    }

    private void each(String name, java.util.function.Consumer<L> call) {
        IN_LISTENER.set(true);
        for (L l : listeners) {
            try {
                call.accept(l);
            } catch (Throwable t) {
                Native.LOG.log(System.Logger.Level.WARNING, what + " listener failed on " + name, t);
            }
        }
    }

    /**
     * Ends the subscription. {@code drain}: the events already emitted (a close's
     * {@code STOP_COMPLETE} or {@code CLOSED}) still reach the listeners first; the listener
     * thread ends once it has run them, before this returns (unless called by a listener).
     * Without it (the Cleaner) it ends at once.
     */
    void cancel(boolean drain) {
        long ending;
        synchronized (this) {
            ending = subscription;
            subscription = 0;
        }
        // Not under this object's lock: the events being drained need executor().
        if (ending != 0) {
            Native.subscriptionCancel(ending, drain);
        }
        ExecutorService ended;
        synchronized (this) {
            ended = thread;
        }
        if (ended != null) {
            ended.shutdown();
            // The drained events have run when close() returns, unless close() runs in a listener.
            if (drain && !IN_LISTENER.get()) {
                try {
                    ended.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
