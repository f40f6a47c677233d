package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.zkrecipes.micrometer.ZkrecipesMetrics;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A client's metrics in Micrometer registries, against a real ZooKeeper: every number checked
 * against what the test did and against the client's own snapshot, the Prometheus registry's
 * names and buckets against the library's own Prometheus text. The recordings reach the meters on
 * the library's delivery thread; each check waits for them with a flush, never a sleep.
 */
class MicrometerIT {
    private static final Duration FLUSH = Duration.ofSeconds(10);
    private static final String ACQUISITIONS = "zkrecipes.lock.acquisitions";
    private static final String WAIT = "zkrecipes.lock.wait.duration";
    private static final String HOLDERS = "zkrecipes.lock.holders";

    @Test
    void lockAcquisitionsReachTheRegistriesAndNothingAfterClose() throws Exception {
        String path = Zk.path("micrometer-lock");
        String before = path + "-before";
        try (Client holder = Zk.client(); Client tester = Zk.client();
             WriteLock held = new WriteLock(holder, path); WriteLock lock = new WriteLock(tester, path);
             WriteLock earlier = new WriteLock(tester, before)) {
            for (int i = 0; i < 3; i++) {
                earlier.lock();
                earlier.unlock();
            }
            SimpleMeterRegistry simple = new SimpleMeterRegistry();
            PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            ZkrecipesMetrics metrics = new ZkrecipesMetrics(tester, Tags.of("app", "orders"));
            metrics.bindTo(simple);
            metrics.bindTo(prometheus);

            // Counted before bindTo: the counters start from it; the durations before are gone.
            assertEquals(3, simple.get(ACQUISITIONS).tags("app", "orders", "path", before, "outcome", "acquired")
                .counter().count());
            assertEquals(1, simple.get("zkrecipes.session.state_changes").tags("to", "connected").counter().count());
            assertNull(simple.find(WAIT).tags("path", before).timer(), "no duration from before bindTo");

            // 100 acquisitions with a timeout: every tenth while the other client holds the lock.
            for (int i = 0; i < 100; i++) {
                if (i % 10 == 0) {
                    held.lock();
                    assertFalse(lock.tryLock(50, TimeUnit.MILLISECONDS), "held by the other client");
                    held.unlock();
                } else {
                    assertTrue(lock.tryLock(10, TimeUnit.SECONDS));
                    if (i == 55) {
                        assertTrue(metrics.flush(FLUSH));
                        assertEquals(1.0, simple.get(HOLDERS).tags("path", path).gauge().value(), "held now");
                    }
                    lock.unlock();
                }
            }
            assertTrue(metrics.flush(FLUSH), "the recordings reached the meters");

            assertEquals(10, simple.get(ACQUISITIONS).tags("path", path, "outcome", "timeout").counter().count());
            assertEquals(90, simple.get(ACQUISITIONS).tags("path", path, "outcome", "acquired").counter().count());
            assertEquals(100, simple.get(WAIT).tags("path", path).timers().stream().mapToLong(Timer::count).sum());
            Timer timedOut = simple.get(WAIT).tags("path", path, "outcome", "timeout").timer();
            assertEquals(10, timedOut.count());
            assertTrue(timedOut.totalTime(TimeUnit.SECONDS) >= 10 * 0.05, "a timed-out wait lasts its timeout");
            assertEquals(90, simple.get("zkrecipes.lock.hold.duration").tags("path", path).timer().count());
            assertEquals(0.0, simple.get(HOLDERS).tags("path", path).gauge().value());
            assertEquals(0.0, simple.get("zkrecipes.lock.waiters").tags("path", path).gauge().value());
            Meter.Id id = timedOut.getId();
            assertEquals(List.of("app", "kind", "outcome", "path"), id.getTags().stream().map(t -> t.getKey()).toList());
            assertEquals(Metric.catalog().stream().filter(m -> m.name().equals(WAIT)).findFirst().orElseThrow()
                .description(), id.getDescription());

            // The same names, series, values and buckets as the library's own Prometheus text.
            String ours = tester.metrics().toPrometheus();
            String theirs = prometheus.scrape();
            for (String name : List.of("zkrecipes_lock_acquisitions_total", "zkrecipes_lock_wait_duration_seconds_bucket",
                "zkrecipes_lock_holders")) {
                assertTrue(theirs.contains("\n" + name + "{"), name + " in\n" + theirs);
            }
            Map<Sample, Double> scraped = samples(theirs);
            int compared = 0;
            for (Map.Entry<Sample, Double> sample : samples(ours).entrySet()) {
                Map<String, String> labels = sample.getKey().labels();
                boolean stable = path.equals(labels.get("path")) || sample.getKey().name().startsWith("zkrecipes_session_");
                if (!stable) {
                    continue;
                }
                Map<String, String> tagged = new HashMap<>(labels);
                tagged.put("app", "orders");
                Double value = scraped.get(new Sample(sample.getKey().name(), tagged));
                assertNotNull(value, sample.getKey() + " is not in\n" + theirs);
                assertEquals(sample.getValue(), value, 1e-6, sample.getKey().toString());
                compared++;
            }
            // 2 counters, 2 gauges, 3 histograms of 18 buckets, a sum and a count, the session's.
            assertTrue(compared >= 2 + 2 + 3 * 20 + 1, compared + " samples compared");

            // Closed: the registries keep their meters and get nothing more.
            metrics.close();
            for (int i = 0; i < 5; i++) {
                lock.lock();
                lock.unlock();
            }
            assertTrue(MetricsFeed.flush(FLUSH));
            assertEquals(95, tester.metrics().counter(ACQUISITIONS, Map.of("path", path, "outcome", "acquired")));
            assertEquals(90, simple.get(ACQUISITIONS).tags("path", path, "outcome", "acquired").counter().count());
            assertEquals(100, simple.get(WAIT).tags("path", path).timers().stream().mapToLong(Timer::count).sum());
            assertEquals(ZkException.Code.CLOSED, Zk.code(() -> metrics.bindTo(new SimpleMeterRegistry())));
            metrics.close();
        }
    }

    @Test
    void aJobNackedTwiceThenAckedIsRedeliveredTwice() throws Exception {
        String path = Zk.path("micrometer-work");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Client client = Zk.client(); WorkQueue work = new WorkQueue(client, path);
             ZkrecipesMetrics metrics = new ZkrecipesMetrics(client)) {
            metrics.bindTo(registry);
            work.offer("job".getBytes());
            for (int attempt = 1; attempt <= 3; attempt++) {
                Delivery delivery = work.consume(10, TimeUnit.SECONDS);
                assertNotNull(delivery, "delivery " + attempt);
                if (attempt < 3) {
                    delivery.nack();
                } else {
                    delivery.ack();
                }
            }
            assertTrue(metrics.flush(FLUSH));
            assertEquals(1, registry.get("zkrecipes.work_queue.offers").tags("path", path).counter().count());
            assertEquals(3, registry.get("zkrecipes.work_queue.deliveries").tags("path", path).counter().count());
            assertEquals(2, registry.get("zkrecipes.work_queue.redeliveries").tags("path", path).counter().count());
            assertEquals(2, registry.get("zkrecipes.work_queue.settled").tags("path", path, "outcome", "nack").counter()
                .count());
            assertEquals(1, registry.get("zkrecipes.work_queue.settled").tags("path", path, "outcome", "ack").counter()
                .count());
            assertEquals(0.0, registry.get("zkrecipes.work_queue.in_flight").tags("path", path).gauge().value());
        }
    }

    @Test
    void twoClientsOnOneRegistryAddUpGaugesIncluded() throws Exception {
        String path = Zk.path("micrometer-two");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ClientOptions noPaths = new ClientOptions().metricPaths(false);
        try (Client a = Client.connect(Zk.connect(), noPaths); Client b = Client.connect(Zk.connect(), noPaths);
             ZkrecipesMetrics first = new ZkrecipesMetrics(a); ZkrecipesMetrics second = new ZkrecipesMetrics(b);
             WriteLock lockA = new WriteLock(a, path + "-a"); WriteLock lockB = new WriteLock(b, path + "-b")) {
            first.bindTo(registry);
            second.bindTo(registry);
            lockA.lock();
            lockB.lock();
            assertTrue(first.flush(FLUSH));
            // Without paths (or a tag per client) both clients' series are one meter each.
            assertEquals(2.0, registry.get(HOLDERS).tags("kind", "lock").gauge().value(), "one hold per client");
            assertEquals(2, registry.get(ACQUISITIONS).tags("kind", "lock", "outcome", "acquired").counter().count());
            lockA.unlock();
            lockB.unlock();
            assertTrue(first.flush(FLUSH));
            assertEquals(0.0, registry.get(HOLDERS).tags("kind", "lock").gauge().value());
        }
    }

    @Test
    void aFeedHandsEachRecordingOnTheDeliveryThreadAndOutlivesAThrowingListener() throws Exception {
        String path = Zk.path("micrometer-feed");
        record Seen(MetricsFeed.Recording recording, String thread, boolean daemon) {}
        Queue<Seen> seen = new ConcurrentLinkedQueue<>();
        try (Client client = Zk.client(); WriteLock lock = new WriteLock(client, path)) {
            lock.lock();
            lock.unlock();
            AtomicBoolean thrown = new AtomicBoolean();
            MetricsFeed feed = MetricsFeed.start(client, recording -> {
                Thread thread = Thread.currentThread();
                seen.add(new Seen(recording, thread.getName(), thread.isDaemon()));
                if (thrown.compareAndSet(false, true)) {
                    throw new IllegalStateException("a listener that throws");
                }
            });
            try {
                assertEquals(1, feed.initial().counter(ACQUISITIONS, Map.of("path", path)));
                lock.lock();
                lock.unlock();
                assertTrue(MetricsFeed.flush(FLUSH));
                List<Seen> here = seen.stream().filter(s -> path.equals(s.recording().attributes().get("path"))).toList();
                assertTrue(thrown.get(), "the first recording was thrown at");
                Seen acquired = here.stream().filter(s -> s.recording().metric().name().equals(ACQUISITIONS))
                    .findFirst().orElseThrow(() -> new AssertionError("no acquisition in " + here));
                assertEquals(Map.of("path", path, "kind", "lock", "outcome", "acquired"), acquired.recording().attributes());
                assertEquals(List.of("path", "kind", "outcome"), List.copyOf(acquired.recording().attributes().keySet()));
                assertEquals(1.0, acquired.recording().value());
                assertEquals("{acquisition}", acquired.recording().metric().unit());
                assertNull(acquired.recording().metric().baseUnit());
                assertEquals("zkrecipes-log", acquired.thread());
                assertTrue(acquired.daemon(), "the delivery thread never keeps the JVM alive");
                MetricsFeed.Recording waited = here.stream().map(Seen::recording)
                    .filter(r -> r.metric().name().equals(WAIT)).findFirst().orElseThrow();
                assertEquals("seconds", waited.metric().baseUnit());
                assertTrue(waited.value() > 0 && waited.value() < 10, "a wait in seconds: " + waited.value());
                // The holder came and went: +1 then -1.
                List<Double> holds = here.stream().map(Seen::recording).filter(r -> r.metric().name().equals(HOLDERS))
                    .map(MetricsFeed.Recording::value).toList();
                assertEquals(List.of(1.0, -1.0), holds);
            } finally {
                assertTrue(feed.close(FLUSH));
            }
            int after = seen.size();
            lock.lock();
            lock.unlock();
            assertTrue(MetricsFeed.flush(FLUSH));
            assertEquals(after, seen.size(), "nothing after close");
            assertTrue(MetricsFeed.dropped() >= 0);
            assertEquals(Metric.histogramBounds().size() + 1,
                client.metrics().histogram(WAIT).orElseThrow().counts().size());
        }
    }

    /**
     * Two threads bind one adapter to registries and read every meter while a third closes the
     * client under them: every bind works (after the close, with the client's last numbers), no
     * read fails, and the holders gauge reads 0 once the client's holds are gone.
     */
    @Test
    void twoThreadsOnOneAdapterWhileItsClientCloses() throws Exception {
        String path = Zk.path("micrometer-closing");
        Client client = Zk.client();
        WriteLock lock = new WriteLock(client, path);
        lock.lock();
        ZkrecipesMetrics metrics = new ZkrecipesMetrics(client);
        SimpleMeterRegistry first = new SimpleMeterRegistry();
        metrics.bindTo(first);
        assertTrue(metrics.flush(FLUSH));
        assertEquals(1, first.get(HOLDERS).tags("path", path).gauge().value());

        Queue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
        AtomicBoolean closed = new AtomicBoolean();
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(2);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            Thread thread = new Thread(() -> {
                running.countDown();
                // Until a bind that started after the close: the close lands mid-loop.
                boolean after = false;
                while (!after) {
                    after = closed.get();
                    SimpleMeterRegistry registry = new SimpleMeterRegistry();
                    try {
                        metrics.bindTo(registry);
                    } catch (Throwable e) {
                        unexpected.add(e);
                        return;
                    }
                    try {
                        for (Meter meter : registry.getMeters()) {
                            meter.measure().forEach(measurement -> measurement.getValue());
                        }
                        if (after && registry.get("zkrecipes.session.state_changes").tags("to", "closed").counter().count() != 1) {
                            unexpected.add(new AssertionError("a bind after the close shows the client's last numbers"));
                        }
                    } catch (Throwable e) {
                        unexpected.add(e);
                        return;
                    }
                }
            });
            threads.add(thread);
            thread.start();
        }
        assertTrue(running.await(10, TimeUnit.SECONDS));
        client.close();
        closed.set(true);
        for (Thread thread : threads) {
            thread.join(TimeUnit.SECONDS.toMillis(30));
            assertFalse(thread.isAlive(), "a binding thread ended");
        }
        assertTrue(unexpected.isEmpty(), () -> "unexpected: " + unexpected);
        metrics.close();
        assertEquals(0, first.get(HOLDERS).tags("path", path).gauge().value(), "the closed client holds nothing");
    }

    @Test
    void badArgumentsAreTypedErrors() throws Exception {
        assertThrows(NullPointerException.class, () -> new ZkrecipesMetrics(null));
        Client closed = Zk.client();
        ZkrecipesMetrics metrics = new ZkrecipesMetrics(closed);
        closed.close();
        // A closed client's meters show its last numbers (a last scrape), fed no more.
        SimpleMeterRegistry late = new SimpleMeterRegistry();
        metrics.bindTo(late);
        assertEquals(1, late.get("zkrecipes.session.state_changes").tags("to", "closed").counter().count());
        assertEquals(1, closed.metrics().counter("zkrecipes.session.state_changes", Map.of("to", "closed")));
        assertEquals(ZkException.Code.CLOSED, Zk.code(() -> MetricsFeed.start(closed, r -> { })));
        assertEquals(ZkException.Code.INVALID_ARGUMENT, Zk.code(() -> metrics.flush(Duration.ZERO)));
        assertThrows(NullPointerException.class, () -> metrics.bindTo(null));
        metrics.close();
        assertEquals(ZkException.Code.CLOSED, Zk.code(() -> metrics.bindTo(new SimpleMeterRegistry())));
    }

    /**
     * The JAR without Micrometer: a program with the library and nothing else on its classpath
     * connects, locks, reads its metrics and follows a feed.
     */
    @Test
    void theLibraryWorksWithoutMicrometerOnTheClasspath() throws Exception {
        String classpath = location(Client.class) + java.io.File.pathSeparator + location(WithoutMicrometer.class);
        ProcessBuilder program = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", classpath, WithoutMicrometer.class.getName(), Zk.connect(), Zk.path("without-micrometer"))
            .redirectErrorStream(true);
        Zk.Child.Result done = Zk.Child.start(program).await(Duration.ofSeconds(60));
        assertEquals(0, done.exit(), done.out());
        assertTrue(done.out().contains("acquired 1, fed 1, no micrometer"), done.out());
    }

    private static String location(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    /** One sample of the Prometheus text: its name and labels ({@code le} as a number). */
    record Sample(String name, Map<String, String> labels) {}

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})? (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

    /** The samples of a Prometheus text (0.0.4): comments skipped, label order ignored. */
    private static Map<Sample, Double> samples(String text) {
        Map<Sample, Double> samples = new HashMap<>();
        List<String> unread = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Matcher sample = SAMPLE.matcher(line);
            if (!sample.matches()) {
                unread.add(line);
                continue;
            }
            Map<String, String> labels = new HashMap<>();
            if (sample.group(2) != null) {
                Matcher label = LABEL.matcher(sample.group(2));
                while (label.find()) {
                    String value = label.group(2);
                    labels.put(label.group(1), label.group(1).equals("le") ? String.valueOf(number(value)) : value);
                }
            }
            samples.put(new Sample(sample.group(1), labels), number(sample.group(3)));
        }
        assertEquals(List.of(), unread, "lines that are no sample");
        return samples;
    }

    private static double number(String text) {
        return switch (text) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            default -> Double.parseDouble(text);
        };
    }
}
