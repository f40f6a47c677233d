package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * README "Event order": events of one object are delivered in order on a listener thread, so a
 * call returns before its own events reach the listeners (after {@code start()} returns,
 * {@code isLeader()} already answers while the events may still be on their way); a state read
 * in a listener ({@code isLeader()}, {@code isLocked()}) is at least as new as the event. The
 * same promises as python/tests/test_queue_election_client.py::test_the_documented_event_order_holds.
 */
class EventOrderIT {
    private static final List<String> LEADER = List.of("START", "OFFER_START", "OFFER_COMPLETE", "DETERMINE_START",
        "DETERMINE_COMPLETE", "ELECTED_START", "ELECTED_COMPLETE");
    private static final List<String> FOLLOWER = List.of("START", "OFFER_START", "OFFER_COMPLETE", "DETERMINE_START",
        "DETERMINE_COMPLETE", "READY_START", "READY_COMPLETE");
    private static final List<String> STOP = List.of("STOP_START", "STOP_COMPLETE");

    /**
     * A listener that does not return before the call that caused its events returned: with
     * Apache's order (listeners on the caller's thread before it returns) or a call that waited
     * for its listeners, the listener gives up after 10 s and the test fails.
     */
    private static final class Blocking {
        final List<String> seen = Collections.synchronizedList(new ArrayList<>());
        final CountDownLatch returned = new CountDownLatch(1);
        final AtomicBoolean gaveUp = new AtomicBoolean();
        final AtomicBoolean onCaller = new AtomicBoolean();
        final Thread caller = Thread.currentThread();

        void waitForTheCall() {
            if (Thread.currentThread() == caller) {
                onCaller.set(true);
            }
            try {
                if (!gaveUp.get() && !returned.await(10, TimeUnit.SECONDS)) {
                    gaveUp.set(true);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** The listener's part: keeps {@code event} once the call returned. */
        void hear(String event) {
            waitForTheCall();
            seen.add(event);
        }

        /**
         * The caller's part, once {@code call} returned: no event had reached a listener by then,
         * and {@code answered} (the state that {@code query} read straight after the call) held
         * already; then the listeners are let go.
         */
        void assertReturnedFirst(String call, boolean answered, String query) {
            List<String> delivered = List.copyOf(seen);
            returned.countDown();
            assertFalse(onCaller.get(), "a listener ran on the caller's thread");
            assertFalse(gaveUp.get(), "the call did not return while its listener was running");
            assertTrue(answered, call + " returns with " + query + " already answered");
            assertEquals(List.of(), delivered, "events delivered before " + call + " returned");
        }
    }

    @Test
    void aCallReturnsBeforeItsOwnEventsReachTheListeners() throws Exception {
        try (Client c = Zk.client(); LeaderElectionSupport member = new LeaderElectionSupport(c, Zk.path("order-return"), "only")) {
            Blocking blocking = new Blocking();
            member.addListener(type -> blocking.hear(type.name()));
            member.start();
            // The listener is held in its first event: none has reached it, yet start() returned
            // and isLeader() already answers.
            blocking.assertReturnedFirst("start()", member.isLeader(), "isLeader()");
            Zk.eventually("start events", () -> blocking.seen.size() >= LEADER.size());
            assertEquals(LEADER, blocking.seen);
        }
        try (Client c = Zk.client(); WriteLock lock = new WriteLock(c, Zk.path("order-return-lock"))) {
            Blocking blocking = new Blocking();
            lock.addListener(new LockListener() {
                @Override public void lockAcquired() {}
                @Override public void lockReleased() {}
                @Override public void onEvent(LockEvent event) {
                    blocking.hear(event.type().name());
                }
            });
            lock.lock();
            blocking.assertReturnedFirst("lock()", lock.isLocked(), "isLocked()");
            lock.unlock();
            assertFalse(lock.isLocked(), "unlock() returns with isLocked() already answered");
            Zk.eventually("lock events", () -> blocking.seen.size() >= 2);
            assertEquals(List.of("ACQUIRED", "RELEASED"), blocking.seen);
        }
    }

    @Test
    void aStateReadInAListenerIsAtLeastAsNewAsTheEvent() throws Exception {
        String root = Zk.path("order-state");
        try (Client a = Zk.client(); Client b = Zk.client();
             LeaderElectionSupport first = new LeaderElectionSupport(a, root, "first");
             LeaderElectionSupport second = new LeaderElectionSupport(b, root, "second")) {
            List<String> firstSeen = Collections.synchronizedList(new ArrayList<>());
            List<String> secondSeen = Collections.synchronizedList(new ArrayList<>());
            first.addListener(type -> firstSeen.add(type + " " + first.isLeader()));
            second.addListener(type -> secondSeen.add(type + " " + second.isLeader()));
            // Each step waits for its events before the next, so that no later event can explain
            // a state that disagrees with the event being delivered.
            first.start();
            Zk.eventually("first elected", () -> firstSeen.size() == LEADER.size());
            second.start();
            Zk.eventually("second ready", () -> secondSeen.size() == FOLLOWER.size());
            assertEquals(LEADER, types(firstSeen));
            assertEquals(FOLLOWER, types(secondSeen));
            assertEquals("ELECTED_COMPLETE true", last(firstSeen));
            assertEquals("READY_COMPLETE false", last(secondSeen));
            first.stop();
            Zk.eventually("hand-over", () -> firstSeen.size() == LEADER.size() + STOP.size()
                && secondSeen.size() == FOLLOWER.size() + 4);
            // STOP_START may read either (the stop may be done by then); STOP_COMPLETE may not.
            assertEquals(STOP, types(firstSeen).subList(LEADER.size(), firstSeen.size()));
            assertEquals("STOP_COMPLETE false", last(firstSeen));
            assertEquals(List.of("DETERMINE_START", "DETERMINE_COMPLETE", "ELECTED_START", "ELECTED_COMPLETE"),
                types(secondSeen).subList(FOLLOWER.size(), secondSeen.size()));
            assertEquals("ELECTED_COMPLETE true", last(secondSeen));
            second.stop();
        }
        // A lock, held until its ACQUIRED was seen and released only then.
        try (Client c = Zk.client(); WriteLock lock = new WriteLock(c, Zk.path("order-state-lock"))) {
            List<String> seen = Collections.synchronizedList(new ArrayList<>());
            lock.addListener(new LockListener() {
                @Override public void lockAcquired() {}
                @Override public void lockReleased() {}
                @Override public void onEvent(LockEvent event) {
                    seen.add(event.type() + " " + lock.isLocked());
                }
            });
            lock.lock();
            Zk.eventually("ACQUIRED", () -> seen.size() == 1);
            lock.unlock();
            Zk.eventually("RELEASED", () -> seen.size() == 2);
            assertEquals(List.of("ACQUIRED true", "RELEASED false"), seen);
        }
    }

    /**
     * Nothing waits for the events here, so a listener may read a newer state than its event
     * (an ELECTED_COMPLETE read after the next stop), never an older one: every disagreement must
     * be followed by the event that changed the state.
     */
    @Test
    void backToBackStartsAndStopsNeverShowAStateOlderThanTheEvent() throws Exception {
        try (Client c = Zk.client(); LeaderElectionSupport member = new LeaderElectionSupport(c, Zk.path("order-rounds"), "m")) {
            List<String> seen = Collections.synchronizedList(new ArrayList<>());
            member.addListener(type -> seen.add(type + " " + member.isLeader()));
            int rounds = 20;
            for (int i = 0; i < rounds; i++) {
                member.start();
                member.stop();
            }
            member.start();
            int total = (rounds + 1) * LEADER.size() + rounds * STOP.size();
            Zk.eventually("every event", () -> seen.size() == total);
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < rounds; i++) {
                expected.addAll(LEADER);
                expected.addAll(STOP);
            }
            expected.addAll(LEADER);
            List<String> events = List.copyOf(seen);
            assertEquals(expected, types(events), "events in Apache's order, round after round");
            for (int i = 0; i < events.size(); i++) {
                List<String> later = types(events.subList(i + 1, events.size()));
                if (events.get(i).equals("ELECTED_COMPLETE false")) {
                    assertTrue(later.contains("STOP_START"), "event " + i + ": ELECTED_COMPLETE read isLeader() false, no stop after it");
                }
                if (events.get(i).equals("STOP_COMPLETE true")) {
                    assertTrue(later.contains("ELECTED_START"), "event " + i + ": STOP_COMPLETE read isLeader() true, no election after it");
                }
            }
            assertEquals("ELECTED_COMPLETE true", last(events), "the last event, with nothing after it, reads the state it tells");
        }
    }

    private static List<String> types(List<String> seen) {
        synchronized (seen) {
            return seen.stream().map(s -> s.split(" ")[0]).toList();
        }
    }

    private static String last(List<String> seen) {
        synchronized (seen) {
            return seen.get(seen.size() - 1);
        }
    }
}
