// Apache Curator 5.9's recipes on the same workloads.
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.details.ServiceCacheListener;

public class CuratorJava {
    static ServiceDiscovery<Object> discovery(CuratorFramework client, String base) throws Exception {
        ServiceDiscovery<Object> discovery = ServiceDiscoveryBuilder.builder(Object.class).client(client).basePath(base).build();
        discovery.start();
        return discovery;
    }

    static ServiceInstance<Object> benchInstance(String id, int port) throws Exception {
        return ServiceInstance.builder().name("bench").id(id).address("127.0.0.1").port(port).build();
    }

    static CuratorFramework connect(String connect) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(connect, new ExponentialBackoffRetry(100, 3));
        c.start();
        c.blockUntilConnected();
        return c;
    }

    /** Section 12's tree, as the Rust contestant builds it: one transaction per parent. */
    static int buildTree(CuratorFramework c, String tree, int parents, int children) throws Exception {
        c.create().creatingParentsIfNeeded().forPath(tree, new byte[0]);
        for (int p = 0; p < parents; p++) {
            String parent = String.format("%s/p-%03d", tree, p);
            List<CuratorOp> ops = new ArrayList<>();
            ops.add(c.transactionOp().create().forPath(parent, bytes(String.format("parent-%03d", p))));
            for (int ch = 0; ch < children; ch++) {
                ops.add(c.transactionOp().create().forPath(String.format("%s/c-%03d", parent, ch),
                    bytes(String.format("data-%05d", p * children + ch))));
            }
            c.transaction().forOperations(ops);
        }
        return 1 + parents + parents * children;
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Leaf i of the tree, spread over the parents. */
    static String leaf(String tree, int parents, int i) {
        return String.format("%s/p-%03d/c-%03d", tree, i % parents, i / parents);
    }

    /** A CuratorCache of the subtree, returned once its listener heard initialized(). */
    static CuratorCache load(CuratorFramework client, String path) throws Exception {
        CuratorCache cache = CuratorCache.build(client, path);
        CountDownLatch initialized = new CountDownLatch(1);
        cache.listenable().addListener(CuratorCacheListener.builder().forInitialized(initialized::countDown).build());
        cache.start();
        initialized.await();
        return cache;
    }

    static long heapUsed() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    record Seen(String path, byte[] data, long at) {}

    /** Nanoseconds from writer's setData of path to the cache's listener seeing that data there. */
    static long change(CuratorFramework writer, LinkedBlockingQueue<Seen> seen, String path, String value) throws Exception {
        byte[] data = bytes(value);
        long t = System.nanoTime();
        writer.setData().forPath(path, data);
        while (true) {
            Seen s = seen.take();
            if (s.path().equals(path) && Arrays.equals(s.data(), data)) {
                return s.at() - t;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String workload = args[0], connect = args[1];
        int n = args.length > 2 ? Integer.parseInt(args[2]) : 2000;
        String root = "/bench/curator-" + ProcessHandle.current().pid();
        switch (workload) {
            case "held" -> {
                CuratorFramework client = connect(connect);
                BenchSupport.held(n, i -> {
                    InterProcessMutex lock = new InterProcessMutex(client, root + "/held/l-" + i);
                    return new BenchSupport.Held(lock::acquire, lock::release);
                });
            }
            case "herd" -> {
                List<CuratorFramework> clients = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    clients.add(connect(connect));
                }
                InterProcessMutex holder = new InterProcessMutex(clients.get(0), root + "/herd");
                BenchSupport.herd(n, new BenchSupport.Held(holder::acquire, holder::release), i -> {
                    InterProcessMutex lock = new InterProcessMutex(clients.get(i % 10), root + "/herd");
                    return new BenchSupport.Held(lock::acquire, lock::release);
                });
            }
            case "cycle" -> {
                InterProcessMutex lock = new InterProcessMutex(connect(connect), root + "/cycle");
                for (int i = 0; i < BenchSupport.warmup(); i++) {
                    lock.acquire();
                    lock.release();
                }
                BenchSupport.ready();
                BenchSupport.timed(n, () -> {
                    lock.acquire();
                    lock.release();
                });
            }
            case "try" -> {
                InterProcessMutex holder = new InterProcessMutex(connect(connect), root + "/try");
                holder.acquire();
                InterProcessMutex lock = new InterProcessMutex(connect(connect), root + "/try");
                BenchSupport.ready();
                BenchSupport.timed(n, () -> {
                    if (lock.acquire(0, TimeUnit.MILLISECONDS)) {
                        throw new IllegalStateException("held lock acquired");
                    }
                });
            }
            case "contended" -> {
                List<BenchSupport.Held> locks = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    InterProcessMutex lock = new InterProcessMutex(connect(connect), root + "/contended");
                    locks.add(new BenchSupport.Held(lock::acquire, lock::release));
                }
                BenchSupport.contended(n, locks, 0);
            }
            case "rw" -> {
                List<InterProcessReadWriteLock> readers = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    readers.add(new InterProcessReadWriteLock(connect(connect), root + "/rw"));
                }
                InterProcessReadWriteLock writer = new InterProcessReadWriteLock(connect(connect), root + "/rw");
                AtomicBoolean stop = new AtomicBoolean();
                AtomicInteger reads = new AtomicInteger();
                BenchSupport.ready();
                long started = System.nanoTime();
                List<Thread> threads = BenchSupport.started(readers.size(), i -> {
                    while (!stop.get()) {
                        readers.get(i).readLock().acquire();
                        readers.get(i).readLock().release();
                        reads.incrementAndGet();
                    }
                });
                List<Long> samples = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    long t = System.nanoTime();
                    writer.writeLock().acquire();
                    writer.writeLock().release();
                    samples.add(System.nanoTime() - t);
                }
                stop.set(true);
                BenchSupport.joinAll(threads);
                BenchSupport.result(reads.get() + n, System.nanoTime() - started, "\"reads\":" + reads.get()
                    + ",\"writes\":" + n + ",\"writer\":{" + BenchSupport.latency(samples) + "}");
            }
            case "queue" -> {
                int consumers = args.length > 3 ? Integer.parseInt(args[3]) : 1;
                String dir = root + "/queue-" + n + "-" + consumers;
                SimpleDistributedQueue q = new SimpleDistributedQueue(connect(connect), dir);
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    q.offer(("item-" + i).getBytes());
                }
                long offered = System.nanoTime() - t0;
                List<SimpleDistributedQueue> queues = new ArrayList<>();
                for (int i = 0; i < consumers; i++) {
                    queues.add(new SimpleDistributedQueue(connect(connect), dir));
                }
                AtomicInteger taken = new AtomicInteger();
                BenchSupport.ready();
                long started = System.nanoTime();
                BenchSupport.joinAll(BenchSupport.started(consumers, i -> {
                    while (queues.get(i).poll() != null) {
                        taken.incrementAndGet();
                    }
                }));
                if (taken.get() != n) {
                    throw new IllegalStateException("drained " + taken.get() + " of " + n);
                }
                BenchSupport.result(n, System.nanoTime() - started,
                    String.format(java.util.Locale.ROOT, "\"offer_seconds\":%.4f", offered / 1e9));
            }
            // 14a. Service discovery: register + unregister of one DYNAMIC instance.
            case "register" -> {
                ServiceDiscovery<Object> discovery = discovery(connect(connect), root + "/services");
                ServiceInstance<Object> instance = benchInstance("one", 8080);
                for (int i = 0; i < 50; i++) {
                    discovery.registerService(instance);
                    discovery.unregisterService(instance);
                }
                BenchSupport.ready();
                BenchSupport.timed(n, () -> {
                    discovery.registerService(instance);
                    discovery.unregisterService(instance);
                });
            }
            // 14b. queryForInstances of a service of `instances` instances (another client's).
            case "discover" -> {
                int instances = args.length > 3 ? Integer.parseInt(args[3]) : 20;
                ServiceDiscovery<Object> registry = discovery(connect(connect), root + "/services");
                for (int i = 0; i < instances; i++) {
                    registry.registerService(benchInstance("i" + i, 8000 + i));
                }
                ServiceDiscovery<Object> discovery = discovery(connect(connect), root + "/services");
                for (int i = 0; i < 20; i++) {
                    discovery.queryForInstances("bench");
                }
                BenchSupport.ready();
                BenchSupport.timed(n, () -> {
                    int found = discovery.queryForInstances("bench").size();
                    if (found != instances) {
                        throw new IllegalStateException("found " + found + " of " + instances);
                    }
                });
            }
            // 14c. A ServiceCache's view of a change: another client updates an instance (its
            // port); the time until this client's cache holds the new port.
            case "servicecache" -> {
                ServiceDiscovery<Object> registry = discovery(connect(connect), root + "/services");
                registry.registerService(benchInstance("one", 1));
                ServiceDiscovery<Object> discovery = discovery(connect(connect), root + "/services");
                ServiceCache<Object> cache = discovery.serviceCacheBuilder().name("bench").build();
                LinkedBlockingQueue<Integer> seen = new LinkedBlockingQueue<>();
                cache.addListener(new ServiceCacheListener() {
                    public void cacheChanged() {
                        for (ServiceInstance<Object> i : cache.getInstances()) {
                            seen.add(i.getPort());
                        }
                    }
                    public void stateChanged(CuratorFramework client, org.apache.curator.framework.state.ConnectionState state) {}
                });
                cache.start();
                int[] port = {1};
                BenchSupport.Op change = () -> {
                    port[0] = port[0] % 60000 + 1;
                    registry.updateService(benchInstance("one", port[0]));
                    while (true) {
                        Integer now = seen.poll(10, TimeUnit.SECONDS);
                        if (now == null) {
                            throw new IllegalStateException("the cache never held port " + port[0]);
                        }
                        if (now == port[0]) {
                            return;
                        }
                    }
                };
                for (int i = 0; i < 20; i++) {
                    change.run();
                }
                BenchSupport.ready();
                BenchSupport.timed(n, change);
            }
            case "semaphore" -> {
                InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(connect(connect), root + "/semaphore", 3);
                for (int i = 0; i < 50; i++) {
                    semaphore.returnLease(semaphore.acquire());
                }
                BenchSupport.ready();
                BenchSupport.timed(n, () -> semaphore.returnLease(semaphore.acquire()));
            }
            // Curator's election is its LeaderLatch: one hand-over workload for both sections.
            case "election", "latch" -> {
                CuratorFramework a = connect(connect), b = connect(connect);
                BenchSupport.rounds(n, r -> {
                    String path = root + "/election-" + r;
                    LeaderLatch first = new LeaderLatch(a, path, "a");
                    first.start();
                    first.await();
                    LeaderLatch second = new LeaderLatch(b, path, "b");
                    CountDownLatch elected = new CountDownLatch(1);
                    second.addListener(new LeaderLatchListener() {
                        public void isLeader() { elected.countDown(); }
                        public void notLeader() {}
                    });
                    second.start();
                    Thread.sleep(50);
                    long took = BenchSupport.took(first::close, elected::await);
                    second.close();
                    return took;
                });
            }
            // 12a. 4 clients (a session each) increment one DistributedAtomicLong n times each,
            // at once: optimistic mode, contention retried without sleeping as often as it takes.
            case "atomic" -> {
                int clients = args.length > 3 ? Integer.parseInt(args[3]) : 4;
                String path = root + "/atomic";
                List<DistributedAtomicLong> counters = new ArrayList<>();
                for (int i = 0; i < clients; i++) {
                    counters.add(new DistributedAtomicLong(connect(connect), path, new RetryNTimes(100000, 0)));
                }
                DistributedAtomicLong warmUp = new DistributedAtomicLong(connect(connect), root + "/warm", new RetryNTimes(100000, 0));
                for (int i = 0; i < 50; i++) {
                    warmUp.increment();
                }
                counters.get(0).forceSet(0L);
                long[][] seen = new long[clients][n];
                List<List<Long>> samples = new ArrayList<>();
                for (int i = 0; i < clients; i++) {
                    samples.add(new ArrayList<>(n));
                }
                BenchSupport.ready();
                long started = System.nanoTime();
                BenchSupport.joinAll(BenchSupport.started(clients, me -> {
                    for (int j = 0; j < n; j++) {
                        long t = System.nanoTime();
                        AtomicValue<Long> value = counters.get(me).increment();
                        if (!value.succeeded()) {
                            throw new IllegalStateException("increment did not succeed");
                        }
                        seen[me][j] = value.postValue();
                        samples.get(me).add(System.nanoTime() - t);
                    }
                }));
                long elapsed = System.nanoTime() - started;
                long total = (long) clients * n;
                long[] all = Arrays.stream(seen).flatMapToLong(Arrays::stream).sorted().toArray();
                for (int i = 0; i < all.length; i++) {
                    if (all[i] != i + 1) {
                        throw new IllegalStateException("the increments returned duplicate or missing values");
                    }
                }
                long last = counters.get(0).get().postValue();
                if (last != total) {
                    throw new IllegalStateException("final value " + last + ", not " + total);
                }
                List<Long> merged = new ArrayList<>();
                samples.forEach(merged::addAll);
                BenchSupport.result((int) total, elapsed, "\"clients\":" + clients + ",\"final\":" + last + ","
                    + BenchSupport.latency(merged));
            }
            // 12b. CuratorCache initial load of a parents x children tree: heap (after GC) and RSS
            // per node of the process's first cache (held), then rounds loads until initialized().
            case "cache" -> {
                int children = args.length > 3 ? Integer.parseInt(args[3]) : 100;
                int rounds = args.length > 4 ? Integer.parseInt(args[4]) : 5;
                CuratorFramework client = connect(connect);
                String tree = root + "/tree";
                int nodes = buildTree(client, tree, n, children);
                BenchSupport.collect();
                long heapBefore = heapUsed(), rssBefore = BenchSupport.rss();
                long t0 = System.nanoTime();
                CuratorCache first = load(client, tree);
                long cold = System.nanoTime() - t0;
                BenchSupport.collect();
                long heapHeld = heapUsed(), rssHeld = BenchSupport.rss();
                if (first.size() != nodes) {
                    throw new IllegalStateException("cached " + first.size() + " of " + nodes);
                }
                first.close();
                BenchSupport.ready();
                List<Long> samples = new ArrayList<>();
                StringBuilder each = new StringBuilder();
                long started = System.nanoTime();
                for (int r = 0; r < rounds; r++) {
                    long t = System.nanoTime();
                    CuratorCache cache = load(client, tree);
                    long took = System.nanoTime() - t;
                    samples.add(took);
                    each.append(each.length() == 0 ? "" : ",").append(String.format(java.util.Locale.ROOT, "%.1f", took / 1e6));
                    if (cache.size() != nodes) {
                        throw new IllegalStateException("cached " + cache.size() + " of " + nodes);
                    }
                    cache.close();
                }
                BenchSupport.result(rounds * nodes, System.nanoTime() - started, String.format(java.util.Locale.ROOT,
                    "\"nodes\":%d,\"rounds\":%d,\"rounds_ms\":[%s],\"cold_ms\":%.1f,\"heap_bytes_per_node\":%.0f,"
                        + "\"rss_bytes_per_node\":%.0f,%s", nodes, rounds, each, cold / 1e6,
                    (double) (heapHeld - heapBefore) / nodes, (double) (rssHeld - rssBefore) / nodes,
                    BenchSupport.latency(samples)));
            }
            // 12c. From another client's setData to the CuratorCache's CHANGED (forChanges) of that
            // node, n changes one after another (distinct leaves).
            case "cacheevents" -> {
                int parents = args.length > 3 ? Integer.parseInt(args[3]) : 100;
                int children = args.length > 4 ? Integer.parseInt(args[4]) : 100;
                CuratorFramework client = connect(connect), writer = connect(connect);
                String tree = root + "/tree";
                buildTree(writer, tree, parents, children);
                LinkedBlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
                CuratorCache cache = CuratorCache.build(client, tree);
                CountDownLatch initialized = new CountDownLatch(1);
                cache.listenable().addListener(CuratorCacheListener.builder()
                    .forChanges((old, node) -> seen.add(new Seen(node.getPath(), node.getData(), System.nanoTime())))
                    .forInitialized(initialized::countDown).build());
                cache.start();
                initialized.await();
                int leaves = parents * children;
                for (int j = 0, warmUp = Math.min(10, Math.max(0, leaves - n)); j < warmUp; j++) {
                    change(writer, seen, leaf(tree, parents, leaves - 1 - j), "warm-" + j);
                }
                BenchSupport.ready();
                List<Long> samples = new ArrayList<>();
                long started = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    samples.add(change(writer, seen, leaf(tree, parents, i), String.format("change-%05d", i)));
                }
                BenchSupport.result(n, System.nanoTime() - started, "\"nodes\":" + cache.size() + "," + BenchSupport.latency(samples));
                cache.close();
            }
            default -> throw new IllegalArgumentException(workload);
        }
        System.exit(0);
    }
}
