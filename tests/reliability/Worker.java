// Reliability worker (Java); same arguments and protocol as worker.py.
import io.zkrecipes.*;
import java.io.*;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

public class Worker {
    static BufferedReader in;
    static Writer out;

    static synchronized String ask(String line) {
        try {
            out.write(line + "\n");
            out.flush();
            return in.readLine();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void main(String[] a) throws Exception {
        String connect = a[0], name = a[2], role = a[3], root = a[6];
        int count = Integer.parseInt(a[4]);
        String[] hp = a[1].split(":");
        Socket socket = new Socket(hp[0], Integer.parseInt(hp[1]));
        in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
        ask("HELLO " + name + " " + ProcessHandle.current().pid());
        ClientOptions options = new ClientOptions().identity(name).sessionTimeout(Duration.ofSeconds(Long.parseLong(a[5])))
            .connectTimeout(Duration.ofSeconds(30));
        try (Client client = Client.connect(connect, options)) {
            switch (role) {
                case "lock" -> {
                    WriteLock lock = new WriteLock(client, root + "/lock", new LockListener() {
                        public void lockAcquired() {}
                        public void lockReleased() {}
                        public void lockLost(ZkException cause) { ask("LOST " + name); }
                    });
                    for (int done = 0; done < count && "NO".equals(ask("STOP?")); ) {
                        try {
                            if (!lock.tryLock(30, TimeUnit.SECONDS)) {
                                continue;
                            }
                        } catch (ZkException e) {
                            Thread.sleep(100);
                            continue;
                        }
                        long token = lock.getFencingToken();
                        ask("BEGIN " + name + " " + token);
                        for (int w = 0; w < 3; w++) {
                            ask("WRITE " + name + " " + token);
                            Thread.sleep(5);
                        }
                        ask("END " + name + " " + token);
                        try {
                            lock.unlock();
                        } catch (ZkException | IllegalMonitorStateException e) {
                            // lost while paused: the resource already refused the stale writes
                        }
                        done++;
                    }
                }
                case "produce" -> {
                    DistributedQueue q = new DistributedQueue(client, root + "/queue");
                    for (int i = 0; i < count; i++) {
                        String item = name + "-" + i;
                        try {
                            q.offer(item.getBytes(StandardCharsets.UTF_8));
                            ask("OFFERED " + item);
                        } catch (ZkException e) {
                            ask("OFFER_LOST " + item);
                        }
                    }
                }
                case "consume" -> {
                    DistributedQueue q = new DistributedQueue(client, root + "/queue");
                    while ("NO".equals(ask("STOP?"))) {
                        byte[] item;
                        try {
                            item = q.poll(500, TimeUnit.MILLISECONDS);
                        } catch (ZkException e) {
                            Thread.sleep(100);
                            continue;
                        }
                        if (item != null) {
                            ask("GOT " + new String(item, StandardCharsets.UTF_8) + " " + name);
                        }
                    }
                }
                case "work-produce" -> {
                    try (WorkQueue q = new WorkQueue(client, root + "/work")) {
                        for (int i = 0; i < count; i += 10) {
                            java.util.List<String> items = new java.util.ArrayList<>();
                            for (int j = i; j < Math.min(i + 10, count); j++) {
                                items.add(name + "-" + j);
                            }
                            String outcome;
                            try {
                                q.offerAll(items.stream().map(x -> x.getBytes(StandardCharsets.UTF_8)).toList(),
                                    WorkQueue.DEFAULT_PRIORITY);
                                outcome = "OFFERED";
                            } catch (ZkException e) {
                                outcome = "OFFER_LOST";
                            }
                            for (String x : items) {
                                ask(outcome + " " + x);
                            }
                        }
                    }
                }
                case "work-consume" -> {
                    // At least once: report the job, then acknowledge it.
                    try (WorkQueue q = new WorkQueue(client, root + "/work", 4, 0)) {
                        while ("NO".equals(ask("STOP?"))) {
                            Delivery job;
                            try {
                                job = q.consume(500, TimeUnit.MILLISECONDS);
                            } catch (ZkException e) {
                                Thread.sleep(100);
                                continue;
                            }
                            if (job == null) {
                                continue;
                            }
                            ask("GOT " + new String(job.getData(), StandardCharsets.UTF_8) + " " + name);
                            Thread.sleep(20); // the work: a kill lands while jobs are in hand
                            try {
                                job.ack();
                            } catch (ZkException e) {
                                // the claim went with the session: delivered again elsewhere
                            }
                        }
                    }
                }
                case "elect" -> {
                    LeaderElectionSupport election = new LeaderElectionSupport(client, root + "/election", name);
                    election.addListener(e -> {
                        switch (e) {
                            case ELECTED_COMPLETE -> ask("ELECTED " + name);
                            case FAILED, STOP_START -> ask("UNELECTED " + name);
                            default -> { }
                        }
                    });
                    election.start();
                    while ("NO".equals(ask("STOP?"))) {
                        Thread.sleep(200);
                    }
                    election.stop();
                }
                default -> throw new IllegalArgumentException(role);
            }
            ask("DONE " + name);
        }
        System.exit(0);
    }
}
