package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Issue 11: what broke for a new Java user — callbacks that call back, cancellation, short timeouts. */
class RacesIT {
    /** Defect 2: tryLock(1 ms) threw TIMEOUT instead of answering false. */
    @Test
    void shortTimeoutsAnswerFalseAndLeaveNothing() throws Exception {
        try (Zk.Contest contest = Zk.contest("short")) {
            WriteLock mine = contest.first(), theirs = contest.second();
            for (long micros : new long[] {0, 1, 1000, 5000}) {
                if (mine.tryLock(micros, TimeUnit.MICROSECONDS)) {
                    mine.unlock();
                }
                assertEquals(0, mine.getParticipants().size(), micros + " us left a node");
            }
            theirs.lock();
            for (long micros : new long[] {0, 1, 1000, 5000}) {
                assertFalse(mine.tryLock(micros, TimeUnit.MICROSECONDS));
                assertEquals(1, mine.getParticipants().size(), micros + " us left its node");
            }
            ReadWriteLock rw = new ReadWriteLock(contest.a(), contest.path() + "-rw");
            ReadWriteLock other = new ReadWriteLock(contest.b(), contest.path() + "-rw");
            other.writeLock().lock();
            assertFalse(rw.readLock().tryLock(1, TimeUnit.MILLISECONDS));
            other.writeLock().unlock();
            theirs.unlock();
        }
    }

    /** Defect 5: unlock() and getParticipants() inside lockAcquired() (Apache's pattern) never returned. */
    @Test
    void listenersMayCallTheLibrary() throws Exception {
        try (Client c = Zk.client()) {
            WriteLock lock = new WriteLock(c, Zk.path("reentrant-listener"));
            CountDownLatch done = new CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicReference<Integer> seen = new AtomicReference<>();
            lock.addListener(new LockListener() {
                @Override
                public void lockAcquired() {
                    try {
                        seen.set(lock.getParticipants().size());
                        lock.getFencingToken();
                    } catch (Throwable t) {
                        failure.set(t);
                    } finally {
                        done.countDown();
                    }
                }

                @Override
                public void lockReleased() {}
            });
            lock.lock();
            assertTrue(done.await(10, TimeUnit.SECONDS), "the listener's call never returned");
            assertNull(failure.get());
            assertEquals(1, seen.get());
            lock.unlock();

            String root = Zk.path("election-listener");
            try (LeaderElectionSupport member = new LeaderElectionSupport(c, root, "me")) {
                CompletableFuture<String> leader = new CompletableFuture<>();
                member.addListener(event -> {
                    if (event == LeaderElectionSupport.EventType.ELECTED_COMPLETE) {
                        leader.complete(member.getLeaderHostName());
                    }
                });
                member.start();
                assertEquals("me", leader.get(10, TimeUnit.SECONDS));
            }

            DistributedQueue queue = new DistributedQueue(c, Zk.path("queue-callback"));
            Integer size = queue.offerAsync("x".getBytes(StandardCharsets.UTF_8))
                .thenApply(path -> queue.size())
                .get(10, TimeUnit.SECONDS);
            assertEquals(1, size);
            assertFalse(Thread.currentThread().getName().startsWith("zkrecipes"), "test thread");
        }
    }

    /** Defect 6: a cancelled or timed-out lockAsync() later acquired the lock and kept it. */
    @Test
    void cancelledLockAsyncWithdrawsAndNeverKeepsTheLock() throws Exception {
        try (Zk.Contest contest = Zk.contest("cancel-lock")) {
            WriteLock waiter = contest.first(), holder = contest.second();
            holder.lock();
            CompletableFuture<Long> cancelled = waiter.lockAsync();
            CompletableFuture<Long> timedOut = waiter.lockAsync().orTimeout(300, TimeUnit.MILLISECONDS);
            // Both wait in line (a fixed 100 ms stood for this) before one is cancelled.
            Zk.eventually("both waiters queued", () -> timedOut.isDone() || holder.getParticipants().size() == 3);
            cancelled.cancel(true);
            assertThrows(CancellationException.class, cancelled::join);
            ExecutionException e = assertThrows(ExecutionException.class, timedOut::get);
            assertInstanceOf(TimeoutException.class, e.getCause());
            Zk.eventually("the abandoned waiters withdrew", () -> holder.getParticipants().size() == 1);
            holder.unlock();
            // A chance for a cancelled attempt to take the lock, which must not happen.
            Thread.sleep(300);
            assertFalse(waiter.isLocked(), "a cancelled attempt must not take the lock later");
            WriteLock third = new WriteLock(contest.b(), contest.path());
            assertTrue(third.tryLock(5, TimeUnit.SECONDS));
            third.unlock();
        }
    }

    /** Defect 6: after takeAsync().cancel(true) the next item was consumed and lost. */
    @Test
    void cancelledTakeAsyncLosesNoItem() throws Exception {
        try (Client c = Zk.client()) {
            DistributedQueue queue = new DistributedQueue(c, Zk.path("cancel-take"));
            List<CompletableFuture<byte[]>> abandoned = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                abandoned.add(queue.takeAsync());
            }
            CompletableFuture<byte[]> timedOut = queue.takeAsync().orTimeout(100, TimeUnit.MILLISECONDS);
            abandoned.add(timedOut);
            // Not a synchronisation: the one with orTimeout has given up (observed), the others
            // had the same time to start waiting; one that had not is cancelled all the same.
            assertThrows(ExecutionException.class, () -> timedOut.get(10, TimeUnit.SECONDS));
            abandoned.forEach(f -> f.cancel(true));
            for (int i = 0; i < 20; i++) {
                queue.offer(("item-" + i).getBytes(StandardCharsets.UTF_8));
            }
            // Until all 20 came (an item a cancelled take claimed goes back, maybe not at once:
            // a quiet period of 2 s ended the loop), then a chance for a 21st that must not come.
            List<String> got = new ArrayList<>();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (got.size() < 20 && System.nanoTime() < deadline) {
                byte[] item = queue.poll(1, TimeUnit.SECONDS);
                if (item != null) {
                    got.add(new String(item, StandardCharsets.UTF_8));
                }
            }
            assertNull(queue.poll(500, TimeUnit.MILLISECONDS), "an item twice: " + got);
            assertEquals(20, got.size(), "every item arrives once: " + got);
            assertEquals(20, got.stream().distinct().count());
        }
    }

    /** Adversarial review: an interrupt at any moment of lockInterruptibly() never leaves a hold. */
    @Test
    void interruptedLockNeverLeavesAHold() throws Exception {
        try (Client c = Zk.client()) {
            String dir = Zk.path("interrupt");
            WriteLock lock = new WriteLock(c, dir);
            java.util.Random random = new java.util.Random(11);
            for (int i = 0; i < 200; i++) {
                AtomicReference<String> outcome = new AtomicReference<>();
                Thread t = new Thread(() -> {
                    try {
                        lock.lockInterruptibly();
                        outcome.set(Thread.interrupted() ? "held-interrupted" : "held");
                        lock.unlock();
                    } catch (InterruptedException e) {
                        // Adversarial review: the hold of an acquire that lost to the interrupt
                        // was visible here for a moment (the undo ran on another thread later).
                        if (lock.getHoldCount() != 0 || lock.isHeldByCurrentThread()) {
                            outcome.set("error: a hold is visible right after the interrupt");
                        } else {
                            outcome.set("interrupted");
                        }
                    } catch (Throwable e) {
                        outcome.set("error " + e);
                    }
                });
                t.start();
                Thread.sleep(0, random.nextInt(999_999));
                t.interrupt();
                t.join(10_000);
                assertFalse(t.isAlive());
                assertFalse(outcome.get().startsWith("error"), outcome.get());
                long deadline = System.nanoTime() + 5_000_000_000L;
                while (lock.isLocked() && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                assertFalse(lock.isLocked(), "round " + i + " (" + outcome.get() + ") left a hold");
            }
            // The last interrupted attempt withdraws its node in the background (found failing in
            // CI when checked at once); waited for with a deadline, it must go.
            Zk.eventually("no participant left", () -> lock.getParticipants().isEmpty());
        }
    }

    /** Adversarial review: right after cancel(true) returns, the cancelled acquire's hold is never visible. */
    @Test
    void cancelledLockAsyncShowsNoHoldOnceCancelReturns() throws Exception {
        try (Client c = Zk.client()) {
            WriteLock lock = new WriteLock(c, Zk.path("cancel-visible"));
            java.util.Random random = new java.util.Random(12);
            int cancelled = 0;
            for (int i = 0; i < 300; i++) {
                CompletableFuture<Long> f = lock.lockAsync();
                Thread.sleep(0, random.nextInt(999_999));
                if (f.cancel(true)) {
                    cancelled++;
                    assertEquals(0, lock.getHoldCount(), "round " + i + ": hold count after cancel");
                    assertFalse(lock.isHeldByCurrentThread(), "round " + i);
                } else {
                    lock.unlock();
                }
            }
            assertTrue(cancelled > 0, "no acquire was cancelled in time");
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (!lock.getParticipants().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertTrue(lock.getParticipants().isEmpty());
        }
    }

    /** Adversarial review: close() while another thread holds released nothing of that thread's. */
    @Test
    void closingALockReleasesEveryThreadsHold() throws Exception {
        try (Zk.Contest contest = Zk.contest("close-held")) {
            WriteLock lock = contest.first(), other = contest.second();
            CountDownLatch held = new CountDownLatch(1);
            Thread holder = new Thread(() -> {
                lock.lock();
                held.countDown();
            });
            holder.start();
            assertTrue(held.await(10, TimeUnit.SECONDS));
            holder.join();
            lock.close();
            assertTrue(other.tryLock(5, TimeUnit.SECONDS), "the closed object's hold was released");
            other.unlock();
        }
    }
}
