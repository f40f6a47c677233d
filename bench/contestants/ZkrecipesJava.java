// zkrecipes from Java: uncontended acquire + release (binding overhead vs Rust).
import io.zkrecipes.Client;
import io.zkrecipes.WriteLock;

public class ZkrecipesJava {
    public static void main(String[] args) throws Exception {
        int n = args.length > 2 ? Integer.parseInt(args[2]) : 2000;
        try (Client client = Client.connect(args[1]);
             WriteLock lock = new WriteLock(client, "/bench/java-" + ProcessHandle.current().pid() + "/cycle")) {
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
        System.exit(0);
    }
}
