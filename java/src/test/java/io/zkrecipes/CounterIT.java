package io.zkrecipes;

import static io.zkrecipes.Zk.code;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** SharedCount and DistributedAtomicLong from Java, against a real ZooKeeper. */
class CounterIT {
    /** Records every value a count takes; {@link #until} waits for one with a deadline. */
    static final class Heard implements SharedCountListener {
        final BlockingQueue<VersionedValue<Integer>> seen = new LinkedBlockingQueue<>();

        @Override public void countHasChanged(SharedCount sharedCount, int newCount) {}
        @Override public void onChange(SharedCount sharedCount, VersionedValue<Integer> value) {
            seen.add(value);
        }

        /** The first value heard that is {@code value} (earlier ones skipped). */
        VersionedValue<Integer> until(int value) throws InterruptedException {
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (true) {
                VersionedValue<Integer> next = seen.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                assertNotNull(next, "the count was not heard at " + value + " within 10 s");
                if (next.value() == value) {
                    return next;
                }
            }
        }
    }

    /** Runs {@code each} on {@code threads} threads at once; fails on the first failure or after 30 s. */
    private static void concurrently(int threads, java.util.function.IntConsumer each) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> running = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                running.add(pool.submit(() -> {
                    go.await();
                    each.accept(thread);
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : running) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void incrementsFromThreadsAndClientsAtOnceEndExact() throws Exception {
        String longPath = Zk.path("atomic-long");
        String countPath = Zk.path("shared-count");
        try (Client a = Zk.client(); Client b = Zk.client();
             DistributedAtomicLong la = new DistributedAtomicLong(a, longPath);
             DistributedAtomicLong lb = new DistributedAtomicLong(b, longPath);
             SharedCount ca = new SharedCount(a, countPath, 0); SharedCount cb = new SharedCount(b, countPath, 0)) {
            assertEquals(new AtomicValue<>(true, 0L, 0L), la.get(), "a missing node reads as 0");
            int threads = 4;
            int each = 20;
            Set<Long> before = ConcurrentHashMap.newKeySet();
            Set<Integer> written = ConcurrentHashMap.newKeySet();
            // Two threads on each object, two objects on two sessions.
            concurrently(threads, t -> {
                DistributedAtomicLong counter = t % 2 == 0 ? la : lb;
                SharedCount count = t % 2 == 0 ? ca : cb;
                for (int i = 0; i < each; i++) {
                    AtomicValue<Long> got = counter.increment();
                    assertTrue(got.succeeded());
                    assertEquals(got.preValue() + 1, got.postValue());
                    assertTrue(before.add(got.preValue()), "two increments saw " + got.preValue());
                    assertTrue(written.add(count.add(1).value()), "two adds wrote the same value");
                }
            });
            long n = (long) threads * each;
            assertEquals(n, la.get().postValue());
            assertEquals(n, lb.get().preValue());
            assertEquals(n, before.size());
            ca.start();
            assertEquals((int) n, ca.getCount());
            assertEquals(new AtomicValue<>(true, n, n - 5), la.add(-5));
            assertEquals(new AtomicValue<>(true, n - 5, n - 6), lb.decrement());
            assertEquals(new AtomicValue<>(true, n - 6, 100L), la.compareAndSet(n - 6, 100));
            assertEquals(new AtomicValue<>(false, 100L, 100L), lb.compareAndSet(n - 6, 7), "the value moved on: the one seen is told");
            lb.forceSet(Long.MAX_VALUE);
            assertEquals(new AtomicValue<>(true, Long.MAX_VALUE, Long.MIN_VALUE), la.increment(), "wraps as long does");
        }
    }

    @Test
    void aTrySetThatLostTheRaceAnswersFalseAndRefreshes() throws Exception {
        String path = Zk.path("shared-count-race");
        try (Client a = Zk.client(); Client b = Zk.client();
             SharedCount ours = new SharedCount(a, path, 3); SharedCount theirs = new SharedCount(b, path, 99)) {
            ours.start();
            theirs.start();
            assertEquals(3, theirs.getCount(), "the seed of whoever created the node");
            VersionedValue<Integer> seen = ours.getVersionedValue();
            assertEquals(3, seen.getValue());
            theirs.setCount(5);
            assertFalse(ours.trySetCount(seen, 9));
            // The answer came with the newer value: no need to wait for the watch.
            VersionedValue<Integer> now = ours.getVersionedValue();
            assertEquals(5, now.value());
            assertTrue(now.version() > seen.version());
            assertTrue(ours.trySetCount(now, 9));
            assertEquals(9, ours.getCount());
            assertFalse(theirs.trySetCount(new VersionedValue<>(now.version(), 9), 10), "the version counts, not the value");
            // Two threads race with one versioned value: one wins.
            VersionedValue<Integer> shared = ours.getVersionedValue();
            AtomicInteger won = new AtomicInteger();
            concurrently(2, t -> {
                if ((t == 0 ? ours : theirs).trySetCount(shared, 20 + t)) {
                    won.incrementAndGet();
                }
            });
            assertEquals(1, won.get());
            assertThrows(NullPointerException.class, () -> ours.trySetCount(null, 1));
        }
    }

    @Test
    void aListenerHearsAnotherClientsChangeAndMayUseTheCount() throws Exception {
        String path = Zk.path("shared-count-listener");
        try (Client a = Zk.client(); Client b = Zk.client();
             SharedCount ours = new SharedCount(a, path, 0); SharedCount theirs = new SharedCount(b, path, 0)) {
            Heard heard = new Heard();
            ours.addListener(heard);
            // From the callback: a read and a write of the count itself.
            CompletableFuture<Integer> readThere = new CompletableFuture<>();
            ours.addListener((count, newCount) -> {
                if (newCount == 42 && !readThere.isDone()) {
                    readThere.complete(count.getCount());
                    count.setCount(43);
                }
            });
            ours.start();
            assertEquals(0, heard.until(0).value(), "start tells the value it read");
            theirs.start();
            theirs.setCount(42);
            assertEquals(42, heard.until(42).value());
            assertEquals(42, readThere.get(10, TimeUnit.SECONDS));
            heard.until(43);
            Zk.eventually("the listener's write reached the other client", () -> theirs.getCount() == 43);
            ours.removeListener(heard);
            theirs.setCount(44);
            Zk.eventually("the other client's write arrived", () -> ours.getCount() == 44);
            assertFalse(heard.seen.stream().anyMatch(v -> v.value() == 44), "a removed listener hears nothing");
        }
    }

    @Test
    void dataOfTheWrongLengthIsATypedError() throws Exception {
        String path = Zk.path("counter-bad");
        String four = Zk.path("counter-four");
        try (Client c = Zk.client(); DistributedAtomicLong eight = new DistributedAtomicLong(c, path);
             SharedCount count = new SharedCount(c, path, 0);
             SharedCount seeded = new SharedCount(c, four, 1); DistributedAtomicLong reader = new DistributedAtomicLong(c, four)) {
            assertEquals(ZkException.Code.INVALID_PATH, code(() -> new SharedCount(c, "relative", 0)));
            assertEquals(ZkException.Code.INVALID_PATH, code(() -> new DistributedAtomicLong(c, "/trailing/")));
            assertThrows(NullPointerException.class, () -> new SharedCount(c, null, 0));
            assertEquals(ZkException.Code.INVALID_ARGUMENT, code(count::getCount), "not started");
            eight.forceSet(7);
            ZkException e = assertThrows(ZkException.class, count::start);
            assertEquals(ZkException.Code.INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getDetail().contains("4 bytes") && e.getDetail().contains("8"), e.getDetail());
            seeded.start();
            e = assertThrows(ZkException.class, reader::get);
            assertEquals(ZkException.Code.INVALID_ARGUMENT, e.getCode());
            assertTrue(e.getDetail().contains("8 bytes") && e.getDetail().contains("4"), e.getDetail());
            assertEquals(ZkException.Code.INVALID_ARGUMENT, code(reader::increment), "never overwritten by a guess");
            assertEquals(1, seeded.getCount());
        }
    }

    @Test
    void useAfterCloseIsClosedAndACloseMidAddLosesNothing() throws Exception {
        String path = Zk.path("counter-closed");
        try (Client c = Zk.client(); Client other = Zk.client();
             DistributedAtomicLong check = new DistributedAtomicLong(other, path + "-long")) {
            SharedCount count = new SharedCount(c, path, 0);
            count.start();
            DistributedAtomicLong counter = new DistributedAtomicLong(c, path + "-long");
            // Adds on other threads while both objects close: each add either happened (and
            // returned) or threw CLOSED before it began.
            AtomicInteger counted = new AtomicInteger();
            AtomicInteger added = new AtomicInteger();
            AtomicBoolean closing = new AtomicBoolean();
            CompletableFuture<Void> adding = CompletableFuture.runAsync(() -> {
                while (true) {
                    try {
                        count.add(1);
                        added.incrementAndGet();
                        counter.increment();
                        counted.incrementAndGet();
                    } catch (ZkException e) {
                        assertEquals(ZkException.Code.CLOSED, e.getCode());
                        assertTrue(closing.get());
                        return;
                    }
                }
            });
            Zk.eventually("some adds went through", () -> counted.get() >= 5);
            closing.set(true);
            count.close();
            counter.close();
            adding.get(10, TimeUnit.SECONDS);
            assertEquals(counted.get(), check.get().postValue());
            try (SharedCount look = new SharedCount(other, path, 0)) {
                look.start();
                assertEquals(added.get(), look.getCount());
            }
            count.close(); // twice: harmless
            counter.close();
            for (org.junit.jupiter.api.function.Executable call : List.<org.junit.jupiter.api.function.Executable>of(
                count::start, count::getCount, count::getVersionedValue, () -> count.setCount(1), () -> count.add(1),
                () -> count.trySetCount(new VersionedValue<>(0, 0), 1), () -> count.addListener((s, n) -> {}),
                counter::get, counter::increment, () -> counter.forceSet(1), () -> counter.compareAndSet(0, 1))) {
                assertEquals(ZkException.Code.CLOSED, code(call));
            }
            assertTrue(count.toString().endsWith("closed]"));
            // A closed client: the recipes made from it say so.
            try (SharedCount orphan = new SharedCount(c, path, 0); DistributedAtomicLong lonely = new DistributedAtomicLong(c, path + "-long")) {
                orphan.start();
                c.close();
                assertEquals(ZkException.Code.CLOSED, code(() -> orphan.setCount(1)));
                assertEquals(ZkException.Code.CLOSED, code(lonely::increment));
                assertEquals(added.get(), orphan.getCount(), "the cache keeps its last value");
            }
        }
    }

    @Test
    void anInterruptedCallerGetsItsResultAndKeepsItsInterrupt() throws Exception {
        String path = Zk.path("counter-interrupt");
        try (Client c = Zk.client(); SharedCount count = new SharedCount(c, path, 0);
             DistributedAtomicLong counter = new DistributedAtomicLong(c, path + "-long")) {
            Thread.currentThread().interrupt();
            try {
                count.start();
                assertEquals(1, counter.increment().postValue());
                count.setCount(5);
                assertEquals(6, count.add(1).value());
            } finally {
                assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
            }
            assertEquals(1, counter.get().postValue());
            assertEquals(6, count.getCount());
        }
    }

    @Test
    void aListenerMayCloseTheCount() throws Exception {
        String path = Zk.path("shared-count-close-in-listener");
        try (Client c = Zk.client(); SharedCount count = new SharedCount(c, path, 0)) {
            CompletableFuture<ZkException.Code> after = new CompletableFuture<>();
            count.addListener((self, newCount) -> {
                if (newCount == 1) {
                    self.close();
                    try {
                        self.getCount();
                        after.complete(null);
                    } catch (ZkException e) {
                        after.complete(e.getCode());
                    }
                }
            });
            count.start();
            count.setCount(1);
            assertEquals(ZkException.Code.CLOSED, after.get(10, TimeUnit.SECONDS));
            assertEquals(ZkException.Code.CLOSED, code(() -> count.setCount(2)));
        }
    }
}
