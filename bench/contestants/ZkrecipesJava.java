// zkrecipes from Java: uncontended acquire + release (binding overhead vs Rust),
// and lock objects made and dropped.
import io.zkrecipes.Client;
import io.zkrecipes.WriteLock;
import java.util.ArrayList;
import java.util.List;

public class ZkrecipesJava {
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

    public static void main(String[] args) throws Exception {
        int n = args.length > 2 ? Integer.parseInt(args[2]) : 2000;
        String root = "/bench/java-" + ProcessHandle.current().pid();
        try (Client client = Client.connect(args[1])) {
            switch (args[0]) {
                case "objects" -> {
                    BenchSupport.ready();
                    long started = System.nanoTime();
                    collect();
                    long before = rss();
                    List<WriteLock> locks = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        locks.add(new WriteLock(client, root + "/objects/l-" + i));
                    }
                    long peak = rss();
                    locks = null;
                    collect();
                    long after = rss();
                    System.out.printf("{\"ops\":%d,\"seconds\":%.4f,\"bytes_per_object\":%.0f,\"retained_mb\":%.1f}%n",
                        n, (System.nanoTime() - started) / 1e9, (double) (peak - before) / n, (after - before) / 1e6);
                }
                case "cycle" -> {
                    try (WriteLock lock = new WriteLock(client, root + "/cycle")) {
                        for (int i = 0; i < 50; i++) {
                            lock.lock();
                            lock.unlock();
                        }
                        BenchSupport.ready();
                        BenchSupport.timed(n, () -> {
                            lock.lock();
                            lock.unlock();
                        });
                    }
                }
                default -> throw new IllegalArgumentException("unknown workload " + args[0]);
            }
        }
        System.exit(0);
    }
}
