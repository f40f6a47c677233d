package io.zkrecipes;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Curator's {@code LeaderLatch}, on its nodes ({@code <path>/_c_<uuid>-latch-<seq>} holding the
 * participant's id), so zkrecipes and Curator processes take part in one election. The leader
 * gets a fencing token (its node's czxid, increasing across leaders) and is told
 * {@code SUSPENDED} when its connection drops, {@code RECONNECTED} when the same session is
 * back, and {@code NOT_LEADER} once another participant may lead; it then lines up again by
 * itself, until closed.
 *
 * <pre>{@code
 * try (LeaderLatch latch = new LeaderLatch(client, "/latches/indexer", "host-a")) {
 *     latch.start();
 *     OptionalLong token = latch.awaitLeadership(30, TimeUnit.SECONDS);
 *     if (token.isPresent()) { storage.write(data, token.getAsLong()); }
 * }
 * }</pre>
 */
public final class LeaderLatch extends NativeObject {
    private static final WaitSpans.Call AWAIT_LEADERSHIP = WaitSpans.call("latch.await_leadership");
    /** Curator's states: a latch is started once and cannot start again once closed. */
    public enum State { LATENT, STARTED, CLOSED }

    private final String path;
    private final EventSink<LeaderLatchListener> events =
        events("leader latch", (l, name, token, reason) -> l.onEvent(LatchEvent.of(name, token, reason)));

    /** A participant named after the client ({@link Client#getIdentity()}: host and process). */
    public LeaderLatch(Client client, String latchPath) {
        this(client, latchPath, null, true);
    }

    /**
     * A participant named {@code id} (its node's data, what {@link #getParticipants()} shows);
     * a {@code null} id is the client's identity, as in the other languages.
     */
    public LeaderLatch(Client client, String latchPath, String id) {
        this(client, latchPath, id, true);
    }

    private LeaderLatch(Client client, String latchPath, String id, boolean unused) {
        super(Objects.requireNonNull(client, "client").withHandle(
            h -> Native.latchNew(h, Objects.requireNonNull(latchPath, "latchPath"), id)), Native::latchFree);
        this.path = latchPath;
    }

    private <T> Native.Op<T> call(int op) {
        return begin((h, f) -> Native.latchCall(h, op, f));
    }

    /**
     * Takes part: returns once this participant is in line (leading or not), or throws what kept
     * it out (NO_AUTH, say; the latch can then be started again). Starting a started latch does
     * nothing; a closed one throws CLOSED.
     */
    public void start() {
        Native.join(call(0));
    }

    public CompletableFuture<Void> startAsync() {
        return this.<Void>call(0).future();
    }

    /**
     * Waits until this participant leads. Throws INVALID_ARGUMENT if never started and CLOSED once
     * closed (also while waiting: a close from another thread ends the wait); an interrupt throws
     * {@link InterruptedException} (nothing to withdraw: the participant stays in line).
     */
    public void await() throws InterruptedException {
        awaitLeadership();
    }

    /** {@code true} once this participant leads, {@code false} if the timeout passed first (zero or negative: a check). */
    public boolean await(long timeout, TimeUnit unit) throws InterruptedException {
        return awaitLeadership(timeout, unit).isPresent();
    }

    /** As {@link #await()}, answering the fencing token of the leadership it waited for. */
    public long awaitLeadership() throws InterruptedException {
        return Native.joinInterruptibly(awaitOp(true, 0));
    }

    /**
     * As {@link #await(long, TimeUnit)}, answering the fencing token of the leadership it waited
     * for (read with it: {@link #getFencingToken()} afterwards may already be empty).
     */
    public OptionalLong awaitLeadership(long timeout, TimeUnit unit) throws InterruptedException {
        long nanos = Objects.requireNonNull(unit, "unit").toNanos(timeout);
        Long token = Native.joinInterruptibly(awaitOp(false, nanos));
        return token == null ? OptionalLong.empty() : OptionalLong.of(token);
    }

    /** Completes with the fencing token once this participant leads; cancelling it ends the wait only. */
    public CompletableFuture<Long> awaitLeadershipAsync() {
        return awaitOp(true, 0).future();
    }

    private Native.Op<Long> awaitOp(boolean forever, long timeoutNanos) {
        return beginWait(AWAIT_LEADERSHIP, path, WaitSpans.ANSWER_IS_TOKEN,
            (h, f) -> Native.latchAwait(h, forever, timeoutNanos, f), null);
    }

    /** Whether this participant leads now (its node first and held in the client's current session). */
    public boolean hasLeadership() {
        return is(0);
    }

    /** The fencing token while leading. */
    public OptionalLong getFencingToken() {
        long token = ifOpen(Native::latchFencingToken, -1L);
        return token < 0 ? OptionalLong.empty() : OptionalLong.of(token);
    }

    public State getState() {
        if (is(2) || isClosed()) {
            return State.CLOSED;
        }
        return is(1) ? State.STARTED : State.LATENT;
    }

    /** The id this participant takes part with. */
    public String getId() {
        return with(h -> Native.latchText(h, 0));
    }

    public String getPath() {
        return path;
    }

    /** Our node's path while leading. */
    public Optional<String> getNodePath() {
        return Optional.ofNullable(ifOpen(h -> Native.latchText(h, 1), null));
    }

    /** Every participant in line, the leader first (Curator's and ours alike). */
    public List<LatchParticipant> getParticipants() {
        return participants(Native.join(call(2)));
    }

    /** The current leader, empty when nobody takes part. */
    public Optional<LatchParticipant> getLeader() {
        return participants(Native.join(call(3))).stream().findFirst();
    }

    private static List<LatchParticipant> participants(byte[] packed) {
        ByteBuffer buffer = ByteBuffer.wrap(packed);
        List<LatchParticipant> list = new ArrayList<>();
        while (buffer.hasRemaining()) {
            String id = text(buffer);
            String node = text(buffer);
            list.add(new LatchParticipant(id, node, buffer.get() == 1));
        }
        return list;
    }

    private static String text(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.getInt()];
        buffer.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * {@code isLeader}, {@code notLeader}, {@code suspended}, {@code reconnected}; added before
     * {@link #start()} it sees every event.
     */
    public void addListener(LeaderLatchListener listener) {
        listen(events, listener, Native::latchSubscribe);
    }

    public void removeListener(LeaderLatchListener listener) {
        events.remove(listener);
    }

    /** A state query of a latch that may be closed meanwhile: false once closed. */
    private boolean is(int what) {
        return ifOpen(h -> Native.latchIs(h, what), false);
    }

    private <T> T ifOpen(java.util.function.LongFunction<T> call, T closed) {
        if (isClosed()) {
            return closed;
        }
        try {
            return with(call);
        } catch (ZkException e) {
            if (e.getCode() == ZkException.Code.CLOSED) {
                return closed; // closed by another thread meanwhile
            }
            throw e;
        }
    }

    /**
     * Leaves: the node is withdrawn (confirmed while connected) and a leader's listeners hear
     * {@code NOT_LEADER} before this returns (unless called from a listener). Closing twice is
     * harmless; a closed latch cannot be started again.
     */
    @Override
    public void close() {
        closeAfter(() -> Native.join(call(1)), events);
    }

    @Override
    public String toString() {
        return "LeaderLatch[" + path + ", " + getState() + (hasLeadership() ? ", leader]" : "]");
    }
}
