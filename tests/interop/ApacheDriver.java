// Drives Apache ZooKeeper's own recipes (Debian package `zookeeper`, 3.8) for
// the interop tests. Run as a single-file program:
//   java -cp <zookeeper + recipes jars> ApacheDriver.java <command> <connect> <path> [args]
// Prints one line per step so that the test can follow it.
//   hold  <connect> <dir> <holdMs>   WriteLock: WAITING, ACQUIRED <node>, RELEASED
//   offer <connect> <dir> <n>        DistributedQueue.offer("apache-<i>") n times, OFFERED <n>
//   drain <connect> <dir> <n>        DistributedQueue.take() n times, ITEM <utf8> per item
//   elect <connect> <root>           3 LeaderElectionSupport members: start all, stop the leader,
//                                    then the next two; prints "EVENTS <i> <e1,e2,...>" per member
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.recipes.leader.LeaderElectionSupport;
import org.apache.zookeeper.recipes.lock.LockListener;
import org.apache.zookeeper.recipes.lock.WriteLock;
import org.apache.zookeeper.recipes.queue.DistributedQueue;

public class ApacheDriver {
    public static void main(String[] args) throws Exception {
        String command = args[0];
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(args[1], 10000, event -> {
            if (event.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("cannot connect to " + args[1]);
        }
        String path = args[2];
        switch (command) {
            case "hold": {
                CountDownLatch acquired = new CountDownLatch(1);
                WriteLock lock = new WriteLock(zk, path, ZooDefs.Ids.OPEN_ACL_UNSAFE, new LockListener() {
                    public void lockAcquired() { acquired.countDown(); }
                    public void lockReleased() { }
                });
                System.out.println("WAITING");
                if (!lock.lock()) {
                    acquired.await();
                }
                System.out.println("ACQUIRED " + lock.getId());
                Thread.sleep(Long.parseLong(args[3]));
                lock.unlock();
                System.out.println("RELEASED");
                break;
            }
            case "offer": {
                DistributedQueue queue = new DistributedQueue(zk, path, ZooDefs.Ids.OPEN_ACL_UNSAFE);
                int n = Integer.parseInt(args[3]);
                for (int i = 0; i < n; i++) {
                    queue.offer(("apache-" + i).getBytes(StandardCharsets.UTF_8));
                }
                System.out.println("OFFERED " + n);
                break;
            }
            case "drain": {
                DistributedQueue queue = new DistributedQueue(zk, path, ZooDefs.Ids.OPEN_ACL_UNSAFE);
                int n = Integer.parseInt(args[3]);
                for (int i = 0; i < n; i++) {
                    System.out.println("ITEM " + new String(queue.take(), StandardCharsets.UTF_8));
                }
                break;
            }
            case "elect": {
                if (zk.exists(path, false) == null) {
                    zk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, org.apache.zookeeper.CreateMode.PERSISTENT);
                }
                List<List<String>> events = new ArrayList<>();
                List<LeaderElectionSupport> members = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
                    events.add(seen);
                    LeaderElectionSupport member = new LeaderElectionSupport();
                    member.setZooKeeper(zk);
                    member.setRootNodeName(path);
                    member.setHostName("host-" + i);
                    member.addListener(type -> seen.add(type.name()));
                    member.start();
                    members.add(member);
                }
                for (LeaderElectionSupport member : members) {
                    Thread.sleep(500);
                    member.stop();
                }
                Thread.sleep(500);
                for (int i = 0; i < 3; i++) {
                    System.out.println("EVENTS " + i + " " + String.join(",", events.get(i)));
                }
                break;
            }
            default:
                throw new IllegalArgumentException("unknown command " + command);
        }
        System.out.flush();
        zk.close();
    }
}
