package io.zkrecipes;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A program with the zkrecipes JAR and no Micrometer on its classpath (MicrometerIT runs it):
 * the library loads, locks, counts and feeds without it. Arguments: the connect string and a
 * lock path; prints what it saw, exits 1 on anything else.
 */
public final class WithoutMicrometer {
    private WithoutMicrometer() {}

    public static void main(String[] args) throws Exception {
        try {
            Class.forName("io.micrometer.core.instrument.MeterRegistry");
            System.out.println("micrometer is on the classpath: this program checks nothing");
            System.exit(1);
        } catch (ClassNotFoundException expected) {
            // As an application without Micrometer has it.
        }
        String path = args[1];
        try (Client client = Client.connect(args[0]); WriteLock lock = new WriteLock(client, path)) {
            AtomicInteger fed = new AtomicInteger();
            try (MetricsFeed feed = MetricsFeed.start(client, recording -> {
                if (recording.metric().name().equals("zkrecipes.lock.acquisitions")) {
                    fed.incrementAndGet();
                }
            })) {
                lock.lock();
                lock.unlock();
                if (!MetricsFeed.flush(Duration.ofSeconds(10))) {
                    throw new IllegalStateException("the recordings were not delivered");
                }
            }
            long acquired = client.metrics().counter("zkrecipes.lock.acquisitions", Map.of("path", path));
            System.out.println("acquired " + acquired + ", fed " + fed.get() + ", no micrometer");
        }
    }
}
