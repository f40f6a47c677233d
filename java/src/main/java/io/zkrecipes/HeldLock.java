package io.zkrecipes;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.function.LongConsumer;

/**
 * What a {@link ZkLock} and a {@link MultiLock} share: {@link Lock}'s calls, reentrant per
 * thread, over the native calls of their kind. Cancelling a {@link #lockAsync()} future (or
 * letting {@code orTimeout} fire) withdraws the attempt; a hold obtained after that is released,
 * never kept. {@link #close()} releases every thread's holds and frees the native object.
 *
 * @param <T> what a hold is fenced with: one token, or one per path
 */
public abstract class HeldLock<T> extends NativeObject implements Lock {
    /** The native calls of one kind of lock, on its handle. */
    record Calls(Acquire acquire, OwnerTask release, OwnerCall abandon, HoldCount holdCount,
                 java.util.function.LongPredicate isHeld, Task releaseAll) {
    }

    interface Acquire {
        long start(long handle, long owner, boolean forever, long timeoutNanos, CompletableFuture<Object> f);
    }

    interface OwnerTask {
        long start(long handle, long owner, CompletableFuture<Object> f);
    }

    interface OwnerCall {
        void call(long handle, long owner);
    }

    interface HoldCount {
        int of(long handle, long owner);
    }

    private static final boolean FOREVER = true, TIMED = false;

    private final Client client;
    private final Calls calls;

    HeldLock(Client client, long handle, LongConsumer free, Calls calls) {
        super(handle, free);
        this.client = client;
        this.calls = calls;
    }

    static long owner() {
        return Thread.currentThread().getId();
    }

    /** What the lock is on, for messages. */
    abstract String what();

    /** The {@code path} of an acquire's span, as the core's metrics name it. */
    abstract String waitPath();

    /** Which acquire it is, as the core names it for the spans (a lock's, a read side's, a multi-lock's). */
    abstract WaitSpans.Call acquireCall();

    /** The events to stop before the native object is freed, if any. */
    EventSink<?> eventsToStop() {
        return null;
    }

    private Native.Op<Object> acquire(boolean forever, long timeoutNanos) {
        long owner = owner();
        // A hold obtained for a caller that gave up (cancel, timeout, interrupt) is released.
        return beginWait(acquireCall(), waitPath(), WaitSpans.ANSWER_IS_TOKEN,
            (h, f) -> calls.acquire().start(h, owner, forever, timeoutNanos, f),
            token -> with(g -> {
                calls.abandon().call(g, owner);
                return null;
            }));
    }

    /** Waits as long as it takes; interrupts are remembered, not obeyed (as {@code Lock.lock()}). */
    @Override
    public void lock() {
        Native.join(acquire(FOREVER, 0));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        Native.joinInterruptibly(acquire(FOREVER, 0));
    }

    /** Without waiting; one request when somebody visibly holds the lock. */
    @Override
    public boolean tryLock() {
        return Native.join(acquire(TIMED, 0)) != null;
    }

    /** One deadline for the whole call; nothing is left on the server when it passes. */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        return Native.joinInterruptibly(acquire(TIMED, unit.toNanos(time))) != null;
    }

    /**
     * Drops one hold; the last one returns once the server confirmed the delete.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     */
    @Override
    public void unlock() {
        try {
            Native.join(unlockAsyncOp());
        } catch (ZkException e) {
            if (e.getCode() == ZkException.Code.NOT_OWNER) {
                throw new IllegalMonitorStateException("the current thread does not hold the lock on " + what());
            }
            throw e;
        }
    }

    private Native.Op<Void> unlockAsyncOp() {
        long owner = owner();
        return begin((h, f) -> calls.release().start(h, owner, f));
    }

    /** ZooKeeper locks have no conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("zkrecipes locks do not support conditions");
    }

    /**
     * Acquires for the calling thread; completes with the fencing token. The future is the
     * native call's own, so that cancelling it withdraws the attempt.
     */
    @SuppressWarnings("unchecked")
    public CompletableFuture<T> lockAsync() {
        return (CompletableFuture<T>) (CompletableFuture<?>) acquire(FOREVER, 0).future();
    }

    /** Releases a hold of the calling thread. */
    public CompletableFuture<Void> unlockAsync() {
        return unlockAsyncOp().future();
    }

    public boolean isHeldByCurrentThread() {
        return getHoldCount() > 0;
    }

    public int getHoldCount() {
        long owner = owner();
        return with(h -> calls.holdCount().of(h, owner));
    }

    /** Held by some thread through this object. */
    public boolean isLocked() {
        return with(h -> calls.isHeld().test(h));
    }

    public Client getClient() {
        return client;
    }

    /** Releases every thread's holds (none is left stranded on the server) and frees the native object. */
    @Override
    public void close() {
        closeAfter(() -> {
            if (!client.isClosed()) {
                join(calls.releaseAll());
            }
        }, eventsToStop(), NO_FAILURE);
    }

    @Override
    public String toString() {
        return describe(!isClosed() && isLocked() ? what() + ", locked" : what());
    }
}
