package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ElectionIT {
    /** Start three members, then stop them in order (the leader first), as the Apache driver does. */
    private static List<List<String>> ourScenario(String root) throws Exception {
        List<List<String>> events = new ArrayList<>();
        List<LeaderElectionSupport> members = new ArrayList<>();
        List<Client> clients = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Client c = Zk.client();
            clients.add(c);
            List<String> seen = Collections.synchronizedList(new ArrayList<>());
            events.add(seen);
            LeaderElectionSupport m = new LeaderElectionSupport(c, root, "host-" + i);
            m.addListener(type -> seen.add(type.name()));
            m.start();
            members.add(m);
        }
        assertEquals(List.of(true, false, false), members.stream().map(LeaderElectionSupport::isLeader).toList());
        assertEquals("host-0", members.get(2).getLeaderHostName());
        assertFalse(members.get(1).awaitLeadership(100, TimeUnit.MILLISECONDS));
        for (int i = 0; i < 3; i++) {
            members.get(i).stop();
            if (i < 2) {
                assertTrue(members.get(i + 1).awaitLeadership(5, TimeUnit.SECONDS), "hand-over to member " + (i + 1));
                assertEquals(1, members.stream().filter(LeaderElectionSupport::isLeader).count());
            }
        }
        // Every member's last event is its stop's STOP_COMPLETE: wait for them (a fixed 300 ms
        // did), then close.
        for (List<String> seen : events) {
            Zk.eventually("STOP_COMPLETE", () -> !seen.isEmpty() && seen.get(seen.size() - 1).equals("STOP_COMPLETE"));
        }
        for (LeaderElectionSupport m : members) {
            m.close();
        }
        clients.forEach(Client::close);
        return events;
    }

    private static List<List<String>> apacheScenario(String root) throws Exception {
        String jars = String.join(":", "/usr/share/java/zookeeper.jar", "/usr/share/java/zookeeper-recipes-lock.jar",
            "/usr/share/java/zookeeper-recipes-queue.jar", "/usr/share/java/zookeeper-recipes-election.jar",
            "/usr/share/java/slf4j-nop.jar");
        Path driver = Path.of(System.getProperty("basedir", "."), "..", "tests", "interop", "ApacheDriver.java");
        assertTrue(Files.exists(driver), driver.toString());
        // Compiles and runs the driver: a few seconds idle.
        Zk.Child.Result run = Zk.Child.start(new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"),
            "-cp", jars, driver.toString(), "elect", Zk.connect(), root).redirectError(ProcessBuilder.Redirect.INHERIT))
            .await(java.time.Duration.ofSeconds(120));
        assertEquals(0, run.exit(), run.out());
        List<List<String>> events = new ArrayList<>(List.of(List.of(), List.of(), List.of()));
        for (String line : run.out().split("\n")) {
            String[] f = line.split(" ");
            if (f[0].equals("EVENTS")) {
                events.set(Integer.parseInt(f[1]), List.of(f[2].split(",")));
            }
        }
        return events;
    }

    @Test
    void eventOrderIsIdenticalToApachesRecipe() throws Exception {
        List<List<String>> ours = ourScenario(Zk.path("election"));
        List<List<String>> apache = apacheScenario(Zk.path("apache-election"));
        assertEquals(apache, ours);
        assertEquals(List.of("START", "OFFER_START", "OFFER_COMPLETE", "DETERMINE_START", "DETERMINE_COMPLETE",
            "ELECTED_START", "ELECTED_COMPLETE", "STOP_START", "STOP_COMPLETE"), ours.get(0));
    }

    @Test
    void asyncStartAndStop() throws Exception {
        try (Client c = Zk.client(); LeaderElectionSupport m = new LeaderElectionSupport(c, Zk.path("async"), "solo")) {
            m.startAsync().get(5, TimeUnit.SECONDS);
            assertTrue(m.awaitLeadership(5, TimeUnit.SECONDS));
            assertEquals("solo", m.getLeaderHostName());
            m.stopAsync().get(5, TimeUnit.SECONDS);
            assertFalse(m.isLeader());
        }
    }

    /** Adversarial review: a cancelled {@code stopAsync()} left the leader's offer behind (77 of 200 rounds). */
    @Test
    void aCancelledStopStillWithdrawsTheOffer() throws Exception {
        String root = Zk.path("cancelled-stop");
        Random random = new Random(3);
        try (Client c = Zk.client(); LeaderElectionSupport watcher = new LeaderElectionSupport(c, root, "watcher")) {
            for (int round = 0; round < 60; round++) {
                try (LeaderElectionSupport m = new LeaderElectionSupport(c, root, "m" + round)) {
                    m.start();
                    assertTrue(m.isLeader());
                    CompletableFuture<Void> stopping = m.stopAsync();
                    long until = System.nanoTime() + random.nextInt(2_000_000);
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                    stopping.cancel(true);
                    m.stop();
                    assertFalse(m.isLeader(), "round " + round);
                    assertNull(watcher.getLeaderHostName(), "round " + round);
                }
            }
        }
    }
}
