package io.zkrecipes;

import java.util.concurrent.CompletableFuture;

/**
 * A job claimed from a {@link WorkQueue} for this worker: {@link #ack()} when done, {@link #nack()}
 * to give it back at its place. {@code close()} (try-with-resources) gives back a job that was
 * neither, as does a delivery that becomes unreachable.
 */
public final class Delivery extends Claim {
    private final byte[] data;
    private final String name;
    private final int priority;
    private final int deliveryCount;

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
        return async(() -> settle(true));
    }

    /** {@link #nack()} as a future; a delivery settled already fails it with INVALID_ARGUMENT. */
    public CompletableFuture<Void> nackAsync() {
        return async(() -> settle(false));
    }

    private Native.Op<Void> settle(boolean ack) {
        return settle((h, f) -> Native.deliverySettle(h, ack, f));
    }

    /** Gives the job back unless it was acknowledged or given back already. */
    @Override
    public void close() {
        closeUnsettled(this::nack);
    }

    @Override
    public String toString() {
        return "Delivery[" + name + ", delivery " + deliveryCount + ", " + data.length + " bytes]";
    }
}
