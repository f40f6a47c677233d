package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The at-least-once WorkQueue from Java, against a real ZooKeeper. */
class WorkQueueIT {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String s(Delivery d) {
        return new String(d.getData(), StandardCharsets.UTF_8);
    }

    @Test
    void prioritiesAckNackAndTryWithResourcesGiveBack() throws Exception {
        String path = Zk.path("work");
        try (Client c = Zk.client(); WorkQueue q = new WorkQueue(c, path)) {
            q.offerAll(List.of(b("a"), b("b")), WorkQueue.DEFAULT_PRIORITY);
            assertTrue(q.offer(b("urgent"), 1).contains("/entries/entry-001-"));
            assertEquals(3, q.size());
            Delivery urgent = q.consume(10, TimeUnit.SECONDS);
            assertEquals("urgent", s(urgent));
            assertEquals(1, urgent.getPriority());
            assertEquals(1, urgent.getDeliveryCount());
            urgent.ack();
            ZkException twice = assertThrows(ZkException.class, urgent::ack);
            assertEquals(ZkException.Code.INVALID_ARGUMENT, twice.getCode());
            try (Delivery a = q.consume(10, TimeUnit.SECONDS)) {
                assertEquals("a", s(a));
                // Neither acknowledged nor given back: close() gives it back.
            }
            Delivery again = q.consume(10, TimeUnit.SECONDS);
            assertEquals("a", s(again));
            assertEquals(2, again.getDeliveryCount());
            again.nack();
            Delivery third = q.consume(10, TimeUnit.SECONDS);
            assertEquals(3, third.getDeliveryCount());
            third.ackAsync().get(5, TimeUnit.SECONDS);
            Delivery b = q.consume();
            assertEquals("b", s(b));
            b.ack();
            assertNull(q.consume(100, TimeUnit.MILLISECONDS));
            assertEquals(0, q.size());
            assertEquals(ZkException.Code.INVALID_ARGUMENT,
                assertThrows(ZkException.class, () -> q.offer(b("x"), 1000)).getCode());
        }
    }

    @Test
    void aClosedClientGivesBackItsJobsAndPoisonGoesToDeadLetters() throws Exception {
        String path = Zk.path("work-death");
        try (Client survivor = Zk.client(); WorkQueue other = new WorkQueue(survivor, path, 1, 2)) {
            Client doomed = Zk.client();
            WorkQueue held = new WorkQueue(doomed, path, 3, 0);
            other.offerAll(List.of(b("1"), b("2"), b("3")), 100);
            Delivery first = held.consume(10, TimeUnit.SECONDS);
            assertEquals("1", s(first));
            assertNull(other.consume(100, TimeUnit.MILLISECONDS), "all three claimed by the first");
            doomed.close();
            // Three deliveries are expected (a quiet period of 2 s ended the loop, too early
            // when the jobs were slow to come back); the claim after them moves "2", nacked on
            // its last allowed delivery, to the dead letters and finds nothing.
            List<String> got = new ArrayList<>();
            while (got.size() < 3) {
                Delivery d = other.consume(10, TimeUnit.SECONDS);
                assertNotNull(d, "only " + got + " within 10 s");
                got.add(s(d));
                if (s(d).equals("2")) {
                    d.nack();
                } else {
                    d.ack();
                }
            }
            assertNull(other.consume(500, TimeUnit.MILLISECONDS));
            assertEquals(List.of("1", "2", "3"), got);
            assertEquals(0, other.size());
            assertEquals(path + "/dead", other.getDeadLetterPath());
        }
    }

    @Test
    void aCancelledConsumeLeavesNothingClaimed() throws Exception {
        String path = Zk.path("work-cancel");
        try (Client c = Zk.client(); WorkQueue q = new WorkQueue(c, path)) {
            for (int round = 0; round < 20; round++) {
                CompletableFuture<Delivery> waiting = q.consumeAsync();
                q.offer(b("job-" + round));
                // A consume that completed first holds the job: cancel no longer applies.
                Delivery d = waiting.cancel(false) ? q.consume(10, TimeUnit.SECONDS) : waiting.join();
                assertNotNull(d, "round " + round + ": the job is free again");
                d.ack();
            }
            assertEquals(0, q.size());
        }
    }

    @Test
    void closeWakesAWaitingConsumeAndLeavesTheJobInHandToSettle() throws Exception {
        String path = Zk.path("work-closed");
        try (Client c = Zk.client()) {
            WorkQueue q = new WorkQueue(c, path, 4, 0);
            q.offerAll(List.of(b("a"), b("b"), b("c")), WorkQueue.DEFAULT_PRIORITY);
            Delivery held = q.consume(10, TimeUnit.SECONDS);
            assertEquals("a", s(held));
            WorkQueue idle = new WorkQueue(c, path + "-idle");
            CompletableFuture<Delivery> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return idle.consume();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            // Not a synchronisation: a chance for the consume to be waiting when close() comes
            // (one that was not yet fails with CLOSED all the same).
            Thread.sleep(200);
            idle.close();
            Throwable woken = assertThrows(Exception.class, () -> waiting.get(5, TimeUnit.SECONDS)).getCause();
            assertEquals(ZkException.Code.CLOSED, ((ZkException) woken).getCode());
            q.close();
            q.close();
            assertEquals(ZkException.Code.CLOSED, assertThrows(ZkException.class, () -> q.offer(b("d"))).getCode());
            held.ack();
            try (WorkQueue other = new WorkQueue(c, path)) {
                assertEquals(2, other.size());
                Delivery next = other.consume(10, TimeUnit.SECONDS);
                assertEquals("b", s(next));
                next.ack();
            }
        }
    }

    /**
     * Found by an adversarial run: a consumeAsync given up by orTimeout or completeExceptionally
     * kept its wait, and swallowed the next job; cancelled as it completed, it read a freed handle.
     */
    @Test
    void consumesGivenUpInEveryWayLeaveEveryJobToOthers() throws Exception {
        String path = Zk.path("work-given-up");
        int n = 300;
        try (Client c = Zk.client(); Client other = Zk.client()) {
            WorkQueue q = new WorkQueue(c, path, 16, 0);
            CompletableFuture<Delivery> timedOut = q.consumeAsync().orTimeout(50, TimeUnit.MILLISECONDS);
            CompletableFuture<Delivery> failed = q.consumeAsync();
            failed.completeExceptionally(new IllegalStateException("gave up"));
            assertThrows(Exception.class, () -> timedOut.get(5, TimeUnit.SECONDS));
            List<byte[]> items = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                items.add(b(Integer.toString(i)));
            }
            q.offerAll(items, WorkQueue.DEFAULT_PRIORITY);
            java.util.Set<String> acked = java.util.concurrent.ConcurrentHashMap.newKeySet();
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
            List<java.util.concurrent.Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                workers.add(pool.submit(() -> {
                    java.util.Random random = new java.util.Random(seed);
                    for (int round = 0; round < 400 && acked.size() < n; round++) {
                        CompletableFuture<Delivery> f = q.consumeAsync();
                        long spin = System.nanoTime() + random.nextInt(2_000_000);
                        while (System.nanoTime() < spin && !f.isDone()) {
                            Thread.onSpinWait();
                        }
                        switch (round % 3) {
                            case 0 -> f.cancel(true);
                            case 1 -> f.completeExceptionally(new IllegalStateException("gave up"));
                            default -> f.orTimeout(1, TimeUnit.MILLISECONDS);
                        }
                        Delivery d;
                        try {
                            d = f.get(5, TimeUnit.SECONDS);
                        } catch (java.util.concurrent.CancellationException
                                 | java.util.concurrent.ExecutionException given) {
                            // Given up (cancelled, failed or timed out): whatever it claimed went back.
                            continue;
                        }
                        // A delivery that came back must be acknowledged; a failing ack fails the test.
                        d.ack();
                        acked.add(s(d));
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> w : workers) {
                w.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();
            // Gives back what prefetch holds; the first session lives on, and no job may stay
            // claimed by it.
            q.close();
            // Until every job came (what a given-up consume claimed goes back, maybe not at
            // once: a quiet period of 2 s ended this loop), for up to 30 s.
            try (WorkQueue rest = new WorkQueue(other, path)) {
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (acked.size() < n && System.nanoTime() < deadline) {
                    Delivery d = rest.consume(1, TimeUnit.SECONDS);
                    if (d != null) {
                        acked.add(s(d));
                        d.ack();
                    }
                }
            }
            assertEquals(n, acked.size(), "every job delivered while the first session lives");
        }
    }
}
