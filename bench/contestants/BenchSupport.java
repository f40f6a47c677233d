// Shared by the Java contestants: the READY/GO barrier, the JSON result line and the workloads
// every library runs alike (the contended lock, the scale workloads, hand-over rounds).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

final class BenchSupport {
    private BenchSupport() {}

    interface Op {
        void run() throws Exception;
    }

    /** A lock as the scale workloads use it, whatever the library. */
    record Held(Op acquire, Op release) {}

    interface Maker<T> {
        T make(int i) throws Exception;
    }

    /** What a scale workload made after READY, with the RSS before it (once collected) and after. */
    record Made<T>(List<T> items, long started, long before, long after) {}

    static <T> Made<T> made(int n, Maker<T> make) throws Exception {
        ready();
        long started = System.nanoTime();
        collect();
        long before = rss();
        List<T> items = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            items.add(make.make(i));
        }
        return new Made<>(items, started, before, rss());
    }

    /** A thread that runs {@code op}; an exception of it ends the thread, unchecked. */
    static Thread thread(Op op) {
        return new Thread(() -> {
            try {
                op.run();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }

    interface Each {
        void run(int i) throws Exception;
    }

    /** {@code count} daemon threads, started: thread i runs {@code each.run(i)}. */
    static List<Thread> started(int count, Each each) {
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int me = i;
            Thread t = thread(() -> each.run(me));
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        return threads;
    }

    static void joinAll(List<Thread> threads) throws InterruptedException {
        for (Thread t : threads) {
            t.join();
        }
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

    /** Growth of RSS per object made by {@code make}, and what stays after dropping them all. */
    static void objects(int n, Maker<Object> make) throws Exception {
        Made<Object> made = made(n, make);
        long started = made.started(), before = made.before(), peak = made.after();
        made = null;
        collect();
        long after = rss();
        result(n, System.nanoTime() - started, String.format(Locale.ROOT, "\"bytes_per_object\":%.0f,\"retained_mb\":%.1f",
            (double) (peak - before) / n, (after - before) / 1e6));
    }

    /**
     * Section 3: after READY, one thread per lock of {@code locks} takes and gives back its lock
     * n times, all at once; the result has each thread's finish time. A {@code patience} (seconds;
     * 0: none) gives up on the threads still waiting by then (Apache's waiters can be stranded)
     * and counts them as stranded.
     */
    static void contended(int n, List<Held> locks, long patience) throws Exception {
        double[] finish = new double[locks.size()];
        AtomicInteger completed = new AtomicInteger();
        ready();
        long started = System.nanoTime();
        List<Thread> threads = started(locks.size(), me -> {
            Held lock = locks.get(me);
            for (int j = 0; j < n; j++) {
                lock.acquire().run();
                lock.release().run();
                completed.incrementAndGet();
            }
            finish[me] = (System.nanoTime() - started) / 1e9;
        });
        String stranded = "";
        if (patience > 0) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(patience);
            for (Thread t : threads) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            }
            stranded = ",\"stranded\":" + threads.stream().filter(Thread::isAlive).count();
        } else {
            joinAll(threads);
        }
        StringBuilder per = new StringBuilder();
        for (double f : finish) {
            per.append(per.length() == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.4f", f));
        }
        result(completed.get(), System.nanoTime() - started, "\"finish_s\":[" + per + "]" + stranded);
    }

    /** Growth of RSS per lock made by {@code make} and held at once. */
    static void held(int n, Maker<Held> make) throws Exception {
        Made<Held> locks = made(n, i -> {
            Held lock = make.make(i);
            lock.acquire().run();
            return lock;
        });
        result(n, System.nanoTime() - locks.started(), String.format(Locale.ROOT, "\"bytes_per_held_lock\":%.0f",
            (double) (locks.after() - locks.before()) / n));
        for (Held lock : locks.items()) {
            lock.release().run();
        }
    }

    /** n threads queued on the lock {@code holder} holds: RSS per waiter, then the hand-offs. */
    static void herd(int n, Held holder, Maker<Held> make) throws Exception {
        holder.acquire().run();
        collect();
        long before = rss();
        java.util.concurrent.CountDownLatch waiting = new java.util.concurrent.CountDownLatch(n);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Held lock = make.make(i);
            Thread t = thread(() -> {
                waiting.countDown();
                lock.acquire().run();
                lock.release().run();
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
        joinAll(threads);
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

    interface Round {
        /** Round r; what it returns (nanoseconds) is its sample. */
        long run(int r) throws Exception;
    }

    /** Nanoseconds from calling {@code cause} to {@code effect} returning (a hand-over's). */
    static long took(Op cause, Op effect) throws Exception {
        long t = System.nanoTime();
        cause.run();
        effect.run();
        return System.nanoTime() - t;
    }

    /** After READY, n rounds one after another; the result has their samples' latency. */
    static void rounds(int n, Round round) throws Exception {
        List<Long> samples = new ArrayList<>(n);
        ready();
        long started = System.nanoTime();
        for (int r = 0; r < n; r++) {
            samples.add(round.run(r));
        }
        result(n, System.nanoTime() - started, latency(samples));
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
