package io.zkrecipes;

import static io.zkrecipes.Zk.code;
import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Barrier and DoubleBarrier from Java, against a real ZooKeeper. */
class BarrierIT {
    @Test
    void aBarrierHoldsWaitersUntilRemoved() throws Exception {
        String path = Zk.path("barrier");
        try (Client a = Zk.client(); Client b = Zk.client();
             Barrier ours = new Barrier(a, path); Barrier theirs = new Barrier(b, path)) {
            assertEquals(ZkException.Code.INVALID_PATH, code(() -> new Barrier(a, "relative")));
            assertThrows(NullPointerException.class, () -> new Barrier(a, null));
            assertTrue(theirs.waitOnBarrier(0, TimeUnit.SECONDS), "not up: passes at once");
            ours.setBarrier();
            ours.setBarrier(); // up stays up
            assertTrue(theirs.isSet());
            assertFalse(theirs.waitOnBarrier(0, TimeUnit.SECONDS));
            assertFalse(theirs.waitOnBarrier(-1, TimeUnit.SECONDS));
            assertFalse(theirs.waitOnBarrier(100, TimeUnit.MILLISECONDS));
            // An interrupted wait throws InterruptedException.
            Zk.Background interrupted = Zk.Background.start(theirs::waitOnBarrier);
            Zk.eventually("the waiter blocked", interrupted::isWaiting);
            interrupted.interrupt();
            assertInstanceOf(InterruptedException.class, interrupted.outcome(10));
            Zk.Background released = Zk.Background.start(theirs::waitOnBarrier);
            Zk.eventually("the waiter blocked", released::isWaiting);
            assertFalse(released.isDone());
            ours.removeBarrier();
            ours.removeBarrier(); // down stays down
            assertNull(released.outcome(10));
            assertFalse(theirs.isSet());
        }
    }

    @Test
    void membersEnterAndLeaveTogetherAndOneThatGivesUpLeavesNoNode() throws Exception {
        String path = Zk.path("double-barrier");
        try (Client ca = Zk.client(); Client cb = Zk.client();
             DoubleBarrier a = new DoubleBarrier(ca, path, 2); DoubleBarrier b = new DoubleBarrier(cb, path, 2)) {
            for (int bad : new int[] {0, -1, Integer.MIN_VALUE}) {
                assertEquals(ZkException.Code.INVALID_ARGUMENT, code(() -> new DoubleBarrier(ca, path, bad)));
            }
            try (DoubleBarrier huge = new DoubleBarrier(ca, path, Integer.MAX_VALUE)) {
                assertEquals(Integer.MAX_VALUE, huge.getMemberCount());
            }
            assertEquals(ZkException.Code.INVALID_PATH, code(() -> new DoubleBarrier(ca, "", 2)));
            // Timed out: false, and the node withdrawn.
            assertFalse(a.enter(0, TimeUnit.SECONDS));
            assertFalse(a.enter(100, TimeUnit.MILLISECONDS));
            assertEquals(List.of(), b.getMembers());
            // Interrupted: InterruptedException, and the node withdrawn.
            Zk.Background interrupted = Zk.Background.start(a::enter);
            Zk.eventually("a entered", () -> b.getMembers().size() == 1);
            interrupted.interrupt();
            assertInstanceOf(InterruptedException.class, interrupted.outcome(10));
            Zk.eventually("the interrupted member withdrew", () -> b.getMembers().isEmpty());
            // Both in: both pass, ready is up; both leave.
            Zk.Background aIn = Zk.Background.start(a::enter);
            Zk.eventually("a entered", () -> b.getMembers().size() == 1);
            assertTrue(b.enter(10, TimeUnit.SECONDS));
            assertNull(aIn.outcome(10));
            assertTrue(a.isReady());
            assertEquals(List.of(a.getNodePath(), b.getNodePath()).stream().map(p -> p.substring(path.length() + 1)).sorted().toList(),
                a.getMembers());
            Zk.Background aOut = Zk.Background.start(a::leave);
            assertTrue(b.leave(10, TimeUnit.SECONDS));
            assertNull(aOut.outcome(10));
            assertFalse(a.isReady(), "the last to leave took ready down");
            assertEquals(List.of(), a.getMembers());
        }
    }

    @Test
    void closingAMemberThatIsInWithdrawsItButNotReady() throws Exception {
        String path = Zk.path("double-barrier-close");
        try (Client c = Zk.client(); DoubleBarrier stays = new DoubleBarrier(c, path, 1)) {
            DoubleBarrier goes = new DoubleBarrier(c, path, 1);
            assertTrue(stays.enter(10, TimeUnit.SECONDS));
            assertTrue(goes.enter(10, TimeUnit.SECONDS));
            goes.close();
            goes.close();
            assertEquals(ZkException.Code.CLOSED, code(goes::enter));
            assertEquals(List.of(stays.getNodePath().substring(path.length() + 1)), stays.getMembers());
            assertTrue(stays.isReady(), "a member still in: ready stays");
            try (DoubleBarrier never = new DoubleBarrier(c, path, 1)) {
                // Never entered: its close must not take ready down under the member still in.
            }
            assertTrue(stays.isReady());
            assertTrue(stays.leave(10, TimeUnit.SECONDS));
            assertFalse(stays.isReady());
            // Closed while another thread waits in enter(): that thread throws CLOSED, no node is left.
            String two = path + "-two";
            DoubleBarrier waiting = new DoubleBarrier(c, two, 2);
            Zk.Background entering = Zk.Background.start(waiting::enter);
            Zk.eventually("the member entered", () -> !waitingMembers(c, two).isEmpty());
            waiting.close();
            ZkException e = assertInstanceOf(ZkException.class, entering.outcome(10));
            assertEquals(ZkException.Code.CLOSED, e.getCode());
            Zk.eventually("the closed member withdrew", () -> waitingMembers(c, two).isEmpty());
            // The same for a barrier's waiter.
            Barrier barrier = new Barrier(c, path + "-up");
            barrier.setBarrier();
            Zk.Background held = Zk.Background.start(barrier::waitOnBarrier);
            Zk.eventually("the waiter blocked", held::isWaiting);
            barrier.close();
            assertEquals(ZkException.Code.CLOSED,
                assertInstanceOf(ZkException.class, held.outcome(10)).getCode());
        }
    }

    private static List<String> waitingMembers(Client c, String path) {
        try (DoubleBarrier look = new DoubleBarrier(c, path, 2)) {
            return look.getMembers();
        }
    }
}
