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
        Child rm = Child.start(new ProcessBuilder(System.getenv("ZK_HARNESS"), "rm", connect(), path)
            .redirectErrorStream(true));
        Child.Result done = rm.await(java.time.Duration.ofSeconds(30));
        if (done.exit() != 0) {
            throw new IllegalStateException("zk-harness rm failed: " + done.out());
        }
    }

    /**
     * A child process whose output is read on a thread of its own, so that no read waits
     * forever: {@link #await} kills it and fails once its deadline passed.
     */
    static final class Child {
        record Result(int exit, String out) {}

        private final Process process;
        private final String command;
        private final java.util.concurrent.CompletableFuture<String> out = new java.util.concurrent.CompletableFuture<>();

        private Child(Process process, String command) {
            this.process = process;
            this.command = command;
            Thread reader = new Thread(() -> {
                try {
                    out.complete(new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
                } catch (java.io.IOException e) {
                    out.completeExceptionally(e);
                }
            }, "child-output");
            reader.setDaemon(true);
            reader.start();
        }

        static Child start(ProcessBuilder builder) throws java.io.IOException {
            return new Child(builder.start(), String.join(" ", builder.command()));
        }

        /** Its exit code and standard output, or an AssertionError (it is killed) after {@code timeout}. */
        Result await(java.time.Duration timeout) throws Exception {
            if (!process.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
                String partial;
                try {
                    partial = out.get(5, java.util.concurrent.TimeUnit.SECONDS);
                } catch (Exception e) {
                    partial = "(output not read: " + e + ")";
                }
                throw new AssertionError("child " + command
                    + " still running after " + timeout + ", killed; its output: " + partial);
            }
            return new Result(process.exitValue(), out.get(30, java.util.concurrent.TimeUnit.SECONDS));
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
