// Cross-language test agent (Java); same protocol as agent.py. Run with the JAR on the classpath.
import io.zkrecipes.*;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

public class Agent {
    public static void main(String[] argv) throws Exception {
        ClientOptions options = new ClientOptions().sessionTimeout(Duration.ofSeconds(5));
        // The secured variant: TLS with a client certificate and SASL DIGEST-MD5 (see agent.py).
        if (System.getenv("ZKRECIPES_AGENT_CA") != null) {
            options.tls(TlsOptions.pem(System.getenv("ZKRECIPES_AGENT_CA"))
                    .identity(System.getenv("ZKRECIPES_AGENT_CERT"), System.getenv("ZKRECIPES_AGENT_KEY")))
                .sasl(Sasl.digestMd5(System.getenv("ZKRECIPES_AGENT_USER"), System.getenv("ZKRECIPES_AGENT_PASSWORD").toCharArray()))
                .acl(AclPolicy.OPEN);
        }
        Client client = Client.connect(argv[0], options);
        Map<String, WriteLock> locks = new HashMap<>();
        LeaderElectionSupport election = null;
        HexFormat hex = HexFormat.of();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] p = line.trim().split("\\s+");
            String reply;
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
                case "quit" -> {
                    client.close();
                    System.exit(0);
                    return;
                }
                default -> reply = "ERR " + p[0];
            }
            System.out.println(reply);
            System.out.flush();
        }
        client.close();
        System.exit(0);
    }
}
