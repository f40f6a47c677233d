package io.zkrecipes;

import static io.zkrecipes.Zk.code;
import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The leader latch from Java, against a real ZooKeeper. */
class LatchIT {
    /** Records every event; {@link #next} waits for one with a deadline. */
    static final class Events extends Zk.Recorder<LatchEvent> implements LeaderLatchListener {
        Events() {
            super("latch event");
        }

        @Override public void isLeader() {}
        @Override public void notLeader() {}
        @Override public void onEvent(LatchEvent event) {
            record(event);
        }
    }

    @Test
    void theFirstLeadsUntilItClosesThenTheNextWithAHigherToken() throws Exception {
        String path = Zk.path("latch");
        try (Client ca = Zk.client(); Client cb = Zk.client();
             LeaderLatch a = new LeaderLatch(ca, path, "a\tfirst\n"); LeaderLatch b = new LeaderLatch(cb, path)) {
            Events heard = new Events();
            a.addListener(heard);
            assertEquals(LeaderLatch.State.LATENT, a.getState());
            a.start();
            a.start(); // a no-op
            long first = a.awaitLeadership();
            assertEquals(LatchEvent.Type.IS_LEADER, heard.next().type());
            assertTrue(a.hasLeadership());
            assertEquals(OptionalLong.of(first), a.getFencingToken());
            assertTrue(a.getNodePath().orElseThrow().startsWith(path + "/_c_"));
            // Two threads start one latch: each start returns once the participant is in line.
            CompletableFuture<Integer> other = CompletableFuture.supplyAsync(() -> {
                b.start();
                return b.getParticipants().size();
            });
            b.start();
            assertEquals(2, b.getParticipants().size());
            assertEquals(2, other.get(10, TimeUnit.SECONDS));
            assertFalse(b.await(0, TimeUnit.SECONDS), "a zero timeout is a check");
            assertFalse(b.await(-5, TimeUnit.SECONDS));
            assertEquals(OptionalLong.empty(), b.awaitLeadership(50, TimeUnit.MILLISECONDS));
            assertEquals(OptionalLong.empty(), b.getFencingToken());
            assertEquals(java.util.Optional.empty(), b.getNodePath());
            List<LatchParticipant> participants = b.getParticipants();
            assertEquals(2, participants.size());
            String node = a.getNodePath().orElseThrow().substring(path.length() + 1);
            assertEquals(new LatchParticipant("a\tfirst\n", node, true), participants.get(0));
            assertEquals(cb.getIdentity(), participants.get(1).id(), "the default id is the client's identity");
            assertEquals(cb.getIdentity(), b.getId());
            assertEquals("a\tfirst\n", b.getLeader().orElseThrow().id());
            CompletableFuture<Long> next = b.awaitLeadershipAsync();
            a.close();
            // close() returns after the leader's listeners heard NOT_LEADER (none: a close, no loss).
            LatchEvent ended = heard.poll();
            assertNotNull(ended, "NOT_LEADER before close() returned");
            assertEquals(LatchEvent.Type.NOT_LEADER, ended.type());
            assertNull(ended.reason());
            a.close(); // twice: harmless
            assertEquals(LeaderLatch.State.CLOSED, a.getState());
            assertFalse(a.hasLeadership());
            assertEquals(ZkException.Code.CLOSED, code(a::start));
            assertEquals(ZkException.Code.CLOSED, code(a::await));
            assertTrue(next.get(10, TimeUnit.SECONDS) > first, "fencing tokens increase across leaders");
            // Long.MAX_VALUE nanoseconds is forever: it answers at once here, as b leads.
            assertTrue(b.await(Long.MAX_VALUE, TimeUnit.NANOSECONDS));
            assertEquals(1, b.getParticipants().size());
        }
    }

    @Test
    void badInputIsTypedAndAnInterruptOrACloseEndsAWait() throws Exception {
        String path = Zk.path("latch-bad");
        try (Client c = Zk.client(); Client other = Zk.client();
             LeaderLatch leader = new LeaderLatch(other, path, "leader"); LeaderLatch waiting = new LeaderLatch(c, path, "w")) {
            assertThrows(NullPointerException.class, () -> new LeaderLatch(c, null, "x"));
            try (LeaderLatch unnamed = new LeaderLatch(c, path, null)) {   // the client's identity, as in the other languages
                assertEquals(c.getIdentity(), unnamed.getId());
            }
            assertEquals(ZkException.Code.INVALID_PATH, code(() -> new LeaderLatch(c, "", "x")));
            assertEquals(ZkException.Code.INVALID_PATH, code(() -> new LeaderLatch(c, "relative/path", "x")));
            assertEquals(ZkException.Code.INVALID_ARGUMENT, code(() -> new LeaderLatch(c, path, "x".repeat(17 * 1024))));
            assertEquals(ZkException.Code.INVALID_ARGUMENT, code(waiting::await), "never started");
            leader.start();
            assertTrue(leader.await(10, TimeUnit.SECONDS));
            waiting.start();
            // An interrupted await throws InterruptedException; the participant stays in line.
            Zk.Background waiter = Zk.Background.start(() -> waiting.await(Long.MAX_VALUE, TimeUnit.DAYS));
            Zk.eventually("the waiter blocked", waiter::isWaiting);
            waiter.interrupt();
            assertInstanceOf(InterruptedException.class, waiter.outcome(10));
            assertEquals(2, waiting.getParticipants().size());
            // A close from another thread ends a waiting await with CLOSED, and withdraws the node.
            Zk.Background second = Zk.Background.start(waiting::await);
            Zk.eventually("the second waiter blocked", second::isWaiting);
            waiting.close();
            ZkException e = assertInstanceOf(ZkException.class, second.outcome(10));
            assertEquals(ZkException.Code.CLOSED, e.getCode());
            assertEquals(1, leader.getParticipants().size());
        }
    }

    @Test
    void aListenerMayReadTheParticipantsAndCloseTheLatch() throws Exception {
        String path = Zk.path("latch-listener");
        try (Client c = Zk.client(); LeaderLatch latch = new LeaderLatch(c, path, "self")) {
            CompletableFuture<List<LatchParticipant>> seen = new CompletableFuture<>();
            CompletableFuture<LeaderLatch.State> after = new CompletableFuture<>();
            latch.addListener(new LeaderLatchListener() {
                @Override public void isLeader() {
                    try {
                        seen.complete(latch.getParticipants());
                        latch.close();
                        after.complete(latch.getState());
                    } catch (Throwable t) {
                        seen.completeExceptionally(t);
                        after.completeExceptionally(t);
                    }
                }
                @Override public void notLeader() {}
            });
            latch.start();
            assertEquals(List.of("self"), seen.get(10, TimeUnit.SECONDS).stream().map(LatchParticipant::id).toList());
            assertEquals(LeaderLatch.State.CLOSED, after.get(10, TimeUnit.SECONDS));
            try (LeaderLatch look = new LeaderLatch(c, path, "look")) {
                assertEquals(List.of(), look.getParticipants(), "the listener's close withdrew the node");
            }
        }
    }
}
