package io.zkrecipes;

import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A FIFO queue of {@code qn-} nodes, shared with Apache's {@code DistributedQueue} and Curator's
 * {@code SimpleDistributedQueue}; every item goes to exactly one consumer. An {@code offer} that
 * fails with CONNECTION_LOSS may or may not have enqueued the item.
 */
public final class DistributedQueue extends NativeObject {
    private static final WaitSpans.Call TAKE = WaitSpans.call("queue.take");
    private final String dir;

    public DistributedQueue(Client client, String dir) {
        super(Objects.requireNonNull(client, "client").withHandle(h -> Native.queueNew(h, Objects.requireNonNull(dir, "dir"))),
            Native::queueFree);
        this.dir = dir;
    }

    /** Apache's {@code DistributedQueue(zk, dir, acl)}, ported: see {@link WriteLock#WriteLock(Client, String, java.util.List, LockListener)} for the ACL. */
    public DistributedQueue(Client client, String dir, java.util.List<?> acl) {
        this(client, dir);
        ApacheAcl.check(acl, dir, this);
    }

    /** The largest payload {@code offer} accepts; bigger ones fail with INVALID_ARGUMENT, nothing sent. */
    public int getMaxPayload() {
        return with(Native::queueMaxPayload);
    }

    /** Appends {@code data}; always {@code true} (Apache's signature). */
    public boolean offer(byte[] data) {
        Native.join(offerOp(data));
        return true;
    }

    /** Appends {@code data}; completes with the item's node path. */
    public CompletableFuture<String> offerAsync(byte[] data) {
        return offerOp(data).future();
    }

    private Native.Op<String> offerOp(byte[] data) {
        Objects.requireNonNull(data, "data");
        return begin((h, f) -> Native.queueOffer(h, data, f));
    }

    private <T> T head(int op) {
        return Native.join(begin((h, f) -> Native.queueHead(h, op, f), this::giveBack));
    }

    /** Items taken for a caller that gave up (cancel, timeout, interrupt) go back to their places. */
    private void giveBack(Object taken) {
        if (taken instanceof Native.Item item) {
            with(h -> Native.queueGiveBack(h, item.name(), item.data(), new CompletableFuture<>()));
        } else if (taken instanceof Native.Items items) {
            items.items().forEach(this::giveBack);
        }
    }

    /** The head item, or {@code null} when empty. */
    public byte[] peek() {
        return head(0);
    }

    /** Removes and returns the head item, or {@code null} when empty. */
    public byte[] poll() {
        return head(1);
    }

    /** @throws NoSuchElementException when empty (as Apache's recipe) */
    public byte[] element() {
        return orNoSuchElement(2);
    }

    /** @throws NoSuchElementException when empty (as Apache's recipe) */
    public byte[] remove() {
        return orNoSuchElement(3);
    }

    private byte[] orNoSuchElement(int op) {
        try {
            return head(op);
        } catch (ZkException e) {
            if (e.getCode() == ZkException.Code.NO_SUCH_ELEMENT) {
                throw new NoSuchElementException(e.getDetail());
            }
            throw e;
        }
    }

    /** Waits for an item; an interrupt withdraws the wait. */
    public byte[] take() throws InterruptedException {
        return Native.joinInterruptibly(takeOp(true, 0));
    }

    /** Waits up to {@code timeout} for an item; {@code null} if none came. */
    public byte[] poll(long timeout, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return Native.joinInterruptibly(takeOp(false, unit.toNanos(timeout)));
    }

    /** Cancelling the future (or {@code orTimeout}) withdraws the wait; an item taken meanwhile goes back. */
    public CompletableFuture<byte[]> takeAsync() {
        return takeOp(true, 0).future();
    }

    private Native.Op<byte[]> takeOp(boolean forever, long timeoutNanos) {
        return beginWait(TAKE, dir, WaitSpans.NO_TOKEN,
            (h, f) -> Native.queueTake(h, forever, timeoutNanos, f), this::giveBack);
    }

    /**
     * Removes up to {@code max} items (1 to 1000) from the head, in queue order, in one
     * transaction (one write for the batch); an empty list when the queue is empty.
     *
     * @throws ZkException {@code INVALID_ARGUMENT} for a {@code max} out of range
     */
    public List<byte[]> pollMany(int max) {
        return Native.join(manyOp(max, false, false, 0));
    }

    /**
     * Waits up to {@code timeout} for an item, then takes up to {@code max} as {@link #pollMany}
     * does; an empty list if none came. An interrupt withdraws the wait, and a batch taken
     * meanwhile goes back.
     */
    public List<byte[]> takeMany(int max, long timeout, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        return Native.joinInterruptibly(manyOp(max, true, false, unit.toNanos(timeout)));
    }

    /** {@link #takeMany} without a bound; cancelling the future gives a batch taken meanwhile back. */
    public CompletableFuture<List<byte[]>> takeManyAsync(int max) {
        return manyOp(max, true, true, 0).future();
    }

    private Native.Op<List<byte[]>> manyOp(int max, boolean wait, boolean forever, long timeoutNanos) {
        Task many = (h, f) -> Native.queueMany(h, max, wait, forever, timeoutNanos, f);
        // A poll (no wait) is a plain call; a take of a batch waits as a take does.
        return wait ? beginWait(TAKE, dir, WaitSpans.NO_TOKEN, many, this::giveBack)
            : begin(many, this::giveBack);
    }

    /** The directory's child count: one request at any depth (a foreign child is counted too). */
    public int size() {
        Long n = head(4);
        return n.intValue();
    }

    public String getDir() {
        return dir;
    }
}
