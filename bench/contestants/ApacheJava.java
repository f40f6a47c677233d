// Apache ZooKeeper's own recipes (Debian zookeeper 3.8 jars) on the same workloads.
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.recipes.leader.LeaderElectionSupport;
import org.apache.zookeeper.recipes.lock.LockListener;
import org.apache.zookeeper.recipes.lock.WriteLock;
import org.apache.zookeeper.recipes.queue.DistributedQueue;

public class ApacheJava {
    static ZooKeeper connect(String connect) throws Exception {
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connect, 10000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                up.countDown();
            }
        });
        up.await();
        return zk;
    }

    static void mkdirs(ZooKeeper zk, String path) throws Exception {
        StringBuilder at = new StringBuilder();
        for (String part : path.substring(1).split("/")) {
            at.append('/').append(part);
            if (zk.exists(at.toString(), false) == null) {
                zk.create(at.toString(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            }
        }
    }

    /** Apache's lock() returns false when it must wait; the listener says when it got it. */
    static final class Blocking {
        final Semaphore acquired = new Semaphore(0);
        final WriteLock lock;

        Blocking(ZooKeeper zk, String dir) {
            lock = new WriteLock(zk, dir, ZooDefs.Ids.OPEN_ACL_UNSAFE, new LockListener() {
                public void lockAcquired() { acquired.release(); }
                public void lockReleased() {}
            });
        }

        void lock() throws Exception {
            if (!lock.lock()) {
                acquired.acquire();
            } else {
                acquired.drainPermits();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String workload = args[0], connect = args[1];
        int n = args.length > 2 ? Integer.parseInt(args[2]) : 2000;
        String root = "/bench/apache-" + ProcessHandle.current().pid();
        switch (workload) {
            case "cycle" -> {
                ZooKeeper zk = connect(connect);
                mkdirs(zk, root + "/cycle");
                WriteLock lock = new WriteLock(zk, root + "/cycle", ZooDefs.Ids.OPEN_ACL_UNSAFE);
                for (int i = 0; i < BenchSupport.warmup(); i++) {
                    lock.lock();
                    lock.unlock();
                }
                BenchSupport.ready();
                BenchSupport.timed(n, () -> {
                    if (!lock.lock()) {
                        throw new IllegalStateException("uncontended lock not acquired");
                    }
                    lock.unlock();
                });
            }
            case "contended" -> {
                String dir = root + "/contended";
                List<BenchSupport.Held> locks = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    ZooKeeper zk = connect(connect);
                    if (i == 0) {
                        mkdirs(zk, dir);
                    }
                    Blocking lock = new Blocking(zk, dir);
                    locks.add(new BenchSupport.Held(lock::lock, lock.lock::unlock));
                }
                // Apache's WriteLock can strand a waiter whose predecessor vanished (it watches
                // with exists() and does not re-check): give up on those after the seconds given.
                BenchSupport.contended(n, locks, args.length > 3 ? Long.parseLong(args[3]) : 60);
            }
            case "queue" -> {
                String dir = root + "/queue-" + n;
                ZooKeeper producer = connect(connect);
                mkdirs(producer, dir);
                DistributedQueue q = new DistributedQueue(producer, dir, ZooDefs.Ids.OPEN_ACL_UNSAFE);
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    q.offer(("item-" + i).getBytes());
                }
                long offered = System.nanoTime() - t0;
                DistributedQueue consumer = new DistributedQueue(connect(connect), dir, ZooDefs.Ids.OPEN_ACL_UNSAFE);
                BenchSupport.ready();
                long started = System.nanoTime();
                int taken = 0;
                while (consumer.poll() != null) {
                    taken++;
                }
                if (taken != n) {
                    throw new IllegalStateException("drained " + taken + " of " + n);
                }
                BenchSupport.result(n, System.nanoTime() - started, String.format(java.util.Locale.ROOT, "\"offer_seconds\":%.4f", offered / 1e9));
            }
            case "election" -> {
                ZooKeeper a = connect(connect), b = connect(connect);
                BenchSupport.rounds(n, r -> {
                    String path = root + "/election-" + r;
                    mkdirs(a, path);
                    LeaderElectionSupport first = member(a, path, "a");
                    LeaderElectionSupport second = member(b, path, "b");
                    CountDownLatch elected = new CountDownLatch(1);
                    first.start();
                    second.addListener(t -> {
                        if (t == LeaderElectionSupport.EventType.ELECTED_COMPLETE) {
                            elected.countDown();
                        }
                    });
                    second.start();
                    long took = BenchSupport.took(first::stop, elected::await);
                    second.stop();
                    return took;
                });
            }
            default -> throw new IllegalArgumentException(workload);
        }
        System.exit(0);
    }

    static LeaderElectionSupport member(ZooKeeper zk, String root, String host) {
        LeaderElectionSupport s = new LeaderElectionSupport();
        s.setZooKeeper(zk);
        s.setRootNodeName(root);
        s.setHostName(host);
        return s;
    }
}
