package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.cacheEventNames
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** The caches from Kotlin, against a real ZooKeeper; the nodes are written by PersistentNodes of another client. */
class CacheIT {
    /** A cache's events as a channel, so that each can be waited for with a deadline. */
    class Heard(private val events: Channel<CacheEvent> = Channel(Channel.UNLIMITED)) {
        suspend fun next(): CacheEvent = withTimeout(10_000) { events.receive() }

        /** The next event, which must be [type] of [path]. */
        suspend fun next(type: CacheEvent.Type, path: String): CacheEvent {
            val event = next()
            assertEquals("$type $path", "${event.type} ${event.node?.path}")
            return event
        }

        fun none() = assertNull(events.tryReceive().getOrNull(), "nothing more")

        fun add(event: CacheEvent) = events.trySend(event)
    }

    @Test
    fun theEnumListsExactlyTheCoreNames() {
        assertEquals(cacheEventNames(), CacheEvent.Type.entries.map { it.name })
    }

    @Test
    fun aTreeCacheTellsEveryChangeInOrderAndHoldsTheCopy(): Unit = Zk.twoClients("cache-tree", Dispatchers.Default) { a, b, root ->
        a.treeCache(root).use { cache ->
            val heard = Heard()
            val collecting = launch(start = CoroutineStart.UNDISPATCHED) { cache.events.collect { heard.add(it) } }
            assertFalse(cache.isInitialized)
            cache.start()
            cache.start() // again: only waits for the first load
            assertEquals(CacheEvent.Type.INITIALIZED, heard.next().type, "a missing root is an empty cache")
            assertEquals(0, cache.size)
            b.persistentNode(root, NodeMode.PERSISTENT, "top".toByteArray()).use { top ->
                b.persistentNode("$root/x", NodeMode.PERSISTENT, "1".toByteArray()).use { child ->
                    top.start()
                    assertEquals("top", heard.next(CacheEvent.Type.CREATED, root).node!!.data.decodeToString())
                    child.start()
                    val first = heard.next(CacheEvent.Type.CREATED, "$root/x").node!!
                    assertEquals(0, first.stat.version)
                    child.setData("22".toByteArray())
                    val changed = heard.next(CacheEvent.Type.CHANGED, "$root/x")
                    assertEquals(first, changed.old)
                    assertEquals("22", changed.node!!.data.decodeToString())
                    assertEquals(first.stat.czxid, changed.node!!.stat.czxid)
                    assertTrue(changed.node!!.stat.mzxid > first.stat.mzxid)
                    assertEquals(changed.node, cache["$root/x"])
                    assertEquals(listOf("x"), cache.childrenOf(root))
                    assertEquals(listOf(root, "$root/x"), cache.snapshot().map { it.path })
                    child.closeAsync()
                    assertEquals("22", heard.next(CacheEvent.Type.DELETED, "$root/x").node!!.data.decodeToString())
                }
            }
            heard.next(CacheEvent.Type.DELETED, root)
            heard.none()
            cache.close()
            withTimeout(10_000) { collecting.join() } // the flow ends with the cache
            assertEquals(listOf<CachedNode>(), cache.snapshot())
            assertThrows<ZkException.Closed> { runBlocking { cache.start() } }
        }
        assertThrows<ZkException.InvalidPath> { a.childrenCache("no-slash") }
        assertThrows<ZkException.InvalidArgument> { a.treeCache("/x", -1) }
    }

    @Test
    fun aCollectorMayCallBackIntoTheCacheAndCloseIt(): Unit = Zk.twoClients("cache-reentrant", Dispatchers.Default) { a, writer, root ->
        val cache = a.childrenCache(root)
        val told = Channel<String>(Channel.UNLIMITED)
        val collecting = launch(start = CoroutineStart.UNDISPATCHED) {
            cache.events.collect { e ->
                val node = e.node ?: return@collect
                // The cache already holds what it tells.
                told.send("${e.type} ${node.name} ${cache[node.path]?.data?.decodeToString()} ${cache.size}")
                if (node.name == "two") cache.close()
            }
        }
        cache.start()
        writer.persistentNode("$root/one", NodeMode.PERSISTENT, "1".toByteArray()).use { one ->
            writer.persistentNode("$root/two", NodeMode.PERSISTENT, "2".toByteArray()).use { two ->
                one.start()
                assertEquals("CREATED one 1 1", withTimeout(10_000) { told.receive() })
                two.start()
                assertEquals("CREATED two 2 2", withTimeout(10_000) { told.receive() })
                // The collector's close ended its own flow.
                withTimeout(10_000) { collecting.join() }
                assertTrue(told.tryReceive().isFailure, "nothing after the close")
                assertEquals(0, cache.size)
            }
        }
    }

    @Test
    fun cancelledStartsNeitherCrashNorKeepTheCacheFromClosing(): Unit = Zk.oneClient("cache-cancel", Dispatchers.Default) { client, root ->
        client.persistentNode(root, NodeMode.PERSISTENT, "x".toByteArray()).use { node ->
            node.start()
            repeat(60) { round ->
                val cache = if (round % 2 == 0) client.nodeCache(root) else client.treeCache(root)
                if (round % 3 == 0) {
                    withTimeoutOrNull((round % 4).toLong()) { cache.start() }
                } else {
                    val starting = launch { cache.start() }
                    delay((round % 3).toLong())
                    starting.cancelAndJoin()
                }
                if (round % 5 == 1) {
                    // A start cancelled right after the call was made: the cache goes on.
                    val fresh = client.nodeCache(root)
                    val heard = Heard()
                    val collecting = launch(start = CoroutineStart.UNDISPATCHED) { fresh.events.collect { heard.add(it) } }
                    launch(start = CoroutineStart.UNDISPATCHED) { fresh.start() }.cancelAndJoin()
                    assertEquals(CacheEvent.Type.CREATED, heard.next().type)
                    assertEquals(CacheEvent.Type.INITIALIZED, heard.next().type)
                    fresh.close()
                    withTimeout(10_000) { collecting.join() }
                }
                if (round % 5 == 0) {
                    // The cache went on loading: a start now only waits for that load.
                    cache.start()
                    assertEquals("x", cache[root]?.data?.decodeToString())
                }
                cache.close()
                cache.close()
                assertEquals(0, cache.size, "a closed cache holds nothing")
                assertThrows<ZkException.Closed> { runBlocking { cache.start() } }
            }
        }
    }
}
