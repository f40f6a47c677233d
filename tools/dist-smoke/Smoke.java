import io.zkrecipes.Client;
import io.zkrecipes.DistributedQueue;
import io.zkrecipes.WriteLock;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** One lock acquire/release and one queue offer/take through the zkrecipes JAR: {@code java Smoke HOST:PORT}. */
public class Smoke {
    public static void main(String[] args) throws Exception {
        String root = "/dist-smoke/" + UUID.randomUUID();
        try (Client client = Client.connect(args[0])) {
            WriteLock lock = new WriteLock(client, root + "/lock");
            check(lock.tryLock(10, TimeUnit.SECONDS), "the free lock was not acquired");
            long token = lock.getFencingToken();
            check(token > 0, "token " + token);
            lock.unlock();
            DistributedQueue queue = new DistributedQueue(client, root + "/queue");
            queue.offer("job-1".getBytes(StandardCharsets.UTF_8));
            byte[] job = queue.poll(10, TimeUnit.SECONDS);
            check(job != null && new String(job, StandardCharsets.UTF_8).equals("job-1"), "took the wrong job");
            check(queue.poll() == null, "the queue is not empty");
            System.out.println("java " + System.getProperty("os.arch") + ": lock token " + token + ", queue ok");
        }
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
