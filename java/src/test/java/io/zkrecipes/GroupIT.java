package io.zkrecipes;

import static io.zkrecipes.CacheIT.bytes;
import static io.zkrecipes.CacheIT.text;
import static io.zkrecipes.Zk.code;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** PersistentNode and GroupMember from Java, against a real ZooKeeper. */
class GroupIT {
    private static Map<String, String> texts(Map<String, byte[]> members) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        members.forEach((id, payload) -> out.put(id, new String(payload, StandardCharsets.UTF_8)));
        return out;
    }

    @Test
    void twoMembersSeeEachOtherJoinChangeAndLeave() throws Exception {
        String group = Zk.path("group");
        try (Client a = Zk.client(); Client b = Zk.client();
             GroupMember first = a.groupMember(group, "a", bytes("pa"));
             GroupMember second = new GroupMember(b, group, "b", bytes("pb"))) {
            CacheIT.Heard heard = new CacheIT.Heard();
            first.addListener(heard);
            first.start();
            assertEquals(CacheEvent.Type.INITIALIZED, heard.next().type());
            heard.next(CacheEvent.Type.CREATED, group + "/a");
            assertEquals(Map.of("a", "pa"), texts(first.getCurrentMembers()));
            CacheIT.Heard secondHeard = new CacheIT.Heard();
            second.start();
            second.addListener(secondHeard);
            assertEquals(Map.of("a", "pa", "b", "pb"), texts(second.getCurrentMembers()));
            CacheEvent joined = heard.next(CacheEvent.Type.CREATED, group + "/b");
            assertEquals("b", first.idFromPath(joined.data().getPath()));
            assertEquals("pb", text(joined.data()));
            assertNotEquals(0L, joined.data().getStat().getEphemeralOwner(), "a member is an ephemeral node");
            assertEquals(List.of("a", "b"), List.copyOf(first.getCurrentMembers().keySet()), "by id");
            second.setThisData(bytes("pb2"));
            CacheEvent changed = heard.next(CacheEvent.Type.CHANGED, group + "/b");
            assertEquals("pb", text(changed.oldData()));
            assertEquals("pb2", text(changed.data()));
            // A listener added after start does not hear the join, but what comes after.
            assertEquals("pb2", text(secondHeard.next(CacheEvent.Type.CHANGED, group + "/b").data()));
            first.setThisData(bytes("pa2"));
            assertEquals("pa2", text(secondHeard.next(CacheEvent.Type.CHANGED, group + "/a").data()));
            assertEquals("pa2", text(heard.next(CacheEvent.Type.CHANGED, group + "/a").data()), "its own change too");
            second.close();
            assertEquals("pb2", text(heard.next(CacheEvent.Type.DELETED, group + "/b").oldData()));
            assertEquals(Map.of("a", "pa2"), texts(first.getCurrentMembers()));
            second.close(); // twice: harmless
            assertEquals(ZkException.Code.CLOSED, code(second::getCurrentMembers));
            assertEquals("a", first.getId());
            assertEquals(group, first.getGroupPath());
        }
    }

    @Test
    void aBadIdIsInvalidArgumentAtOnce() throws Exception {
        try (Client a = Zk.client()) {
            for (String id : List.of("", ".", "..", "a/b")) {
                assertEquals(ZkException.Code.INVALID_ARGUMENT, code(() -> a.groupMember("/g", id, new byte[0])), id);
            }
            assertEquals(ZkException.Code.INVALID_PATH, code(() -> a.groupMember("g", "a", new byte[0])));
            assertEquals(ZkException.Code.INVALID_PATH, code(() -> a.persistentNode("/", NodeMode.PERSISTENT, new byte[0])));
            assertThrows(NullPointerException.class, () -> a.groupMember("/g", null, new byte[0]));
        }
    }

    @Test
    void aSecondMemberWithTheSameIdWaitsAndItsCloseEndsTheWait() throws Exception {
        String group = Zk.path("group-same-id");
        try (Client a = Zk.client(); Client b = Zk.client();
             GroupMember holder = a.groupMember(group, "x", bytes("first"))) {
            holder.start();
            GroupMember second = b.groupMember(group, "x", bytes("second"));
            CompletableFuture<Void> waiting = second.startAsync();
            assertThrows(TimeoutException.class, () -> waiting.get(300, TimeUnit.MILLISECONDS),
                "the node of another live session is never taken over");
            // An interrupted start of the same member: the wait ends, the member goes on waiting.
            Zk.Background starter = Zk.Background.start(second::start);
            starter.interrupt();
            assertInstanceOf(InterruptedException.class, starter.outcome(10));
            second.close();
            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(10, TimeUnit.SECONDS));
            assertEquals(ZkException.Code.CLOSED, ((ZkException) e.getCause()).getCode());
            assertEquals(Map.of("x", "first"), texts(holder.getCurrentMembers()));
        }
    }

    @Test
    void aPersistentNodeIsCreatedAgainAfterAnotherClientDeletesIt() throws Exception {
        String path = Zk.path("persistent");
        try (Client a = Zk.client(); Client b = Zk.client(); Cache watching = b.nodeCache(path);
             PersistentNode node = a.persistentNode(path, NodeMode.PERSISTENT, bytes("d"))) {
            CacheIT.Heard heard = new CacheIT.Heard();
            watching.addListener(heard);
            watching.start();
            assertEquals(CacheEvent.Type.INITIALIZED, heard.next().type());
            assertEquals(java.util.Optional.empty(), node.getActualPath());
            assertEquals(path, node.start());
            assertEquals(path, node.start(), "again: the same node");
            assertEquals(java.util.Optional.of(path), node.getActualPath());
            ChildData made = heard.next(CacheEvent.Type.CREATED, path).data();
            assertEquals(0L, made.getStat().getEphemeralOwner());
            Zk.rm(path);
            heard.next(CacheEvent.Type.DELETED, path);
            ChildData again = heard.next(CacheEvent.Type.CREATED, path).data();
            assertTrue(again.getStat().czxid() > made.getStat().czxid(), "a new node");
            assertEquals("d", text(again));
            node.setData(bytes("e"));
            assertEquals("e", text(heard.next(CacheEvent.Type.CHANGED, path).data()));
            assertArrayEquals(bytes("e"), node.getData());
            node.close();
            heard.next(CacheEvent.Type.DELETED, path);
            assertEquals(java.util.Optional.empty(), node.getActualPath());
            assertEquals(ZkException.Code.CLOSED, code(node::start));
        }
    }

    @Test
    void aSequentialNodeHasCuratorsProtectedNameAndANewOneAfterADelete() throws Exception {
        String parent = Zk.path("sequential");
        try (Client a = Zk.client(); Client b = Zk.client(); Cache watching = b.childrenCache(parent);
             PersistentNode node = a.persistentNode(parent + "/member-", NodeMode.EPHEMERAL_SEQUENTIAL, bytes("s"))) {
            CacheIT.Heard heard = new CacheIT.Heard();
            watching.addListener(heard);
            watching.start();
            heard.next();
            String first = node.start();
            assertTrue(first.matches(java.util.regex.Pattern.quote(parent) + "/_c_[0-9a-f-]{36}-member-\\d{10}"), first);
            assertEquals(a.getSessionId(), heard.next(CacheEvent.Type.CREATED, first).data().getStat().getEphemeralOwner());
            Zk.rm(first);
            heard.next(CacheEvent.Type.DELETED, first);
            String second = heard.next().data().getPath();
            assertNotEquals(first, second);
            assertTrue(second.startsWith(first.substring(0, first.length() - 10)), second);
            Zk.eventually("the node knows its new name", () -> node.getActualPath().equals(java.util.Optional.of(second)));
            node.close();
            heard.next(CacheEvent.Type.DELETED, second);
        }
    }

    @Test
    void anInterruptedStartWaitingForAnotherSessionsNodeKeepsWaitingThenCreatesIt() throws Exception {
        String path = Zk.path("ephemeral-taken");
        try (Client a = Zk.client(); Client b = Zk.client(); Cache watching = a.nodeCache(path)) {
            CacheIT.Heard heard = new CacheIT.Heard();
            watching.addListener(heard);
            watching.start();
            heard.next();
            PersistentNode holder = a.persistentNode(path, NodeMode.EPHEMERAL, bytes("a"));
            holder.start();
            assertEquals(a.getSessionId(), heard.next(CacheEvent.Type.CREATED, path).data().getStat().getEphemeralOwner());
            try (PersistentNode waiter = b.persistentNode(path, NodeMode.EPHEMERAL, bytes("b"))) {
                Thread.currentThread().interrupt();
                assertThrows(InterruptedException.class, waiter::start);
                assertEquals(java.util.Optional.empty(), waiter.getActualPath(), "another session's node is not ours");
                holder.close();
                heard.next(CacheEvent.Type.DELETED, path);
                // The interrupted start left the node being kept: it is created once the other is gone.
                ChildData ours = heard.next(CacheEvent.Type.CREATED, path).data();
                assertEquals(b.getSessionId(), ours.getStat().getEphemeralOwner());
                assertEquals("b", text(ours));
                assertEquals(path, waiter.start());
            }
            heard.next(CacheEvent.Type.DELETED, path);
        }
    }
}
