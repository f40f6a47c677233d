// A demo worker in Java: election member, producer when leading, consumer always.
// Run as a single-file program with the zkrecipes JAR on the classpath.
// With ZKRECIPES_DEMO_METRICS_PORT (`run.py --prometheus`) it serves its client's metrics there.
import com.sun.net.httpserver.HttpServer;
import io.zkrecipes.*;
import java.io.*;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

public class Worker {
    static final class Ledger {
        private final BufferedReader in;
        private final Writer out;

        Ledger(String address) throws IOException {
            String[] hp = address.split(":");
            Socket socket = new Socket(hp[0], Integer.parseInt(hp[1]));
            in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
        }

        synchronized String ask(String line) {
            try {
                out.write(line + "\n");
                out.flush();
                return in.readLine();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * This client's metrics at http://127.0.0.1:&lt;port&gt;/metrics for the demo's Prometheus, and a
     * wait for a scrape begun after the work, so that Prometheus's last sample is the final count.
     */
    static final class MetricsEndpoint implements AutoCloseable {
        private final HttpServer server;
        private long lastScrapeBegan = System.nanoTime();

        /** The endpoint on the port the demo gave, or null when it asked for none. */
        static MetricsEndpoint fromEnvironment(Client client) throws IOException {
            String port = System.getenv("ZKRECIPES_DEMO_METRICS_PORT");
            return port == null ? null : new MetricsEndpoint(client, Integer.parseInt(port));
        }

        private MetricsEndpoint(Client client, int port) throws IOException {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
            server.createContext("/", exchange -> {
                long began = System.nanoTime();
                try {
                    if (!exchange.getRequestURI().getPath().equals("/metrics")) {
                        exchange.sendResponseHeaders(404, -1);
                        return;
                    }
                    byte[] body = client.metrics().toPrometheus().getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                    exchange.sendResponseHeaders(200, body.length);
                    exchange.getResponseBody().write(body);
                } finally {
                    exchange.close();
                }
                // Counted once written: the worker may exit as soon as it is told.
                scraped(began);
            });
            server.start();
        }

        private synchronized void scraped(long began) {
            if (began - lastScrapeBegan > 0) {
                lastScrapeBegan = began;
            }
            notifyAll();
        }

        synchronized boolean awaitScrape(Duration timeout) throws InterruptedException {
            long since = System.nanoTime();
            long deadline = since + timeout.toNanos();
            while (lastScrapeBegan - since <= 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    public static void main(String[] args) throws Exception {
        String connect = args[0], root = args[1], name = args[2];
        Ledger ledger = new Ledger(args[3]);
        ledger.ask("HELLO " + name + " " + ProcessHandle.current().pid());
        ClientOptions options = new ClientOptions().identity(name).sessionTimeout(Duration.ofSeconds(Long.parseLong(args[4])));
        try (Client client = Client.connect(connect, options);
                MetricsEndpoint endpoint = MetricsEndpoint.fromEnvironment(client)) {
            WriteLock lock = new WriteLock(client, root + "/lock");
            ReadWriteLock audit = new ReadWriteLock(client, root + "/audit");
            // At least once: a job whose worker dies is delivered again to another.
            WorkQueue jobs = new WorkQueue(client, root + "/jobs");
            LeaderElectionSupport election = new LeaderElectionSupport(client, root + "/election", name);
            CountDownLatch leading = new CountDownLatch(1);
            AtomicBoolean stopping = new AtomicBoolean();
            election.addListener(event -> {
                if (event == LeaderElectionSupport.EventType.ELECTED_COMPLETE) {
                    ledger.ask("LEADER " + name);
                    leading.countDown();
                }
            });
            election.start();
            Thread producer = new Thread(() -> {
                try {
                    while (!leading.await(200, TimeUnit.MILLISECONDS)) {
                        if (stopping.get()) {
                            return;
                        }
                    }
                    while (!stopping.get() && "NO".equals(ledger.ask("DONE?"))) {
                        int n = Integer.parseInt(ledger.ask("NEXT " + jobs.size()));
                        if (n < 0) {
                            Thread.sleep(200);
                            continue;
                        }
                        jobs.offer(("job-" + n).getBytes(StandardCharsets.UTF_8));
                        ledger.ask("OFFERED " + n);
                        Thread.sleep(10);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            producer.start();
            Thread auditor = new Thread(() -> {
                try {
                    while (!stopping.get()) {
                        Thread.sleep(1000);
                        if (leading.getCount() == 0 && !stopping.get()) {
                            audit.readLock().lock();
                            try {
                                long token = audit.readLock().getFencingToken();
                                ledger.ask("AUDIT " + name + " " + token);
                                Thread.sleep(50);
                                ledger.ask("AUDITED " + name + " " + token);
                            } finally {
                                audit.readLock().unlock();
                            }
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            auditor.start();
            while ("NO".equals(ledger.ask("DONE?"))) {
                Delivery delivery = jobs.consume(500, TimeUnit.MILLISECONDS);
                if (delivery == null) {
                    continue;
                }
                try (delivery) {  // given back unless acknowledged
                    int job = Integer.parseInt(new String(delivery.getData(), StandardCharsets.UTF_8).split("-")[1]);
                    ledger.ask("TAKEN " + job + " " + name);
                    lock.lock();
                    try {
                        audit.writeLock().lock();
                        try {
                            ledger.ask("APPLY " + job + " " + lock.getFencingToken() + " " + name + " "
                                    + audit.writeLock().getFencingToken());
                        } finally {
                            audit.writeLock().unlock();
                        }
                    } finally {
                        lock.unlock();
                    }
                    delivery.ack();
                }
            }
            // Shutting down: the helpers stop and finish what they have in flight (an audit
            // holding the read lock, an offer) before the client closes under them.
            stopping.set(true);
            auditor.join();
            producer.join();
            election.stop();
            if (endpoint != null) {
                endpoint.awaitScrape(Duration.ofSeconds(5));
            }
            // What this worker's own metrics say, for the demo's table (the core estimates the
            // percentiles).
            MetricsSnapshot metrics = client.metrics();
            Map<String, String> lockPath = Map.of("path", root + "/lock");
            Optional<HistogramPoint> waits = metrics.histogram("zkrecipes.lock.wait.duration", lockPath);
            Optional<HistogramPoint> holds = metrics.histogram("zkrecipes.lock.hold.duration", lockPath);
            ledger.ask(String.format(java.util.Locale.ROOT, "METRICS %s %.3f %.3f %.3f %.3f %d %d", name,
                    millis(waits, 0.5), millis(waits, 0.99), millis(holds, 0.5), millis(holds, 0.99),
                    metrics.counter("zkrecipes.lock.acquisitions", Map.of("path", root + "/lock", "outcome", "acquired")),
                    metrics.counter("zkrecipes.work_queue.redeliveries")));
        }
        System.exit(0);
    }

    /** A histogram's {@code q} quantile in milliseconds (0 when nothing was recorded). */
    private static double millis(Optional<HistogramPoint> histogram, double q) {
        return histogram.flatMap(h -> {
            java.util.OptionalDouble seconds = h.quantile(q);
            return seconds.isPresent() ? Optional.of(seconds.getAsDouble() * 1000) : Optional.empty();
        }).orElse(0.0);
    }
}
