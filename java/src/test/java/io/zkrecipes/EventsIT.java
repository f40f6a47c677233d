package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Events carry their details; codes and names are the core's; listeners never pin objects. */
class EventsIT {
    private static List<String> names(Enum<?>[] values) {
        return Arrays.stream(values).map(Enum::name).toList();
    }

    @Test
    void enumsListExactlyTheCoreNames() {
        // ZkException.Code is matched to the core's codes by name: one for each, in any order.
        assertEquals(new java.util.TreeSet<>(Arrays.asList(Native.names(0))),
            new java.util.TreeSet<>(names(ZkException.Code.values())));
        assertEquals(Arrays.asList(Native.names(1)), names(LockEvent.Type.values()));
        assertEquals(Arrays.asList(Native.names(2)), names(LeaderElectionSupport.EventType.values()));
        assertEquals(Arrays.asList(Native.names(3)), names(ConnectionState.values()));
        assertEquals(Arrays.asList(Native.names(4)), names(LatchEvent.Type.values()));
        assertEquals(Arrays.asList(Native.names(5)), names(CacheEvent.Type.values()));
        assertEquals(Arrays.asList(Native.names(8)), names(DiscoveryEvent.Type.values()));
        assertEquals(Arrays.asList(Native.names(9)), names(ServiceCacheEvent.Type.values()));
        assertEquals(Arrays.asList(Native.names(10)), names(ServiceType.values()));
        assertEquals(Arrays.asList(Native.names(11)), names(ProviderStrategy.values()));
    }

    @Test
    void errorsAreBuiltWithTheirCodeAndKeepTheOperationsExceptionAsCause() {
        try (Client c = Zk.client()) {
            // Thrown by the native call itself.
            ZkException e = org.junit.jupiter.api.Assertions.assertThrows(ZkException.class,
                () -> new WriteLock(c, "no-slash"));
            assertEquals(ZkException.Code.INVALID_PATH, e.getCode());
            assertTrue(e.getMessage().startsWith("INVALID_PATH: "), e.getMessage());
            assertEquals(e.getDetail(), e.getMessage().substring("INVALID_PATH: ".length()));
        }
        // Completed on a native thread, rethrown on the caller's with that one as cause.
        ZkException e = org.junit.jupiter.api.Assertions.assertThrows(ZkException.class,
            () -> Client.connect("127.0.0.1:1", new ClientOptions().connectTimeout(java.time.Duration.ofMillis(300))));
        assertEquals(ZkException.Code.CONNECTION_LOSS, e.getCode());
        assertTrue(e.getCause() instanceof ZkException cause && cause.getCode() == e.getCode(), String.valueOf(e.getCause()));
    }

    @Test
    void lockEventsCarryTheFencingTokenAndTheLossReason() throws Exception {
        String dir = Zk.path("events");
        BlockingQueue<LockEvent> seen = new ArrayBlockingQueue<>(10);
        try (Client c = Zk.client(); WriteLock lock = new WriteLock(c, dir)) {
            lock.addListener(new LockListener() {
                @Override public void lockAcquired() {}
                @Override public void lockReleased() {}
                @Override public void onEvent(LockEvent event) { seen.add(event); }
            });
            lock.lock();
            long token = lock.getFencingToken();
            LockEvent acquired = seen.poll(10, TimeUnit.SECONDS);
            assertNotNull(acquired);
            assertEquals(LockEvent.Type.ACQUIRED, acquired.type());
            assertEquals(token, acquired.fencingToken().getAsLong());
            String node = lock.getParticipants().get(0).node();
            Zk.rm(dir + "/" + node);
            LockEvent lost = seen.poll(10, TimeUnit.SECONDS);
            assertNotNull(lost);
            assertEquals(LockEvent.Type.LOST, lost.type());
            assertEquals(ZkException.Code.NO_NODE, lost.reason().getCode());
            assertTrue(lost.reason().getDetail().contains(node), lost.reason().getDetail());
            assertTrue(lost.fencingToken().isEmpty());
        }
    }

    @Test
    void closingTheClientStopsAMemberWithoutAFailure() throws Exception {
        List<LeaderElectionSupport.EventType> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        Client c = Zk.client();
        LeaderElectionSupport member = new LeaderElectionSupport(c, Zk.path("close"), "m");
        member.addListener(new LeaderElectionAware() {
            @Override public void onElectionEvent(LeaderElectionSupport.EventType type) {}
            @Override public void onElectionEvent(ElectionEvent event) {
                assertTrue(event.type() != LeaderElectionSupport.EventType.FAILED || event.reason() != null);
                seen.add(event.type());
            }
        });
        member.start();
        c.close();
        Zk.eventually("STOP_COMPLETE after close", () -> seen.contains(LeaderElectionSupport.EventType.STOP_COMPLETE));
        assertEquals(List.of(LeaderElectionSupport.EventType.STOP_START, LeaderElectionSupport.EventType.STOP_COMPLETE),
            seen.subList(seen.size() - 2, seen.size()));
        assertTrue(!seen.contains(LeaderElectionSupport.EventType.FAILED), seen.toString());
        member.close();
    }

    /** The native side used to hold the lock object itself for its listeners: it was never collected. */
    @Test
    void unreachableObjectsWithListenersAreCollected() throws Exception {
        try (Client c = Zk.client()) {
            List<WeakReference<Object>> refs = droppedObjectsWithListeners(c);
            // The library promises that they CAN be collected (nothing of its own keeps them),
            // not when a collector gets round to it: drive it until every one is, for up to 60 s.
            long deadline = System.nanoTime() + 60_000_000_000L;
            int collections = 0;
            while (refs.stream().anyMatch(r -> r.get() != null) && System.nanoTime() < deadline) {
                System.gc();
                collections++;
                Thread.sleep(10);
            }
            long left = refs.stream().filter(r -> r.get() != null).count();
            assertEquals(0, left, left + " of " + refs.size() + " unreachable objects not collected after "
                + collections + " System.gc()");
        }
    }

    /**
     * 200 locks and 200 election members with a listener each, and a client with a state
     * listener, none kept: made in a frame of their own, so that no local variable of the
     * test's frame keeps the last one reachable.
     */
    private static List<WeakReference<Object>> droppedObjectsWithListeners(Client c) {
        List<WeakReference<Object>> refs = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            WriteLock lock = new WriteLock(c, Zk.path("gc"));
            lock.addListener(new LockListener() {
                @Override public void lockAcquired() {}
                @Override public void lockReleased() {}
            });
            LeaderElectionSupport member = new LeaderElectionSupport(c, Zk.path("gc-election"), "m");
            member.addListener(type -> {});
            refs.add(new WeakReference<>(lock));
            refs.add(new WeakReference<>(member));
        }
        Client other = Zk.client();
        other.addConnectionStateListener((client, state) -> {});
        refs.add(new WeakReference<>(other));
        return refs;
    }

    /**
     * Adversarial review: close() shut the listener thread down while STOP_COMPLETE was still on
     * its way (38 of 200 lost, with a RejectedExecutionException logged).
     */
    @Test
    void closeDeliversEveryEventAlreadyEmitted() throws Exception {
        java.util.concurrent.atomic.AtomicInteger stopped = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger released = new java.util.concurrent.atomic.AtomicInteger();
        int rounds = 100;
        try (Client c = Zk.client()) {
            for (int i = 0; i < rounds; i++) {
                try (LeaderElectionSupport member = new LeaderElectionSupport(c, Zk.path("close-drain"), "m")) {
                    member.addListener(type -> {
                        if (type == LeaderElectionSupport.EventType.STOP_COMPLETE) {
                            stopped.incrementAndGet();
                        }
                    });
                    member.start();
                }
                try (WriteLock lock = new WriteLock(c, Zk.path("close-drain-lock"), new LockListener() {
                    @Override public void lockAcquired() {}
                    @Override public void lockReleased() { released.incrementAndGet(); }
                })) {
                    lock.lock();
                    lock.unlock();
                }
            }
        }
        assertEquals(rounds, stopped.get(), "STOP_COMPLETE delivered before close() returned");
        assertEquals(rounds, released.get(), "lockReleased delivered before close() returned");
    }
}
