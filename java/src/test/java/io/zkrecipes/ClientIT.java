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
            // The core checks the timeouts when connecting (one rule for every language), and
            // a Duration of any size is an INVALID_ARGUMENT naming it, never an overflow.
            for (ClientOptions bad : List.of(new ClientOptions().sessionTimeout(Duration.ofMillis(-1)),
                    new ClientOptions().connectTimeout(Duration.ZERO),
                    new ClientOptions().sessionTimeout(Duration.ofSeconds(Long.MAX_VALUE)))) {
                ZkException e = assertThrows(ZkException.class, () -> Client.connect(Zk.connect(), bad));
                assertEquals(ZkException.Code.INVALID_ARGUMENT, e.getCode(), e.getMessage());
                assertTrue(e.getDetail().matches("(session|connect)Timeout must be in \\(0, 86400\\] s, got .*"), e.getDetail());
            }
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

    private static void deleteTree(java.nio.file.Path root) throws java.io.IOException {
        try (var paths = java.nio.file.Files.walk(root)) {
            for (java.nio.file.Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.deleteIfExists(p);
            }
        }
    }

    /** Runs a small program in a fresh JVM on this classpath; returns its exit code and output. */
    private static String[] runJvm(java.nio.file.Path dir, String... properties) throws Exception {
        java.nio.file.Path program = dir.resolve("Load.java");
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
        java.util.List<String> command = new java.util.ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(java.util.List.of(properties));
        command.addAll(java.util.List.of("-cp", System.getProperty("java.class.path"), program.toString()));
        // A JVM start and a 200 ms connect timeout: a second or two idle.
        Zk.Child.Result run = Zk.Child.start(new ProcessBuilder(command).redirectErrorStream(true))
            .await(java.time.Duration.ofSeconds(60));
        return new String[] {String.valueOf(run.exit()), run.out().trim()};
    }

    /**
     * The runtime's threads attach to the JVM once, as daemons named zkrecipes-native: a program
     * that returns from main with a client still open (and results handed over on those threads)
     * exits, and a thread dump names them.
     */
    @Test
    void aProgramThatReturnsFromMainExitsWithTheClientOpen() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("zkrecipes-exit-test");
        java.nio.file.Path program = dir.resolve("Leave.java");
        java.nio.file.Files.writeString(program, """
            public class Leave {
                public static void main(String[] args) {
                    // The session's events on (Logback, through SLF4J's System.Logger bridge): the
                    // log delivery thread attaches to the JVM too.
                    ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("zkrecipes.session"))
                        .setLevel(ch.qos.logback.classic.Level.INFO);
                    io.zkrecipes.Client.refreshLogLevels();
                    io.zkrecipes.Client client = io.zkrecipes.Client.connect(args[0]);
                    io.zkrecipes.WriteLock lock = new io.zkrecipes.WriteLock(client, args[1]);
                    for (int i = 0; i < 20; i++) {
                        lock.lock();
                        lock.unlock();
                    }
                    lock.lock();
                    if (!io.zkrecipes.Client.flushLogs(java.time.Duration.ofSeconds(10))) {
                        System.out.println("the events were not delivered");
                    }
                    Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().equals("zkrecipes-native") || t.getName().equals("zkrecipes-log"))
                        .forEach(t -> System.out.println(t.getName() + " daemon=" + t.isDaemon()));
                    System.out.println("returns");
                }
            }
            """);
        Zk.Child.Result run = Zk.Child.start(new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"),
                "-cp", System.getProperty("java.class.path"), program.toString(), Zk.connect(), Zk.path("leave"))
                .redirectErrorStream(true))
            .await(java.time.Duration.ofSeconds(60));
        assertEquals(0, run.exit(), run.out());
        assertTrue(run.out().contains("zkrecipes-native daemon=true"), run.out());
        assertTrue(run.out().contains("zkrecipes-log daemon=true"), run.out());
        assertTrue(run.out().matches("(?s).*\\[zkrecipes-log\\] INFO  zkrecipes\\.session - session 0x[0-9a-f]+: CONNECTED "
            + "state=CONNECTED session=0x.*"), run.out());
        assertFalse(run.out().contains("daemon=false"), run.out());
        assertTrue(run.out().trim().endsWith("returns"), run.out());
    }

    /**
     * New-user review: every JVM run left a /tmp/zkrecipes-<n>/ (a killed one the 3 MB library).
     * Now the library is extracted once per content hash into a per-user cache that later runs
     * reuse, a damaged copy is replaced, and an unusable cache says what to do.
     */
    @Test
    void theNativeLibraryIsExtractedOnceIntoAReusedCache() throws Exception {
        java.nio.file.Path tmp = java.nio.file.Files.createTempDirectory("zkrecipes-cache-test");
        String[] first = runJvm(tmp, "-Djava.io.tmpdir=" + tmp);
        assertEquals("0", first[0], first[1]);
        // Its own line: the library's warnings (on standard error, merged) may come after it.
        assertTrue(first[1].lines().anyMatch("CONNECTION_LOSS"::equals), first[1]);
        java.nio.file.Path cache = tmp.resolve("zkrecipes-" + System.getProperty("user.name"));
        java.util.List<java.nio.file.Path> libraries;
        try (var found = java.nio.file.Files.walk(cache)) {
            libraries = found.filter(f -> f.getFileName().toString().equals("libzkrecipes_java.so")).toList();
        }
        assertEquals(1, libraries.size(), String.valueOf(libraries));
        java.nio.file.Path library = libraries.get(0);
        assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(
            java.nio.file.Files.getPosixFilePermissions(cache)));
        java.nio.file.attribute.FileTime written = java.nio.file.Files.getLastModifiedTime(library);

        String[] second = runJvm(tmp, "-Djava.io.tmpdir=" + tmp);
        assertEquals("0", second[0], second[1]);
        assertEquals(written, java.nio.file.Files.getLastModifiedTime(library), "reused, not written again");
        try (var found = java.nio.file.Files.list(library.getParent())) {
            assertEquals(1, found.count(), "no partial files left");
        }

        java.nio.file.Files.write(library, new byte[] {1, 2, 3});
        String[] repaired = runJvm(tmp, "-Djava.io.tmpdir=" + tmp);
        assertEquals("0", repaired[0], repaired[1]);
        assertTrue(java.nio.file.Files.size(library) > 1_000_000, "a damaged copy is replaced");

        // A cache that cannot be made (its parent is a file: fails for root too).
        java.nio.file.Path notADirectory = java.nio.file.Files.writeString(tmp.resolve("a-file"), "x");
        String[] refused = runJvm(tmp, "-Dzkrecipes.native.cache=" + notADirectory.resolve("cache"));
        assertTrue(!refused[0].equals("0"), refused[1]);
        assertTrue(refused[1].contains("-Dzkrecipes.native.path") && refused[1].contains("-Dzkrecipes.native.cache")
            && refused[1].contains(notADirectory.toString()), refused[1]);
        deleteTree(tmp);
    }

    /**
     * macOS and Windows name their directories in the JAR as the release builds them
     * (darwin-aarch64, windows-x86_64): a JVM that says it runs there looks for exactly those,
     * and names the prebuilt platforms when the test JAR (Linux only) does not carry it.
     */
    @Test
    void macOsAndWindowsLookForTheirOwnDirectories() throws Exception {
        java.nio.file.Path tmp = java.nio.file.Files.createTempDirectory("zkrecipes-platform-test");
        String[][] platforms = {{"Mac OS X", "aarch64", "darwin-aarch64"}, {"Mac OS X", "x86_64", "darwin-x86_64"},
            {"Windows 11", "amd64", "windows-x86_64"}};
        for (String[] p : platforms) {
            String[] run = runJvm(tmp, "-Dos.name=" + p[0], "-Dos.arch=" + p[1], "-Djava.io.tmpdir=" + tmp);
            assertTrue(!run[0].equals("0"), run[1]);
            assertTrue(run[1].contains("no native library for " + p[2] + " (looked for /native/" + p[2] + "/"), run[1]);
            assertTrue(run[1].contains("prebuilt: " + NativeLibrary.PREBUILT), run[1]);
        }
        deleteTree(tmp);
    }

    /** A stale library on java.library.path used to win silently and fail later in Native.init(). */
    @Test
    void aForeignLibraryOnTheLibraryPathFailsNamingItsFile() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("zkrecipes-stale-test");
        java.nio.file.Path foreign = java.nio.file.Path.of("/lib/x86_64-linux-gnu/libz.so.1");
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.exists(foreign), "needs a shared library to stand in");
        java.nio.file.Path stale = dir.resolve("libzkrecipes_java.so");
        java.nio.file.Files.copy(foreign, stale);
        String[] run = runJvm(dir, "-Djava.library.path=" + dir, "-Djava.io.tmpdir=" + dir);
        assertTrue(!run[0].equals("0"), run[1]);
        assertTrue(run[1].contains(stale.toString()) && run[1].contains("java.library.path")
            && run[1].contains("version"), run[1]);
        // A file that is there but is no library at all is not skipped silently either.
        java.nio.file.Files.writeString(stale, "garbage");
        String[] broken = runJvm(dir, "-Djava.library.path=" + dir, "-Djava.io.tmpdir=" + dir);
        assertTrue(!broken[0].equals("0") && broken[1].contains(stale.toString()), broken[1]);
        deleteTree(dir);
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
