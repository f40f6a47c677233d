// Cross-language test agent (Java); same protocol as agent.py. Run with the JAR on the classpath.
import io.zkrecipes.*;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

public class Agent {
    public static void main(String[] argv) throws Exception {
        String timeout = System.getenv().getOrDefault("ZKRECIPES_AGENT_SESSION_TIMEOUT", "5");
        ClientOptions options = new ClientOptions().sessionTimeout(Duration.ofMillis((long) (1000 * Double.parseDouble(timeout))));
        // The secured variant: TLS with a client certificate and SASL DIGEST-MD5 (see agent.py).
        if (System.getenv("ZKRECIPES_AGENT_CA") != null) {
            options.tls(TlsOptions.pem(System.getenv("ZKRECIPES_AGENT_CA"))
                    .identity(System.getenv("ZKRECIPES_AGENT_CERT"), System.getenv("ZKRECIPES_AGENT_KEY")))
                .sasl(Sasl.digestMd5(System.getenv("ZKRECIPES_AGENT_USER"), System.getenv("ZKRECIPES_AGENT_PASSWORD").toCharArray()))
                .acl(AclPolicy.OPEN);
        }
        Client client = Client.connect(argv[0], options);
        // Counted from right after connecting (listeners run on a library thread).
        AtomicInteger lost = new AtomicInteger();
        client.addConnectionStateListener((c, state) -> {
            if (state == ConnectionState.LOST) {
                lost.incrementAndGet();
            }
        });
        Map<String, WriteLock> locks = new HashMap<>();
        LeaderElectionSupport election = null;
        Semaphore semaphore = null;
        Lease lease = null;
        LeaderLatch latch = null;
        Map<String, WorkQueue> workQueues = new HashMap<>();
        Delivery delivery = null;
        HexFormat hex = HexFormat.of();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] p = line.trim().split("\\s+");
            String reply;
            try {
                switch (p[0]) {
                    case "lock" -> {
                        WriteLock l = locks.computeIfAbsent(p[1], d -> new WriteLock(client, d));
                        l.lock();
                        reply = "HELD " + l.getFencingToken();
                    }
                    case "trylock" -> {
                        WriteLock l = locks.computeIfAbsent(p[1], d -> new WriteLock(client, d));
                        reply = l.tryLock() ? "HELD " + l.getFencingToken() : "BUSY";
                    }
                    case "unlock" -> {
                        locks.get(p[1]).unlock();
                        reply = "OK";
                    }
                    case "offer" -> {
                        try (DistributedQueue q = new DistributedQueue(client, p[1])) {
                            q.offer(p[2].equals("-") ? new byte[0] : hex.parseHex(p[2]));
                        }
                        reply = "OK";
                    }
                    case "poll" -> {
                        try (DistributedQueue q = new DistributedQueue(client, p[1])) {
                            byte[] item = q.poll();
                            reply = item == null ? "EMPTY" : "ITEM " + (item.length == 0 ? "-" : hex.formatHex(item));
                        }
                    }
                    case "elect" -> {
                        election = new LeaderElectionSupport(client, p[1], p[2]);
                        election.start();
                        reply = "STARTED";
                    }
                    case "leader?" -> reply = election != null && election.isLeader() ? "YES" : "NO";
                    case "stop" -> {
                        election.stop();
                        reply = "STOPPED";
                    }
                    case "session" -> reply = "SESSION " + Long.toHexString(client.getSessionId());
                    case "lost?" -> reply = "LOST " + lost.get();
                    case "state" -> reply = client.getState().name();
                    case "held?" -> reply = yes(locks.computeIfAbsent(p[1], d -> new WriteLock(client, d)).isLocked());
                    case "lease" -> {
                        semaphore = new Semaphore(client, p[1], 1);
                        lease = semaphore.acquire();
                        reply = "LEASED " + lease.getFencingToken();
                    }
                    // Reading the semaphore keeps it reachable while the lease is kept.
                    case "leased?" -> reply = yes(semaphore != null && lease.isHeld());
                    case "latch" -> {
                        latch = new LeaderLatch(client, p[1], p[2]);
                        latch.start();
                        OptionalLong token = latch.awaitLeadership(30, TimeUnit.SECONDS);
                        reply = token.isPresent() ? "LEADING " + token.getAsLong() : "NOT_LEADING";
                    }
                    case "leading?" -> reply = yes(latch != null && latch.hasLeadership());
                    case "latch-token" -> {
                        OptionalLong token = latch == null ? OptionalLong.empty() : latch.getFencingToken();
                        reply = "TOKEN " + (token.isPresent() ? String.valueOf(token.getAsLong()) : "-");
                    }
                    case "wq-offer" -> {
                        workQueues.computeIfAbsent(p[1], d -> new WorkQueue(client, d))
                            .offer(p[2].equals("-") ? new byte[0] : hex.parseHex(p[2]));
                        reply = "OK";
                    }
                    case "wq-take" -> {
                        delivery = workQueues.computeIfAbsent(p[1], d -> new WorkQueue(client, d)).consume(30, TimeUnit.SECONDS);
                        reply = delivery == null ? "EMPTY"
                            : "JOB " + (delivery.getData().length == 0 ? "-" : hex.formatHex(delivery.getData()));
                    }
                    case "wq-done" -> {
                        delivery.ack();
                        delivery = null;
                        reply = "OK";
                    }
                    case "quit" -> {
                        client.close();
                        System.exit(0);
                        return;
                    }
                    default -> reply = "ERR " + p[0];
                }
            } catch (Exception e) {
                // The test reads a failure as a reply.
                reply = ("ERR " + p[0] + " " + e).replace('\n', ' ');
            }
            System.out.println(reply);
            System.out.flush();
        }
        client.close();
        System.exit(0);
    }

    private static String yes(boolean b) {
        return b ? "YES" : "NO";
    }
}
