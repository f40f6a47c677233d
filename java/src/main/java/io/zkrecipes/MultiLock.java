package io.zkrecipes;

import java.util.List;
import java.util.Objects;

/**
 * Exclusive locks on several paths held together, all or none: Curator's
 * {@code InterProcessMultiLock}, interoperable with it and with single locks on the same paths.
 *
 * <p>The locks are taken in the order of their paths, sorted, whatever order they were given in,
 * so two multi-locks over the same paths never wait for each other in a circle. On a timeout, a
 * failure or an interrupt the locks already taken are given back before the call returns.
 * {@link #unlock()} deletes the nodes last-taken first. Reentrant per thread, fenced by one token
 * per path. The client's listeners tell a connection's loss.
 */
public class MultiLock extends HeldLock<long[]> {
    private static final WaitSpans.Call ACQUIRE = WaitSpans.call("multi_lock.acquire");
    private static final Calls CALLS = new Calls(Native::multiLockAcquire, Native::multiLockRelease, Native::multiLockAbandon,
        Native::multiLockHoldCount, Native::multiLockIsHeld, Native::multiLockReleaseAll);

    private final List<String> dirs;

    /**
     * Exclusive locks on every directory of {@code dirs}.
     *
     * @throws ZkException {@code INVALID_ARGUMENT} for no path or a path given twice,
     *     {@code INVALID_PATH} for a bad one
     */
    public MultiLock(Client client, List<String> dirs) {
        super(Objects.requireNonNull(client, "client"),
            client.withHandle(h -> Native.multiLockNew(h, Objects.requireNonNull(dirs, "dirs").toArray(new String[0]))),
            Native::multiLockFree, CALLS);
        this.dirs = List.copyOf(dirs);
    }

    @Override
    String what() {
        return String.join(", ", dirs);
    }

    @Override
    String waitPath() {
        return with(Native::multiLockObservedPath);
    }

    @Override
    WaitSpans.Call acquireCall() {
        return ACQUIRE;
    }

    /** The current thread's fencing tokens, one per path in the order given; {@code null} if it holds none. */
    public long[] getFencingTokens() {
        long owner = owner();
        byte[] packed = with(h -> Native.multiLockFencingTokens(h, owner));
        return packed == null ? null : Native.longs(packed);
    }

    /** The lock directories, in the order given. */
    public List<String> getDirs() {
        return dirs;
    }
}
