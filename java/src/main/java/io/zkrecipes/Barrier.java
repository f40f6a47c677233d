package io.zkrecipes;

import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Curator's {@code DistributedBarrier} (and kazoo's {@code Barrier}) on the same node: up while
 * {@code path} exists. Waiters are released once it is removed, also when that happened while
 * they were disconnected (they look again at the reconnect).
 */
public final class Barrier extends NativeObject {
    private static final WaitSpans.Call WAIT = WaitSpans.call("barrier.wait");
    private final String path;
    private final Waits waits = new Waits();

    public Barrier(Client client, String barrierPath) {
        super(Objects.requireNonNull(client, "client").withHandle(
            h -> Native.barrierNew(h, Objects.requireNonNull(barrierPath, "barrierPath"))), Native::barrierFree);
        this.path = barrierPath;
    }

    private <T> T call(int op) {
        return join((h, f) -> Native.barrierCall(h, op, f));
    }

    /** Puts the barrier up (creates its node; missing parents too). A barrier already up stays up. */
    public void setBarrier() {
        call(0);
    }

    /** Takes the barrier down, releasing every waiter. A barrier already down stays down; NOT_EMPTY if its node has children. */
    public void removeBarrier() {
        call(1);
    }

    /** Whether the barrier is up now. */
    public boolean isSet() {
        return this.<Boolean>call(2);
    }

    /** Waits until the barrier is down (at once if it is not up); an interrupt ends the wait. */
    public void waitOnBarrier() throws InterruptedException {
        Native.joinInterruptibly(waitOp(true, 0));
    }

    /** {@code true} once the barrier is down, {@code false} if the timeout passed first (zero or negative: a check). */
    public boolean waitOnBarrier(long maxWait, TimeUnit unit) throws InterruptedException {
        long nanos = Objects.requireNonNull(unit, "unit").toNanos(maxWait);
        return Native.joinInterruptibly(waitOp(false, nanos));
    }

    private Native.Op<Boolean> waitOp(boolean forever, long timeoutNanos) {
        return waits.track(beginWait(WAIT, path, WaitSpans.NO_TOKEN,
            (h, f) -> Native.barrierWait(h, forever, timeoutNanos, f), null));
    }

    public String getPath() {
        return path;
    }

    /** Ends the waits of other threads on this object (they throw CLOSED), then frees it. Closing twice is harmless. */
    @Override
    public void close() {
        waits.endAll("the barrier " + path);
        super.close();
    }

    @Override
    public String toString() {
        return describe(path);
    }
}
