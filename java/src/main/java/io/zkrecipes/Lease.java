package io.zkrecipes;

import java.util.concurrent.CompletableFuture;

/**
 * One held lease of a {@link Semaphore}: its fencing token, its node, and its release (once).
 * {@code close()} (try-with-resources) releases a lease that was not released, as does a lease
 * that becomes unreachable (when the garbage collector finds it).
 */
public final class Lease extends Claim {
    private final long fencingToken;
    private final String nodePath;

    Lease(long handle) {
        super(handle, Native::leaseFree);
        this.fencingToken = with(Native::leaseFencingToken);
        this.nodePath = with(Native::leaseNodePath);
    }

    /** The czxid of the lease's node: pass it to the resource you protect. */
    public long getFencingToken() {
        return fencingToken;
    }

    /** {@code <path>/leases/_c_<uuid>-lease-<sequence>}. */
    public String getNodePath() {
        return nodePath;
    }

    /** Not released and not lost (the semaphore's listeners hear {@code LOST}). */
    public boolean isHeld() {
        return !isClosed() && with(Native::leaseIsHeld);
    }

    /**
     * Deletes the lease's node and returns once the server confirmed it. Throws the loss's
     * {@link ZkException} if the lease was lost before, NOT_OWNER if it was released already.
     */
    public void release() {
        Native.join(releaseOp());
    }

    public CompletableFuture<Void> releaseAsync() {
        return async(this::releaseOp);
    }

    private Native.Op<Void> releaseOp() {
        return settle(Native::leaseRelease);
    }

    /** Releases the lease unless it was released already (a lost lease is let go quietly). */
    @Override
    public void close() {
        closeUnsettled(this::release);
    }

    @Override
    public String toString() {
        return "Lease[" + nodePath + ", token " + fencingToken + (isHeld() ? ", held]" : "]");
    }
}
