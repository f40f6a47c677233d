package io.zkrecipes;

import java.util.concurrent.CompletableFuture;

/**
 * A job claimed from a {@link WorkQueue} for this worker: {@link #ack()} when done, {@link #nack()}
 * to give it back at its place. {@code close()} (try-with-resources) gives back a job that was
 * neither, as does a delivery that becomes unreachable.
 */
public final class Delivery extends NativeObject {
    private final byte[] data;
    private final String name;
    private final int priority;
    private final int deliveryCount;
    private volatile boolean settled;

    Delivery(long handle) {
        super(handle, Native::deliveryFree);
        this.data = with(Native::deliveryData);
        this.name = with(Native::deliveryName);
        this.priority = with(h -> Native.deliveryNumber(h, 0));
        this.deliveryCount = with(h -> Native.deliveryNumber(h, 1));
    }

    /** The payload (a copy). */
    public byte[] getData() {
        return data.clone();
    }

    /** The entry's node name, {@code entry-<priority>-<sequence>}. */
    public String getName() {
        return name;
    }

    /** 0 (first) to 999. */
    public int getPriority() {
        return priority;
    }

    /** How many times this job was delivered, this time included. */
    public int getDeliveryCount() {
        return deliveryCount;
    }

    /** Deletes the job. Throws SESSION_EXPIRED if the claim went with its session (delivered again). */
    public void ack() {
        Native.join(settle(true));
    }

    /** Gives the job back at its place in line. */
    public void nack() {
        Native.join(settle(false));
    }

    /** {@link #ack()} as a future; a delivery settled already fails it with INVALID_ARGUMENT. */
    public CompletableFuture<Void> ackAsync() {
        return settleAsync(true);
    }

    /** {@link #nack()} as a future; a delivery settled already fails it with INVALID_ARGUMENT. */
    public CompletableFuture<Void> nackAsync() {
        return settleAsync(false);
    }

    private CompletableFuture<Void> settleAsync(boolean ack) {
        try {
            return settle(ack).future();
        } catch (ZkException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private Native.Op<Void> settle(boolean ack) {
        Native.Op<Void> op = with(h -> Native.<Void>start(f -> Native.deliverySettle(h, ack, f)));
        settled = true;
        return op;
    }

    /**
     * Frees the handle without waiting: the native side gives an unsettled job back in the
     * background. For callback threads, which must never block on an operation whose completion
     * they would deliver themselves.
     */
    void abandon() {
        super.close();
    }

    /** Gives the job back unless it was acknowledged or given back already. */
    @Override
    public void close() {
        if (!settled && !isClosed()) {
            try {
                nack();
            } catch (ZkException e) {
                // Its claim went with its session: it is free again anyway.
            }
        }
        super.close();
    }

    @Override
    public String toString() {
        return "Delivery[" + name + ", delivery " + deliveryCount + ", " + data.length + " bytes]";
    }
}
