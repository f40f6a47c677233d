package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ClientIT {
    @Test
    void statesIdentityAndDoubleClose() throws Exception {
        List<ConnectionState> states = Collections.synchronizedList(new ArrayList<>());
        Client c = Client.connect(Zk.connect(), new ClientOptions().identity("java-test").sessionTimeout(Duration.ofSeconds(5)));
        assertEquals(ConnectionState.CONNECTED, c.getState());
        assertEquals("java-test", c.getIdentity());
        assertNotEquals(0, c.getSessionId());
        c.addConnectionStateListener((client, state) -> states.add(state));
        c.addConnectionStateListener((client, state) -> { throw new IllegalStateException("listener bug"); });
        c.close();
        c.close();
        assertEquals(ConnectionState.CLOSED, c.getState());
        assertEquals(List.of(ConnectionState.CLOSED), states);
    }

    @Test
    void connectAsync() throws Exception {
        try (Client c = Client.connectAsync(Zk.connect(), new ClientOptions()).get(10, TimeUnit.SECONDS)) {
            assertEquals(ConnectionState.CONNECTED, c.getState());
        }
    }

    @Test
    void badInputIsTyped() {
        try (Client c = Zk.client()) {
            for (String bad : List.of("", "relative", "/trailing/", "//x", "/a/./b", "/a/../b", "/ctl\u0001", "/zookeeper/x")) {
                assertEquals(ZkException.Code.INVALID_PATH, assertThrows(ZkException.class, () -> new WriteLock(c, bad)).getCode(), bad);
                assertEquals(ZkException.Code.INVALID_PATH, assertThrows(ZkException.class, () -> new ReadWriteLock(c, bad)).getCode());
                assertEquals(ZkException.Code.INVALID_PATH, assertThrows(ZkException.class, () -> new DistributedQueue(c, bad)).getCode());
                assertEquals(ZkException.Code.INVALID_PATH,
                    assertThrows(ZkException.class, () -> new LeaderElectionSupport(c, bad, "h")).getCode());
            }
            assertThrows(NullPointerException.class, () -> new WriteLock(c, null));
            assertThrows(NullPointerException.class, () -> new WriteLock(null, "/x"));
            assertEquals(ZkException.Code.INVALID_ARGUMENT,
                assertThrows(ZkException.class, () -> new ClientOptions().sessionTimeout(Duration.ofMillis(-1))).getCode());
            assertEquals(ZkException.Code.INVALID_ARGUMENT,
                assertThrows(ZkException.class, () -> new ClientOptions().connectTimeout(Duration.ZERO)).getCode());
        }
    }

    @Test
    void unreachableServerIsConnectionLossWithinTheConnectTimeout() {
        long started = System.nanoTime();
        ZkException e = assertThrows(ZkException.class,
            () -> Client.connect("127.0.0.1:1", new ClientOptions().connectTimeout(Duration.ofMillis(500))));
        assertEquals(ZkException.Code.CONNECTION_LOSS, e.getCode());
        assertTrue(System.nanoTime() - started < 3_000_000_000L);
    }

    @Test
    void useAfterCloseIsClosed() {
        Client c = Zk.client();
        WriteLock lock = new WriteLock(c, Zk.path("closed"));
        DistributedQueue q = new DistributedQueue(c, Zk.path("closedq"));
        LeaderElectionSupport e = new LeaderElectionSupport(c, Zk.path("closede"), "h");
        c.close();
        assertEquals(ZkException.Code.CLOSED, assertThrows(ZkException.class, lock::lock).getCode());
        assertEquals(ZkException.Code.CLOSED, assertThrows(ZkException.class, () -> q.offer(new byte[1])).getCode());
        assertEquals(ZkException.Code.CLOSED, assertThrows(ZkException.class, e::start).getCode());
        assertEquals(ZkException.Code.CLOSED, assertThrows(ZkException.class, c::getSessionId).getCode());
        assertEquals(ZkException.Code.CLOSED, assertThrows(ZkException.class, () -> new WriteLock(c, "/x")).getCode());
        lock.close();
        q.close();
        e.close();
    }

    /** New-user review: every JVM run left an empty /tmp/zkrecipes-<n>/ behind. */
    @Test
    void aJvmRunLeavesNothingInItsTempDirectory() throws Exception {
        java.nio.file.Path tmp = java.nio.file.Files.createTempDirectory("zkrecipes-tmpdir-test");
        java.nio.file.Path program = tmp.resolveSibling(tmp.getFileName() + "-Load.java");
        java.nio.file.Files.writeString(program, """
            public class Load {
                public static void main(String[] args) {
                    try {
                        io.zkrecipes.Client.connect("127.0.0.1:1",
                            new io.zkrecipes.ClientOptions().connectTimeout(java.time.Duration.ofMillis(200)));
                    } catch (io.zkrecipes.ZkException e) {
                        System.out.println(e.getCode());
                    }
                }
            }
            """);
        Process p = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"),
            "-Djava.io.tmpdir=" + tmp, "-cp", System.getProperty("java.class.path"), program.toString())
            .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        assertEquals(0, p.waitFor());
        assertTrue(out.endsWith("CONNECTION_LOSS"), out);
        try (var left = java.nio.file.Files.list(tmp)) {
            assertEquals(java.util.List.of(), left.toList(), "left in the JVM's temp directory");
        }
        java.nio.file.Files.delete(program);
        java.nio.file.Files.delete(tmp);
    }

    @Test
    void nativeLibraryComesFromTheJar() {
        assertNull(System.getProperty(NativeLibrary.PATH_PROPERTY));
        assertTrue(System.getProperty("java.class.path").matches(".*zkrecipes-[0-9][^/]*\\.jar.*"),
            "tests run against the packaged JAR: " + System.getProperty("java.class.path"));
    }

    @Test
    void aclOfAnotherIdentityIsNoAuth() {
        String dir = Zk.path("acl");
        try (Client alice = Client.connect(Zk.connect(), new ClientOptions().auth("digest", "alice:s3cret"));
             Client mallory = Client.connect(Zk.connect(), new ClientOptions().auth("digest", "mallory:guess"))) {
            new DistributedQueue(alice, dir).offer("private".getBytes());
            ZkException e = assertThrows(ZkException.class, () -> new DistributedQueue(mallory, dir).poll());
            assertEquals(ZkException.Code.NO_AUTH, e.getCode());
            assertFalse(e.getMessage().contains("s3cret"));
            assertEquals(ZkException.Code.NO_AUTH, assertThrows(ZkException.class, () -> new WriteLock(mallory, dir).tryLock()).getCode());
            assertArrayEquals("private".getBytes(), new DistributedQueue(alice, dir).poll());
            assertFalse(alice.toString().contains("s3cret"));
        }
    }
}
