package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class LockIT {
    @Test
    void everyMethodOfWriteLock() throws Exception {
        try (Zk.Contest contest = Zk.contest("lock")) {
            WriteLock mine = contest.first(), theirs = contest.second();
            assertEquals(-1, mine.getFencingToken());
            assertFalse(mine.isLocked());
            mine.lock();
            long token = mine.getFencingToken();
            assertTrue(token > 0);
            assertTrue(mine.isHeldByCurrentThread());
            assertTrue(mine.isLocked());
            assertEquals(1, mine.getHoldCount());
            assertEquals(List.of(contest.a().getIdentity()), mine.getParticipants().stream().map(Participant::identity).toList());
            assertFalse(theirs.tryLock());
            long started = System.nanoTime();
            assertFalse(theirs.tryLock(200, TimeUnit.MILLISECONDS));
            assertTrue(System.nanoTime() - started >= 190_000_000L);
            assertEquals(1, mine.getParticipants().size(), "the timed-out waiter left nothing behind");
            mine.lockInterruptibly(); // reentrant
            assertEquals(2, mine.getHoldCount());
            mine.unlock();
            mine.unlock();
            assertThrows(IllegalMonitorStateException.class, mine::unlock);
            assertThrows(UnsupportedOperationException.class, mine::newCondition);
            assertTrue(theirs.tryLock(5, TimeUnit.SECONDS));
            assertTrue(theirs.getFencingToken() > token);
            theirs.unlock();
            Long asyncToken = mine.lockAsync().get(5, TimeUnit.SECONDS);
            assertEquals(asyncToken, mine.getFencingToken());
            mine.unlockAsync().get(5, TimeUnit.SECONDS);
            assertFalse(mine.isLocked());
            mine.close();
            theirs.close();
            assertEquals(ZkException.Code.CLOSED, assertThrows(ZkException.class, mine::lock).getCode());
        }
    }

    @Test
    void reentrantPerThreadAndOtherThreadsExcluded() throws Exception {
        try (Client c = Zk.client(); WriteLock lock = new WriteLock(c, Zk.path("threads"))) {
            lock.lock();
            AtomicReference<Object> other = new AtomicReference<>();
            Thread t = new Thread(() -> {
                other.set(lock.tryLock());
                try {
                    lock.unlock();
                } catch (IllegalMonitorStateException expected) {
                    other.set("IMSE");
                }
            });
            t.start();
            t.join();
            assertEquals("IMSE", other.get(), "another thread neither re-enters nor unlocks");
            lock.unlock();
        }
    }

    @Test
    void eightThreadsNeverOverlapAndTokensStrictlyIncrease() throws Exception {
        String dir = Zk.path("eight");
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean inside = new AtomicBoolean();
        AtomicBoolean overlap = new AtomicBoolean();
        try (Zk.Sessions holders = new Zk.Sessions(8, c -> {
            WriteLock lock = new WriteLock(c, dir);
            return () -> {
                for (int j = 0; j < 5; j++) {
                    lock.lock();
                    try {
                        if (!inside.compareAndSet(false, true)) {
                            overlap.set(true);
                        }
                        tokens.add(lock.getFencingToken());
                        Thread.sleep(2);
                        inside.set(false);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        lock.unlock();
                    }
                }
            };
        })) {
            holders.join("a holder");
        }
        assertFalse(overlap.get(), "two holders at once");
        assertEquals(40, tokens.size());
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(tokens.get(i) > tokens.get(i - 1), "tokens " + tokens);
        }
    }

    @Test
    void interruptWhileWaitingLeavesNothingBehind() throws Exception {
        try (Zk.Contest contest = Zk.contest("interrupt")) {
            WriteLock holder = contest.first(), waiter = contest.second();
            holder.lock();
            Zk.interruptWhileQueued("waiter queued", holder, waiter::lockInterruptibly);
            Zk.eventually("waiter's node withdrawn", () -> holder.getParticipants().size() == 1);
            assertFalse(waiter.isLocked());
            holder.unlock();
        }
    }

    @Test
    void listenersHearAcquiredReleasedAndLost() throws Exception {
        try (Client c = Zk.client()) {
            String dir = Zk.path("listen");
            List<String> seen = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch lost = new CountDownLatch(1);
            AtomicReference<ZkException> cause = new AtomicReference<>();
            WriteLock lock = new WriteLock(c, dir, new LockListener() {
                public void lockAcquired() { seen.add("acquired"); }
                public void lockReleased() { seen.add("released"); }
                public void lockLost(ZkException e) { cause.set(e); lost.countDown(); }
            });
            lock.addListener(new LockListener() {
                public void lockAcquired() { throw new IllegalStateException("listener bug"); }
                public void lockReleased() {}
            });
            lock.lock();
            lock.unlock();
            Zk.eventually("events", () -> seen.size() == 2);
            assertEquals(List.of("acquired", "released"), seen);
            lock.lock();
            Zk.rm(dir + "/" + lock.getParticipants().get(0).node());
            assertTrue(lost.await(10, TimeUnit.SECONDS), "lockLost after an operator's delete");
            assertEquals(ZkException.Code.NO_NODE, cause.get().getCode());
            assertFalse(lock.isLocked());
        }
    }

    @Test
    void readWriteLockSharesDowngradesAndRefusesUpgrade() throws Exception {
        try (Client a = Zk.client(); Client b = Zk.client()) {
            String dir = Zk.path("rw");
            ReadWriteLock mine = new ReadWriteLock(a, dir);
            ReadWriteLock theirs = new ReadWriteLock(b, dir);
            mine.readLock().lock();
            assertTrue(theirs.readLock().tryLock());
            theirs.readLock().unlock();
            assertFalse(theirs.writeLock().tryLock());
            ZkException upgrade = assertThrows(ZkException.class, () -> mine.writeLock().lock());
            assertEquals(ZkException.Code.WOULD_DEADLOCK, upgrade.getCode());
            mine.readLock().unlock();
            mine.writeLock().lock();
            mine.readLock().lock(); // downgrade: on the write hold's node, kept until the read is released
            mine.writeLock().unlock();
            assertFalse(theirs.writeLock().tryLock());
            assertFalse(theirs.readLock().tryLock(), "a downgraded reader excludes like the writer it was");
            List<Participant> people = mine.readLock().getParticipants();
            assertEquals(1, people.size());
            mine.readLock().unlock();
            assertTrue(theirs.readLock().tryLock());
            theirs.readLock().unlock();
            mine.close();
            theirs.close();
        }
    }

    @Test
    void twoJvmsContendWithoutOverlap() throws Exception {
        String dir = Zk.path("jvms");
        List<Zk.Child> jvms = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            jvms.add(Zk.Child.start(new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-cp",
                System.getProperty("java.class.path"), LockHolderMain.class.getName(), Zk.connect(), dir, "10")
                .redirectError(ProcessBuilder.Redirect.INHERIT)));
        }
        List<long[]> sections = new ArrayList<>();
        for (Zk.Child jvm : jvms) {
            // Ten holds of 5 ms after a JVM start: a second or two idle.
            Zk.Child.Result run = jvm.await(java.time.Duration.ofSeconds(60));
            assertEquals(0, run.exit(), run.out());
            for (String line : run.out().split("\n")) {
                if (line.isBlank()) {
                    continue;
                }
                String[] f = line.trim().split(" ");
                sections.add(new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])});
            }
        }
        assertEquals(20, sections.size());
        sections.sort((x, y) -> Long.compare(x[0], y[0]));
        for (int i = 1; i < sections.size(); i++) {
            assertTrue(sections.get(i)[0] > sections.get(i - 1)[0]);
            assertTrue(sections.get(i)[1] >= sections.get(i - 1)[2], "critical sections overlap");
        }
    }

    /** The second JVM of {@link #twoJvmsContendWithoutOverlap}: prints "token start end" per hold. */
    public static final class LockHolderMain {
        public static void main(String[] args) throws Exception {
            try (Client c = Client.connect(args[0]); WriteLock lock = new WriteLock(c, args[1])) {
                for (int i = 0; i < Integer.parseInt(args[2]); i++) {
                    lock.lock();
                    try {
                        long start = System.currentTimeMillis();
                        Thread.sleep(5);
                        System.out.println(lock.getFencingToken() + " " + start + " " + System.currentTimeMillis());
                    } finally {
                        lock.unlock();
                    }
                }
            }
        }
    }

    @Test
    void asyncAcquireCompletesOnRelease() throws Exception {
        try (Zk.Contest contest = Zk.contest("async")) {
            WriteLock holder = contest.first();
            holder.lock();
            CompletableFuture<Long> pending = contest.second().lockAsync();
            Thread.sleep(200);
            assertFalse(pending.isDone());
            holder.unlock();
            assertTrue(pending.get(5, TimeUnit.SECONDS) > 0);
            contest.second().unlockAsync().get(5, TimeUnit.SECONDS);
        }
    }

    /** Issue 16: Apache's {@code new WriteLock(zk, dir, null)}, ported, threw NullPointerException. */
    @Test
    void aNullListenerMeansNoneAndIsOwnerIsApachesName() throws Exception {
        try (Client c = Zk.client()) {
            WriteLock lock = new WriteLock(c, Zk.path("null-listener"), null);
            assertFalse(lock.isOwner());
            lock.lock();
            assertTrue(lock.isOwner());
            lock.unlock();
            assertFalse(lock.isOwner());
        }
    }

    /**
     * A program written against Apache's {@code WriteLock}, {@code LockListener} and
     * {@code DistributedQueue}, ported with only the changes README "Migrating" lists: imports,
     * a {@code Client} for the {@code ZooKeeper}, {@code ZkException} for {@code KeeperException}.
     */
    @Test
    void anApacheProgramPortedWithTheListedChanges() throws Exception {
        // Apache's ZooDefs.Ids.OPEN_ACL_UNSAFE, as its ACL prints itself (no ZooKeeper jar here).
        List<Object> openAclUnsafe = List.of(new Object() {
            @Override public String toString() { return "31,s{'world,'anyone}\n"; }
        });
        String dir = Zk.path("ported");
        try (Client zk = Zk.client()) {
            CountDownLatch acquired = new CountDownLatch(1);
            WriteLock lock = new WriteLock(zk, dir, openAclUnsafe, new LockListener() {
                @Override public void lockAcquired() { acquired.countDown(); }
                @Override public void lockReleased() {}
            });
            assertEquals(dir, lock.getDir());
            assertNull(lock.getId());
            lock.lock();
            assertTrue(lock.isOwner());
            assertTrue(lock.getId().startsWith(dir + "/"), lock.getId());
            assertTrue(acquired.await(5, TimeUnit.SECONDS));
            lock.unlock();
            assertFalse(lock.isOwner());
            assertNull(lock.getId());

            DistributedQueue queue = new DistributedQueue(zk, dir + "-queue");
            assertThrows(java.util.NoSuchElementException.class, queue::element);
            assertTrue(queue.offer("job".getBytes()));
            assertArrayEquals("job".getBytes(), queue.take());
            assertNull(queue.poll());
            ZkException badPath = assertThrows(ZkException.class, () -> new WriteLock(zk, "no-slash"));
            assertEquals(ZkException.Code.INVALID_PATH, badPath.code());
            ZkException refused = assertThrows(ZkException.class,
                () -> new WriteLock(zk, dir, List.of("an ACL granting somebody"), null));
            assertEquals(ZkException.Code.INVALID_ARGUMENT, refused.getCode());
            lock.close();
        }
    }

    /** A multi-lock interrupted while it waits for its second path gives back its first. */
    @Test
    void multiLockTokensPerPathAndAnInterruptGivesBackWhatItTook() throws Exception {
        try (Client a = Zk.client(); Client b = Zk.client()) {
            String x = Zk.path("multi-x"), y = Zk.path("multi-y");
            MultiLock locks = new MultiLock(a, List.of(y, x));
            assertEquals(List.of(y, x), locks.getDirs());
            assertNull(locks.getFencingTokens());
            long[] tokens = locks.lockAsync().get(20, TimeUnit.SECONDS);
            assertArrayEquals(tokens, locks.getFencingTokens());
            assertTrue(tokens[1] < tokens[0], "taken in path order: x, then y");
            assertTrue(locks.tryLock(), "reentrant per thread");
            assertEquals(2, locks.getHoldCount());
            locks.unlock();
            locks.unlock();
            assertThrows(IllegalMonitorStateException.class, locks::unlock);
            ZkException twice = assertThrows(ZkException.class, () -> new MultiLock(a, List.of(x, x)));
            assertEquals(ZkException.Code.INVALID_ARGUMENT, twice.getCode());

            WriteLock holderOfY = new WriteLock(b, y);
            holderOfY.lock();
            Zk.interruptWhileQueued("queued on y, so x is taken", holderOfY, locks::lockInterruptibly);
            WriteLock x2 = new WriteLock(b, x);
            assertTrue(x2.tryLock(20, TimeUnit.SECONDS), "x was given back");
            x2.unlock();
            holderOfY.unlock();
            locks.close();
        }
    }
}
