package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The counting semaphore from Java, against a real ZooKeeper. */
class SemaphoreIT {
    @Test
    void leasesCountAcrossClientsAndAReleaseLetsAWaiterIn() throws Exception {
        String path = Zk.path("semaphore");
        try (Client a = Zk.client(); Client b = Zk.client();
             Semaphore ours = new Semaphore(a, path, 2); Semaphore theirs = new Semaphore(b, path, 2)) {
            Lease first = ours.acquire();
            Lease second = theirs.tryAcquire(5, TimeUnit.SECONDS);
            assertTrue(first.getFencingToken() < second.getFencingToken());
            assertTrue(first.getNodePath().startsWith(path + "/leases/_c_"), first.getNodePath());
            assertNull(ours.tryAcquire());
            assertNull(theirs.tryAcquire(200, TimeUnit.MILLISECONDS));
            assertNull(ours.tryAcquire(2, 0, TimeUnit.SECONDS), "all or none");
            assertEquals(2, ours.getLeaseNodes().size(), "refused acquires leave nothing");
            CompletableFuture<Lease> waiting = ours.acquireAsync();
            Zk.eventually("the waiter lined up", () -> ours.getLeaseNodes().size() == 3);
            second.release();
            Lease third = waiting.get(20, TimeUnit.SECONDS);
            assertTrue(third.isHeld());
            assertEquals(2, ours.getHeld());
            ours.release(); // the oldest of this object: first
            assertFalse(first.isHeld());
            ZkException twice = assertThrows(ZkException.class, first::release);
            assertEquals(ZkException.Code.NOT_OWNER, twice.getCode());
            try (third) {
                assertTrue(third.isHeld());
            }
            assertFalse(third.isHeld());
            assertEquals(ZkException.Code.NOT_OWNER, assertThrows(ZkException.class, ours::release).getCode());
            assertEquals(List.of(), ours.getLeaseNodes());
        }
    }

    @Test
    void badCountsAreTypedAndAnInterruptOrCancelWithdraws() throws Exception {
        String path = Zk.path("semaphore-bad");
        try (Client c = Zk.client(); Semaphore sem = new Semaphore(c, path, 1)) {
            assertEquals(ZkException.Code.INVALID_ARGUMENT,
                assertThrows(ZkException.class, () -> new Semaphore(c, path, 0)).getCode());
            assertEquals(ZkException.Code.INVALID_ARGUMENT,
                assertThrows(ZkException.class, () -> sem.acquire(2)).getCode());
            assertEquals(ZkException.Code.INVALID_ARGUMENT,
                assertThrows(ZkException.class, () -> sem.tryAcquire(-1, 1, TimeUnit.SECONDS)).getCode());
            Lease held = sem.acquire();
            // A waiter interrupted while waiting withdraws its node.
            Zk.Background waiter = Zk.Background.start(sem::acquire);
            Zk.eventually("the waiter lined up", () -> sem.getLeaseNodes().size() == 2);
            waiter.interrupt();
            assertInstanceOf(InterruptedException.class, waiter.outcome(20));
            Zk.eventually("the interrupted waiter withdrew", () -> sem.getLeaseNodes().size() == 1);
            // A cancelled future withdraws too.
            CompletableFuture<Lease> cancelled = sem.acquireAsync();
            Zk.eventually("the async waiter lined up", () -> sem.getLeaseNodes().size() == 2);
            cancelled.cancel(true);
            Zk.eventually("the cancelled waiter withdrew", () -> sem.getLeaseNodes().size() == 1);
            held.close();
            assertEquals(List.of(), sem.getLeaseNodes());
        }
    }
}
