package io.zkrecipes;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * At-least-once jobs in kazoo's {@code LockingQueue} layout: a worker takes a job
 * ({@link #consume()}), works on it, and acknowledges it ({@link Delivery#ack()}); a job whose
 * worker dies, loses its session or gives it back is delivered again. Lower priority (0-999)
 * first, FIFO within one.
 */
public final class WorkQueue extends NativeObject {
    public static final int DEFAULT_PRIORITY = 100;
    private final String path;

    /** One job claimed at a time, no delivery limit. */
    public WorkQueue(Client client, String path) {
        this(client, path, 1, 0);
    }

    /**
     * {@code prefetch} jobs (1-1000) claimed per transaction (held by this object until handed
     * out); a job delivered {@code maxDeliveries} times (0: no limit; negative is
     * INVALID_ARGUMENT) moves to {@link #getDeadLetterPath()}.
     */
    public WorkQueue(Client client, String path, int prefetch, int maxDeliveries) {
        super(Objects.requireNonNull(client, "client").withHandle(
            h -> Native.workQueueNew(h, Objects.requireNonNull(path, "path"), prefetch, maxDeliveries)),
            Native::workQueueFree);
        this.path = path;
    }

    public String getPath() {
        return path;
    }

    public String getDeadLetterPath() {
        return with(Native::workQueueDeadLetterPath);
    }

    public int getMaxPayload() {
        return with(Native::workQueueMaxPayload);
    }

    /** Appends a job with priority 100; returns its node path. */
    public String offer(byte[] data) {
        return offer(data, DEFAULT_PRIORITY);
    }

    public String offer(byte[] data, int priority) {
        return Native.join(offerOp(data, priority));
    }

    /** Fails the future (never throws) on bad input or a closed queue. */
    public CompletableFuture<String> offerAsync(byte[] data, int priority) {
        try {
            return offerOp(data, priority).future();
        } catch (ZkException | NullPointerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private Native.Op<String> offerOp(byte[] data, int priority) {
        Objects.requireNonNull(data, "data");
        return with(h -> Native.<String>start(f -> Native.workQueueOffer(h, data, priority, f)));
    }

    /** Appends every job in order: one transaction per batch under the server's packet limit. */
    public List<String> offerAll(List<byte[]> items, int priority) {
        Objects.requireNonNull(items, "items");
        ByteArrayOutputStream packed = new ByteArrayOutputStream();
        for (byte[] item : items) {
            Objects.requireNonNull(item, "item");
            packed.writeBytes(ByteBuffer.allocate(4).putInt(item.length).array());
            packed.writeBytes(item);
        }
        byte[] bytes = packed.toByteArray();
        String paths = Native.join(with(h -> Native.<String>start(f -> Native.workQueueOfferAll(h, bytes, priority, f))));
        return paths.isEmpty() ? List.of() : Arrays.asList(paths.split("\n"));
    }

    /** Waits for a job, claimed for this worker; an interrupt withdraws the wait. */
    public Delivery consume() throws InterruptedException {
        return Native.joinInterruptibly(consumeOp(true, 0));
    }

    /**
     * Waits up to {@code timeout} for a job; {@code null} if none came. Like
     * {@code BlockingQueue.poll}, a timeout of zero or less is a try (a claim under way is waited
     * for while connected, so a ready job is delivered).
     */
    public Delivery consume(long timeout, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return Native.joinInterruptibly(consumeOp(false, unit.toNanos(timeout)));
    }

    /** Cancelling the future (or {@code orTimeout}) withdraws the wait; a job claimed meanwhile goes back. */
    public CompletableFuture<Delivery> consumeAsync() {
        return consumeOp(true, 0).future();
    }

    private Native.Op<Delivery> consumeOp(boolean forever, long timeoutNanos) {
        Native.Op<Object> op = with(h -> Native.start(f -> Native.workQueueConsume(h, forever, timeoutNanos, f),
            WorkQueue::giveBack));
        // The raw handle belongs to `op` until it completes, then to the Delivery made from it:
        // whoever gives up (cancel, orTimeout, completeExceptionally, an interrupt) the job goes
        // back exactly once, through its one owner.
        CompletableFuture<Delivery> delivery = new CompletableFuture<>();
        op.future().whenComplete((handle, error) -> {
            if (error != null) {
                delivery.completeExceptionally(error instanceof CompletionException c ? c.getCause() : error);
                return;
            }
            if (handle == null) {
                delivery.complete(null);
                return;
            }
            Delivery got = new Delivery((Long) handle);
            if (!delivery.complete(got)) {
                // On the callback thread: a blocking nack would wait for this very thread.
                got.abandon();
            }
        });
        delivery.whenComplete((d, e) -> {
            if (e != null) {
                op.future().cancel(false);
            }
        });
        return new Native.Op<>(delivery, op.task());
    }

    /** A job claimed for a caller that gave up goes back: freeing its handle does that. */
    private static void giveBack(Object handle) {
        if (handle instanceof Long raw) {
            Native.deliveryFree(raw);
        }
    }

    /** Jobs in the queue, claimed ones included (one request). */
    public int size() {
        Long n = Native.join(with(h -> Native.<Long>start(f -> Native.workQueueCall(h, 0, f))));
        return n.intValue();
    }

    /** Gives back the jobs prefetched and not handed out, then frees this object. */
    @Override
    public void close() {
        if (!isClosed()) {
            try {
                Native.join(with(h -> Native.<Void>start(f -> Native.workQueueCall(h, 1, f))));
            } catch (ZkException e) {
                // A closed client: its session took the claims with it.
            }
        }
        super.close();
    }
}
