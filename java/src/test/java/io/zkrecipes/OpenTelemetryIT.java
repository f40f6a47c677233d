package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The OpenTelemetry span around each wait, against a real ZooKeeper, read back from the SDK's
 * in-memory exporter: its name (the core's), its parent (the caller's span), its outcome, token
 * and waited time checked against what the test did. A span ends before the caller's answer is
 * handed over, and a cancel returns once the span ended, so each check reads the exporter once
 * the call has returned; only a future's {@code orTimeout}, which ends the wait on another
 * thread, is waited for.
 * Without a tracer provider (or without the API) a child JVM shows that no span is made and the
 * classes that make them are never loaded.
 */
class OpenTelemetryIT {
    private static final AttributeKey<String> PATH = AttributeKey.stringKey("path");
    private static final AttributeKey<String> KIND = AttributeKey.stringKey("kind");
    private static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("outcome");
    private static final AttributeKey<Long> TOKEN = AttributeKey.longKey("fencing_token");
    private static final AttributeKey<Long> WAITED_MS = AttributeKey.longKey("waited_ms");

    private static final InMemorySpanExporter EXPORTER = InMemorySpanExporter.create();
    private static OpenTelemetrySdk sdk;
    private static Tracer tracer;

    @BeforeAll
    static void setProvider() {
        sdk = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(EXPORTER)).build())
            .build();
        GlobalOpenTelemetry.resetForTest();
        GlobalOpenTelemetry.set(sdk);
        tracer = sdk.getTracer("OpenTelemetryIT");
    }

    @AfterAll
    static void resetProvider() {
        GlobalOpenTelemetry.resetForTest();
        sdk.close();
    }

    @BeforeEach
    void forgetSpans() {
        EXPORTER.reset();
    }

    /** The finished spans named {@code name}, in the order they ended. */
    private static List<SpanData> spans(String name) {
        return EXPORTER.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).toList();
    }

    /** The one span named {@code name} whose parent is {@code parent}. */
    private static SpanData childOf(Span parent, String name) {
        List<SpanData> children = spans(name).stream()
            .filter(s -> s.getParentSpanId().equals(parent.getSpanContext().getSpanId()))
            .toList();
        assertEquals(1, children.size(), "one " + name + " span under the caller's: " + EXPORTER.getFinishedSpanItems());
        SpanData child = children.get(0);
        assertEquals(parent.getSpanContext().getTraceId(), child.getTraceId());
        return child;
    }

    /** The one span named {@code name} that ended, whatever its parent. */
    private static SpanData only(String name) {
        List<SpanData> found = spans(name);
        assertEquals(1, found.size(), "one " + name + " span: " + EXPORTER.getFinishedSpanItems());
        return found.get(0);
    }

    private static void assertOutcome(SpanData span, String outcome) {
        assertEquals(outcome, span.getAttributes().get(OUTCOME), span.toString());
        assertNotNull(span.getAttributes().get(WAITED_MS), "waited_ms");
        if (!outcome.equals("error")) {
            assertEquals(StatusCode.UNSET, span.getStatus().getStatusCode(), span.toString());
        }
    }

    @Test
    void aContendedAcquireIsAChildOfTheCallersSpanWithItsTokenAndWait() throws Exception {
        try (Zk.Contest c = Zk.contest("otel-contended")) {
            c.first().lock();
            Span caller = tracer.spanBuilder("caller").startSpan();
            AtomicLong token = new AtomicLong(-1);
            Zk.Background waiter = Zk.Background.start(() -> {
                try (Scope ignored = caller.makeCurrent()) {
                    c.second().lock();
                    token.set(c.second().getFencingToken());
                    c.second().unlock();
                }
            });
            Zk.eventually("the waiter queued", () -> c.first().getParticipants().size() == 2);
            long queued = System.nanoTime();
            // The holder keeps the lock a while (the workload, not a synchronisation): the
            // waiter's span must have waited at least as long.
            Thread.sleep(300);
            long heldMs = (System.nanoTime() - queued) / 1_000_000;
            c.first().unlock();
            assertNull(waiter.outcome(30));
            caller.end();

            SpanData acquire = childOf(caller, "zkrecipes.lock.acquire");
            assertOutcome(acquire, "acquired");
            assertEquals(c.path(), acquire.getAttributes().get(PATH));
            assertEquals("lock", acquire.getAttributes().get(KIND), "as the core's metrics name an exclusive lock's acquire");
            assertTrue(token.get() > 0);
            assertEquals(token.get(), acquire.getAttributes().get(TOKEN));
            long waited = acquire.getAttributes().get(WAITED_MS);
            assertTrue(waited >= heldMs, "waited " + waited + " ms, held " + heldMs + " ms");
            assertTrue(acquire.getEndEpochNanos() - acquire.getStartEpochNanos() >= heldMs * 1_000_000);
            // The holder's own acquire, outside any span of the test's: a root of its own.
            SpanData holder = spans("zkrecipes.lock.acquire").stream()
                .filter(s -> !s.getSpanId().equals(acquire.getSpanId())).findFirst().orElseThrow();
            assertFalse(holder.getParentSpanContext().isValid());
            assertOutcome(holder, "acquired");
        }
    }

    @Test
    void anAsyncAcquireIsAChildOfTheContextAtTheCallAndEndsWithTheFuture() throws Exception {
        try (Client client = Zk.client(); WriteLock lock = new WriteLock(client, Zk.path("otel-async"))) {
            Span caller = tracer.spanBuilder("caller").startSpan();
            CompletableFuture<Long> acquired;
            try (Scope ignored = caller.makeCurrent()) {
                acquired = lock.lockAsync();
            }
            long token = acquired.get(30, TimeUnit.SECONDS);
            caller.end();
            SpanData acquire = childOf(caller, "zkrecipes.lock.acquire");
            assertOutcome(acquire, "acquired");
            assertEquals(token, acquire.getAttributes().get(TOKEN));
            lock.unlock();
        }
    }

    @Test
    void aTimedOutAcquireHasNoToken() throws Exception {
        try (Zk.Contest c = Zk.contest("otel-timeout")) {
            c.first().lock();
            assertFalse(c.second().tryLock(100, TimeUnit.MILLISECONDS));
            SpanData timed = spans("zkrecipes.lock.acquire").get(1);
            assertOutcome(timed, "timeout");
            assertNull(timed.getAttributes().get(TOKEN));
            assertTrue(timed.getAttributes().get(WAITED_MS) >= 100, timed.toString());

            assertFalse(c.second().tryLock(), "a try");
            SpanData tried = spans("zkrecipes.lock.acquire").get(2);
            assertOutcome(tried, "timeout");
            assertNull(tried.getAttributes().get(TOKEN));
            c.first().unlock();
        }
    }

    @Test
    void aCancelledOrInterruptedWaitIsCancelled() throws Exception {
        try (Zk.Contest c = Zk.contest("otel-cancel")) {
            c.first().lock();
            EXPORTER.reset();
            CompletableFuture<Long> waiting = c.second().lockAsync();
            Zk.eventually("the async waiter queued", () -> c.first().getParticipants().size() == 2);
            assertTrue(waiting.cancel(true));
            SpanData cancelled = only("zkrecipes.lock.acquire");
            assertOutcome(cancelled, "cancelled");
            assertNull(cancelled.getAttributes().get(TOKEN));
            Zk.eventually("the cancelled waiter withdrew", () -> c.first().getParticipants().size() == 1);

            EXPORTER.reset();
            Zk.interruptWhileQueued("the interruptible waiter", c.first(), () -> c.second().lockInterruptibly());
            assertOutcome(only("zkrecipes.lock.acquire"), "cancelled");

            // The caller's own deadline on the future passed: the wait was given up from outside,
            // cancelled (not an error), as the core's metrics count it.
            EXPORTER.reset();
            CompletableFuture<Long> bounded = c.second().lockAsync().orTimeout(100, TimeUnit.MILLISECONDS);
            ExecutionException late = assertThrows(ExecutionException.class, () -> bounded.get(30, TimeUnit.SECONDS));
            assertInstanceOf(java.util.concurrent.TimeoutException.class, late.getCause());
            Zk.eventually("the span of the wait orTimeout ended", () -> spans("zkrecipes.lock.acquire").size() == 1);
            assertOutcome(only("zkrecipes.lock.acquire"), "cancelled");
            Zk.eventually("the metrics count the wait given up as cancelled", () -> c.b().metrics()
                .counter("zkrecipes.lock.acquisitions", Map.of("path", c.path(), "outcome", "cancelled")) == 3);
            c.first().unlock();
        }
    }

    @Test
    void aFailedWaitIsAnErrorWithItsException() throws Exception {
        String path = Zk.path("otel-error");
        try (Client client = Zk.client(); ReadWriteLock lock = new ReadWriteLock(client, path)) {
            lock.readLock().lock();
            ZkException upgrade = assertThrows(ZkException.class, () -> lock.writeLock().lock());
            assertEquals(ZkException.Code.WOULD_DEADLOCK, upgrade.getCode());
            List<SpanData> acquires = spans("zkrecipes.lock.acquire");
            assertEquals(2, acquires.size());
            assertEquals("read", acquires.get(0).getAttributes().get(KIND));
            assertOutcome(acquires.get(0), "acquired");
            SpanData failed = acquires.get(1);
            assertEquals("write", failed.getAttributes().get(KIND));
            assertOutcome(failed, "error");
            assertEquals(StatusCode.ERROR, failed.getStatus().getStatusCode());
            assertTrue(failed.getStatus().getDescription().contains("WOULD_DEADLOCK"), failed.getStatus().toString());
            EventData exception = failed.getEvents().stream().filter(e -> e.getName().equals("exception"))
                .findFirst().orElseThrow(() -> new AssertionError("no exception recorded: " + failed));
            assertEquals(ZkException.class.getName(),
                exception.getAttributes().get(AttributeKey.stringKey("exception.type")));
            lock.readLock().unlock();
        }

        // A wait that cannot start (its object closed) is an error too, and throws as before.
        EXPORTER.reset();
        Client client = Zk.client();
        Barrier barrier = new Barrier(client, Zk.path("otel-closed"));
        barrier.close();
        assertEquals(ZkException.Code.CLOSED, Zk.code(() -> barrier.waitOnBarrier(1, TimeUnit.SECONDS)));
        SpanData closed = only("zkrecipes.barrier.wait");
        assertOutcome(closed, "error");
        assertEquals(StatusCode.ERROR, closed.getStatus().getStatusCode());
        client.close();
    }

    @Test
    void everyOtherWaitIsNamedAsTheCoreNamesIt() throws Exception {
        try (Client client = Zk.client()) {
            String base = Zk.path("otel-kinds");

            try (Semaphore semaphore = new Semaphore(client, base + "/semaphore", 1)) {
                Lease lease = semaphore.acquire();
                SpanData acquire = only("zkrecipes.semaphore.acquire");
                assertOutcome(acquire, "acquired");
                assertEquals(lease.getFencingToken(), acquire.getAttributes().get(TOKEN));
                assertNull(semaphore.tryAcquire(50, TimeUnit.MILLISECONDS));
                assertOutcome(spans("zkrecipes.semaphore.acquire").get(1), "timeout");
                lease.release();
            }

            try (DistributedQueue queue = new DistributedQueue(client, base + "/queue")) {
                assertNull(queue.poll(50, TimeUnit.MILLISECONDS));
                assertOutcome(only("zkrecipes.queue.take"), "timeout");
                queue.offer("one".getBytes(StandardCharsets.UTF_8));
                assertEquals("one", new String(queue.take(), StandardCharsets.UTF_8));
                SpanData take = spans("zkrecipes.queue.take").get(1);
                assertOutcome(take, "taken");
                assertEquals(base + "/queue", take.getAttributes().get(PATH));
                queue.offer("two".getBytes(StandardCharsets.UTF_8));
                assertEquals(1, queue.takeManyAsync(10).get(30, TimeUnit.SECONDS).size());
                assertOutcome(spans("zkrecipes.queue.take").get(2), "taken");
                assertEquals(List.of(), queue.pollMany(10), "a poll is no wait: no span");
                assertEquals(3, spans("zkrecipes.queue.take").size());
            }

            try (WorkQueue jobs = new WorkQueue(client, base + "/jobs")) {
                jobs.offer("job".getBytes(StandardCharsets.UTF_8));
                try (Delivery delivery = jobs.consumeAsync().get(30, TimeUnit.SECONDS)) {
                    delivery.ack();
                }
                assertOutcome(only("zkrecipes.work_queue.consume"), "delivered");
            }

            try (LeaderElectionSupport election = new LeaderElectionSupport(client, base + "/election", "host-a")) {
                election.start();
                assertTrue(election.awaitLeadership(30, TimeUnit.SECONDS));
                SpanData leader = only("zkrecipes.election.await_leadership");
                assertOutcome(leader, "leader");
                assertNull(leader.getAttributes().get(TOKEN), "Apache's election has no fencing token");
            }

            try (LeaderLatch latch = new LeaderLatch(client, base + "/latch")) {
                latch.start();
                long token = latch.awaitLeadershipAsync().get(30, TimeUnit.SECONDS);
                SpanData leader = only("zkrecipes.latch.await_leadership");
                assertOutcome(leader, "leader");
                assertEquals(token, leader.getAttributes().get(TOKEN));
            }

            try (Barrier barrier = new Barrier(client, base + "/barrier")) {
                barrier.setBarrier();
                assertFalse(barrier.waitOnBarrier(50, TimeUnit.MILLISECONDS));
                barrier.removeBarrier();
                barrier.waitOnBarrier();
                List<SpanData> waits = spans("zkrecipes.barrier.wait");
                assertOutcome(waits.get(0), "timeout");
                assertOutcome(waits.get(1), "passed");
                assertEquals("single", waits.get(1).getAttributes().get(KIND));
            }

            EXPORTER.reset();
            try (DoubleBarrier pair = new DoubleBarrier(client, base + "/double", 1)) {
                pair.enter();
                pair.leave();
                List<SpanData> passes = spans("zkrecipes.barrier.wait");
                assertEquals(List.of("enter", "leave"), passes.stream().map(s -> s.getAttributes().get(KIND)).toList());
                passes.forEach(s -> assertOutcome(s, "passed"));
            }

            EXPORTER.reset();
            List<String> dirs = List.of(base + "/multi-b", base + "/multi-a");
            try (MultiLock both = new MultiLock(client, dirs)) {
                both.lock();
                both.unlock();
                SpanData acquire = only("zkrecipes.lock.acquire");
                assertOutcome(acquire, "acquired");
                assertEquals("multi", acquire.getAttributes().get(KIND));
                assertEquals(String.join(",", dirs), acquire.getAttributes().get(PATH));
                assertNull(acquire.getAttributes().get(TOKEN), "one per path: the core's span has none either");
                assertEquals(1, client.metrics().histogram("zkrecipes.lock.wait.duration",
                    Map.of("path", String.join(",", dirs), "kind", "multi", "outcome", "acquired")).orElseThrow().count());
            }
        }
    }

    /**
     * Without the API on the classpath the library waits as ever. With it but no provider set, no
     * span is made and the classes that make spans are never loaded (the JVM's class-load log,
     * up to the moment the program sets a provider); a provider set later is seen at once.
     */
    @Test
    void withoutAProviderNoSpanIsMadeAndNothingOfTheSdkIsLoaded() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String bare = location(Client.class) + File.pathSeparator + location(WithoutOpenTelemetry.class);
        Zk.Child.Result absent = Zk.Child.start(new ProcessBuilder(java, "-cp", bare, WithoutOpenTelemetry.class.getName(),
            "absent", Zk.connect(), Zk.path("otel-absent")).redirectErrorStream(true)).await(Duration.ofSeconds(60));
        assertEquals(0, absent.exit(), absent.out());
        assertTrue(absent.out().contains("waited without opentelemetry"), absent.out());

        Set<String> withSdk = new LinkedHashSet<>(List.of(bare.split(File.pathSeparator)));
        for (String type : List.of("io.opentelemetry.api.GlobalOpenTelemetry", "io.opentelemetry.context.Context",
                "io.opentelemetry.common.ComponentLoader", "io.opentelemetry.sdk.OpenTelemetrySdk",
                "io.opentelemetry.sdk.common.CompletableResultCode", "io.opentelemetry.sdk.trace.SdkTracerProvider",
                "io.opentelemetry.sdk.metrics.SdkMeterProvider", "io.opentelemetry.sdk.logs.SdkLoggerProvider",
                "io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter")) {
            try {
                withSdk.add(location(Class.forName(type)));
            } catch (ClassNotFoundException notInThisVersion) {
                // A module this version of the SDK does not have.
            }
        }
        Path loaded = Files.createTempFile("otel-class-load", ".log");
        try {
            Zk.Child.Result unset = Zk.Child.start(new ProcessBuilder(java, "-Xlog:class+load=info:file=" + loaded,
                "-cp", String.join(File.pathSeparator, withSdk), WithoutOpenTelemetry.class.getName(),
                "unset", Zk.connect(), Zk.path("otel-unset")).redirectErrorStream(true)).await(Duration.ofSeconds(60));
            assertEquals(0, unset.exit(), unset.out());
            assertTrue(unset.out().contains("untraced waits done; 1 span once a provider was set"), unset.out());

            List<String> untraced = new ArrayList<>();
            for (String line : Files.readAllLines(loaded)) {
                if (line.contains(WithoutOpenTelemetry.Traced.class.getName())) {
                    break;
                }
                untraced.add(line);
            }
            String before = String.join("\n", untraced);
            assertTrue(before.contains("io.zkrecipes.OpenTelemetryTracer "), "the provider was looked for");
            assertFalse(before.contains("io.zkrecipes.OpenTelemetryWaitSpan"), "the span hook was reached");
            assertFalse(before.contains("io.opentelemetry.sdk."), "the SDK was loaded");
            assertFalse(before.contains("io.opentelemetry.api.trace.SpanBuilder"), "a span was built");
        } finally {
            Files.deleteIfExists(loaded);
        }
    }

    private static String location(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}
