// Apache Curator 5.9's recipes on the same workloads.
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorJava {
    static CuratorFramework connect(String connect) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(connect, new ExponentialBackoffRetry(100, 3));
        c.start();
        c.blockUntilConnected();
        return c;
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
                for (int i = 0; i < 50; i++) {
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
                List<InterProcessMutex> locks = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    locks.add(new InterProcessMutex(connect(connect), root + "/contended"));
                }
                double[] finish = new double[8];
                BenchSupport.ready();
                long started = System.nanoTime();
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    int me = i;
                    threads.add(new Thread(() -> {
                        try {
                            for (int j = 0; j < n; j++) {
                                locks.get(me).acquire();
                                                                locks.get(me).release();
                            }
                            finish[me] = (System.nanoTime() - started) / 1e9;
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    }));
                }
                threads.forEach(Thread::start);
                for (Thread t : threads) {
                    t.join();
                }
                StringBuilder per = new StringBuilder();
                for (double f : finish) {
                    per.append(per.length() == 0 ? "" : ",").append(String.format(java.util.Locale.ROOT, "%.4f", f));
                }
                BenchSupport.result(8 * n, System.nanoTime() - started, "\"finish_s\":[" + per + "]");
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
                List<Thread> threads = new ArrayList<>();
                for (InterProcessReadWriteLock r : readers) {
                    threads.add(new Thread(() -> {
                        try {
                            while (!stop.get()) {
                                r.readLock().acquire();
                                r.readLock().release();
                                reads.incrementAndGet();
                            }
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    }));
                }
                threads.forEach(Thread::start);
                List<Long> samples = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    long t = System.nanoTime();
                    writer.writeLock().acquire();
                    writer.writeLock().release();
                    samples.add(System.nanoTime() - t);
                }
                stop.set(true);
                for (Thread t : threads) {
                    t.join();
                }
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
                List<Thread> threads = new ArrayList<>();
                for (SimpleDistributedQueue c : queues) {
                    threads.add(new Thread(() -> {
                        try {
                            while (c.poll() != null) {
                                taken.incrementAndGet();
                            }
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    }));
                }
                threads.forEach(Thread::start);
                for (Thread t : threads) {
                    t.join();
                }
                if (taken.get() != n) {
                    throw new IllegalStateException("drained " + taken.get() + " of " + n);
                }
                BenchSupport.result(n, System.nanoTime() - started,
                    String.format(java.util.Locale.ROOT, "\"offer_seconds\":%.4f", offered / 1e9));
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
                List<Long> samples = new ArrayList<>();
                BenchSupport.ready();
                long started = System.nanoTime();
                for (int r = 0; r < n; r++) {
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
                    long t = System.nanoTime();
                    first.close();
                    elected.await();
                    samples.add(System.nanoTime() - t);
                    second.close();
                }
                BenchSupport.result(n, System.nanoTime() - started, BenchSupport.latency(samples));
            }
            default -> throw new IllegalArgumentException(workload);
        }
        System.exit(0);
    }
}
