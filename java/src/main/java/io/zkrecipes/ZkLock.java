package io.zkrecipes;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A fair ZooKeeper lock, reentrant per thread like {@link java.util.concurrent.locks.ReentrantLock}:
 * a {@link WriteLock} or one side of a {@link ReadWriteLock}.
 *
 * <p>Every hold has a fencing token (the czxid of the lock node, increasing across the
 * ensemble) to hand to the resource the lock protects. A holder whose node vanishes (session
 * expired, deleted by an operator) is told through {@link LockListener#lockLost}; one whose
 * connection drops is told {@link LockListener#lockSuspended} at once. Listeners run on the
 * lock's own listener thread and may call any method of the library, this lock's included.
 * Cancelling a {@link #lockAsync()} future (or letting {@code orTimeout} fire) withdraws the
 * attempt; a lock obtained after that is released, never kept.
 * {@link #close()} releases every thread's holds and frees the native lock.
 */
public class ZkLock extends NativeObject implements Lock {
    private final Client client;
    private final String dir;
    private final EventSink<LockListener> events =
        events("lock", (l, name, token, reason) -> l.onEvent(LockEvent.of(name, token, reason)));

    ZkLock(Client client, long handle, String dir) {
        super(handle, Native::lockFree);
        this.client = client;
        this.dir = dir;
    }

    static long owner() {
        return Thread.currentThread().getId();
    }

    private static final boolean FOREVER = true, TIMED = false;

    private Native.Op<Long> acquire(boolean forever, long timeoutNanos) {
        long owner = owner();
        // A hold obtained for a caller that gave up (cancel, timeout, interrupt) is released.
        return with(h -> Native.start(f -> Native.lockAcquire(h, owner, forever, timeoutNanos, f),
            token -> with(g -> {
                Native.lockAbandon(g, owner);
                return null;
            })));
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
        long owner = owner();
        try {
            Native.join(with(h -> Native.<Void>start(f -> Native.lockRelease(h, owner, f))));
        } catch (ZkException e) {
            if (e.getCode() == ZkException.Code.NOT_OWNER) {
                throw new IllegalMonitorStateException("the current thread does not hold the lock on " + dir);
            }
            throw e;
        }
    }

    /** ZooKeeper locks have no conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("zkrecipes locks do not support conditions");
    }

    /** Acquires for the calling thread; completes with the fencing token. */
    public CompletableFuture<Long> lockAsync() {
        return acquire(FOREVER, 0).future();
    }

    /** Releases a hold of the calling thread. */
    public CompletableFuture<Void> unlockAsync() {
        long owner = owner();
        return with(h -> Native.<Void>start(f -> Native.lockRelease(h, owner, f))).future();
    }

    /** The fencing token of the current thread's hold, or -1 if this thread does not hold the lock. */
    public long getFencingToken() {
        long owner = owner();
        return with(h -> Native.lockFencingToken(h, owner));
    }

    public boolean isHeldByCurrentThread() {
        return getHoldCount() > 0;
    }

    public int getHoldCount() {
        long owner = owner();
        return with(h -> Native.lockHoldCount(h, owner));
    }

    /** Held by some thread through this object. */
    public boolean isLocked() {
        return with(Native::lockIsHeld);
    }

    public String getDir() {
        return dir;
    }

    public Client getClient() {
        return client;
    }

    /** Every contender in lock order, the holder first. */
    public List<Participant> getParticipants() {
        String text = Native.join(with(h -> Native.<String>start(f -> Native.lockParticipants(h, f))));
        List<Participant> participants = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            String[] parts = line.split("\t", -1);
            participants.add(new Participant(parts[0], parts[1], parts[2].equals("R")));
        }
        return participants;
    }

    public void addListener(LockListener listener) {
        Objects.requireNonNull(listener, "listener");
        events.add(listener, () -> with(h -> Native.lockSubscribe(h, events)));
    }

    public void removeListener(LockListener listener) {
        events.remove(listener);
    }

    /** Releases every thread's holds (none is left stranded on the server) and frees the native lock. */
    @Override
    public void close() {
        if (isClosed()) {
            return;
        }
        try {
            if (!client.isClosed()) {
                Native.join(with(h -> Native.<Void>start(f -> Native.lockReleaseAll(h, f))));
            }
        } finally {
            events.cancel(true);
            super.close();
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + dir + (isClosed() ? ", closed]" : isLocked() ? ", locked]" : "]");
    }
}
