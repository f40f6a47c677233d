package io.zkrecipes;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * At-least-once jobs in kazoo's {@code LockingQueue} layout: a worker takes a job
 * ({@link #consume()}), works on it, and acknowledges it ({@link Delivery#ack()}); a job whose
 * worker dies, loses its session or gives it back is delivered again. Lower priority (0-999)
 * first, FIFO within one.
 */
public final class WorkQueue extends NativeObject {
    private static final WaitSpans.Call CONSUME = WaitSpans.call("work_queue.consume");
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
        return async(() -> offerOp(data, priority));
    }

    private Native.Op<String> offerOp(byte[] data, int priority) {
        Objects.requireNonNull(data, "data");
        return begin((h, f) -> Native.workQueueOffer(h, data, priority, f));
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
        String paths = join((h, f) -> Native.workQueueOfferAll(h, bytes, priority, f));
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
        Native.Op<Object> op = beginWait(CONSUME, path, WaitSpans.NO_TOKEN,
            (h, f) -> Native.workQueueConsume(h, forever, timeoutNanos, f), WorkQueue::giveBack);
        return Claim.handedOver(op, handle -> new Delivery((Long) handle), Delivery::abandon);
    }

    /** A job claimed for a caller that gave up goes back: freeing its handle does that. */
    private static void giveBack(Object handle) {
        if (handle instanceof Long raw) {
            Native.deliveryFree(raw);
        }
    }

    /** Jobs in the queue, claimed ones included (one request). */
    public int size() {
        Long n = join((h, f) -> Native.workQueueCall(h, 0, f));
        return n.intValue();
    }

    /** Gives back the jobs prefetched and not handed out, then frees this object. */
    @Override
    public void close() {
        // Any failure: a closed client's session took the claims with it.
        closeAfter(() -> join((h, f) -> Native.workQueueCall(h, 1, f)), null, ANY_FAILURE);
    }
}
