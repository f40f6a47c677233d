package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class QueueIT {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void everyMethodFifo() throws Exception {
        try (Client c = Zk.client(); DistributedQueue q = new DistributedQueue(c, Zk.path("q"))) {
            assertNull(q.peek());
            assertNull(q.poll());
            assertEquals(0, q.size());
            assertThrows(NoSuchElementException.class, q::element);
            assertThrows(NoSuchElementException.class, q::remove);
            for (int i = 0; i < 5; i++) {
                assertTrue(q.offer(b("item-" + i)));
            }
            assertTrue(q.offerAsync(b("item-5")).get(5, TimeUnit.SECONDS).contains("/qn-"));
            assertEquals(6, q.size());
            assertArrayEquals(b("item-0"), q.peek());
            assertArrayEquals(b("item-0"), q.element());
            assertArrayEquals(b("item-0"), q.poll());
            assertArrayEquals(b("item-1"), q.remove());
            assertArrayEquals(b("item-2"), q.take());
            assertArrayEquals(b("item-3"), q.poll(1, TimeUnit.SECONDS));
            assertArrayEquals(b("item-4"), q.takeAsync().get(5, TimeUnit.SECONDS));
            assertArrayEquals(b("item-5"), q.take());
            long started = System.nanoTime();
            assertNull(q.poll(200, TimeUnit.MILLISECONDS));
            assertTrue(System.nanoTime() - started >= 190_000_000L);
        }
    }

    /** java.util.concurrent's rule, applied by the core (Wait::java): zero or negative is a try. */
    @Test
    void zeroAndNegativeTimeoutsAreATry() throws Exception {
        try (Client c = Zk.client()) {
            DistributedQueue q = new DistributedQueue(c, Zk.path("negative"));
            assertNull(q.poll(-5, TimeUnit.SECONDS));
            assertNull(q.poll(Long.MIN_VALUE, TimeUnit.NANOSECONDS));
            q.offer(new byte[] {1});
            assertArrayEquals(new byte[] {1}, q.poll(0, TimeUnit.SECONDS), "a try takes what is there");
            WriteLock lock = new WriteLock(c, Zk.path("negative-lock"));
            assertTrue(lock.tryLock(-1, TimeUnit.SECONDS), "a try takes a free lock");
            lock.unlock();
            WorkQueue work = new WorkQueue(c, Zk.path("negative-work"));
            assertNull(work.consume(-1, TimeUnit.MILLISECONDS));
            work.close();
        }
    }

    @Test
    void bytesExactAndOversizeRefused() {
        try (Client c = Zk.client(); DistributedQueue q = new DistributedQueue(c, Zk.path("bytes"))) {
            byte[] odd = new byte[258];
            for (int i = 0; i < odd.length; i++) {
                odd[i] = (byte) i;
            }
            byte[] max = new byte[q.getMaxPayload()];
            q.offer(new byte[0]);
            q.offer(odd);
            q.offer(max);
            assertArrayEquals(new byte[0], q.poll());
            assertArrayEquals(odd, q.poll());
            assertArrayEquals(max, q.poll());
            ZkException e = assertThrows(ZkException.class, () -> q.offer(new byte[q.getMaxPayload() + 1]));
            assertEquals(ZkException.Code.INVALID_ARGUMENT, e.getCode());
            assertEquals(0, q.size());
            assertThrows(NullPointerException.class, () -> q.offer(null));
        }
    }

    @Test
    void concurrentConsumersGetEveryItemOnce() throws Exception {
        String dir = Zk.path("consumers");
        List<Integer> got = Collections.synchronizedList(new ArrayList<>());
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        // Each consumer stops at a "stop" item, offered after every other one: a slow producer
        // cannot end the test early (a quiet period of 1.5 s did), and FIFO order means every
        // item before the last "stop" was taken. An item not there within 30 s fails.
        try (Zk.Sessions consumers = new Zk.Sessions(4, c -> {
            DistributedQueue q = new DistributedQueue(c, dir);
            return () -> {
                try {
                    for (;;) {
                        byte[] item = q.poll(30, TimeUnit.SECONDS);
                        if (item == null) {
                            failures.add("no item within 30 s");
                            return;
                        }
                        String text = new String(item, StandardCharsets.UTF_8);
                        if (text.equals("stop")) {
                            return;
                        }
                        got.add(Integer.parseInt(text));
                    }
                } catch (Throwable e) {
                    failures.add(e.toString());
                }
            };
        })) {
            try (Client p = Zk.client(); DistributedQueue q = new DistributedQueue(p, dir)) {
                for (int i = 0; i < 200; i++) {
                    q.offer(b(Integer.toString(i)));
                }
                for (int i = 0; i < consumers.size(); i++) {
                    q.offer(b("stop"));
                }
            }
            consumers.join("a consumer");
            assertEquals(List.of(), failures);
        }
        // Concurrent consumers may overtake within the README's bound ((4-1) x prefetch), so
        // the last "stop" can be taken while a few numbers are still queued: drain them.
        try (Client d = Zk.client(); DistributedQueue q = new DistributedQueue(d, dir)) {
            byte[] item;
            while ((item = q.poll()) != null) {
                String text = new String(item, StandardCharsets.UTF_8);
                if (!text.equals("stop")) {
                    got.add(Integer.parseInt(text));
                }
            }
        }
        List<Integer> sorted = new ArrayList<>(got);
        Collections.sort(sorted);
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            expected.add(i);
        }
        assertEquals(expected, sorted, "each item exactly once");
    }

    @Test
    void interruptedTakeThrowsAndLosesNothing() throws Exception {
        try (Client c = Zk.client(); DistributedQueue q = new DistributedQueue(c, Zk.path("take"))) {
            Zk.Background taker = Zk.Background.start(q::take);
            // The interrupt comes while the take waits for an item, not before it began.
            Zk.eventually("the take is waiting", taker::isWaiting);
            taker.interrupt();
            assertInstanceOf(InterruptedException.class, taker.outcome(5));
            q.offer(b("after"));
            assertArrayEquals(b("after"), q.poll(), "the cancelled take consumed nothing");
        }
    }

    private static List<String> texts(List<byte[]> items) {
        return items.stream().map(b -> new String(b, StandardCharsets.UTF_8)).toList();
    }

    @Test
    void batchedTakesInOrderWithBadSizesRefused() throws Exception {
        try (Client c = Zk.client(); Client other = Zk.client()) {
            String dir = Zk.path("q-batch");
            DistributedQueue q = new DistributedQueue(c, dir);
            for (int i = 0; i < 12; i++) {
                q.offer(b("item-" + i));
            }
            for (int bad : new int[] {0, 1001, -1}) {
                ZkException e = assertThrows(ZkException.class, () -> q.pollMany(bad));
                assertEquals(ZkException.Code.INVALID_ARGUMENT, e.getCode());
                assertTrue(e.getMessage().contains("between 1 and 1000"), e.getMessage());
            }
            assertEquals(List.of("item-0", "item-1", "item-2", "item-3", "item-4"), texts(q.pollMany(5)));
            assertEquals(List.of("item-5", "item-6", "item-7", "item-8", "item-9"), texts(q.takeMany(5, 0, TimeUnit.SECONDS)));
            assertEquals(List.of("item-10", "item-11"), texts(q.takeMany(5, 1, TimeUnit.SECONDS)));
            assertEquals(List.of(), q.pollMany(5));
            assertEquals(List.of(), q.takeMany(5, 50, TimeUnit.MILLISECONDS));
            var waiting = q.takeManyAsync(100);
            new DistributedQueue(other, dir).offer(b("wake"));
            assertEquals(List.of("wake"), texts(waiting.get(30, TimeUnit.SECONDS)));
        }
    }

    /** A batched take interrupted or cancelled at any moment: every item once, taken or still queued. */
    @Test
    void abandonedBatchedTakesLoseNothing() throws Exception {
        String dir = Zk.path("q-batch-abandon");
        List<String> got = Collections.synchronizedList(new ArrayList<>());
        try (Client c = Zk.client()) {
            DistributedQueue q = new DistributedQueue(c, dir);
            for (int i = 0; i < 40; i++) {
                q.offer(b(String.format("item-%02d", i)));
            }
            for (int round = 0; round < 200 && got.size() < 40; round++) {
                int max = 1 + round % 6;
                if (round % 2 == 0) {
                    var future = q.takeManyAsync(max);
                    future.cancel(true);
                    if (!future.isCancelled()) {
                        got.addAll(texts(future.join()));
                    }
                } else {
                    Thread taker = new Thread(() -> {
                        try {
                            got.addAll(texts(q.takeMany(max, 5, TimeUnit.SECONDS)));
                        } catch (InterruptedException e) {
                            // withdrawn: the batch, if any, goes back
                        }
                    });
                    taker.start();
                    taker.interrupt();
                    taker.join(30_000);
                    assertFalse(taker.isAlive());
                }
            }
        } // close waits for batches on their way back
        try (Client c = Zk.client()) {
            DistributedQueue q = new DistributedQueue(c, dir);
            for (List<byte[]> rest = q.pollMany(100); !rest.isEmpty(); rest = q.pollMany(100)) {
                got.addAll(texts(rest));
            }
        }
        List<String> sorted = new ArrayList<>(got);
        Collections.sort(sorted);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            expected.add(String.format("item-%02d", i));
        }
        assertEquals(expected, sorted, "every item exactly once");
    }
}
