package io.zkrecipes;

import static io.zkrecipes.Zk.code;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The caches from Java, against a real ZooKeeper; the nodes are written by PersistentNodes of another client. */
class CacheIT {
    /** Records every event; {@link #next} waits for one with a deadline. */
    static final class Heard extends Zk.Recorder<CacheEvent> implements CacheListener {
        Heard() {
            super("cache event");
        }

        @Override public void event(CacheEvent.Type type, ChildData oldData, ChildData data) {}
        @Override public void onEvent(CacheEvent event) {
            record(event);
        }

        /** The next event, which must be {@code type} of {@code path}. */
        CacheEvent next(CacheEvent.Type type, String path) throws InterruptedException {
            CacheEvent event = next();
            ChildData node = event.data() != null ? event.data() : event.oldData();
            assertEquals(type + " " + path, event.type() + " " + (node == null ? null : node.getPath()));
            return event;
        }
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static String text(ChildData node) {
        return new String(node.getData(), StandardCharsets.UTF_8);
    }

    @Test
    void aTreeCacheTellsEveryChangeInOrderAndHoldsTheCopy() throws Exception {
        String root = Zk.path("cache-tree");
        try (Client a = Zk.client(); Client b = Zk.client(); Cache cache = a.treeCache(root)) {
            Heard heard = new Heard();
            cache.addListener(heard);
            assertFalse(cache.isInitialized());
            cache.start();
            cache.start(); // again: only waits for the first load
            assertEquals(CacheEvent.Type.INITIALIZED, heard.next().type(), "a missing root is an empty cache");
            assertTrue(cache.isInitialized());
            assertEquals(0, cache.size());
            assertEquals(java.util.Optional.empty(), cache.get(root));
            try (PersistentNode top = b.persistentNode(root, NodeMode.PERSISTENT, bytes("top"));
                 PersistentNode child = b.persistentNode(root + "/x", NodeMode.PERSISTENT, bytes("1"))) {
                top.start();
                CacheEvent created = heard.next(CacheEvent.Type.CREATED, root);
                assertNull(created.oldData());
                assertEquals("top", text(created.data()));
                child.start();
                ChildData first = heard.next(CacheEvent.Type.CREATED, root + "/x").data();
                assertEquals("1", text(first));
                assertEquals(0, first.getStat().getVersion());
                assertEquals(0L, first.getStat().getEphemeralOwner());
                assertEquals(1, first.getStat().getDataLength());
                child.setData(bytes("22"));
                CacheEvent changed = heard.next(CacheEvent.Type.CHANGED, root + "/x");
                assertEquals(first, changed.oldData());
                assertEquals("22", text(changed.data()));
                assertEquals(1, changed.data().getStat().version());
                assertEquals(first.getStat().czxid(), changed.data().getStat().czxid());
                assertTrue(changed.data().getStat().mzxid() > first.getStat().mzxid());
                assertEquals(changed.data(), cache.get(root + "/x").orElseThrow());
                assertEquals(List.of("x"), cache.getChildren(root));
                assertEquals(List.of(root, root + "/x"), cache.snapshot().stream().map(ChildData::getPath).toList());
                assertEquals(2, cache.size());
                child.close();
                CacheEvent deleted = heard.next(CacheEvent.Type.DELETED, root + "/x");
                assertEquals("22", text(deleted.oldData()));
                assertNull(deleted.data());
                assertEquals(List.of(), cache.getChildren(root));
            }
            heard.next(CacheEvent.Type.DELETED, root);
            assertEquals(0, cache.size());
            assertNull(heard.poll(), "nothing told twice");
        }
    }

    @Test
    void eachScopeShowsOnlyItsNodes() throws Exception {
        String root = Zk.path("cache-scopes");
        try (Client a = Zk.client();
             PersistentNode top = a.persistentNode(root, NodeMode.PERSISTENT, bytes("top"));
             PersistentNode child = a.persistentNode(root + "/a", NodeMode.PERSISTENT, bytes("a"));
             // Closed first: a node with children cannot be deleted (NOT_EMPTY).
             PersistentNode deep = a.persistentNode(root + "/a/b", NodeMode.PERSISTENT, bytes("b"))) {
            deep.start(); // its parents made as containers, then adopted
            top.start();
            child.start();
            try (Cache node = a.nodeCache(root); Cache children = a.childrenCache(root);
                 Cache shallow = a.treeCache(root, 1); Cache all = Cache.tree(a, root)) {
                for (Cache cache : List.of(node, children, shallow, all)) {
                    cache.start();
                }
                assertEquals(List.of(root), paths(node));
                assertEquals(List.of(root + "/a"), paths(children), "a children cache never shows its parent");
                assertEquals(java.util.Optional.empty(), children.get(root));
                assertEquals(List.of(root, root + "/a"), paths(shallow));
                assertEquals(List.of(root, root + "/a", root + "/a/b"), paths(all));
                assertEquals(1, children.size());
                assertEquals(Cache.Scope.CHILDREN, children.getScope());
                assertEquals(root, children.getPath());
            }
        }
        try (Client a = Zk.client()) {
            assertEquals(ZkException.Code.INVALID_PATH, code(() -> a.nodeCache("no-slash")));
            assertEquals(ZkException.Code.INVALID_ARGUMENT, code(() -> a.treeCache("/x", -1)));
        }
    }

    private static List<String> paths(Cache cache) {
        return cache.snapshot().stream().map(ChildData::getPath).toList();
    }

    @Test
    void aListenerMayCallBackIntoTheCacheAndCloseIt() throws Exception {
        String root = Zk.path("cache-reentrant");
        try (Client a = Zk.client(); Cache cache = a.childrenCache(root);
             PersistentNode one = a.persistentNode(root + "/one", NodeMode.PERSISTENT, bytes("1"));
             PersistentNode two = a.persistentNode(root + "/two", NodeMode.PERSISTENT, bytes("2"))) {
            BlockingQueue<String> seen = new LinkedBlockingQueue<>();
            cache.addListener((type, oldData, data) -> {
                // On the listener thread: the cache already holds what it tells.
                String path = data.getPath();
                seen.add(type + " " + path + " " + text(cache.get(path).orElseThrow()) + " " + cache.size());
                if (path.endsWith("/two")) {
                    cache.close();
                    seen.add("closed " + Thread.currentThread().getName());
                }
            });
            cache.start();
            one.start();
            assertEquals("CREATED " + root + "/one 1 1", seen.poll(10, TimeUnit.SECONDS));
            two.start();
            assertEquals("CREATED " + root + "/two 2 2", seen.poll(10, TimeUnit.SECONDS));
            String closed = seen.poll(10, TimeUnit.SECONDS);
            assertNotNull(closed, "close() from a listener returned");
            assertTrue(closed.startsWith("closed zkrecipes-listener-"), closed);
            assertEquals(ZkException.Code.CLOSED, code(cache::snapshot));
            assertEquals(ZkException.Code.CLOSED, code(cache::start));
            assertFalse(cache.isInitialized());
            one.setData(bytes("after"));
            cache.close(); // twice: harmless
            assertNull(seen.poll(), "nothing after the close");
        }
    }

    @Test
    void closeWhileEventsFlowEndsTheListenersAtOnce() throws Exception {
        String root = Zk.path("cache-flow");
        try (Client a = Zk.client(); Client b = Zk.client();
             PersistentNode node = b.persistentNode(root + "/n", NodeMode.PERSISTENT, bytes("0"))) {
            node.start();
            Cache cache = a.childrenCache(root);
            AtomicInteger told = new AtomicInteger();
            AtomicInteger lastVersion = new AtomicInteger(-1);
            AtomicBoolean outOfOrder = new AtomicBoolean();
            BlockingQueue<Integer> progress = new LinkedBlockingQueue<>();
            cache.addListener((type, oldData, data) -> {
                int version = data.getStat().version();
                if (version <= lastVersion.getAndSet(version)) {
                    outOfOrder.set(true);
                }
                progress.add(told.incrementAndGet());
            });
            cache.start();
            AtomicBoolean writing = new AtomicBoolean(true);
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                for (int i = 1; writing.get(); i++) {
                    node.setData(bytes(Integer.toString(i)));
                }
            });
            try {
                for (int n = 0; n < 20; ) {
                    Integer now = progress.poll(10, TimeUnit.SECONDS);
                    assertNotNull(now, "the writes were not told within 10 s");
                    n = now;
                }
                cache.close();
                int atClose = told.get();
                // What is told after close() returned would show here; the writes go on meanwhile.
                node.setData(bytes("after"));
                node.setData(bytes("after again"));
                assertEquals(atClose, told.get(), "a listener ran after close() returned");
                assertFalse(outOfOrder.get(), "versions told out of order");
            } finally {
                writing.set(false);
                writer.get(10, TimeUnit.SECONDS);
                cache.close();
            }
        }
    }

    @Test
    void anInterruptedStartLeavesTheCacheGoingAndClosable() throws Exception {
        String root = Zk.path("cache-interrupt");
        try (Client a = Zk.client();
             PersistentNode node = a.persistentNode(root, NodeMode.PERSISTENT, bytes("x"))) {
            node.start();
            for (int round = 0; round < 5; round++) {
                try (Cache cache = a.nodeCache(root)) {
                    Heard heard = new Heard();
                    cache.addListener(heard);
                    Thread.currentThread().interrupt();
                    try {
                        cache.start();
                        // The load was done before the wait began: the interrupt is still there.
                        assertTrue(Thread.interrupted());
                    } catch (InterruptedException expected) {
                        assertFalse(Thread.currentThread().isInterrupted());
                    }
                    // The cache went on loading all the same.
                    assertEquals(CacheEvent.Type.CREATED, heard.next().type());
                    assertEquals(CacheEvent.Type.INITIALIZED, heard.next().type());
                    assertTrue(cache.isInitialized());
                    cache.start();
                    assertEquals("x", text(cache.get(root).orElseThrow()));
                }
            }
        }
    }
}
