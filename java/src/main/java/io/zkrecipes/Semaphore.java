package io.zkrecipes;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * At most {@code maxLeases} leases held at once among every process on {@code path}, Curator's
 * {@code InterProcessSemaphoreV2} included (its nodes: a mutex under {@code path/locks}, leases
 * under {@code path/leases}). Like {@link java.util.concurrent.Semaphore}, but each permit is a
 * {@link Lease} with its own fencing token, and a lost lease is told ({@code LOST}).
 *
 * <p>Timeouts follow {@code java.util.concurrent}: zero or negative is a try. Whenever a timed
 * acquire answers {@code null}, or an interrupt or a cancelled future ends it, nothing of it is
 * left on the server.
 */
public final class Semaphore extends NativeObject {
    private static final WaitSpans.Call ACQUIRE = WaitSpans.call("semaphore.acquire");
    private final String path;
    private final EventSink<LockListener> events =
        events("semaphore", (l, name, token, reason) -> l.onEvent(LockEvent.of(name, token, reason)));

    /** {@code maxLeases} at least 1 (else INVALID_ARGUMENT). */
    public Semaphore(Client client, String path, int maxLeases) {
        super(Objects.requireNonNull(client, "client").withHandle(
            h -> Native.semaphoreNew(h, Objects.requireNonNull(path, "path"), maxLeases)),
            Native::semaphoreFree);
        this.path = path;
    }

    public String getPath() {
        return path;
    }

    public int getMaxLeases() {
        return with(h -> Native.semaphoreNumber(h, 1));
    }

    /** Leases this object holds now (not released, not lost). */
    public int getHeld() {
        return with(h -> Native.semaphoreNumber(h, 0));
    }

    /** Waits for one lease; an interrupt withdraws the wait. */
    public Lease acquire() throws InterruptedException {
        return acquire(1).get(0);
    }

    /** Waits for {@code permits} leases, all or none (INVALID_ARGUMENT above {@code maxLeases}). */
    public List<Lease> acquire(int permits) throws InterruptedException {
        return Native.joinInterruptibly(acquireOp(permits, true, 0));
    }

    /** One lease if one is free now, else {@code null}. */
    public Lease tryAcquire() {
        List<Lease> got = Native.join(acquireOp(1, false, 0));
        return got == null ? null : got.get(0);
    }

    /** One lease within {@code timeout}, else {@code null}. */
    public Lease tryAcquire(long timeout, TimeUnit unit) throws InterruptedException {
        List<Lease> got = tryAcquire(1, timeout, unit);
        return got == null ? null : got.get(0);
    }

    /** {@code permits} leases, all or none, within {@code timeout}; {@code null} if not obtained. */
    public List<Lease> tryAcquire(int permits, long timeout, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return Native.joinInterruptibly(acquireOp(permits, false, unit.toNanos(timeout)));
    }

    /** Cancelling the future (or {@code orTimeout}) withdraws the wait; a lease granted meanwhile is released. */
    public CompletableFuture<Lease> acquireAsync() {
        CompletableFuture<List<Lease>> leases = acquireOp(1, true, 0).future();
        CompletableFuture<Lease> lease = leases.thenApply(got -> got.get(0));
        // Giving up on this future gives up the acquire; a lease granted just before is released.
        lease.whenComplete((got, error) -> {
            if (error != null && !leases.cancel(false)) {
                try {
                    List<Lease> unseen = leases.getNow(null);
                    if (unseen != null) {
                        unseen.forEach(Lease::abandon);
                    }
                } catch (CompletionException | java.util.concurrent.CancellationException failed) {
                    // The acquire itself failed: nothing was granted.
                }
            }
        });
        return lease;
    }

    private Native.Op<List<Lease>> acquireOp(int permits, boolean forever, long timeoutNanos) {
        Native.Op<Object> op = beginWait(ACQUIRE, path, Semaphore::firstToken,
            (h, f) -> Native.semaphoreAcquire(h, permits, forever, timeoutNanos, f), Semaphore::releaseUnseen);
        return Claim.handedOver(op, Semaphore::leases, got -> got.forEach(Lease::abandon));
    }

    /**
     * The fencing token of the first lease granted, as the core's numbers and events tell an
     * acquire's: read before the caller's future completes, while the handles are the acquire's.
     */
    private static Object firstToken(Object packed) {
        long[] raw = handles((byte[]) packed);
        return raw.length == 0 ? null : Native.leaseFencingToken(raw[0]);
    }

    private static List<Lease> leases(Object packed) {
        List<Lease> got = new ArrayList<>();
        for (long raw : handles((byte[]) packed)) {
            got.add(new Lease(raw));
        }
        return got;
    }

    private static long[] handles(byte[] packed) {
        ByteBuffer buffer = ByteBuffer.wrap(packed);
        long[] raw = new long[packed.length / 8];
        for (int i = 0; i < raw.length; i++) {
            raw[i] = buffer.getLong();
        }
        return raw;
    }

    /** Leases granted to a caller that gave up are released: freeing their handles does that. */
    private static void releaseUnseen(Object packed) {
        if (packed instanceof byte[] bytes) {
            for (long raw : handles(bytes)) {
                Native.leaseFree(raw);
            }
        }
    }

    /**
     * Releases the oldest lease this object holds, whoever took it (as
     * {@link java.util.concurrent.Semaphore#release()} gives a permit back); to give back a
     * particular lease, call its {@link Lease#release()}. Throws NOT_OWNER when it holds none.
     */
    public void release() {
        join((h, f) -> Native.semaphoreCall(h, 0, f));
    }

    /** Every process's lease nodes on the server now (a waiter's included). */
    public List<String> getLeaseNodes() {
        String text = join((h, f) -> Native.semaphoreCall(h, 2, f));
        return text.isEmpty() ? List.of() : Arrays.asList(text.split("\n"));
    }

    /** {@code ACQUIRED}, {@code RELEASED}, {@code SUSPENDED}, {@code RECONNECTED}, {@code LOST} for this object's leases. */
    public void addListener(LockListener listener) {
        listen(events, listener, Native::semaphoreSubscribe);
    }

    public void removeListener(LockListener listener) {
        events.remove(listener);
    }

    /** Releases every lease this object holds, then frees it. */
    @Override
    public void close() {
        // Any failure: a closed client's session took the leases with it.
        closeAfter(() -> join((h, f) -> Native.semaphoreCall(h, 1, f)), events, ANY_FAILURE);
    }

    @Override
    public String toString() {
        return describe(path);
    }
}
