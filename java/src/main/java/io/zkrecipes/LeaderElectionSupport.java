package io.zkrecipes;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Leader election with the nodes ({@code n_<seq>} holding the host name) and the events of
 * Apache's {@code LeaderElectionSupport}, in Apache's order. Unlike Apache's recipe the root is
 * created if missing, and a leader that loses its session is told ({@code FAILED}) and offers
 * itself again once the client has a new session, unless stopped.
 */
public final class LeaderElectionSupport extends NativeObject {
    private static final WaitSpans.Call AWAIT_LEADERSHIP = WaitSpans.call("election.await_leadership");
    /** Apache's event names. */
    public enum EventType {
        START, OFFER_START, OFFER_COMPLETE, DETERMINE_START, DETERMINE_COMPLETE, ELECTED_START,
        ELECTED_COMPLETE, READY_START, READY_COMPLETE, FAILED, STOP_START, STOP_COMPLETE,
        /** The leader's connection dropped: it may no longer lead (zkrecipes addition). */
        SUSPENDED,
        /** The leader's session is back and it still leads (zkrecipes addition). */
        RECONNECTED
    }

    private final Client client;
    private final String rootNodeName;
    private final String hostName;
    private final EventSink<LeaderElectionAware> events;

    public LeaderElectionSupport(Client client, String rootNodeName, String hostName) {
        super(Objects.requireNonNull(client, "client").withHandle(h -> Native.electionNew(h,
            Objects.requireNonNull(rootNodeName, "rootNodeName"), Objects.requireNonNull(hostName, "hostName"))),
            Native::electionFree);
        this.client = client;
        this.rootNodeName = rootNodeName;
        this.hostName = hostName;
        this.events = events("election", (l, name, token, reason) ->
            l.onElectionEvent(new ElectionEvent(EventType.valueOf(name), reason)));
    }

    private <T> Native.Op<T> call(int op) {
        return begin((h, f) -> Native.electionCall(h, op, f));
    }

    /** Offers this member; returns once it knows whether it leads. */
    public void start() {
        Native.join(call(0));
    }

    /** Withdraws the offer (a leader hands over); returns once the node is gone. */
    public void stop() {
        Native.join(call(1));
    }

    public CompletableFuture<Void> startAsync() {
        return this.<Void>call(0).future();
    }

    public CompletableFuture<Void> stopAsync() {
        return this.<Void>call(1).future();
    }

    /** The current leader's host name, or {@code null} with no members. */
    public String getLeaderHostName() {
        return Native.join(call(2));
    }

    public String getRootNodeName() {
        return rootNodeName;
    }

    public String getHostName() {
        return hostName;
    }

    public boolean isLeader() {
        return with(Native::electionIsLeader);
    }

    /** {@code true} once this member leads, {@code false} if the timeout passed first. */
    public boolean awaitLeadership(long timeout, TimeUnit unit) throws InterruptedException {
        long nanos = Objects.requireNonNull(unit, "unit").toNanos(timeout);
        return Native.joinInterruptibly(beginWait(AWAIT_LEADERSHIP, rootNodeName,
            WaitSpans.NO_TOKEN, (h, f) -> Native.electionAwaitLeadership(h, false, nanos, f), null));
    }

    /** A {@code null} listener (Apache's constructors allow one) is ignored. */
    public void addListener(LeaderElectionAware listener) {
        if (listener != null) {
            listen(events, listener, Native::electionSubscribe);
        }
    }

    public void removeListener(LeaderElectionAware listener) {
        events.remove(listener);
    }

    /** Stops (if started) and frees the native member. */
    @Override
    public void close() {
        closeAfter(() -> {
            if (!isClientClosed()) {
                stop();
            }
        }, events, NO_FAILURE);
    }

    private boolean isClientClosed() {
        try {
            with(h -> h);
            return false;
        } catch (ZkException e) {
            return true;
        }
    }
}
