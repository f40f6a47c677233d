package io.zkrecipes.kotlin

import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** PersistentNode and GroupMember from Kotlin, against a real ZooKeeper. */
class GroupIT {
    private fun GroupMember.texts() = members().mapValues { it.value.decodeToString() }

    @Test
    fun twoMembersSeeEachOtherJoinChangeAndLeave(): Unit = Zk.twoClients("group", Dispatchers.Default) { a, b, group ->
        a.groupMember(group, "a", "pa".toByteArray()).use { first ->
            val heard = CacheIT.Heard()
            val collecting = launch(start = CoroutineStart.UNDISPATCHED) { first.events.collect { heard.add(it) } }
            first.start()
            assertEquals(CacheEvent.Type.INITIALIZED, heard.next().type)
            heard.next(CacheEvent.Type.CREATED, "$group/a")
            assertEquals(mapOf("a" to "pa"), first.texts())
            val second = b.groupMember(group, "b", "pb".toByteArray())
            second.start()
            assertEquals(mapOf("a" to "pa", "b" to "pb"), second.texts())
            val joined = present(heard.next(CacheEvent.Type.CREATED, "$group/b").node)
            assertEquals("b", joined.name)
            assertEquals(b.sessionId, joined.stat.ephemeralOwner, "a member is an ephemeral node of its session")
            second.setPayload("pb2".toByteArray())
            val changed = heard.next(CacheEvent.Type.CHANGED, "$group/b")
            assertEquals("pb", present(changed.old).data.decodeToString())
            assertEquals("pb2", present(changed.node).data.decodeToString())
            second.closeAsync()
            assertEquals("pb2", present(heard.next(CacheEvent.Type.DELETED, "$group/b").node).data.decodeToString())
            assertEquals(mapOf("a" to "pa"), first.texts())
            second.close() // twice: harmless
            assertThrows<ZkException.Closed> { runBlocking { second.start() } }
            assertEquals("a", first.id)
            assertEquals(group, first.group)
            // The client's close ends the flow.
            a.close()
            withTimeout(10_000) { collecting.join() }
        }
    }

    @Test
    fun aBadIdIsInvalidArgumentAtOnce(): Unit = runBlocking(Dispatchers.Default) {
        Zk.client().use { a ->
            for (id in listOf("", ".", "..", "a/b")) {
                assertThrows<ZkException.InvalidArgument>(id) { a.groupMember("/g", id, ByteArray(0)) }
            }
            assertThrows<ZkException.InvalidPath> { a.groupMember("g", "a", ByteArray(0)) }
            assertThrows<ZkException.InvalidPath> { a.persistentNode("/", NodeMode.PERSISTENT, ByteArray(0)) }
        }
    }

    @Test
    fun aCancelledStartWaitingForTheSameIdGoesOnAndJoinsOnceTheFirstLeaves(): Unit = Zk.twoClients("group-same-id", Dispatchers.Default) { a, b, group ->
        val holder = a.groupMember(group, "x", "first".toByteArray())
        holder.start()
        // A member's own close stops its view at once: the others see it leave.
        val watching = a.childrenCache(group)
        val heard = CacheIT.Heard()
        val collecting = launch(start = CoroutineStart.UNDISPATCHED) { watching.events.collect { heard.add(it) } }
        watching.start()
        heard.next(CacheEvent.Type.CREATED, "$group/x")
        heard.next()
        b.groupMember(group, "x", "second".toByteArray()).use { second ->
            assertNull(withTimeoutOrNull(300) { second.start() }, "another live session's node is never taken over")
            assertEquals(mapOf("x" to "first"), holder.texts())
            holder.closeAsync()
            heard.next(CacheEvent.Type.DELETED, "$group/x")
            // The cancelled start left the member joining: it is in once the first is gone.
            val joined = present(heard.next(CacheEvent.Type.CREATED, "$group/x").node)
            assertEquals(b.sessionId, joined.stat.ephemeralOwner)
            assertEquals("second", joined.data.decodeToString())
            withTimeout(10_000) { second.start() }
            assertEquals(mapOf("x" to "second"), second.texts())
        }
        heard.next(CacheEvent.Type.DELETED, "$group/x")
        watching.close()
        withTimeout(10_000) { collecting.join() }
    }

    @Test
    fun aPersistentNodeIsCreatedAgainAfterAnotherClientDeletesIt(): Unit = Zk.twoClients("persistent", Dispatchers.Default) { a, b, path ->
        b.nodeCache(path).use { watching ->
            val heard = CacheIT.Heard()
            launch(start = CoroutineStart.UNDISPATCHED) { watching.events.collect { heard.add(it) } }
            watching.start()
            heard.next()
            a.persistentNode(path, NodeMode.PERSISTENT, "d".toByteArray()).use { node ->
                assertNull(node.actualPath)
                assertEquals(path, node.start())
                val made = present(heard.next(CacheEvent.Type.CREATED, path).node)
                // Another client's node of the same path adopts it and its close deletes it.
                b.persistentNode(path, NodeMode.PERSISTENT, "other".toByteArray()).use { other ->
                    other.start()
                    heard.next(CacheEvent.Type.CHANGED, path)
                    other.closeAsync()
                }
                heard.next(CacheEvent.Type.DELETED, path)
                val again = present(heard.next(CacheEvent.Type.CREATED, path).node)
                assertTrue(again.stat.czxid > made.stat.czxid, "a new node")
                assertEquals("d", again.data.decodeToString(), "with this node's data")
                node.setData("e".toByteArray())
                assertEquals("e", present(heard.next(CacheEvent.Type.CHANGED, path).node).data.decodeToString())
                assertEquals("e", node.data.decodeToString())
                node.closeAsync()
                heard.next(CacheEvent.Type.DELETED, path)
                assertNull(node.actualPath)
                assertThrows<ZkException.Closed> { runBlocking { node.start() } }
            }
        }
        val sequential = a.persistentNode("$path-seq/m-", NodeMode.EPHEMERAL_SEQUENTIAL, ByteArray(0))
        val name = sequential.start()
        assertTrue(Regex(Regex.escape("$path-seq") + "/_c_[0-9a-f-]{36}-m-\\d{10}").matches(name), name)
        assertNotEquals(path, name)
        sequential.close()
    }
}
