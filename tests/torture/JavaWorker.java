// One zk-torture worker process in Java: the Java binding's threads, listeners, futures and
// cancellation under the driver's faults. Started by the driver (`--java-jar`), not by hand:
//
//   java -cp zkrecipes-<version>.jar tests/torture/JavaWorker.java --name j2 --seed N \
//        --connect host:port[,host:port][/chroot] --resource 127.0.0.1:port --root /torture/... --session-ms 3000 \
//        [--tls-dir DIR --sasl user:password]
//
// With `--tls-dir` (a secured ensemble, `zk-torture --secure`) the client connects over TLS with
// DIR/ca.pem and the client certificate DIR/client.pem + client-key.pem, and logs in with SASL
// DIGEST-MD5 as `--sasl`'s user, as the Rust workers do.
//
// It speaks the resource protocol of src/resource.rs (one request line, one answer, per step) and
// obeys `calm` / `finish` on standard input like the Rust worker (src/worker.rs). Its threads:
//
// - 3 lock threads on one shared WriteLock (Java owners are threads) and on a private WriteLock
//   each, all on the same directory as every other worker's exclusive lock: lock(), tryLock(),
//   tryLock(t) for t in {0, 1 us, 100 us, 1 ms, 5 ms, 50 ms}, lockInterruptibly() interrupted by
//   another thread at a random moment, lockAsync() then cancel(true) or orTimeout(small), lockAsync()
//   with a stage that calls back into the lock, a reentrant second acquire; critical sections
//   BEGIN/END with the fencing token, stopped after any SUSPENDED/LOST; releases by unlock(),
//   unlockAsync(), and unlockAsync() cancelled mid-way;
// - 2 queue consumers: poll(), poll(t, unit) (interrupted at random in the chaos phase), take()
//   interrupted, takeAsync().cancel(true), takeAsync().orTimeout(t); a producer offering with
//   offerAsync(x).thenApply(p -> queue.size());
// - 2 work-queue consumers on a shared WorkQueue and private ones of random prefetch:
//   consume(t, unit), consume() interrupted, consumeAsync().cancel(true) / .orTimeout(t), consume()
//   while another thread closes the object; settled by ack(), ackAsync().get(), nack(), close(),
//   ackAsync() cancelled, a slow ack; poison jobs always nacked; a producer offering one at a time
//   and with offerAll();
// - one election member whose listener reports LEADER on/off and calls getLeaderHostName();
// - lock listeners that call getParticipants(), getFencingToken(), isLocked() (and, after a
//   connection event, tryLock(1 ms)) on every event.
//
// Every call made from a listener or a future stage, and every bounded call, is watched: no
// answer 10 s past its bound is reported as `HANG`. A timed or try acquire that throws instead of
// answering false (anything but SESSION_EXPIRED or CLOSED), a bounded poll that throws TIMEOUT, and
// any exception that is not a ZkException are a `VIOLATION`. At finish every lock object must report no hold,
// everything is closed, and main returns without System.exit: a thread the library leaves behind
// that keeps the JVM alive makes the driver judge this worker hung.
//
// ZK_TORTURE_SKIP=java-blocking-listener leaves out the listener calls that wait for the
// connection (getParticipants(), tryLock(1 ms), getLeaderHostName()): all listeners of a client
// share its one listener thread, so such a call made as the connection drops holds back every
// other recipe's SUSPENDED until the connection is back (the election leader then learns too late).

import io.zkrecipes.Client;
import io.zkrecipes.ClientOptions;
import io.zkrecipes.ConnectionState;
import io.zkrecipes.Delivery;
import io.zkrecipes.DistributedQueue;
import io.zkrecipes.LeaderElectionSupport;
import io.zkrecipes.LockListener;
import io.zkrecipes.Sasl;
import io.zkrecipes.TlsOptions;
import io.zkrecipes.WorkQueue;
import io.zkrecipes.WriteLock;
import io.zkrecipes.ZkException;
import io.zkrecipes.ZkLock;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

public final class JavaWorker {
    /** A call still unanswered this long after its own bound is reported as hung. */
    static final long HANG_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** Consumer threads (the driver's order bound counts 2 per worker). */
    static final int CONSUMERS = 2;
    static final int LOCK_THREADS = 3;
    /** A producer pauses while more items than this wait in the queue. */
    static final int BACKLOG = 150;

    public static void main(String[] argv) throws Exception {
        Map<String, String> flags = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--")) {
                usage();
            }
            flags.put(argv[i].substring(2), argv[i + 1]);
        }
        for (String key : List.of("name", "seed", "connect", "resource", "root", "session-ms")) {
            if (!flags.containsKey(key)) {
                usage();
            }
        }
        new JavaWorker(flags).run();
    }

    static void usage() {
        System.err.println("usage: java -cp zkrecipes.jar JavaWorker.java --name W --seed N --connect C "
            + "--resource HOST:PORT --root PATH --session-ms MS [--tls-dir DIR --sasl USER:PASSWORD]");
        System.exit(2);
    }

    final String name;
    final long seed;
    final String connect;
    final String resource;
    final String root;
    final Duration session;
    final Set<String> skip;
    /** A secured ensemble: the test certificates' directory and the SASL login, or null. */
    final String tlsDir;
    final String sasl;

    volatile boolean finish;
    volatile boolean calm;
    /** Bumped on every SUSPENDED or LOST a recipe tells: a hold taken before must not be written under. */
    final AtomicLong epoch = new AtomicLong();
    final ConcurrentHashMap<String, LongAdder> stats = new ConcurrentHashMap<>();
    /** Watchdogs and interrupters; daemon threads. */
    final ScheduledThreadPoolExecutor timer;
    final List<Thread> tasks = new ArrayList<>();
    final List<WriteLock> privates = new CopyOnWriteArrayList<>();
    final List<DistributedQueue> queues = new CopyOnWriteArrayList<>();
    volatile boolean closing;

    Link alarms;
    Client client;
    WriteLock shared;
    DistributedQueue sharedQueue;
    LeaderElectionSupport member;
    /** About one round trip to ZooKeeper. */
    long rtt = 1_000_000;

    JavaWorker(Map<String, String> flags) {
        name = flags.get("name");
        seed = Long.parseUnsignedLong(flags.get("seed"));
        connect = flags.get("connect");
        resource = flags.get("resource");
        root = flags.get("root");
        session = Duration.ofMillis(Long.parseLong(flags.get("session-ms")));
        tlsDir = flags.get("tls-dir");
        sasl = flags.get("sasl");
        if ((tlsDir == null) != (sasl == null) || (sasl != null && sasl.indexOf(':') < 0)) {
            usage();
        }
        String skipped = System.getenv().getOrDefault("ZK_TORTURE_SKIP", "");
        skip = Arrays.stream(skipped.split(",")).map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toSet());
        AtomicInteger n = new AtomicInteger();
        timer = new ScheduledThreadPoolExecutor(2, r -> {
            Thread t = new Thread(r, "torture-timer-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
    }

    // ---------------------------------------------------------------- the process

    void run() throws Exception {
        Link main = new Link(resource);
        long pid = ProcessHandle.current().pid();
        main.ask("HELLO " + name + " " + pid);
        steer();
        client = connect();
        if (client == null) {
            main.ask("BYE " + name + " not_connected=1");
            main.close();
            timer.shutdownNow();
            return;
        }
        alarms = new Link(resource);
        shared = new WriteLock(client, dir("lock"));
        sharedQueue = new DistributedQueue(client, dir("queue"));
        queues.add(sharedQueue);
        rtt = measureRtt();
        Link listenerLink = new Link(resource);
        shared.addListener(new Watcher(shared, "lock", listenerLink));
        client.addConnectionStateListener((c, state) -> onClientState(state));
        Thread states = daemon("torture-client-states", () -> followClient(new Link(resource)));
        SplittableRandom rng = new SplittableRandom(seed);
        for (int i = 0; i < LOCK_THREADS; i++) {
            int task = i;
            long s = rng.nextLong();
            tasks.add(new Thread(() -> lockTask(task, s, listenerLink), "torture-lock-" + i));
        }
        for (int i = 0; i < CONSUMERS; i++) {
            int task = i;
            long s = rng.nextLong();
            tasks.add(new Thread(() -> consumeTask(task, s), "torture-consume-" + i));
        }
        long producerSeed = rng.nextLong();
        tasks.add(new Thread(() -> produceTask(producerSeed), "torture-produce"));
        sharedPrefetch = prefetch(rng);
        sharedWork = openWork(sharedPrefetch);
        for (int i = 0; i < CONSUMERS; i++) {
            int task = i;
            long s = rng.nextLong();
            tasks.add(new Thread(() -> workConsumeTask(task, s), "torture-work-" + i));
        }
        long workProducerSeed = rng.nextLong();
        tasks.add(new Thread(() -> workProduceTask(workProducerSeed), "torture-work-produce"));
        long electionSeed = rng.nextLong();
        tasks.add(new Thread(() -> electionTask(electionSeed), "torture-election"));
        main.ask("READY " + name + " " + pid);
        for (Thread t : tasks) {
            t.setUncaughtExceptionHandler((thread, e) -> unexpected("thread " + thread.getName(), e));
            t.start();
        }
        for (Thread t : tasks) {
            t.join();
        }
        // Every thread released what it held: no object may still report a hold.
        expectUnlocked(shared, "shared lock");
        for (int i = 0; i < privates.size(); i++) {
            expectUnlocked(privates.get(i), "private lock " + i);
        }
        // Background work of the library (the undo of a cancelled acquire or take, a release
        // cut short) gets a moment before everything closes.
        Thread.sleep(300);
        closing = true;
        close("election member", member);
        for (WriteLock lock : privates) {
            close("private lock", lock);
        }
        close("shared lock", shared);
        for (DistributedQueue q : queues) {
            close("queue", q);
        }
        for (WorkQueue q : workQueues) {
            close("work queue", q);
        }
        close("client", client);
        states.join(2000);
        // Alarms are asked synchronously: once here, every VIOLATION and HANG is recorded.
        main.ask("BYE " + name + " " + statsLine());
        main.close();
        alarms.close();
        listenerLink.close();
        timer.shutdownNow();
        // A diagnosis for the log should the JVM not exit (the driver kills it after 30 s and
        // fails the seed): which threads keep it alive.
        daemon("torture-exit-watch", () -> {
            sleepNanos(TimeUnit.SECONDS.toNanos(5));
            StringBuilder text = new StringBuilder(name + ": the JVM did not exit 5 s after main; live non-daemon threads:\n");
            Thread.getAllStackTraces().forEach((t, stack) -> {
                if (!t.isDaemon() && t.isAlive()) {
                    text.append("  ").append(t).append('\n');
                    for (StackTraceElement e : stack) {
                        text.append("      at ").append(e).append('\n');
                    }
                }
            });
            System.err.print(text);
            System.err.flush();
        });
    }

    Client connect() {
        ClientOptions options = new ClientOptions().sessionTimeout(session).connectTimeout(Duration.ofSeconds(10)).identity(name);
        if (tlsDir != null) {
            options.tls(TlsOptions.pem(Path.of(tlsDir, "ca.pem"))
                .identity(Path.of(tlsDir, "client.pem"), Path.of(tlsDir, "client-key.pem")));
            int at = sasl.indexOf(':');
            options.sasl(Sasl.digestMd5(sasl.substring(0, at), sasl.substring(at + 1).toCharArray()));
        }
        while (true) {
            try {
                return Client.connect(connect, options);
            } catch (ZkException e) {
                if (finish) {
                    log("not connected before finish: " + e);
                    return null;
                }
                sleepNanos(TimeUnit.MILLISECONDS.toNanos(200));
            }
        }
    }

    /** `calm` and `finish` (or end of input) on standard input. */
    void steer() {
        daemon("torture-steering", () -> {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            try {
                String line;
                while ((line = in.readLine()) != null) {
                    line = line.trim();
                    if (line.equals("calm")) {
                        calm = true;
                    } else if (line.equals("finish")) {
                        break;
                    }
                }
            } catch (IOException e) {
                // as end of input
            }
            finish = true;
        });
    }

    long measureRtt() {
        long[] samples = new long[5];
        int n = 0;
        for (int i = 0; i < samples.length; i++) {
            long started = System.nanoTime();
            try {
                sharedQueue.size();
                samples[n++] = System.nanoTime() - started;
            } catch (ZkException e) {
                // a fault may be under way
            }
        }
        if (n == 0) {
            return 1_000_000;
        }
        Arrays.sort(samples, 0, n);
        return Math.max(50_000, samples[n / 2]);
    }

    String dir(String what) {
        return root + "/" + what;
    }

    void close(String what, AutoCloseable object) {
        if (object == null) {
            return;
        }
        try {
            watched("close() of the " + what, 0, () -> {
                object.close();
                return null;
            });
        } catch (ZkException e) {
            error("close." + what.replace(' ', '_'), e);
        } catch (Exception e) {
            unexpected("close() of the " + what, e);
        }
    }

    // ---------------------------------------------------------------- client states

    /**
     * The client's states as the driver's queue check needs them (`CLIENT <w> <state>`, when they
     * happen), polled: the connection-state listener runs on the client's one listener thread,
     * behind whatever a lock or election listener is blocked in.
     */
    void followClient(Link link) {
        String last = "CONNECTED";
        long sessionId = 0;
        long lostReported = 0;
        while (!closing) {
            String state;
            long id = 0;
            try {
                state = client.getState().name();
                id = client.getSessionId();
            } catch (ZkException e) {
                state = null;
            }
            if (state == null || state.equals("CLOSED")) {
                sleepNanos(TimeUnit.MILLISECONDS.toNanos(3));
                continue;
            }
            if (sessionId == 0) {
                sessionId = id;
            }
            // A LOST shorter than the poll shows as a new session.
            boolean newSession = id != 0 && id != sessionId;
            if ((state.equals("LOST") || newSession) && lostReported != sessionId) {
                sessionsLost.incrementAndGet();
                link.ask("CLIENT " + name + " LOST");
                bump("event.java.client.LOST(polled)");
                lostReported = sessionId;
                last = "LOST";
            }
            if (newSession) {
                sessionId = id;
            }
            if (!state.equals(last) && !state.equals("LOST")) {
                if (state.equals("SUSPENDED")) {
                    clientSuspendedAt = System.nanoTime();
                }
                link.ask("CLIENT " + name + " " + state);
                last = state;
            }
            sleepNanos(TimeUnit.MILLISECONDS.toNanos(3));
        }
        link.close();
    }

    /** When the poll last saw the client turn SUSPENDED (System.nanoTime), 0 before. */
    volatile long clientSuspendedAt;

    /**
     * A recipe's SUSPENDED reached its listener: how long after the client itself was seen
     * suspended. Late means the listener thread was busy (a listener blocked in a library call
     * while the connection is down holds back every other recipe's SUSPENDED); logged, counted.
     */
    void suspendedReached(String object) {
        long at = clientSuspendedAt;
        if (at == 0) {
            return;
        }
        long ms = (System.nanoTime() - at) / 1_000_000;
        // Past 10 s the poll missed a short disconnection: nothing to match.
        if (ms > 500 && ms < 10_000) {
            bump("java.listener.suspended_late");
            log("SUSPENDED reached the " + object + " listener " + ms + " ms after the client was seen SUSPENDED");
        }
    }

    /** The connection-state listener: counts, and calls back into the client. */
    void onClientState(ConnectionState state) {
        bump("event.java.client." + state);
        if (state == ConnectionState.CLOSED || closing) {
            return;
        }
        try {
            watched("Client.getState() in a connection-state listener", 0, () -> client.getState());
            watched("Client.getSessionId() in a connection-state listener", 0, () -> client.getSessionId());
        } catch (ZkException e) {
            error("listener.client", e);
        } catch (Exception e) {
            unexpected("a call in the connection-state listener", e);
        }
    }

    // ---------------------------------------------------------------- exclusive lock

    enum LockOp {
        LOCK("lock", 12),
        TRY_LOCK("tryLock", 10),
        TRY_LOCK_TIMED("tryLock_t", 22),
        INTERRUPTIBLE("lockInterruptibly_interrupted", 12),
        ASYNC_CANCEL("lockAsync_cancel", 12),
        ASYNC_TIMEOUT("lockAsync_orTimeout", 10),
        ASYNC_STAGE("lockAsync_stage", 8),
        REENTER("reenter", 8);

        final String key;
        final int weight;

        LockOp(String key, int weight) {
            this.key = key;
            this.weight = weight;
        }
    }

    /** A hold of the current thread. */
    static final class Hold {
        final ZkLock lock;
        final int count;
        final long token;
        /** The epoch before the acquire began: any SUSPENDED/LOST since ends the writing. */
        final long epoch;

        Hold(ZkLock lock, int count, long token, long epoch) {
            this.lock = lock;
            this.count = count;
            this.token = token;
            this.epoch = epoch;
        }
    }

    /** `tryLock(t, unit)` bounds. */
    record Bound(long amount, TimeUnit unit, String text) {
        long nanos() {
            return unit.toNanos(amount);
        }
    }

    static final Bound[] BOUNDS = {
        new Bound(0, TimeUnit.MILLISECONDS, "0"),
        new Bound(1, TimeUnit.MICROSECONDS, "1us"),
        new Bound(100, TimeUnit.MICROSECONDS, "100us"),
        new Bound(1, TimeUnit.MILLISECONDS, "1ms"),
        new Bound(5, TimeUnit.MILLISECONDS, "5ms"),
        new Bound(50, TimeUnit.MILLISECONDS, "50ms"),
    };

    void lockTask(int task, long seed, Link listenerLink) {
        SplittableRandom rng = new SplittableRandom(seed);
        Link link = new Link(resource);
        WriteLock mine;
        try {
            mine = new WriteLock(client, dir("lock"));
        } catch (ZkException e) {
            violation("new WriteLock failed: " + e);
            return;
        }
        privates.add(mine);
        mine.addListener(new Watcher(mine, "private-lock", listenerLink));
        while (!finish) {
            ZkLock lock = rng.nextInt(10) < 6 ? shared : mine;
            LockOp op = pick(rng, LockOp.values(), o -> o.weight);
            bump("op.java.lock." + op.key);
            Hold hold = null;
            try {
                hold = attempt(link, rng, lock, op);
                if (hold != null) {
                    critical(link, hold, rng);
                }
            } catch (RuntimeException e) {
                unexpected("lock " + op.key, e);
            } finally {
                if (hold != null) {
                    release(hold, rng);
                }
            }
            breathe(rng);
            // Some air between holds, so that bounded acquires get a chance too.
            sleepNanos(TimeUnit.MILLISECONDS.toNanos(rng.nextInt(15)));
        }
        expectNoHoldOfThread(shared, "the shared lock");
        expectNoHoldOfThread(mine, "its private lock");
        link.close();
    }

    Hold attempt(Link link, SplittableRandom rng, ZkLock lock, LockOp op) {
        long epoch0 = epoch.get();
        switch (op) {
            case LOCK -> {
                link.ask("WAITING " + name);
                Boolean got;
                try {
                    got = acquired("lock", false, () -> {
                        lock.lock();
                        return true;
                    });
                } finally {
                    link.ask("WAITED " + name);
                }
                return held(lock, "lock", got, -1, epoch0);
            }
            case TRY_LOCK -> {
                Boolean got = acquired("tryLock", true, () -> watched("tryLock()", 0, lock::tryLock));
                return held(lock, "tryLock", got, -1, epoch0);
            }
            case TRY_LOCK_TIMED -> {
                Bound t = BOUNDS[rng.nextInt(BOUNDS.length)];
                String what = "tryLock_" + t.text();
                Boolean got = acquired(what, true,
                    () -> watched("tryLock(" + t.text() + ")", t.nanos(), () -> lock.tryLock(t.amount(), t.unit())));
                return held(lock, what, got, -1, epoch0);
            }
            case INTERRUPTIBLE -> {
                long delay = cancelAfter(rng);
                Boolean got;
                try (Interrupter ignored = new Interrupter(delay)) {
                    got = watched("lockInterruptibly() interrupted after " + delay / 1000 + " us", delay, () -> {
                        lock.lockInterruptibly();
                        return true;
                    });
                } catch (InterruptedException e) {
                    bump("java.lock.lockInterruptibly.interrupted");
                    return null;
                } catch (ZkException e) {
                    error("lock.lockInterruptibly", e);
                    return null;
                } catch (Exception e) {
                    unexpected("lockInterruptibly()", e);
                    return null;
                }
                return held(lock, "lockInterruptibly", got, -1, epoch0);
            }
            case ASYNC_CANCEL -> {
                CompletableFuture<Long> f = lock.lockAsync();
                sleepNanos(cancelAfter(rng));
                if (f.cancel(true)) {
                    bump("java.lock.lockAsync_cancel.cancelled");
                    return null;
                }
                return fromFuture(lock, "lockAsync_cancel", f, epoch0);
            }
            case ASYNC_TIMEOUT -> {
                long t = smallBound(rng);
                CompletableFuture<Long> f = lock.lockAsync().orTimeout(t, TimeUnit.NANOSECONDS);
                try {
                    watched("lockAsync().orTimeout(" + t / 1000 + " us).get()", t, f::get);
                } catch (Exception e) {
                    // judged below from the future itself
                }
                return fromFuture(lock, "lockAsync_orTimeout", f, epoch0);
            }
            case ASYNC_STAGE -> {
                link.ask("WAITING " + name);
                CompletableFuture<Long> f = lock.lockAsync();
                AtomicBoolean unlocked = new AtomicBoolean();
                Thread owner = Thread.currentThread();
                CompletableFuture<Long> stage = f.thenApply(token -> {
                    stage(lock, owner, unlocked);
                    return token;
                });
                try {
                    stage.get();
                } catch (Exception e) {
                    // the acquire's own outcome is judged below
                } finally {
                    link.ask("WAITED " + name);
                }
                Hold hold = fromFuture(lock, "lockAsync_stage", f, epoch0);
                if (hold != null && unlocked.get() && untoldLoss(epoch0)) {
                    violation("isLocked() answered false in a lockAsync() stage while the calling thread held the lock "
                        + "(token " + hold.token + ") and no SUSPENDED/LOST was told");
                }
                return hold;
            }
            case REENTER -> {
                return reenter(rng, lock, epoch0);
            }
        }
        return null;
    }

    /**
     * What a stage of lockAsync() does (on the callback pool, or on the owner's thread if the
     * future was complete when the stage was added): call back into the lock.
     */
    void stage(ZkLock lock, Thread owner, AtomicBoolean unlocked) {
        bump("java.stage.lock");
        try {
            if (!watched("isLocked() in a lockAsync() stage", 0, lock::isLocked)) {
                unlocked.set(true);
            }
            long token = watched("getFencingToken() in a lockAsync() stage", 0, lock::getFencingToken);
            if (token != -1 && Thread.currentThread() != owner) {
                violation("getFencingToken() on a callback-pool thread that holds nothing answered " + token);
            }
            watched("getParticipants() in a lockAsync() stage", 0, lock::getParticipants);
        } catch (ZkException e) {
            error("stage.lock", e);
        } catch (Exception e) {
            unexpected("a call in a lockAsync() stage", e);
        }
    }

    /**
     * Runs an acquire; true/false as answered, null if it threw (counted). From a bounded call
     * anything but SESSION_EXPIRED or CLOSED is a violation; so are an InterruptedException nobody
     * caused and any exception that is not a ZkException.
     */
    Boolean acquired(String what, boolean bounded, Call<Boolean> call) {
        try {
            return call.call();
        } catch (InterruptedException e) {
            violation(what + " threw InterruptedException though nobody interrupted the thread");
        } catch (ZkException e) {
            // A bounded acquire answers false when its time is up, whatever the connection does;
            // only a session lost (or the client closed) before that is an answer of its own.
            boolean answer = e.getCode() == ZkException.Code.SESSION_EXPIRED || e.getCode() == ZkException.Code.CLOSED;
            if (bounded && !answer) {
                violation(what + " threw " + e + " instead of answering false");
            } else {
                error("lock." + what, e);
            }
        } catch (Exception e) {
            unexpected(what, e);
        }
        return null;
    }

    /** The hold of the current thread after an acquire answered `got`. */
    Hold held(ZkLock lock, String what, Boolean got, long expected, long epoch0) {
        if (got == null) {
            return null;
        }
        if (!got) {
            bump("java.lock." + what + ".none");
            return null;
        }
        bump("java.lock." + what + ".got");
        long token = lock.getFencingToken();
        int count = lock.getHoldCount();
        // More holds than ours: the late grant of an abandoned acquire, being undone.
        if (token <= 0 || count < 1 || (expected > 0 && token != expected)) {
            if (untoldLoss(epoch0)) {
                violation(what + " answered true (token " + expected + ") but the thread's hold reads token " + token
                    + ", count " + count + " without any SUSPENDED/LOST");
            } else {
                bump("java.lock.lost_before_section");
            }
        }
        return new Hold(lock, 1, token, epoch0);
    }

    /** The hold from a lockAsync() future that is done, or was given up on (cancel, orTimeout). */
    Hold fromFuture(ZkLock lock, String what, CompletableFuture<Long> f, long epoch0) {
        if (!f.isDone()) {
            f.cancel(true);
        }
        try {
            long token = f.join();
            return held(lock, what, true, token, epoch0);
        } catch (CancellationException e) {
            bump("java.lock." + what + ".cancelled");
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof TimeoutException) {
                bump("java.lock." + what + ".timed_out");
            } else if (cause instanceof ZkException zk) {
                if (zk.getCode() == ZkException.Code.TIMEOUT) {
                    violation(what + " completed with " + zk);
                } else {
                    error("lock." + what, zk);
                }
            } else {
                unexpected(what, cause);
            }
        }
        return null;
    }

    /** Takes the lock, then again from the same thread: at once, the same token, two holds. */
    Hold reenter(SplittableRandom rng, ZkLock lock, long epoch0) {
        Boolean first = acquired("reenter.first", true, () -> watched("tryLock(50ms) (reenter)",
            TimeUnit.MILLISECONDS.toNanos(50), () -> lock.tryLock(50, TimeUnit.MILLISECONDS)));
        if (first == null || !first) {
            bump(first == null ? "java.lock.reenter.error" : "java.lock.reenter.none");
            return null;
        }
        long token = lock.getFencingToken();
        boolean blocking = rng.nextBoolean();
        String how = blocking ? "lock()" : "tryLock()";
        Boolean again = acquired("reenter.second", true, () -> watched(how + " by the holder (reentrant)", 0, () -> {
            if (blocking) {
                lock.lock();
                return true;
            }
            return lock.tryLock();
        }));
        int count = lock.getHoldCount();
        long now = lock.getFencingToken();
        if (again != null && again && count >= 2 && now == token && token > 0) {
            bump("java.lock.reenter.got");
            return new Hold(lock, 2, token, epoch0);
        }
        if (untoldLoss(epoch0)) {
            violation("reentrant " + how + " by the holder of token " + token + " answered " + again + ", hold count "
                + count + ", token " + now + ", without any SUSPENDED/LOST");
        } else {
            bump("java.lock.reenter.after_loss");
        }
        return new Hold(lock, again != null && again ? 2 : 1, token, epoch0);
    }

    /**
     * One to a few critical sections under `hold`, each reported as BEGIN … END. Writing stops
     * (ABORT, or no BEGIN) once a recipe said SUSPENDED or LOST since the acquire began, or the
     * thread no longer holds; a STALE answer ends the hold's writing too.
     */
    void critical(Link link, Hold hold, SplittableRandom rng) {
        int sections = rng.nextInt(8) == 0 ? 2 + rng.nextInt(3) : 1;
        for (int n = 0; n < sections; n++) {
            if (epoch.get() != hold.epoch || !hold.lock.isHeldByCurrentThread()) {
                bump("java.sections.given_up");
                return;
            }
            String answer = link.ask("BEGIN " + name + " " + hold.token);
            if (answer.equals("STALE")) {
                bump("java.sections.stale");
                return;
            }
            sleepNanos(TimeUnit.MICROSECONDS.toNanos(rng.nextInt(5000)));
            if (epoch.get() != hold.epoch || !hold.lock.isHeldByCurrentThread()) {
                link.ask("ABORT " + name + " " + hold.token);
                bump("java.sections.aborted");
                return;
            }
            link.ask("END " + name + " " + hold.token);
            bump("java.sections");
            if (n + 1 < sections) {
                sleepNanos(TimeUnit.MILLISECONDS.toNanos(rng.nextInt(40)));
            }
        }
    }

    /** Releases every hold count: unlock(), unlockAsync().get(), or (the last) unlockAsync() cancelled mid-way. */
    void release(Hold hold, SplittableRandom rng) {
        ZkLock lock = hold.lock;
        for (int i = 0; i < hold.count; i++) {
            int how = rng.nextInt(20);
            boolean last = i + 1 == hold.count;
            try {
                if (how >= 17 && last && !skip.contains("cancel-release")) {
                    bump("java.lock.release.unlockAsync_cancelled");
                    CompletableFuture<Void> f = lock.unlockAsync();
                    sleepNanos(cancelAfter(rng));
                    f.cancel(true);
                } else if (how >= 13) {
                    bump("java.lock.release.unlockAsync");
                    watched("unlockAsync().get()", 0, () -> lock.unlockAsync().get());
                } else {
                    bump("java.lock.release.unlock");
                    watched("unlock()", 0, () -> {
                        lock.unlock();
                        return null;
                    });
                }
            } catch (ExecutionException e) {
                releaseFailed(hold, e.getCause());
            } catch (Exception e) {
                releaseFailed(hold, e);
            }
        }
    }

    void releaseFailed(Hold hold, Throwable e) {
        if (e instanceof ZkException zk) {
            error("lock.unlock", zk);
            if (zk.getCode() != ZkException.Code.NOT_OWNER) {
                return;
            }
        } else if (!(e instanceof IllegalMonitorStateException)) {
            unexpected("unlock", e);
            return;
        } else {
            bump("err.java.lock.unlock.IllegalMonitorState");
        }
        if (untoldLoss(hold.epoch)) {
            violation("unlock() by the holder of token " + hold.token + " failed (" + e
                + ") without any SUSPENDED/LOST told");
        }
    }

    /** Whether nothing was told (SUSPENDED/LOST) since `epoch0`, after a while for the listener to pass it on. */
    boolean untoldLoss(long epoch0) {
        for (int i = 0; i < 120 && epoch.get() == epoch0; i++) {
            sleepNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        return epoch.get() == epoch0;
    }

    /** After a thread released everything, it must not hold a count of `lock` (a late undo gets 2 s). */
    void expectNoHoldOfThread(ZkLock lock, String object) {
        for (int i = 0; i < 20; i++) {
            if (lock.getHoldCount() == 0) {
                return;
            }
            sleepNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
        violation(Thread.currentThread().getName() + " still holds " + object + " (count " + lock.getHoldCount()
            + ", token " + lock.getFencingToken() + ") 2 s after releasing every hold");
    }

    /** After every thread ended, the object must not report a hold (isLocked). */
    void expectUnlocked(ZkLock lock, String object) {
        for (int i = 0; i < 20; i++) {
            if (!lock.isLocked()) {
                return;
            }
            sleepNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
        violation(object + " object still reports isLocked() 2 s after every thread released its holds");
    }

    /**
     * A lock object's listener: reports SUSPENDED / LOST / RECONNECTED at once (and stops the
     * writing), then calls back into the library from the listener thread on every event.
     */
    /** Set while the listener thread holds a lock it took itself (or failed to release it). */
    volatile boolean listenerMayHold;

    final class Watcher implements LockListener {
        final ZkLock lock;
        final String object;
        final Link link;

        Watcher(ZkLock lock, String object, Link link) {
            this.lock = lock;
            this.object = object;
            this.link = link;
        }

        @Override
        public void lockAcquired() {
            event("ACQUIRED", false);
        }

        @Override
        public void lockReleased() {
            event("RELEASED", false);
        }

        @Override
        public void lockSuspended() {
            epoch.incrementAndGet();
            link.ask("SUSPENDED " + name + " " + object);
            suspendedReached(object);
            event("SUSPENDED", true);
        }

        @Override
        public void lockReconnected() {
            link.ask("RECONNECTED " + name + " " + object);
            event("RECONNECTED", true);
        }

        @Override
        public void lockLost(ZkException cause) {
            epoch.incrementAndGet();
            link.ask("LOST " + name + " " + object);
            event("LOST", true);
        }

        void event(String what, boolean connectionEvent) {
            bump("event.java." + object + "." + what);
            if (closing) {
                return;
            }
            try {
                bump("java.listener.calls");
                boolean blocking = !skip.contains("java-blocking-listener");
                if (blocking) {
                    watched("getParticipants() in a lock listener (" + what + ")", 0, lock::getParticipants);
                }
                long token = watched("getFencingToken() in a lock listener", 0, lock::getFencingToken);
                if (token != -1 && !listenerMayHold) {
                    violation("getFencingToken() on the listener thread, which holds nothing, answered " + token);
                }
                watched("isLocked() in a lock listener", 0, lock::isLocked);
                if (connectionEvent && blocking) {
                    // After a connection event, try the lock from inside the listener (an acquire
                    // after ACQUIRED would feed itself forever).
                    bump("java.listener.tryLock");
                    Boolean got = acquired("listener.tryLock_1ms", true, () -> watched("tryLock(1ms) in a lock listener",
                        TimeUnit.MILLISECONDS.toNanos(1), () -> lock.tryLock(1, TimeUnit.MILLISECONDS)));
                    if (got != null && got) {
                        bump("java.listener.tryLock.got");
                        listenerMayHold = true;
                        watched("unlock() in a lock listener", 0, () -> {
                            lock.unlock();
                            return null;
                        });
                        listenerMayHold = false;
                    }
                }
            } catch (ZkException e) {
                error("listener." + what, e);
            } catch (Exception e) {
                if (!closing) {
                    unexpected("a call in a lock listener on " + what, e);
                }
            }
        }
    }

    // ---------------------------------------------------------------- queue

    enum QueueOp {
        POLL("poll", 15, true),
        POLL_TIMED("poll_t", 20, true),
        POLL_INTERRUPTED("poll_t_interrupted", 12, false),
        TAKE_INTERRUPTED("take_interrupted", 12, false),
        TAKE_ASYNC_CANCEL("takeAsync_cancel", 14, false),
        TAKE_ASYNC_TIMEOUT("takeAsync_orTimeout", 12, false),
        PEEK("peek", 5, true);

        final String key;
        final int weight;
        /** Allowed in the calm phase: nothing cancelled or interrupted (no give-back reorders the queue). */
        final boolean calm;

        QueueOp(String key, int weight, boolean calm) {
            this.key = key;
            this.weight = weight;
            this.calm = calm;
        }
    }

    static final QueueOp[] CALM_QUEUE_OPS = Arrays.stream(QueueOp.values()).filter(o -> o.calm && o != QueueOp.PEEK)
        .toArray(QueueOp[]::new);

    void consumeTask(int task, long seed) {
        SplittableRandom rng = new SplittableRandom(seed);
        Link link = new Link(resource);
        DistributedQueue mine;
        try {
            mine = new DistributedQueue(client, dir("queue"));
        } catch (ZkException e) {
            violation("new DistributedQueue failed: " + e);
            return;
        }
        queues.add(mine);
        String me = "c" + task;
        while (!finish) {
            // Task 0 uses the shared object only; the others mix in their own.
            DistributedQueue q = task == 0 || rng.nextBoolean() ? sharedQueue : mine;
            QueueOp op = pick(rng, calm ? CALM_QUEUE_OPS : QueueOp.values(), o -> o.weight);
            bump("op.java.queue." + op.key);
            if (op == QueueOp.PEEK) {
                peek(rng, q);
                breathe(rng);
                continue;
            }
            link.ask("TAKING " + name + " " + me);
            String outcome;
            try {
                outcome = take(rng, q, op);
            } catch (RuntimeException e) {
                unexpected("queue " + op.key, e);
                outcome = "error:INTERNAL";
            }
            if (outcome.startsWith("got:")) {
                String[] parts = outcome.split(":", 3);
                link.ask("GOT " + parts[2] + " " + name + " " + me + " " + parts[1]);
            } else {
                link.ask("TAKEN " + name + " " + me + " " + outcome);
            }
            breathe(rng);
        }
        link.close();
    }

    /** `got:<at_us>:<id>`, `none`, `cancelled`, or `error:<CODE>`. */
    String take(SplittableRandom rng, DistributedQueue q, QueueOp op) {
        switch (op) {
            case POLL -> {
                return taken("poll", () -> watched("poll()", 0, q::poll));
            }
            case POLL_TIMED -> {
                long t = timeout(rng);
                return taken("poll_t", () -> watched("poll(" + t / 1000 + " us)", t, () -> q.poll(t, TimeUnit.NANOSECONDS)));
            }
            case POLL_INTERRUPTED, TAKE_INTERRUPTED -> {
                long delay = cancelAfter(rng);
                long t = TimeUnit.MILLISECONDS.toNanos(20 + rng.nextInt(180));
                boolean poll = op == QueueOp.POLL_INTERRUPTED;
                String what = (poll ? "poll(" + t / 1_000_000 + " ms)" : "take()") + " interrupted after " + delay / 1000 + " us";
                try (Interrupter ignored = new Interrupter(delay)) {
                    return delivered(watched(what, poll ? Math.min(t, delay) : delay,
                        () -> poll ? q.poll(t, TimeUnit.NANOSECONDS) : q.take()));
                } catch (InterruptedException e) {
                    bump("java.queue." + op.key + ".interrupted");
                    return "cancelled";
                } catch (Exception e) {
                    return takeFailed(op.key, e, true);
                }
            }
            case TAKE_ASYNC_CANCEL -> {
                CompletableFuture<byte[]> f = q.takeAsync();
                sleepNanos(cancelAfter(rng));
                if (f.cancel(true)) {
                    bump("java.queue.takeAsync_cancel.cancelled");
                    return "cancelled";
                }
                return fromTakeFuture(op.key, f);
            }
            case TAKE_ASYNC_TIMEOUT -> {
                long t = smallBound(rng);
                CompletableFuture<byte[]> f = q.takeAsync().orTimeout(t, TimeUnit.NANOSECONDS);
                try {
                    watched("takeAsync().orTimeout(" + t / 1000 + " us).get()", t, f::get);
                } catch (Exception e) {
                    // judged from the future
                }
                return fromTakeFuture(op.key, f);
            }
            default -> {
                return "none";
            }
        }
    }

    String taken(String what, Call<byte[]> call) {
        try {
            return delivered(call.call());
        } catch (Exception e) {
            return takeFailed(what, e, true);
        }
    }

    String delivered(byte[] data) {
        if (data == null) {
            return "none";
        }
        Instant now = Instant.now();
        long atUs = now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
        return "got:" + atUs + ":" + new String(data, StandardCharsets.UTF_8);
    }

    String takeFailed(String what, Throwable e, boolean bounded) {
        if (e instanceof ZkException zk) {
            if (bounded && zk.getCode() == ZkException.Code.TIMEOUT) {
                violation("queue " + what + " threw " + zk + " instead of answering null");
            } else {
                error("queue." + what, zk);
            }
            return "error:" + zk.getCode();
        }
        if (e instanceof InterruptedException) {
            violation("queue " + what + " threw InterruptedException though nobody interrupted the thread");
            return "cancelled";
        }
        unexpected("queue " + what, e);
        return "error:INTERNAL";
    }

    String fromTakeFuture(String what, CompletableFuture<byte[]> f) {
        if (!f.isDone()) {
            f.cancel(true);
        }
        try {
            return delivered(f.join());
        } catch (CancellationException e) {
            bump("java.queue." + what + ".cancelled");
            return "cancelled";
        } catch (CompletionException e) {
            if (e.getCause() instanceof TimeoutException) {
                bump("java.queue." + what + ".timed_out");
                return "cancelled";
            }
            return takeFailed(what, e.getCause(), false);
        }
    }

    void peek(SplittableRandom rng, DistributedQueue q) {
        try {
            switch (rng.nextInt(3)) {
                case 0 -> watched("peek()", 0, q::peek);
                case 1 -> watched("size()", 0, q::size);
                default -> {
                    try {
                        watched("element()", 0, q::element);
                    } catch (NoSuchElementException e) {
                        bump("java.queue.element.empty");
                    }
                }
            }
        } catch (ZkException e) {
            error("queue.peek", e);
        } catch (Exception e) {
            unexpected("queue peek", e);
        }
    }

    /** Bursts of items: `OFFER` once acknowledged (with its sequence), `OFFERFAIL` when it failed. */
    void produceTask(long seed) {
        SplittableRandom rng = new SplittableRandom(seed);
        Link link = new Link(resource);
        DistributedQueue q;
        try {
            q = new DistributedQueue(client, dir("queue"));
        } catch (ZkException e) {
            violation("new DistributedQueue failed: " + e);
            return;
        }
        queues.add(q);
        long n = 0;
        while (!finish) {
            try {
                if (watched("size()", 0, q::size) > BACKLOG) {
                    sleepNanos(TimeUnit.MILLISECONDS.toNanos(100));
                    continue;
                }
            } catch (ZkException e) {
                error("queue.size", e);
            } catch (Exception e) {
                unexpected("queue size()", e);
            }
            long burst = calm ? rng.nextLong(5, 25) : rng.nextLong(1, 8);
            for (long b = 0; b < burst; b++) {
                n++;
                String id = name + "-" + n;
                bump("op.java.queue.offerAsync");
                CompletableFuture<String> offered = q.offerAsync(id.getBytes(StandardCharsets.UTF_8)).thenApply(path -> {
                    bump("java.stage.offer");
                    try {
                        watched("size() in an offerAsync() stage", 0, q::size);
                    } catch (ZkException e) {
                        error("stage.size", e);
                    } catch (Exception e) {
                        unexpected("size() in an offerAsync() stage", e);
                    }
                    return path;
                });
                try {
                    String path = watched("offerAsync().thenApply(size).get()", 0, offered::get);
                    int at = path.lastIndexOf("qn-");
                    long sequence;
                    try {
                        sequence = Long.parseLong(path.substring(at + 3));
                    } catch (RuntimeException e) {
                        violation("offerAsync completed with the path " + path);
                        continue;
                    }
                    link.ask("OFFER " + id + " " + sequence);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof ZkException zk) {
                        error("queue.offerAsync", zk);
                    } else {
                        unexpected("offerAsync", e.getCause());
                    }
                    link.ask("OFFERFAIL " + id);
                } catch (Exception e) {
                    unexpected("offerAsync", e);
                    link.ask("OFFERFAIL " + id);
                }
            }
            sleepNanos(TimeUnit.MILLISECONDS.toNanos(rng.nextLong(10, 80)));
        }
        link.close();
    }

    // ---------------------------------------------------------------- work queue

    /** Every consumer of the run uses this limit (the driver's checks count against it; see ops/work_queue.rs). */
    static final int MAX_DELIVERIES = 4;
    static final int WORK_BACKLOG = 60;
    final List<WorkQueue> workQueues = new CopyOnWriteArrayList<>();
    WorkQueue sharedWork;
    int sharedPrefetch;
    /** Sessions the client lost (as the state poll saw them): an ack that succeeds after one since its delivery is a violation. */
    final AtomicLong sessionsLost = new AtomicLong();

    enum WorkTake {
        TIMED("consume_t", 60, true),
        INTERRUPTED("consume_interrupted", 12, true),
        ASYNC_CANCEL("consumeAsync_cancel", 10, true),
        ASYNC_TIMEOUT("consumeAsync_orTimeout", 10, true),
        CLOSE("consume_closed", 8, false);

        final String key;
        final int weight;
        /** Allowed on the shared object (the others' consumes would fail with CLOSED). */
        final boolean shared;

        WorkTake(String key, int weight, boolean shared) {
            this.key = key;
            this.weight = weight;
            this.shared = shared;
        }
    }

    static final WorkTake[] SHARED_TAKES = Arrays.stream(WorkTake.values()).filter(t -> t.shared).toArray(WorkTake[]::new);

    enum WorkSettle {
        ACK("ack", 40), ACK_ASYNC("ackAsync", 15), NACK("nack", 10), CLOSE("close", 10), ACK_CANCELLED("ackAsync_cancel", 5),
        SLOW("slow_ack", 20);

        final String key;
        final int weight;

        WorkSettle(String key, int weight) {
            this.key = key;
            this.weight = weight;
        }
    }

    /** Mostly 1, sometimes up to 64 (as the Rust worker draws it). */
    static int prefetch(SplittableRandom rng) {
        return switch (rng.nextInt(8)) {
            case 0, 1, 2, 3 -> 1;
            case 4 -> rng.nextInt(2, 5);
            case 5 -> rng.nextInt(5, 17);
            default -> rng.nextInt(17, 65);
        };
    }

    WorkQueue openWork(int prefetch) {
        WorkQueue q = new WorkQueue(client, dir("work"), prefetch, MAX_DELIVERIES);
        workQueues.add(q);
        return q;
    }

    void workConsumeTask(int task, long seed) {
        SplittableRandom rng = new SplittableRandom(seed);
        Link link = new Link(resource);
        String me = "wc" + task;
        int privatePrefetch = prefetch(rng);
        WorkQueue mine;
        try {
            mine = openWork(privatePrefetch);
        } catch (ZkException e) {
            violation("new WorkQueue failed: " + e);
            return;
        }
        boolean toldCalm = false;
        while (!finish) {
            boolean quiet = calm;
            if (quiet && !toldCalm) {
                toldCalm = true;
                link.ask("WQOBJECT " + name + " " + (task == 0 ? "shared" : "private") + task + " "
                    + (task == 0 ? sharedPrefetch : privatePrefetch));
            }
            boolean useShared = task == 0 || (!quiet && rng.nextBoolean());
            WorkQueue q = useShared ? sharedWork : mine;
            WorkTake take = quiet ? WorkTake.TIMED : pick(rng, useShared ? SHARED_TAKES : WorkTake.values(), t -> t.weight);
            bump("op.java.work." + take.key);
            Delivery got = null;
            try {
                got = consume(rng, q, take);
            } catch (RuntimeException e) {
                unexpected("work queue " + take.key, e);
            }
            if (take == WorkTake.CLOSE) {
                privatePrefetch = prefetch(rng);
                try {
                    mine = openWork(privatePrefetch);
                } catch (ZkException e) {
                    violation("new WorkQueue failed: " + e);
                }
            }
            if (got != null) {
                settleJob(rng, link, me, got, quiet);
            }
            breathe(rng);
        }
        link.close();
    }

    /** One consume as drawn; null when none came (or it was given up). */
    Delivery consume(SplittableRandom rng, WorkQueue q, WorkTake take) {
        try {
            switch (take) {
                case TIMED -> {
                    long t = timeout(rng);
                    return watched("consume(" + t / 1000 + " us)", t, () -> q.consume(t, TimeUnit.NANOSECONDS));
                }
                case INTERRUPTED -> {
                    long delay = cancelAfter(rng);
                    try (Interrupter ignored = new Interrupter(delay)) {
                        return watched("consume() interrupted after " + delay / 1000 + " us", delay, () -> q.consume());
                    } catch (InterruptedException e) {
                        bump("java.work.consume.interrupted");
                        return null;
                    }
                }
                case ASYNC_CANCEL -> {
                    CompletableFuture<Delivery> f = q.consumeAsync();
                    sleepNanos(cancelAfter(rng));
                    if (f.cancel(true)) {
                        bump("java.work.consumeAsync.cancelled");
                        return null;
                    }
                    return fromConsumeFuture(f);
                }
                case ASYNC_TIMEOUT -> {
                    long t = smallBound(rng);
                    CompletableFuture<Delivery> f = q.consumeAsync().orTimeout(t, TimeUnit.NANOSECONDS);
                    try {
                        watched("consumeAsync().orTimeout(" + t / 1000 + " us).get()", t, f::get);
                    } catch (Exception e) {
                        // judged from the future
                    }
                    return fromConsumeFuture(f);
                }
                default -> {
                    // consume() on this thread while another closes the object: CLOSED, or a job it got first.
                    ScheduledFuture<?> closer = timer.schedule(() -> close("work queue mid-consume", q), cancelAfter(rng), TimeUnit.NANOSECONDS);
                    try {
                        return watched("consume() while close() runs", 0, () -> q.consume());
                    } catch (ZkException e) {
                        if (e.getCode() == ZkException.Code.CLOSED) {
                            bump("java.work.close_interrupted");
                            return null;
                        }
                        throw e;
                    } finally {
                        watched("close() mid-consume", 0, () -> {
                            try {
                                closer.get();
                            } catch (CancellationException e) {
                                // not reached
                            }
                            return null;
                        });
                    }
                }
            }
        } catch (ZkException e) {
            if (take == WorkTake.TIMED && e.getCode() == ZkException.Code.TIMEOUT) {
                violation("work queue consume(t) threw " + e + " instead of answering null");
            } else {
                error("work.consume", e);
            }
        } catch (InterruptedException e) {
            violation("work queue " + take.key + " threw InterruptedException though nobody interrupted the thread");
        } catch (Exception e) {
            unexpected("work queue " + take.key, e);
        }
        return null;
    }

    Delivery fromConsumeFuture(CompletableFuture<Delivery> f) {
        if (!f.isDone()) {
            f.cancel(true);
        }
        try {
            return f.join();
        } catch (CancellationException e) {
            bump("java.work.consumeAsync.cancelled");
        } catch (CompletionException e) {
            if (e.getCause() instanceof TimeoutException) {
                bump("java.work.consumeAsync.timed_out");
            } else if (e.getCause() instanceof ZkException zk) {
                error("work.consumeAsync", zk);
            } else {
                unexpected("consumeAsync", e.getCause());
            }
        }
        return null;
    }

    /** Reports the delivery, then settles it as drawn (poison always by nack). */
    void settleJob(SplittableRandom rng, Link link, String me, Delivery d, boolean quiet) {
        String id = new String(d.getData(), StandardCharsets.UTF_8);
        int count = d.getDeliveryCount();
        if (count < 1 || count > MAX_DELIVERIES) {
            violation(id + " delivered with getDeliveryCount() " + count + " (maxDeliveries " + MAX_DELIVERIES + ")");
        }
        long lostBefore = sessionsLost.get();
        Instant now = Instant.now();
        link.ask("WQGOT " + id + " " + name + " " + me + " " + count + " " + (now.getEpochSecond() * 1_000_000 + now.getNano() / 1000));
        WorkSettle how = id.endsWith("p") ? WorkSettle.NACK : quiet ? WorkSettle.ACK : pick(rng, WorkSettle.values(), s -> s.weight);
        bump("op.java.work." + how.key);
        String report = "WQSETTLE " + id + " " + name + " " + count + " ";
        try {
            switch (how) {
                case NACK -> {
                    watched("nack()", 0, () -> {
                        d.nack();
                        return null;
                    });
                    link.ask(report + "nack");
                }
                case CLOSE -> {
                    // close() of an unsettled delivery gives it back, as nack() does.
                    watched("close() of a delivery", 0, () -> {
                        d.close();
                        return null;
                    });
                    link.ask(report + "nack");
                }
                case ACK_CANCELLED -> {
                    link.ask(report + "acking");
                    CompletableFuture<Void> f = d.ackAsync();
                    sleepNanos(cancelAfter(rng));
                    if (f.cancel(true)) {
                        link.ask(report + "ackcancelled");
                    } else {
                        try {
                            f.join();
                            link.ask(report + "acked");
                        } catch (CompletionException e) {
                            link.ask(report + "ackfail:" + (e.getCause() instanceof ZkException zk ? zk.getCode() : "INTERNAL"));
                        }
                    }
                }
                default -> {
                    if (how == WorkSettle.SLOW) {
                        sleepNanos(TimeUnit.MILLISECONDS.toNanos(rng.nextInt(20, 900)));
                    }
                    link.ask(report + "acking");
                    // Judged by a loss seen before the ack left: a session that expires while the
                    // ack is in flight (a pause right after its reply) may have taken it first.
                    long lostAtAck = sessionsLost.get();
                    try {
                        watched(how == WorkSettle.ACK_ASYNC ? "ackAsync().get()" : "ack()", 0, () -> {
                            if (how == WorkSettle.ACK_ASYNC) {
                                try {
                                    d.ackAsync().get();
                                } catch (ExecutionException e) {
                                    throw e.getCause() instanceof ZkException zk ? zk : e;
                                }
                            } else {
                                d.ack();
                            }
                            return null;
                        });
                        if (lostAtAck != lostBefore) {
                            violation(id + ": ack succeeded although the session that claimed it was lost before it was sent");
                        }
                        link.ask(report + "acked");
                    } catch (ZkException e) {
                        error("work.ack", e);
                        link.ask(report + "ackfail:" + e.getCode());
                    }
                }
            }
        } catch (ZkException e) {
            error("work.nack", e);
            link.ask(report + "nackfail:" + e.getCode());
        } catch (Exception e) {
            unexpected("settling a delivery (" + how.key + ")", e);
            link.ask(report + "nackfail:INTERNAL");
        } finally {
            d.close();
        }
    }

    /** Jobs one at a time and in batches (`offerAll`), some poison: `WQOFFER id name` once acknowledged. */
    void workProduceTask(long seed) {
        SplittableRandom rng = new SplittableRandom(seed);
        Link link = new Link(resource);
        WorkQueue q;
        try {
            q = openWork(1);
        } catch (ZkException e) {
            violation("new WorkQueue failed: " + e);
            return;
        }
        long n = 0;
        int[] priorities = {50, 100, 100, 100, 150};
        while (!finish) {
            try {
                if (watched("work size()", 0, q::size) > WORK_BACKLOG) {
                    sleepNanos(TimeUnit.MILLISECONDS.toNanos(100));
                    continue;
                }
            } catch (ZkException e) {
                error("work.size", e);
            } catch (Exception e) {
                unexpected("work size()", e);
            }
            boolean quiet = calm;
            int batch = rng.nextInt(3) == 0 ? rng.nextInt(2, 12) : 1;
            int priority = priorities[rng.nextInt(priorities.length)];
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < batch; i++) {
                n++;
                ids.add(name + "-j" + n + (!quiet && rng.nextInt(15) == 0 ? "p" : ""));
            }
            try {
                List<String> paths;
                if (batch == 1) {
                    bump("op.java.work.offer");
                    paths = List.of(watched("work offer()", 0, () -> q.offer(ids.get(0).getBytes(StandardCharsets.UTF_8), priority)));
                } else {
                    bump("op.java.work.offerAll");
                    List<byte[]> items = ids.stream().map(s -> s.getBytes(StandardCharsets.UTF_8)).toList();
                    paths = watched("work offerAll()", 0, () -> q.offerAll(items, priority));
                }
                if (paths.size() != ids.size()) {
                    violation("offerAll of " + ids.size() + " jobs returned " + paths.size() + " paths");
                    continue;
                }
                for (int i = 0; i < ids.size(); i++) {
                    String path = paths.get(i);
                    link.ask("WQOFFER " + ids.get(i) + " " + path.substring(path.lastIndexOf('/') + 1));
                }
            } catch (ZkException e) {
                error("work.offer", e);
                for (String id : ids) {
                    link.ask("WQOFFERFAIL " + id);
                }
            } catch (Exception e) {
                unexpected("work offer", e);
                for (String id : ids) {
                    link.ask("WQOFFERFAIL " + id);
                }
            }
            sleepNanos(TimeUnit.MILLISECONDS.toNanos(rng.nextLong(10, 80)));
        }
        link.close();
    }

    // ---------------------------------------------------------------- election

    /** Guards the election link; `LEADER on` is never reported while a stop is under way. */
    final Object report = new Object();
    boolean stopping;
    Link electLink;

    void electionTask(long seed) {
        SplittableRandom rng = new SplittableRandom(seed);
        electLink = new Link(resource);
        try {
            member = new LeaderElectionSupport(client, dir("election"), name);
        } catch (ZkException e) {
            violation("new LeaderElectionSupport failed: " + e);
            return;
        }
        member.addListener(this::onElection);
        boolean started = start();
        while (!finish) {
            int draw = rng.nextInt(20);
            try {
                if (draw == 0) {
                    if (started) {
                        stop();
                    }
                    started = start();
                } else if (draw <= 8) {
                    bump("op.java.election.awaitLeadership");
                    long t = rng.nextInt(30);
                    watched("awaitLeadership(" + t + " ms)", TimeUnit.MILLISECONDS.toNanos(t),
                        () -> member.awaitLeadership(t, TimeUnit.MILLISECONDS));
                } else if (draw <= 12) {
                    bump("op.java.election.getLeaderHostName");
                    watched("getLeaderHostName()", 0, member::getLeaderHostName);
                } else {
                    if (!started) {
                        started = start();
                    }
                    sleepNanos(TimeUnit.MILLISECONDS.toNanos(rng.nextLong(20, 150)));
                }
            } catch (ZkException e) {
                error("election", e);
            } catch (InterruptedException e) {
                violation("awaitLeadership threw InterruptedException though nobody interrupted the thread");
            } catch (Exception e) {
                unexpected("election", e);
            }
            breathe(rng);
        }
        stop();
    }

    boolean start() {
        bump("op.java.election.start");
        try {
            watched("election start()", 0, () -> {
                member.start();
                return null;
            });
        } catch (ZkException e) {
            error("election.start", e);
            return false;
        } catch (Exception e) {
            unexpected("election start()", e);
            return false;
        }
        synchronized (report) {
            electLink.ask("ELECT " + name + " start");
        }
        return true;
    }

    /** "off" is reported before the stop: once recorded, nobody may be elected because of us until we stopped. */
    void stop() {
        bump("op.java.election.stop");
        synchronized (report) {
            stopping = true;
            electLink.ask("LEADER " + name + " off");
            electLink.ask("ELECT " + name + " stop");
        }
        try {
            watched("election stop()", 0, () -> {
                member.stop();
                return null;
            });
        } catch (ZkException e) {
            error("election.stop", e);
        } catch (Exception e) {
            unexpected("election stop()", e);
        } finally {
            synchronized (report) {
                stopping = false;
            }
        }
    }

    /** The election listener (on the client's listener thread). */
    void onElection(LeaderElectionSupport.EventType event) {
        bump("event.java.election." + event);
        switch (event) {
            case ELECTED_COMPLETE, RECONNECTED -> {
                synchronized (report) {
                    if (!stopping && member.isLeader()) {
                        electLink.ask("LEADER " + name + " on");
                    }
                }
            }
            case SUSPENDED, FAILED, STOP_START -> {
                synchronized (report) {
                    electLink.ask("LEADER " + name + " off");
                    if (event == LeaderElectionSupport.EventType.SUSPENDED) {
                        electLink.ask("SUSPENDED " + name + " election");
                        suspendedReached("election");
                    }
                }
            }
            default -> {}
        }
        if (closing || skip.contains("java-blocking-listener") || (event != LeaderElectionSupport.EventType.ELECTED_COMPLETE
            && event != LeaderElectionSupport.EventType.READY_COMPLETE
            && event != LeaderElectionSupport.EventType.RECONNECTED)) {
            return;
        }
        try {
            bump("java.listener.getLeaderHostName");
            String leader = watched("getLeaderHostName() in the election listener (" + event + ")", 0,
                member::getLeaderHostName);
            if (event == LeaderElectionSupport.EventType.ELECTED_COMPLETE) {
                bump(name.equals(leader) ? "java.election.elected_names_self" : "java.election.elected_names_other");
            }
        } catch (ZkException e) {
            error("listener.getLeaderHostName", e);
        } catch (Exception e) {
            if (!closing) {
                unexpected("getLeaderHostName() in the election listener", e);
            }
        }
    }

    // ---------------------------------------------------------------- shared helpers

    interface Call<T> {
        T call() throws Exception;
    }

    interface Weight<T> {
        int of(T t);
    }

    static <T> T pick(SplittableRandom rng, T[] choices, Weight<T> weight) {
        int total = 0;
        for (T c : choices) {
            total += weight.of(c);
        }
        int at = rng.nextInt(total);
        for (T c : choices) {
            if (at < weight.of(c)) {
                return c;
            }
            at -= weight.of(c);
        }
        return choices[choices.length - 1];
    }

    /** A bound for a poll: zero, sub-millisecond, about one round trip, a few, or 50 ms. */
    long timeout(SplittableRandom rng) {
        return switch (rng.nextInt(8)) {
            case 0, 1, 2, 3, 4, 5 -> BOUNDS[rng.nextInt(BOUNDS.length)].nanos();
            case 6 -> rtt;
            default -> rtt * (2 + rng.nextInt(4));
        };
    }

    /** A small orTimeout: 1 µs to a few round trips. */
    long smallBound(SplittableRandom rng) {
        return switch (rng.nextInt(5)) {
            case 0 -> TimeUnit.MICROSECONDS.toNanos(1 + rng.nextInt(300));
            case 1 -> TimeUnit.MILLISECONDS.toNanos(1);
            case 2 -> TimeUnit.MILLISECONDS.toNanos(5);
            case 3 -> rtt * (1 + rng.nextInt(4));
            default -> TimeUnit.MILLISECONDS.toNanos(50);
        };
    }

    /** How long until a wait is interrupted or cancelled: short enough to catch every stage of a call. */
    long cancelAfter(SplittableRandom rng) {
        return switch (rng.nextInt(4)) {
            case 0 -> rng.nextLong(0, 300_000);
            case 1 -> rng.nextLong(300_000, 3_000_000);
            default -> (long) (rtt * rng.nextDouble() * 4);
        };
    }

    static void breathe(SplittableRandom rng) {
        sleepNanos(TimeUnit.MILLISECONDS.toNanos(1 + rng.nextInt(11)));
    }

    static void sleepNanos(long nanos) {
        if (nanos <= 0) {
            return;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            log("a stray interrupt in a sleep of " + Thread.currentThread().getName());
        }
    }

    static Thread daemon(String threadName, Runnable body) {
        Thread t = new Thread(body, threadName);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * Runs `call`; if it has not answered `budget` + 10 s later, reports HANG once (the call goes
     * on).
     */
    <T> T watched(String what, long budgetNanos, Call<T> call) throws Exception {
        long started = System.nanoTime();
        AtomicBoolean done = new AtomicBoolean();
        String thread = Thread.currentThread().getName();
        ScheduledFuture<?> watch = timer.schedule(() -> {
            if (!done.get()) {
                long ms = (System.nanoTime() - started) / 1_000_000;
                bump("java.hangs");
                log("HANG: " + what + " on " + thread + " has not answered after " + ms + " ms");
                alarm("HANG " + name + " " + ms + " " + what);
            }
        }, budgetNanos + HANG_NANOS, TimeUnit.NANOSECONDS);
        try {
            return call.call();
        } finally {
            done.set(true);
            watch.cancel(false);
            long ms = (System.nanoTime() - started) / 1_000_000;
            if (ms > 2000 + budgetNanos / 1_000_000) {
                // Not a HANG, but worth a look: a bounded call should answer near its bound.
                bump("java.slow_calls");
                log("slow: " + what + " on " + thread + " took " + ms + " ms");
            }
        }
    }

    /** An Interrupt of the current thread after `delay`, only while open; closing clears the flag. */
    final class Interrupter implements AutoCloseable {
        private final Thread target = Thread.currentThread();
        private final ScheduledFuture<?> shot;
        private boolean armed = true;

        Interrupter(long delayNanos) {
            shot = timer.schedule(this::fire, delayNanos, TimeUnit.NANOSECONDS);
        }

        private synchronized void fire() {
            if (armed) {
                target.interrupt();
            }
        }

        @Override
        public void close() {
            synchronized (this) {
                armed = false;
            }
            shot.cancel(false);
            Thread.interrupted();
        }
    }

    void bump(String key) {
        stats.computeIfAbsent(key, k -> new LongAdder()).increment();
    }

    String statsLine() {
        TreeMap<String, Long> sorted = new TreeMap<>();
        stats.forEach((k, v) -> sorted.put(k.replace(' ', '_').replace('=', '_'), v.sum()));
        return sorted.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(" "));
    }

    void error(String op, ZkException e) {
        bump("err.java." + op + "." + e.getCode());
    }

    void violation(String text) {
        bump("java.violations");
        String line = text.replace('\n', ' ');
        log("VIOLATION: " + line);
        alarm("VIOLATION " + name + " " + line);
    }

    /** An exception the API does not document for the call: a violation, with its stack in the log. */
    void unexpected(String what, Throwable e) {
        StringBuilder stack = new StringBuilder();
        for (StackTraceElement s : e.getStackTrace()) {
            stack.append("\n    at ").append(s);
        }
        log(what + " threw " + e + stack);
        violation(what + " threw " + e);
    }

    void alarm(String line) {
        Link link = alarms;
        if (link != null) {
            link.ask(line);
        }
    }

    static void log(String text) {
        System.err.println(Instant.now() + " " + Thread.currentThread().getName() + ": " + text);
    }

    /** A connection to the driver's resource: one request, one answer. */
    static final class Link implements Closeable {
        private final Socket socket;
        private final BufferedReader in;
        private final Writer out;
        private boolean closed;

        Link(String address) {
            int colon = address.lastIndexOf(':');
            Socket s = null;
            try {
                s = new Socket(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
                s.setTcpNoDelay(true);
                in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
                out = new BufferedWriter(new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw gone(e);
            }
            socket = s;
        }

        /** The answer; "" once closed (a listener's late event at exit is not reported). */
        synchronized String ask(String line) {
            if (closed) {
                return "";
            }
            try {
                out.write(line);
                out.write('\n');
                out.flush();
                String answer = in.readLine();
                if (answer == null) {
                    throw gone(new EOFException("end of stream"));
                }
                return answer.trim();
            } catch (IOException e) {
                throw gone(e);
            }
        }

        @Override
        public synchronized void close() {
            closed = true;
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    /** Without its driver a worker has no purpose. */
    static Error gone(Exception e) {
        System.err.println("zk-torture java worker: the driver's resource is gone (" + e + "); exiting");
        System.err.flush();
        Runtime.getRuntime().halt(3);
        return new Error(e);
    }
}
