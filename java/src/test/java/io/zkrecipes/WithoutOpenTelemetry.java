package io.zkrecipes;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.concurrent.TimeUnit;

/**
 * A program that waits on a lock and a queue with no OpenTelemetry tracer provider (OpenTelemetryIT
 * runs it). Arguments: {@code absent} (the API must not be on the classpath) or {@code unset}
 * (it is, with the SDK, and no provider is set until {@link Traced} sets one and waits once
 * more), the connect string and a lock path. Prints what it saw, exits 1 on anything else.
 */
public final class WithoutOpenTelemetry {
    private WithoutOpenTelemetry() {}

    public static void main(String[] args) throws Exception {
        boolean onClasspath;
        try {
            Class.forName("io.opentelemetry.api.GlobalOpenTelemetry");
            onClasspath = true;
        } catch (ClassNotFoundException absent) {
            onClasspath = false;
        }
        if (onClasspath != args[0].equals("unset")) {
            System.out.println("the OpenTelemetry API is " + (onClasspath ? "" : "not ") + "on the classpath: "
                + args[0] + " checks nothing");
            System.exit(1);
        }
        String connect = args[1];
        String path = args[2];
        waitOnce(connect, path);
        if (!onClasspath) {
            System.out.println("waited without opentelemetry");
            return;
        }
        // Loaded only now: its loading marks where the waits without a provider ended in the
        // JVM's class-load log.
        int spans = Traced.run(connect, path);
        System.out.println("untraced waits done; " + spans + " span once a provider was set");
    }

    /** An acquire in each form and a take that times out: each a wait with a span when traced. */
    static void waitOnce(String connect, String path) throws Exception {
        try (Client client = Client.connect(connect); WriteLock lock = new WriteLock(client, path);
             DistributedQueue queue = new DistributedQueue(client, path + "-queue")) {
            lock.lock();
            lock.unlock();
            lock.lockAsync().get(30, TimeUnit.SECONDS);
            lock.unlock();
            if (queue.poll(10, TimeUnit.MILLISECONDS) != null) {
                throw new IllegalStateException("an item in a new queue");
            }
        }
    }

    /** The application sets a provider after the library has waited without one. */
    static final class Traced {
        static int run(String connect, String path) throws Exception {
            InMemorySpanExporter exporter = InMemorySpanExporter.create();
            try (OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                    .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                    .build()) {
                GlobalOpenTelemetry.set(sdk);
                try (Client client = Client.connect(connect); WriteLock lock = new WriteLock(client, path)) {
                    lock.lock();
                    lock.unlock();
                }
                return (int) exporter.getFinishedSpanItems().stream()
                    .filter(span -> span.getName().equals("zkrecipes.lock.acquire")).count();
            }
        }
    }
}
