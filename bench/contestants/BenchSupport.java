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

    static void result(int ops, long nanos, String extra) {
        System.out.println(String.format(Locale.ROOT, "{\"ops\":%d,\"seconds\":%.4f%s}", ops, nanos / 1e9,
            extra.isEmpty() ? "" : "," + extra));
        System.out.flush();
    }
}
