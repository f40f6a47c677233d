package io.zkrecipes;

import java.util.UUID;

/** Test helpers: the server from {@code ZK_CONNECT} (tests/with-zk starts one), unique paths. */
final class Zk {
    private Zk() {}

    static String connect() {
        String connect = System.getenv("ZK_CONNECT");
        if (connect == null || connect.isEmpty()) {
            throw new IllegalStateException("ZK_CONNECT must point at a ZooKeeper (run the tests through tests/with-zk)");
        }
        return connect;
    }

    static Client client() {
        return Client.connect(connect());
    }

    static String path(String name) {
        return "/java-test/" + name + "-" + UUID.randomUUID();
    }

    /** An operator's delete, through the harness binary. */
    static void rm(String path) throws Exception {
        Process p = new ProcessBuilder(System.getenv("ZK_HARNESS"), "rm", connect(), path).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("zk-harness rm failed");
        }
    }

    static void eventually(String what, java.util.function.BooleanSupplier check) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (check.getAsBoolean()) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError(what + ": not within 10 s");
    }
}
