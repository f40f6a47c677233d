// zkrecipes from Java: uncontended acquire + release (binding overhead vs Rust),
// and lock objects made and dropped.
import io.zkrecipes.Client;
import io.zkrecipes.WriteLock;
import java.util.ArrayList;
import java.util.List;

public class ZkrecipesJava {
    public static void main(String[] args) throws Exception {
        int n = args.length > 2 ? Integer.parseInt(args[2]) : 2000;
        String root = "/bench/java-" + ProcessHandle.current().pid();
        try (Client client = Client.connect(args[1])) {
            switch (args[0]) {
                case "baseline" -> {
                    // As many plain objects with a Cleaner each: what the JVM
                    // itself keeps after such a burst, beside what we keep.
                    java.lang.ref.Cleaner cleaner = java.lang.ref.Cleaner.create();
                    BenchSupport.objects(n, i -> {
                        Object o = new String[] {root + "/objects/l-" + i};
                        cleaner.register(o, () -> { });
                        return o;
                    });
                }
                case "objects" -> BenchSupport.objects(n, i -> new WriteLock(client, root + "/objects/l-" + i));
                case "cycle" -> {
                    try (WriteLock lock = new WriteLock(client, root + "/cycle")) {
                        for (int i = 0; i < BenchSupport.warmup(); i++) {
                            lock.lock();
                            lock.unlock();
                        }
                        BenchSupport.bursts(n, () -> {
                            lock.lock();
                            lock.unlock();
                        });
                    }
                }
                case "held" -> BenchSupport.held(n, i -> {
                    WriteLock lock = new WriteLock(client, root + "/held/l-" + i);
                    return new BenchSupport.Held(lock::lock, lock::unlock);
                });
                case "herd" -> {
                    List<Client> clients = new ArrayList<>(List.of(client));
                    for (int i = 1; i < 10; i++) {
                        clients.add(Client.connect(args[1]));
                    }
                    WriteLock holder = new WriteLock(client, root + "/herd");
                    BenchSupport.herd(n, new BenchSupport.Held(holder::lock, holder::unlock), i -> {
                        WriteLock lock = new WriteLock(clients.get(i % 10), root + "/herd");
                        return new BenchSupport.Held(lock::lock, lock::unlock);
                    });
                }
                default -> throw new IllegalArgumentException("unknown workload " + args[0]);
            }
        }
        System.exit(0);
    }
}
