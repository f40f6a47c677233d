package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.read.ListAppender;
import ch.qos.logback.core.spi.FilterReply;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

/**
 * The library's logs and metrics from Java, against a real ZooKeeper: the events read through
 * SLF4J's System.Logger bridge into Logback (as an application gets them), the numbers through
 * {@link Client#metrics()}, each checked against what the test did.
 */
class ObserveIT {
    private static final String ACQUISITIONS = "zkrecipes.lock.acquisitions";

    /**
     * Every record the library hands to a {@code zkrecipes.*} logger, seen where it enters Logback:
     * the bridge asks Logback whether the record's level is on before logging it, and that
     * question passes the turbo filters, also when the answer is no. Counted on the library's
     * delivery thread only (its own level questions come from the callers of refreshLogLevels).
     * The first record of {@code zkrecipes.lock} is made to throw, as a broken logger would.
     */
    static final class Crossings extends TurboFilter {
        record Crossing(String logger, Level level) {}

        final Queue<Crossing> seen = new ConcurrentLinkedQueue<>();
        final AtomicInteger thrown = new AtomicInteger();

        @Override
        public FilterReply decide(Marker marker, ch.qos.logback.classic.Logger logger, Level level, String format,
                                  Object[] params, Throwable t) {
            if (format == null && logger.getName().startsWith("zkrecipes.")
                && Thread.currentThread().getName().equals("zkrecipes-log")) {
                seen.add(new Crossing(logger.getName(), level));
                if (logger.getName().equals("zkrecipes.lock") && thrown.compareAndSet(0, 1)) {
                    throw new IllegalStateException("a logger that throws");
                }
            }
            return FilterReply.NEUTRAL;
        }
    }

    @Test
    void lockAcquisitionsAreCountedAndTheContendedOneIsLoggedAtInfo() throws Exception {
        LoggerContext logback = (LoggerContext) LoggerFactory.getILoggerFactory();
        ch.qos.logback.classic.Logger lockLogger = logback.getLogger("zkrecipes.lock");
        ListAppender<ILoggingEvent> events = new ListAppender<>() {
            @Override
            protected void append(ILoggingEvent event) {
                // Logback names an event's thread when first asked: ask on the thread that logs.
                event.prepareForDeferredProcessing();
                super.append(event);
            }
        };
        events.start();
        Crossings crossings = new Crossings();
        crossings.start();
        lockLogger.addAppender(events);
        lockLogger.setLevel(Level.INFO);
        lockLogger.setAdditive(false); // recorded here, not shown on the console
        logback.addTurboFilter(crossings);
        // The levels changed while the program runs: the library takes them again.
        Client.refreshLogLevels();
        String path = Zk.path("observe-lock");
        try (Client holder = Zk.client(); Client tester = Zk.client();
             WriteLock held = new WriteLock(holder, path); WriteLock lock = new WriteLock(tester, path)) {
            assertEquals(1, tester.metrics().counter("zkrecipes.session.state_changes", Map.of("to", "connected")));
            // 100 acquisitions with a timeout: every tenth while the other client holds the lock.
            long contendedToken = -1;
            for (int i = 0; i < 100; i++) {
                if (i % 10 == 0) {
                    held.lock();
                    assertFalse(lock.tryLock(50, TimeUnit.MILLISECONDS), "held by the other client");
                    held.unlock();
                } else if (i != 55) {
                    assertTrue(lock.tryLock(10, TimeUnit.SECONDS));
                    lock.unlock();
                } else {
                    // One acquisition waits behind the holder: the contended one, told at INFO.
                    held.lock();
                    long[] token = new long[1];
                    Zk.Background waiter = Zk.Background.start(() -> {
                        assertTrue(lock.tryLock(20, TimeUnit.SECONDS));
                        token[0] = lock.getFencingToken();
                        lock.unlock();
                    });
                    Zk.eventually("the tester waits behind the holder", () -> lock.getParticipants().size() == 2);
                    assertEquals(1, tester.metrics().gauge("zkrecipes.lock.waiters", Map.of("path", path)));
                    held.unlock();
                    assertNull(waiter.outcome(20));
                    contendedToken = token[0];
                }
            }

            MetricsSnapshot seen = tester.metrics();
            Map<String, String> here = Map.of("path", path);
            assertEquals(10, seen.counter(ACQUISITIONS, Map.of("path", path, "outcome", "timeout")));
            assertEquals(90, seen.counter(ACQUISITIONS, Map.of("path", path, "outcome", "acquired")));
            assertEquals(100, seen.counter(ACQUISITIONS, here));
            assertEquals(0, seen.gauge("zkrecipes.lock.waiters", here));
            assertEquals(0, seen.gauge("zkrecipes.lock.holders", here));
            assertEquals(90, seen.histogram("zkrecipes.lock.hold.duration", here).orElseThrow().count());
            HistogramPoint waits = seen.histogram("zkrecipes.lock.wait.duration", here).orElseThrow();
            assertEquals(100, waits.count());
            HistogramPoint timeouts = seen.histogram("zkrecipes.lock.wait.duration",
                Map.of("path", path, "outcome", "timeout")).orElseThrow();
            assertEquals(10, timeouts.count());
            assertTrue(timeouts.min() >= 0.05, "a timed-out wait lasts its timeout: " + timeouts.min());
            double median = waits.quantile(0.5).orElseThrow();
            assertTrue(median >= waits.min() && median <= waits.max(), median + " within " + waits);
            assertEquals(waits.max(), waits.quantile(1.0).orElseThrow(), 1e-9);
            assertEquals(waits.bounds().size() + 1, waits.counts().size());
            assertEquals(waits.count(), waits.counts().stream().mapToLong(Long::longValue).sum());
            assertTrue(seen.counter("zkrecipes.requests", Map.of("op", "create")) >= 100, "a node per acquisition");
            assertEquals(1, seen.counter("zkrecipes.session.state_changes", Map.of("to", "connected")));
            // The holder's client counted its own: 11 acquisitions, none waited.
            assertEquals(11, holder.metrics().counter(ACQUISITIONS, Map.of("path", path, "outcome", "acquired")));

            MetricPoint timedOut = seen.points().stream()
                .filter(p -> p.name().equals(ACQUISITIONS) && p.attributes().get("outcome").equals("timeout")
                    && path.equals(p.attributes().get("path")))
                .findFirst().orElseThrow();
            assertEquals(MetricPoint.Instrument.COUNTER, timedOut.instrument());
            assertEquals("{acquisition}", timedOut.unit());
            assertEquals(List.of("path", "kind", "outcome"), List.copyOf(timedOut.attributes().keySet()));
            assertEquals("lock", timedOut.attributes().get("kind"));
            assertEquals(10, timedOut.value());
            assertNull(timedOut.histogram());
            assertThrows(UnsupportedOperationException.class, () -> timedOut.attributes().put("x", "y"));
            MetricPoint held100 = seen.points().stream()
                .filter(p -> p.name().equals("zkrecipes.lock.wait.duration") && path.equals(p.attributes().get("path"))
                    && p.attributes().get("outcome").equals("acquired"))
                .findFirst().orElseThrow();
            assertEquals(MetricPoint.Instrument.HISTOGRAM, held100.instrument());
            assertEquals("s", held100.unit());
            assertEquals(90, held100.value());
            assertEquals(90, held100.histogram().count());

            String prometheus = seen.toPrometheus();
            assertTrue(prometheus.matches("(?s).*# TYPE zkrecipes_lock_acquisitions(_total)? counter\n.*"), prometheus);
            assertTrue(prometheus.contains("zkrecipes_lock_acquisitions_total{path=\"" + path
                + "\",kind=\"lock\",outcome=\"timeout\"} 10\n"), prometheus);

            // The events: the contended acquire at INFO with its token, on the delivery thread.
            assertTrue(Client.flushLogs(Duration.ofSeconds(10)), "the events are delivered");
            List<ILoggingEvent> logged = events.list.stream()
                .filter(e -> e.getFormattedMessage().contains(" path=" + path + " "))
                .toList();
            ILoggingEvent acquired = logged.stream()
                .filter(e -> e.getFormattedMessage().contains("outcome=acquired"))
                .findFirst().orElseThrow(() -> new AssertionError("no contended acquire in " + logged));
            assertEquals(Level.INFO, acquired.getLevel());
            assertEquals("zkrecipes.lock", acquired.getLoggerName());
            assertEquals("zkrecipes-log", acquired.getThreadName());
            String line = acquired.getFormattedMessage();
            assertTrue(line.contains(" fencing_token=" + contendedToken), line);
            assertTrue(line.matches(".* waited_ms=[0-9]+.*"), line);
            assertTrue(line.startsWith("lock " + path + ": acquired after waiting "), line);
            assertTrue(logged.stream().allMatch(e -> e.getLevel().isGreaterOrEqual(Level.INFO)), logged.toString());
            // 89 acquisitions without a wait and their holds were DEBUG events: none crossed.
            assertEquals(1, crossings.thrown.get(), "the first record threw");
            assertFalse(crossings.seen.isEmpty());
            for (Crossings.Crossing crossing : crossings.seen) {
                Level on = logback.getLogger(crossing.logger()).getEffectiveLevel();
                assertTrue(crossing.level().isGreaterOrEqual(on), crossing + " crossed below " + on);
            }
            assertTrue(crossings.seen.stream().anyMatch(c -> c.logger().equals("zkrecipes.lock") && c.level() == Level.INFO));
        } finally {
            logback.getTurboFilterList().remove(crossings);
            lockLogger.detachAppender(events);
            lockLogger.setLevel(null);
            lockLogger.setAdditive(true);
            Client.refreshLogLevels();
        }
    }

    /**
     * The library keeps 10,000 events for a logger that does not keep up, then drops them and
     * says so: a warning on the root logger {@code zkrecipes}, wherever the lost events were
     * going (a review saw the count only as a suffix of the next line, at its level).
     */
    @Test
    void eventsAStalledAppenderCouldNotTakeAreToldOnTheRootLogger() throws Exception {
        LoggerContext logback = (LoggerContext) LoggerFactory.getILoggerFactory();
        ch.qos.logback.classic.Logger requests = logback.getLogger("zkrecipes.request");
        ch.qos.logback.classic.Logger root = logback.getLogger("zkrecipes");
        java.util.concurrent.CountDownLatch stalled = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch resume = new java.util.concurrent.CountDownLatch(1);
        ListAppender<ILoggingEvent> stalling = new ListAppender<>() {
            @Override
            protected void append(ILoggingEvent event) {
                if (stalled.getCount() > 0) {
                    stalled.countDown();
                    try {
                        // Until the requests are made (the finally resumes it): a stall of 20 s
                        // can end before 10,500 requests do on a loaded machine.
                        resume.await(600, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        };
        ListAppender<ILoggingEvent> told = new ListAppender<>();
        stalling.start();
        told.start();
        requests.addAppender(stalling);
        requests.setLevel(Level.DEBUG);
        requests.setAdditive(false);
        root.addAppender(told);
        root.setLevel(Level.WARN);
        root.setAdditive(false);
        Client.refreshLogLevels();
        try (Client client = Zk.client(); DistributedQueue queue = new DistributedQueue(client, Zk.path("dropped"))) {
            queue.size();
            assertTrue(stalled.await(20, TimeUnit.SECONDS), "the appender stalls");
            // Each request is one event of zkrecipes.request.
            for (int i = 0; i < 10_500; i++) {
                queue.size();
            }
        } finally {
            resume.countDown();
            assertTrue(Client.flushLogs(Duration.ofSeconds(20)));
            requests.detachAppender(stalling);
            requests.setLevel(null);
            requests.setAdditive(true);
            root.detachAppender(told);
            root.setLevel(null);
            root.setAdditive(true);
            Client.refreshLogLevels();
        }
        List<ILoggingEvent> warnings = told.list.stream()
            .filter(e -> e.getLoggerName().equals("zkrecipes") && e.getFormattedMessage().contains("log events were dropped"))
            .toList();
        assertFalse(warnings.isEmpty(), "a warning that events were dropped");
        assertEquals(Level.WARN, warnings.get(0).getLevel());
        java.util.regex.Matcher count = java.util.regex.Pattern.compile("^(\\d+) zkrecipes log events were dropped.* dropped=(\\d+)$")
            .matcher(warnings.get(0).getFormattedMessage());
        assertTrue(count.matches(), warnings.get(0).getFormattedMessage());
        assertEquals(count.group(1), count.group(2));
        assertTrue(Long.parseLong(count.group(1)) >= 500, count.group(1));
    }

    @Test
    void withoutPathsTheNumbersAddUpPerKind() throws Exception {
        String path = Zk.path("observe-no-paths");
        try (Client client = Client.connect(Zk.connect(), new ClientOptions().metricPaths(false));
             WriteLock lock = new WriteLock(client, path); WriteLock other = new WriteLock(client, path + "-b")) {
            lock.lock();
            lock.unlock();
            assertTrue(other.tryLock(5, TimeUnit.SECONDS));
            other.unlock();
            MetricsSnapshot seen = client.metrics();
            List<MetricPoint> acquisitions = seen.points().stream().filter(p -> p.name().equals(ACQUISITIONS)).toList();
            assertEquals(1, acquisitions.size(), acquisitions.toString());
            assertEquals(Map.of("kind", "lock", "outcome", "acquired"), acquisitions.get(0).attributes());
            assertEquals(2, seen.counter(ACQUISITIONS, Map.of("outcome", "acquired")));
            assertEquals(0, seen.counter(ACQUISITIONS, Map.of("path", path)), "no series has a path");
            assertTrue(seen.points().stream().noneMatch(p -> p.attributes().containsKey("path")));
            assertTrue(seen.toPrometheus().contains("zkrecipes_lock_acquisitions_total{kind=\"lock\",outcome=\"acquired\"} 2\n"));
        }
    }

    @Test
    void aJobNackedTwiceThenAckedIsRedeliveredTwice() throws Exception {
        String path = Zk.path("observe-work");
        try (Client client = Zk.client(); WorkQueue work = new WorkQueue(client, path)) {
            work.offer("job".getBytes());
            for (int attempt = 1; attempt <= 3; attempt++) {
                Delivery delivery = work.consume(10, TimeUnit.SECONDS);
                assertNotNull(delivery, "delivery " + attempt);
                assertEquals(attempt, delivery.getDeliveryCount());
                if (attempt < 3) {
                    delivery.nack();
                } else {
                    delivery.ack();
                }
            }
            MetricsSnapshot seen = client.metrics();
            Map<String, String> here = Map.of("path", path);
            assertEquals(1, seen.counter("zkrecipes.work_queue.offers", here));
            assertEquals(3, seen.counter("zkrecipes.work_queue.deliveries", here));
            assertEquals(2, seen.counter("zkrecipes.work_queue.redeliveries", here));
            assertEquals(2, seen.counter("zkrecipes.work_queue.settled", Map.of("path", path, "outcome", "nack")));
            assertEquals(1, seen.counter("zkrecipes.work_queue.settled", Map.of("path", path, "outcome", "ack")));
            assertEquals(0, seen.gauge("zkrecipes.work_queue.in_flight", here));
        }
    }

    @Test
    void badLookupsAndArgumentsAreTypedErrors() throws Exception {
        try (Client client = Zk.client()) {
            MetricsSnapshot seen = client.metrics();
            assertEquals(ZkException.Code.INVALID_ARGUMENT, Zk.code(() -> seen.counter("zkrecipes.lock.acquisition")));
            assertTrue(assertThrows(ZkException.class, () -> seen.gauge(ACQUISITIONS)).getMessage()
                .contains("is a counter"));
            assertTrue(assertThrows(ZkException.class, () -> seen.counter(ACQUISITIONS, Map.of("paht", "/a")))
                .getMessage().contains("path, kind, outcome"));
            Map<String, String> withNull = new HashMap<>();
            withNull.put("path", null);
            assertEquals(ZkException.Code.INVALID_ARGUMENT, Zk.code(() -> seen.counter(ACQUISITIONS, withNull)));
            assertThrows(NullPointerException.class, () -> seen.counter(null));
            assertEquals(java.util.Optional.empty(), seen.histogram("zkrecipes.lock.wait.duration"));

            HistogramPoint none = new HistogramPoint(0, 0, 0, 0, List.of(), List.of());
            assertEquals(ZkException.Code.INVALID_ARGUMENT, Zk.code(() -> none.quantile(0.5)), "not the library's buckets");
            HistogramPoint made;
            try (WriteLock lock = new WriteLock(client, Zk.path("observe-quantile"))) {
                lock.lock();
                lock.unlock();
                made = client.metrics().histogram("zkrecipes.lock.wait.duration").orElseThrow();
            }
            assertTrue(made.quantile(0.99).isPresent());
            for (double q : new double[] {-0.1, 1.5, Double.NaN}) {
                assertEquals(ZkException.Code.INVALID_ARGUMENT, Zk.code(() -> made.quantile(q)), "q " + q);
            }
            assertEquals(ZkException.Code.INVALID_ARGUMENT, Zk.code(() -> Client.flushLogs(Duration.ZERO)));
        }
    }
}
