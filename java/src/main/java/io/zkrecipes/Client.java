package io.zkrecipes;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * One ZooKeeper session shared by any number of recipes; after the session expires it opens a
 * new one by itself. {@link #close()} ends the session: held locks are released and election
 * offers withdrawn.
 *
 * <p>The library logs through {@link System.Logger}, one logger per recipe ({@code zkrecipes.lock},
 * {@code zkrecipes.session}, ...: see {@link #refreshLogLevels()}), and each client counts what
 * its recipes did ({@link #metrics()}).
 */
public final class Client extends NativeObject {
    static {
        Logs.refresh();
    }

    /**
     * The connection state listeners, run on the client's own listener thread (never a native
     * runtime thread, so a listener may call any blocking method). The sink knows the client only
     * weakly: an unreachable client with listeners is still cleaned.
     */
    private final EventSink<ConnectionStateListener> events;

    private Client(long handle) {
        super(handle, Native::clientFree);
        java.lang.ref.WeakReference<Client> self = new java.lang.ref.WeakReference<>(this);
        this.events = events("connection state", (l, name, token, reason) -> {
            Client client = self.get();
            if (client != null) {
                l.stateChanged(client, ConnectionState.valueOf(name));
            }
        });
    }

    /**
     * Takes the levels of the library's loggers from the logging configuration again. The library
     * asks each {@link System.Logger} ({@code zkrecipes.session}, {@code zkrecipes.request},
     * {@code zkrecipes.lock}, {@code zkrecipes.semaphore}, {@code zkrecipes.queue},
     * {@code zkrecipes.work_queue}, {@code zkrecipes.election}, {@code zkrecipes.latch},
     * {@code zkrecipes.barrier}, {@code zkrecipes.cache}, {@code zkrecipes.counter},
     * {@code zkrecipes.group}, {@code zkrecipes.discovery}, {@code zkrecipes.security}, {@code zkrecipes.zookeeper}) which levels
     * it logs when this class is loaded and whenever a client is created, and produces no event
     * below them: call this after changing a level while the program runs (a reloaded Logback or
     * Log4j configuration, {@code java.util.logging.Logger.setLevel}).
     */
    public static void refreshLogLevels() {
        Logs.refresh();
    }

    /**
     * Waits until every library event emitted so far has been handed to its logger (they are
     * logged on a thread of their own, "zkrecipes-log"): for a shutdown, or a test reading its
     * log. False if {@code timeout} passed first; ZkException(INVALID_ARGUMENT) for a timeout
     * that is not positive, or above a day.
     */
    public static boolean flushLogs(java.time.Duration timeout) {
        return Logs.flush(timeout);
    }

    /** Connects to {@code connectString} ("h1:2181,h2:2181/chroot"); CONNECTION_LOSS if nobody answers in time. */
    public static Client connect(String connectString, ClientOptions options) {
        CompletableFuture<Long> handle = Native.future();
        long task = start(connectString, options, handle);
        return new Client(Native.join(new Native.Op<>(handle, task)));
    }

    public static Client connect(String connectString) {
        return connect(connectString, new ClientOptions());
    }

    public static CompletableFuture<Client> connectAsync(String connectString, ClientOptions options) {
        CompletableFuture<Long> handle = Native.future();
        start(connectString, options, handle);
        return handle.thenApply(Client::new);
    }

    /** Exact for any Duration (toMillis overflows); the native side checks the range. */
    private static double seconds(java.time.Duration d) {
        return d.getSeconds() + d.getNano() / 1e9;
    }

    private static long start(String connectString, ClientOptions options, CompletableFuture<Long> handle) {
        Objects.requireNonNull(connectString, "connectString");
        Objects.requireNonNull(options, "options");
        Logs.refresh();
        TlsOptions tls = options.tls();
        Sasl sasl = options.sasl();
        AclPolicy acl = options.acl();
        byte[] password = sasl == null ? null : sasl.passwordBytes();
        try {
            return Native.clientConnect(connectString, seconds(options.sessionTimeout()),
                seconds(options.connectTimeout()), options.authScheme(), options.authCredentials(),
                options.identity(), tls == null ? null : tls.settings(), sasl == null ? null : sasl.settings(),
                password, acl == null ? null : acl.name(), acl == null ? null : acl.entries(), options.metricPaths(),
                Native.raw(handle));
        } finally {
            // The native side copied it; no copy of ours outlives the call.
            if (password != null) {
                java.util.Arrays.fill(password, (byte) 0);
            }
        }
    }

    /** Whether the session runs over TLS. */
    public boolean isTls() {
        return with(Native::clientIsTls);
    }

    /** The identities the server authenticated this session as, e.g. {@code [sasl:alice]}. */
    public java.util.List<String> authenticatedAs() {
        return lines(with(Native::clientAuthenticatedAs));
    }

    /**
     * Why there is no session after {@link ConnectionState#LOST}: the server's refusal of the last
     * attempt at a new one (a rotated password, an expired ticket or certificate); empty once an
     * attempt succeeds.
     */
    public java.util.Optional<ZkException> sessionError() {
        return java.util.Optional.ofNullable(with(Native::clientSessionError));
    }

    /** Asks the server for this session's identities now (after a certificate rotation, say). */
    public java.util.List<String> whoami() {
        CompletableFuture<String> who = Native.future();
        long task = with(handle -> Native.clientWhoami(handle, Native.raw(who)));
        return lines(Native.join(new Native.Op<>(who, task)));
    }

    private static java.util.List<String> lines(String text) {
        return text.isEmpty() ? java.util.List.of() : java.util.List.of(text.split("\n"));
    }

    public ConnectionState getState() {
        if (isClosed()) {
            return ConnectionState.CLOSED;
        }
        return ConnectionState.valueOf(with(Native::clientState));
    }

    public void addConnectionStateListener(ConnectionStateListener listener) {
        listen(events, listener, Native::clientSubscribe);
    }

    public void removeConnectionStateListener(ConnectionStateListener listener) {
        events.remove(listener);
    }

    /** The snapshot taken as the client closed: what {@link #metrics()} answers from then on. */
    private volatile MetricsSnapshot lastMetrics;

    /**
     * What this client has counted so far, now: every recipe's waits, holds and outcomes, the
     * requests sent and the connection state changes. Each call takes a new snapshot; once the
     * client is closed, its last one (for a last scrape), as in the other languages.
     */
    public MetricsSnapshot metrics() {
        MetricsSnapshot last = lastMetrics;
        if (last != null) {
            return last;
        }
        try {
            return new MetricsSnapshot(with(Native::clientMetrics));
        } catch (ZkException closing) {
            // Closed meanwhile: its last snapshot was taken before its native side was freed.
            if (closing.code() == ZkException.Code.CLOSED && lastMetrics != null) {
                return lastMetrics;
            }
            throw closing;
        }
    }

    public long getSessionId() {
        return with(Native::clientSessionId);
    }

    /** The data written into this client's lock and election nodes. */
    public String getIdentity() {
        return with(Native::clientIdentity);
    }

    /** {@link Cache#node}: a cache of the node at {@code path}. */
    public Cache nodeCache(String path) {
        return Cache.node(this, path);
    }

    /** {@link Cache#children}: a cache of the children of {@code path}. */
    public Cache childrenCache(String path) {
        return Cache.children(this, path);
    }

    /** {@link Cache#tree(Client, String)}: a cache of the whole subtree at {@code path}. */
    public Cache treeCache(String path) {
        return Cache.tree(this, path);
    }

    /** {@link Cache#tree(Client, String, int)}: a cache of the subtree at {@code path}, {@code maxDepth} deep. */
    public Cache treeCache(String path, int maxDepth) {
        return Cache.tree(this, path, maxDepth);
    }

    /** A {@link PersistentNode} at {@code path}. */
    public PersistentNode persistentNode(String path, NodeMode mode, byte[] data) {
        return new PersistentNode(this, path, mode, data);
    }

    /** A {@link GroupMember} {@code id} of the group at {@code groupPath}. */
    public GroupMember groupMember(String groupPath, String id, byte[] payload) {
        return new GroupMember(this, groupPath, id, payload);
    }

    /** A {@link ServiceDiscovery} registry under {@code basePath} (Curator's, e.g. {@code /services}). */
    public ServiceDiscovery serviceDiscovery(String basePath) {
        return new ServiceDiscovery(this, basePath);
    }

    /** Runs {@code call} with the native client handle (for the recipes' constructors). */
    <T> T withHandle(java.util.function.LongFunction<T> call) {
        return with(call);
    }

    /** Ends the session and frees the native client. Closing twice is harmless. */
    @Override
    public void close() {
        if (isClosed()) {
            return;
        }
        CompletableFuture<Object> done = new CompletableFuture<>();
        long task = with(h -> Native.clientClose(h, done));
        Native.join(new Native.Op<>(done, task));
        // CLOSED reaches the listeners before the subscription ends.
        events.cancel(true);
        lastMetrics = new MetricsSnapshot(with(Native::clientMetrics));
        super.close();
    }

    @Override
    public String toString() {
        return "Client[" + getState() + "]";
    }
}
