package io.zkrecipes;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Curator's {@code DistributedDoubleBarrier} (and kazoo's {@code DoubleBarrier}) on the same
 * nodes: {@code memberCount} members enter together and leave together. Each object is one
 * member ({@code <path>/<uuid>}, ephemeral); the member that makes the count creates
 * {@code <path>/ready}.
 *
 * <p>An enter or leave that times out ({@code false}), fails, or is interrupted withdraws this
 * member's node, so a later round never counts a member that gave up.
 */
public final class DoubleBarrier extends NativeObject {
    private static final WaitSpans.Call LEAVE = WaitSpans.call("double_barrier.leave");
    private static final WaitSpans.Call ENTER = WaitSpans.call("double_barrier.enter");
    private final String path;
    private final Waits waits = new Waits();

    /** {@code memberCount} 1 to {@code Integer.MAX_VALUE}, else INVALID_ARGUMENT. */
    public DoubleBarrier(Client client, String barrierPath, int memberCount) {
        super(Objects.requireNonNull(client, "client").withHandle(h -> Native.doubleBarrierNew(h,
            Objects.requireNonNull(barrierPath, "barrierPath"), memberCount)), Native::doubleBarrierFree);
        this.path = barrierPath;
    }

    /** Enters and waits until {@code memberCount} members are in. */
    public void enter() throws InterruptedException {
        Native.joinInterruptibly(pass(false, true, 0));
    }

    /** {@code true} once {@code memberCount} members are in; {@code false} (our node withdrawn) if the timeout passed first. */
    public boolean enter(long maxWait, TimeUnit unit) throws InterruptedException {
        long nanos = Objects.requireNonNull(unit, "unit").toNanos(maxWait);
        return Native.joinInterruptibly(pass(false, false, nanos));
    }

    /** Leaves and waits until every member has left (the last one takes {@code ready} down). */
    public void leave() throws InterruptedException {
        Native.joinInterruptibly(pass(true, true, 0));
    }

    /** {@code true} once every member has left; {@code false} if the timeout passed first (our node is withdrawn in any case). */
    public boolean leave(long maxWait, TimeUnit unit) throws InterruptedException {
        long nanos = Objects.requireNonNull(unit, "unit").toNanos(maxWait);
        return Native.joinInterruptibly(pass(true, false, nanos));
    }

    private Native.Op<Boolean> pass(boolean leave, boolean forever, long timeoutNanos) {
        // An enter that succeeded after its caller gave up (an interrupt at that very moment)
        // must not leave a member behind that its caller thinks is out.
        return waits.track(beginWait(leave ? LEAVE : ENTER, path, WaitSpans.NO_TOKEN,
            (h, f) -> Native.doubleBarrierPass(h, leave, forever, timeoutNanos, f),
            entered -> {
                if (!leave && Boolean.TRUE.equals(entered)) {
                    withdraw();
                }
            }));
    }

    /** Leaves without waiting if our node is in (started here, not waited for). */
    private Native.Op<Void> withdraw() {
        return begin((h, f) -> Native.doubleBarrierCall(h, 2, f));
    }

    /** The member nodes' names now ({@code ready} not among them), in Curator's order. */
    public List<String> getMembers() {
        String text = join((h, f) -> Native.doubleBarrierCall(h, 0, f));
        return text.isEmpty() ? List.of() : Arrays.asList(text.split("\n"));
    }

    /** Whether {@code ready} exists: the barrier opened and not every member has left. */
    public boolean isReady() {
        return join((h, f) -> Native.doubleBarrierCall(h, 1, f));
    }

    /** This member's node: {@code <path>/<uuid>}. */
    public String getNodePath() {
        return with(Native::doubleBarrierNodePath);
    }

    public int getMemberCount() {
        return with(Native::doubleBarrierMemberCount);
    }

    public String getPath() {
        return path;
    }

    /**
     * Ends the enters and leaves of other threads on this object (they throw CLOSED), withdraws
     * this member if it is in (a leave that does not wait: the others are not held up by a
     * member that went away), then frees the native object. Closing twice is harmless.
     */
    @Override
    public void close() {
        // Any failure: a closed client's session took our node with it.
        closeAfter(() -> {
            waits.endAll("the double barrier " + path);
            Native.join(withdraw());
        }, null, ANY_FAILURE);
    }

    @Override
    public String toString() {
        return "DoubleBarrier[" + path + ", " + (isClosed() ? "closed]" : getMemberCount() + " members]");
    }
}
