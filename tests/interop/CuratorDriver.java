// Drives Apache Curator 5.9's recipes for the interop tests. Run as a single-file program with
// the jars of tests/interop/curator-pom.xml on the classpath:
//   java -cp <curator jars> CuratorDriver.java <command> <connect> <path> [arg]
//   mutex|write|read|multi <connect> <dir> <holdMs> [children]
//                                               InterProcessMutex / InterProcessReadWriteLock /
//                                               InterProcessMultiLock (dir: paths joined by commas):
//                                               WAITING, ACQUIRED, RELEASED; with `children`, ACQUIRED is
//                                               followed by `CHILDREN <a,b,..>`: dir's children when it got in
//   offer <connect> <dir> <n>                   SimpleDistributedQueue.offer("curator-<i>"), OFFERED <n>
//   drain <connect> <dir> <n>                   SimpleDistributedQueue.take() n times, ITEM <utf8>
//   semaphore <connect> <path> <maxLeases> <count> <waitMs>
//                                               InterProcessSemaphoreV2.acquire(count, waitMs): WAITING, then
//                                               ACQUIRED <lease node names> or NONE; after ACQUIRED a line on
//                                               stdin returns the leases: RELEASED
//   latch <connect> <path> <id>                 LeaderLatch.start(): STARTED, then LEADER / NOT_LEADER as
//                                               its listener hears them; a line on stdin closes it: CLOSED
//   barrier-set|barrier-remove <connect> <path> DistributedBarrier.setBarrier() / removeBarrier(): DONE
//   barrier-wait <connect> <path> <waitMs>      DistributedBarrier.waitOnBarrier(waitMs): WAITING, then
//                                               RELEASED or TIMEOUT
//   atomic-long <connect> <path> <n>            DistributedAtomicLong.increment() n times (each must succeed):
//                                               READY, then DONE <the value after the last>
//   shared-count <connect> <path> <seed> <value>
//                                               SharedCount.start(): VALUE <getCount()>, then
//                                               setCount(value): SET
//   double <connect> <path> <members> <waitMs>  DistributedDoubleBarrier.enter(waitMs): WAITING, then
//                                               ENTERED or NOT_ENTERED; after ENTERED a line on stdin
//                                               leaves (leave(waitMs)): LEFT or NOT_LEFT
//   group <connect> <path> <id> <payload>       GroupMember(path, id, payload).start(): STARTED; then lines on
//                                               stdin: `until <id=payload,...>` waits (up to 20 s) until
//                                               getCurrentMembers() is that (sorted by id, UTF-8 payloads) and
//                                               prints MEMBERS <what it is>; `payload <p>` setThisData: SET;
//                                               `close`: CLOSED
//   cache <connect> <path>                      CuratorCache.build(path).start(): STARTED once initialized;
//                                               then `await <path> <data>` waits (up to 20 s) until it holds
//                                               that node with that UTF-8 data: SEEN or NOT_SEEN; `dump`:
//                                               NODE <path> <czxid> <mzxid> <hex data> per node, sorted, END
//   discovery <connect> <base> <kind> [<name> <id> <port>]
//                                               ServiceDiscovery at <base> with JsonInstanceSerializer (Curator's
//                                               default form), payload class ZookeeperInstance (kind `spring`) or
//                                               Object (`object`). With name, id and port it registers DYNAMIC
//                                               instance <id> of <name> at 127.0.0.1:<port>, payload
//                                               ZookeeperInstance(<id>, <name>, {instance_status=UP}) or the text
//                                               "curator-<id>", uriSpec {scheme}://{address}:{port}. STARTED; then
//                                               lines on stdin: `query <name>`: INSTANCE <json as Curator serializes
//                                               what it read> per instance, sorted by id, END (FAILED <exception>
//                                               if Curator's reader fails); `cache <name> <n>`:
//                                               a ServiceCache (one per name) until it holds n instances (20 s):
//                                               CACHED <ids, sorted, comma-joined>; `provider <name> <k>`: a
//                                               round-robin ServiceProvider's getInstance k times: CHOSE <ids>;
//                                               `close`: CLOSED (it unregisters)
// The session timeout is 60 s (Curator's default) unless -Dzkr.session.ms says otherwise.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;

public class CuratorDriver {
    public static void main(String[] args) throws Exception {
        String command = args[0], path = args[2];
        int sessionMs = Integer.getInteger("zkr.session.ms", 60_000);
        try (CuratorFramework curator = CuratorFrameworkFactory.newClient(args[1], sessionMs, 15_000, new ExponentialBackoffRetry(100, 3))) {
            curator.start();
            curator.blockUntilConnected();
            switch (command) {
                case "mutex", "write", "read", "multi" -> {
                    InterProcessLock lock = switch (command) {
                        case "mutex" -> new InterProcessMutex(curator, path);
                        case "multi" -> new InterProcessMultiLock(curator, java.util.List.of(path.split(",")));
                        case "write" -> new InterProcessReadWriteLock(curator, path).writeLock();
                        default -> new InterProcessReadWriteLock(curator, path).readLock();
                    };
                    System.out.println("WAITING");
                    lock.acquire();
                    System.out.println("ACQUIRED");
                    if (args.length > 4 && args[4].equals("children")) {
                        // What the lock directory held at the moment we got in: the exclusion record.
                        System.out.println("CHILDREN " + String.join(",", curator.getChildren().forPath(path)));
                    }
                    System.out.flush();
                    Thread.sleep(Long.parseLong(args[3]));
                    lock.release();
                    System.out.println("RELEASED");
                }
                case "offer" -> {
                    SimpleDistributedQueue queue = new SimpleDistributedQueue(curator, path);
                    int n = Integer.parseInt(args[3]);
                    for (int i = 0; i < n; i++) {
                        queue.offer(("curator-" + i).getBytes(StandardCharsets.UTF_8));
                    }
                    System.out.println("OFFERED " + n);
                }
                case "drain" -> {
                    SimpleDistributedQueue queue = new SimpleDistributedQueue(curator, path);
                    for (int i = 0, n = Integer.parseInt(args[3]); i < n; i++) {
                        System.out.println("ITEM " + new String(queue.take(), StandardCharsets.UTF_8));
                    }
                }
                case "semaphore" -> {
                    InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(curator, path, Integer.parseInt(args[3]));
                    System.out.println("WAITING");
                    System.out.flush();
                    Collection<Lease> leases = semaphore.acquire(Integer.parseInt(args[4]), Long.parseLong(args[5]), TimeUnit.MILLISECONDS);
                    if (leases == null) {
                        System.out.println("NONE");
                    } else {
                        String names = leases.stream()
                                .map(l -> l.getNodeName().substring(l.getNodeName().lastIndexOf('/') + 1))
                                .collect(Collectors.joining(","));
                        System.out.println("ACQUIRED " + names);
                        System.out.flush();
                        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
                        semaphore.returnAll(leases);
                        System.out.println("RELEASED");
                    }
                }
                case "latch" -> {
                    LeaderLatch latch = new LeaderLatch(curator, path, args[3]);
                    latch.addListener(new LeaderLatchListener() {
                        @Override public void isLeader() { say("LEADER"); }
                        @Override public void notLeader() { say("NOT_LEADER"); }
                    });
                    latch.start();
                    say("STARTED");
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
                    latch.close();
                    say("CLOSED");
                }
                case "barrier-set" -> {
                    new DistributedBarrier(curator, path).setBarrier();
                    say("DONE");
                }
                case "barrier-remove" -> {
                    new DistributedBarrier(curator, path).removeBarrier();
                    say("DONE");
                }
                case "barrier-wait" -> {
                    DistributedBarrier barrier = new DistributedBarrier(curator, path);
                    say("WAITING");
                    boolean released = barrier.waitOnBarrier(Long.parseLong(args[3]), TimeUnit.MILLISECONDS);
                    say(released ? "RELEASED" : "TIMEOUT");
                }
                case "atomic-long" -> {
                    // Contention is retried without sleeping, as often as it takes.
                    DistributedAtomicLong counter = new DistributedAtomicLong(curator, path, new RetryNTimes(100000, 0));
                    say("READY");
                    long last = 0;
                    for (int i = 0, n = Integer.parseInt(args[3]); i < n; i++) {
                        AtomicValue<Long> value = counter.increment();
                        if (!value.succeeded()) {
                            throw new IllegalStateException("increment did not succeed");
                        }
                        last = value.postValue();
                    }
                    say("DONE " + last);
                }
                case "shared-count" -> {
                    try (SharedCount count = new SharedCount(curator, path, Integer.parseInt(args[3]))) {
                        count.start();
                        say("VALUE " + count.getCount());
                        count.setCount(Integer.parseInt(args[4]));
                        say("SET");
                    }
                }
                case "double" -> {
                    long waitMs = Long.parseLong(args[4]);
                    DistributedDoubleBarrier barrier = new DistributedDoubleBarrier(curator, path, Integer.parseInt(args[3]));
                    say("WAITING");
                    if (!barrier.enter(waitMs, TimeUnit.MILLISECONDS)) {
                        say("NOT_ENTERED");
                    } else {
                        say("ENTERED");
                        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
                        say(barrier.leave(waitMs, TimeUnit.MILLISECONDS) ? "LEFT" : "NOT_LEFT");
                    }
                }
                case "group" -> {
                    GroupMember member = new GroupMember(curator, path, args[3], args[4].getBytes(StandardCharsets.UTF_8));
                    member.start();
                    say("STARTED");
                    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                    for (String line; (line = in.readLine()) != null; ) {
                        String[] words = line.split(" ", 2);
                        switch (words[0]) {
                            case "until" -> {
                                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                                String members = members(member);
                                while (!members.equals(words[1]) && System.nanoTime() < deadline) {
                                    Thread.sleep(20);
                                    members = members(member);
                                }
                                say("MEMBERS " + members);
                            }
                            case "payload" -> {
                                member.setThisData(words[1].getBytes(StandardCharsets.UTF_8));
                                say("SET");
                            }
                            case "close" -> {
                                member.close();
                                say("CLOSED");
                                return;
                            }
                            default -> throw new IllegalArgumentException("unknown group step " + line);
                        }
                    }
                }
                case "cache" -> {
                    CountDownLatch initialized = new CountDownLatch(1);
                    try (CuratorCache cache = CuratorCache.build(curator, path)) {
                        cache.listenable().addListener(CuratorCacheListener.builder().forInitialized(initialized::countDown).build());
                        cache.start();
                        if (!initialized.await(20, TimeUnit.SECONDS)) {
                            throw new IllegalStateException("CuratorCache not initialized in 20 s");
                        }
                        say("STARTED");
                        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                        for (String line; (line = in.readLine()) != null; ) {
                            String[] words = line.split(" ");
                            switch (words[0]) {
                                case "await" -> {
                                    byte[] want = words[2].getBytes(StandardCharsets.UTF_8);
                                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                                    boolean seen = false;
                                    while (!seen && System.nanoTime() < deadline) {
                                        seen = cache.get(words[1]).map(d -> java.util.Arrays.equals(d.getData(), want)).orElse(false);
                                        if (!seen) {
                                            Thread.sleep(10);
                                        }
                                    }
                                    say(seen ? "SEEN" : "NOT_SEEN");
                                }
                                case "dump" -> {
                                    Map<String, ChildData> nodes = new TreeMap<>();
                                    cache.stream().forEach(d -> nodes.put(d.getPath(), d));
                                    for (ChildData d : nodes.values()) {
                                        byte[] data = d.getData() == null ? new byte[0] : d.getData();
                                        say("NODE " + d.getPath() + " " + d.getStat().getCzxid() + " " + d.getStat().getMzxid()
                                                + " " + HexFormat.of().formatHex(data));
                                    }
                                    say("END");
                                }
                                default -> throw new IllegalArgumentException("unknown cache step " + line);
                            }
                        }
                    }
                }
                case "discovery" -> {
                    if (args[3].equals("spring")) {
                        discovery(curator, args, ZookeeperInstance.class,
                                id -> new ZookeeperInstance(id, args[4], Map.of("instance_status", "UP")));
                    } else {
                        discovery(curator, args, Object.class, id -> "curator-" + id);
                    }
                }
                default -> throw new IllegalArgumentException("unknown command " + command);
            }
            System.out.flush();
        }
    }

    private static <T> void discovery(CuratorFramework curator, String[] args, Class<T> payloadClass,
            java.util.function.Function<String, T> payload) throws Exception {
        JsonInstanceSerializer<T> serializer = new JsonInstanceSerializer<>(payloadClass);
        ServiceDiscoveryBuilder<T> builder = ServiceDiscoveryBuilder.builder(payloadClass)
                .client(curator).basePath(args[2]).serializer(serializer);
        if (args.length > 4) {
            builder.thisInstance(ServiceInstance.<T>builder().name(args[4]).id(args[5]).address("127.0.0.1")
                    .port(Integer.parseInt(args[6])).payload(payload.apply(args[5]))
                    .uriSpec(new UriSpec("{scheme}://{address}:{port}")).build());
        }
        try (ServiceDiscovery<T> discovery = builder.build()) {
            discovery.start();
            say("STARTED");
            Map<String, ServiceCache<T>> caches = new TreeMap<>();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String[] words = line.split(" ");
                switch (words[0]) {
                    case "query" -> {
                        Map<String, String> found = new TreeMap<>();
                        try {
                            for (ServiceInstance<T> instance : discovery.queryForInstances(words[1])) {
                                found.put(instance.getId(), new String(serializer.serialize(instance), StandardCharsets.UTF_8));
                            }
                        } catch (Exception e) {
                            // One registration Curator's typed reader cannot read fails the whole query.
                            say("FAILED " + e.getClass().getSimpleName());
                            continue;
                        }
                        found.values().forEach(json -> say("INSTANCE " + json));
                        say("END");
                    }
                    case "cache" -> {
                        ServiceCache<T> cache = caches.get(words[1]);
                        if (cache == null) {
                            cache = discovery.serviceCacheBuilder().name(words[1]).build();
                            cache.start();
                            caches.put(words[1], cache);
                        }
                        int wanted = Integer.parseInt(words[2]);
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                        while (cache.getInstances().size() != wanted && System.nanoTime() < deadline) {
                            Thread.sleep(20);
                        }
                        say("CACHED " + cache.getInstances().stream().map(ServiceInstance::getId).sorted()
                                .collect(Collectors.joining(",")));
                    }
                    case "provider" -> {
                        try (ServiceProvider<T> provider = discovery.serviceProviderBuilder().serviceName(words[1])
                                .providerStrategy(new RoundRobinStrategy<>()).build()) {
                            provider.start();
                            java.util.List<String> chosen = new java.util.ArrayList<>();
                            for (int i = 0, k = Integer.parseInt(words[2]); i < k; i++) {
                                ServiceInstance<T> instance = provider.getInstance();
                                chosen.add(instance == null ? "none" : instance.getId());
                            }
                            say("CHOSE " + String.join(",", chosen));
                        }
                    }
                    case "close" -> {
                        for (ServiceCache<T> cache : caches.values()) {
                            cache.close();
                        }
                        discovery.close();
                        say("CLOSED");
                        return;
                    }
                    default -> throw new IllegalArgumentException("unknown discovery step " + line);
                }
            }
        }
    }

    /// The members as `id=payload,...`, sorted by id.
    private static String members(GroupMember member) {
        return new TreeMap<>(member.getCurrentMembers()).entrySet().stream()
                .map(e -> e.getKey() + "=" + new String(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining(","));
    }

    /// One line, flushed at once: the test reads each step as it happens (listeners print from
    /// Curator's threads).
    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
