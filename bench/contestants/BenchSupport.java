// Shared by the Java contestants: the READY/GO barrier and the JSON result line.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

final class BenchSupport {
    private BenchSupport() {}

    interface Op {
        void run() throws Exception;
    }

    /** A lock as the scale workloads use it, whatever the library. */
    record Held(Op acquire, Op release) {}

    interface Maker {
        Held make(int i) throws Exception;
    }

    /** Unmeasured cycles before the measured ones (set by run.py, the same in every language). */
    static int warmup() {
        String set = System.getenv("ZKRECIPES_BENCH_WARMUP");
        return set == null ? 1000 : Integer.parseInt(set);
    }

    static long rss() throws Exception {
        String[] statm = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/statm")).trim().split(" ");
        return Long.parseLong(statm[1]) * 4096;
    }

    static void collect() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200); // the Cleaner frees native handles on its own thread
        }
    }

    /** Growth of RSS per lock made by {@code make} and held at once. */
    static void held(int n, Maker make) throws Exception {
        ready();
        long started = System.nanoTime();
        collect();
        long before = rss();
        List<Held> locks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Held lock = make.make(i);
            lock.acquire().run();
            locks.add(lock);
        }
        long grown = rss();
        result(n, System.nanoTime() - started, String.format(Locale.ROOT, "\"bytes_per_held_lock\":%.0f",
            (double) (grown - before) / n));
        for (Held lock : locks) {
            lock.release().run();
        }
    }

    /** n threads queued on the lock {@code holder} holds: RSS per waiter, then the hand-offs. */
    static void herd(int n, Held holder, Maker make) throws Exception {
        holder.acquire().run();
        collect();
        long before = rss();
        java.util.concurrent.CountDownLatch waiting = new java.util.concurrent.CountDownLatch(n);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Held lock = make.make(i);
            Thread t = new Thread(() -> {
                try {
                    waiting.countDown();
                    lock.acquire().run();
                    lock.release().run();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        waiting.await();
        Thread.sleep(2000); // every waiter's node created and watched
        long queued = rss();
        ready();
        long started = System.nanoTime();
        holder.release().run();
        for (Thread t : threads) {
            t.join();
        }
        result(n, System.nanoTime() - started, String.format(Locale.ROOT,
            "\"bytes_per_waiter\":%.0f,\"rss_mb\":%.1f", (double) (queued - before) / n, queued / 1e6));
    }

    static void ready() throws Exception {
        System.out.println("READY");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in)).readLine();
    }

    static String latency(List<Long> nanos) {
        List<Long> s = new ArrayList<>(nanos);
        Collections.sort(s);
        if (s.isEmpty()) {
            return "\"median_ms\":null,\"p99_ms\":null";
        }
        return String.format(Locale.ROOT, "\"median_ms\":%.4f,\"p99_ms\":%.4f", s.get(s.size() / 2) / 1e6,
            s.get(Math.min(s.size() - 1, s.size() * 99 / 100)) / 1e6);
    }

    static void timed(int n, Op op) throws Exception {
        List<Long> samples = new ArrayList<>(n);
        long started = System.nanoTime();
        for (int i = 0; i < n; i++) {
            long t = System.nanoTime();
            op.run();
            samples.add(System.nanoTime() - t);
        }
        result(n, System.nanoTime() - started, latency(samples));
    }

    /**
     * After READY: {@code GO}, n timed runs of {@code op}; or bursts {@code RUN k}, each answered
     * {@code OK <its median ms>}, until {@code END} (run.py interleaves two contestants' bursts).
     */
    static void bursts(int n, Op op) throws Exception {
        System.out.println("READY");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        List<Long> samples = new ArrayList<>(n);
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split("\\s+");
            boolean runs = words[0].equals("RUN");
            int count = runs ? Integer.parseInt(words[1]) : words[0].equals("END") ? 0 : n;
            List<Long> burst = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                long t = System.nanoTime();
                op.run();
                burst.add(System.nanoTime() - t);
            }
            samples.addAll(burst);
            if (!runs) {
                break;
            }
            Collections.sort(burst);
            System.out.println(String.format(Locale.ROOT, "OK %.4f", burst.isEmpty() ? 0 : burst.get(burst.size() / 2) / 1e6));
            System.out.flush();
        }
        long total = 0;
        for (long s : samples) {
            total += s;
        }
        result(samples.size(), total, latency(samples));
    }

    static void result(int ops, long nanos, String extra) {
        System.out.println(String.format(Locale.ROOT, "{\"ops\":%d,\"seconds\":%.4f%s}", ops, nanos / 1e9,
            extra.isEmpty() ? "" : "," + extra));
        System.out.flush();
    }
}
