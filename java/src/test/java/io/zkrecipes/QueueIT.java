package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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
        List<Thread> consumers = new ArrayList<>();
        List<Client> clients = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Client c = Zk.client();
            clients.add(c);
            DistributedQueue q = new DistributedQueue(c, dir);
            consumers.add(new Thread(() -> {
                try {
                    for (byte[] item; (item = q.poll(1500, TimeUnit.MILLISECONDS)) != null; ) {
                        got.add(Integer.parseInt(new String(item, StandardCharsets.UTF_8)));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        consumers.forEach(Thread::start);
        try (Client p = Zk.client(); DistributedQueue q = new DistributedQueue(p, dir)) {
            for (int i = 0; i < 200; i++) {
                q.offer(b(Integer.toString(i)));
            }
        }
        for (Thread t : consumers) {
            t.join();
        }
        clients.forEach(Client::close);
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
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    q.take();
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            t.start();
            Thread.sleep(200);
            t.interrupt();
            t.join(5000);
            assertInstanceOf(InterruptedException.class, thrown.get());
            q.offer(b("after"));
            assertArrayEquals(b("after"), q.poll(), "the cancelled take consumed nothing");
        }
    }
}
