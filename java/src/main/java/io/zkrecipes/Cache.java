package io.zkrecipes;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A local copy of a node ({@link #node}: Curator's {@code NodeCache}), of a node's children
 * ({@link #children}: {@code PathChildrenCache}) or of a subtree ({@link #tree}:
 * {@code TreeCache}), kept in sync on {@code CuratorCache}'s mechanism: one persistent recursive
 * watch (ZooKeeper 3.6+; one-shot watches on older servers) added before the first read, so no
 * change falls between the two.
 *
 * <p>After every reconnect and every new session the subtree is read again and exactly the
 * difference is told ({@code SUSPENDED}, then the changes, then {@code RECONNECTED}; {@code LOST}
 * first after an expiry): a node deleted and created again meanwhile is a {@code DELETED} and a
 * {@code CREATED}. A node is shown only from a read that found it; nothing is told twice; a
 * change undone between two reads is not seen (changes are coalesced, as in every ZooKeeper
 * cache). Nothing is created: a missing root is an empty cache until it appears. A children
 * cache never shows its parent.
 *
 * <pre>{@code
 * try (Cache cache = client.childrenCache("/services/web")) {
 *     cache.addListener((type, oldData, data) -> System.out.println(type + " " + (data != null ? data : oldData)));
 *     cache.start();
 *     for (ChildData instance : cache.snapshot()) { ... }
 * }
 * }</pre>
 */
public final class Cache extends NativeObject {
    /** What a cache covers below its path. */
    public enum Scope {
        /** The node itself. */
        NODE,
        /** The node's children (with their data), not the node. */
        CHILDREN,
        /** The node and its descendants, down to a depth. */
        TREE
    }

    private final String path;
    private final Scope scope;
    private final EventSink<CacheListener> events =
        dataEvents("cache", (l, name, nodes) -> l.onEvent(CacheEvent.of(name, nodes)));

    /** {@code maxDepth} null: the whole subtree (a tree's; ignored for the others). */
    private Cache(Client client, String path, Scope scope, Integer maxDepth) {
        super(Objects.requireNonNull(client, "client").withHandle(
            h -> Native.cacheNew(h, Objects.requireNonNull(path, "path"), scope.ordinal(),
                maxDepth != null, maxDepth == null ? 0 : maxDepth)), Native::cacheFree);
        this.path = path;
        this.scope = scope;
    }

    /** A cache of the node at {@code path}. INVALID_PATH at once; nothing is sent before {@link #start()}. */
    public static Cache node(Client client, String path) {
        return new Cache(client, path, Scope.NODE, null);
    }

    /** A cache of the children of {@code path} (with their data). */
    public static Cache children(Client client, String path) {
        return new Cache(client, path, Scope.CHILDREN, null);
    }

    /** A cache of the whole subtree at {@code path}. */
    public static Cache tree(Client client, String path) {
        return new Cache(client, path, Scope.TREE, null);
    }

    /**
     * A cache of the subtree at {@code path}, {@code maxDepth} levels below it (0: the node only;
     * below 0: INVALID_ARGUMENT).
     */
    public static Cache tree(Client client, String path, int maxDepth) {
        return new Cache(client, path, Scope.TREE, maxDepth);
    }

    public String getPath() {
        return path;
    }

    public Scope getScope() {
        return scope;
    }

    /**
     * Every event from now on, in the order the cache saw them, none dropped. Added before
     * {@link #start()}, a listener sees every node arrive, then {@code INITIALIZED}.
     */
    public void addListener(CacheListener listener) {
        listen(events, listener, Native::cacheSubscribe);
    }

    public void removeListener(CacheListener listener) {
        events.remove(listener);
    }

    /**
     * Starts following and returns once the first load is in the cache. Starting again only
     * waits for that load. An interrupt throws {@link InterruptedException} and leaves the cache
     * going (loading, then following); {@link #close()} stops it. CLOSED once closed; the server's
     * error (NO_AUTH) if the root cannot be read, after which the cache stops.
     */
    public void start() throws InterruptedException {
        Native.joinInterruptibly(startOp());
    }

    /** As {@link #start()}; cancelling the future ends the wait only. */
    public CompletableFuture<Void> startAsync() {
        return startOp().future();
    }

    private Native.Op<Void> startOp() {
        return begin(Native::cacheStart);
    }

    /** Whether the first load is in the cache. */
    public boolean isInitialized() {
        return !isClosed() && with(Native::cacheIsInitialized);
    }

    /** The cached node at {@code path} (empty if not cached, or outside the cache's scope). */
    public Optional<ChildData> get(String path) {
        byte[] packed = with(h -> Native.cacheGet(h, Objects.requireNonNull(path, "path")));
        return packed == null ? Optional.empty() : Optional.of(ChildData.list(packed).get(0));
    }

    /** Every cached node, sorted by path (empty once closed). */
    public List<ChildData> snapshot() {
        return ChildData.list(with(Native::cacheSnapshot));
    }

    /** The names of the cached children of {@code path}, sorted. */
    public List<String> getChildren(String path) {
        return Arrays.asList(with(h -> Native.cacheChildren(h, Objects.requireNonNull(path, "path"))));
    }

    /** How many nodes are cached (and shown: a children cache does not count its parent). */
    public int size() {
        return with(Native::cacheSize);
    }

    /**
     * Stops following and frees the copy; the events already seen still reach the listeners
     * before this returns (unless called from a listener). A {@link #start()} waiting on another
     * thread throws CLOSED. Closing twice is harmless.
     */
    @Override
    public void close() {
        closeAfter(() -> use(Native::cacheClose), events);
    }

    @Override
    public String toString() {
        return describe(scope + " " + path);
    }
}
