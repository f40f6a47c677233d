package io.zkrecipes;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

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

    /**
     * Two sessions, each with a lock on one fresh path: two processes contending. Closing ends
     * both sessions, {@code b}'s first.
     */
    record Contest(Client a, Client b, String path, WriteLock first, WriteLock second) implements AutoCloseable {
        @Override
        public void close() {
            try {
                b.close();
            } finally {
                a.close();
            }
        }
    }

    static Contest contest(String name) {
        String path = path(name);
        Client a = client();
        try {
            Client b = client();
            try {
                return new Contest(a, b, path, new WriteLock(a, path), new WriteLock(b, path));
            } catch (RuntimeException e) {
                b.close();
                throw e;
            }
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
    }

    /**
     * Runs {@code waiter} until {@code lock} shows it queued behind the holder, then interrupts
     * it: it must throw InterruptedException. {@code queued} names the wait in a failure.
     */
    static void interruptWhileQueued(String queued, ZkLock lock, Background.Call waiter) throws Exception {
        Background waiting = Background.start(waiter);
        eventually(queued, () -> lock.getParticipants().size() == 2);
        waiting.interrupt();
        assertInstanceOf(InterruptedException.class, waiting.outcome(5));
    }

    /**
     * Threads that each work on a session of their own, as separate processes would: made by
     * {@code work} from its client, started at once. Closing ends the sessions.
     */
    static final class Sessions implements AutoCloseable {
        private final List<Client> clients = new ArrayList<>();
        private final List<Thread> threads = new ArrayList<>();

        Sessions(int count, Function<Client, Runnable> work) {
            try {
                for (int i = 0; i < count; i++) {
                    Client c = client();
                    clients.add(c);
                    threads.add(new Thread(work.apply(c)));
                }
            } catch (RuntimeException e) {
                close();
                throw e;
            }
            threads.forEach(Thread::start);
        }

        int size() {
            return threads.size();
        }

        /** Waits for every thread; one still running after 60 s fails the test. */
        void join(String what) throws InterruptedException {
            for (Thread t : threads) {
                t.join(60_000);
                assertFalse(t.isAlive(), what + " did not stop");
            }
        }

        @Override
        public void close() {
            clients.forEach(Client::close);
        }
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

    /** The code of the ZkException that {@code call} throws; the test fails if it throws none. */
    static ZkException.Code code(org.junit.jupiter.api.function.Executable call) {
        return assertThrows(ZkException.class, call).getCode();
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

    /**
     * The events a listener was told, in order, for a listener class to extend: {@link #next}
     * waits for the next one for 10 s at the most, so that a lost event fails the test instead
     * of hanging it.
     */
    static class Recorder<E> {
        private final BlockingQueue<E> seen = new LinkedBlockingQueue<>();
        private final String what;

        /** {@code what} names the events in a failure ("cache event"). */
        Recorder(String what) {
            this.what = what;
        }

        /** For the listener's callback. */
        final void record(E event) {
            seen.add(event);
        }

        final E next() throws InterruptedException {
            E event = seen.poll(10, TimeUnit.SECONDS);
            assertNotNull(event, "no " + what + " within 10 s");
            return event;
        }

        /** An event already told and not yet taken, or null: for checking that nothing more came. */
        final E poll() {
            return seen.poll();
        }
    }

    /**
     * A blocking call run on a thread of its own, so that the test can interrupt it, or end it
     * from outside (a close, a removed barrier), and then see how it ended.
     */
    static final class Background {
        interface Call {
            void run() throws Exception;
        }

        private final Thread thread;
        private final CompletableFuture<Throwable> outcome = new CompletableFuture<>();

        private Background(Call call) {
            thread = new Thread(() -> {
                try {
                    call.run();
                    outcome.complete(null);
                } catch (Throwable t) {
                    outcome.complete(t);
                }
            }, "background-call");
        }

        static Background start(Call call) {
            Background background = new Background(call);
            background.thread.start();
            return background;
        }

        /** Parked, waiting for an answer: the call is under way, not still on its way there. */
        boolean isWaiting() {
            return thread.getState() == Thread.State.WAITING;
        }

        void interrupt() {
            thread.interrupt();
        }

        boolean isDone() {
            return outcome.isDone();
        }

        /** Null if the call returned, what it threw otherwise; fails if it has not ended within {@code seconds}. */
        Throwable outcome(long seconds) throws Exception {
            try {
                return outcome.get(seconds, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError("the background call did not end within " + seconds + " s", e);
            }
        }
    }
}
