package io.zkrecipes.kotlin

import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.takeWhile
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.Collections
import java.util.concurrent.atomic.AtomicInteger

/** SharedCount and DistributedAtomicLong from Kotlin, against a real ZooKeeper. */
class CounterIT {
    @Test
    fun incrementsFromCoroutinesAndClientsAtOnceEndExact(): Unit = Zk.twoClients("atomic-long", Dispatchers.Default) { a, b, longPath ->
        val countPath = Zk.path("shared-count")
        val longs = listOf(a.atomicLong(longPath), b.atomicLong(longPath))
        val counts = listOf(a.sharedCount(countPath), b.sharedCount(countPath))
        assertEquals(0L, longs[0].get(), "a missing node reads as 0")
        val seen = Collections.synchronizedSet(mutableSetOf<Long>())
        val written = Collections.synchronizedSet(mutableSetOf<Int>())
        val coroutines = 6
        val each = 15
        // Three coroutines on each object, two objects on two sessions.
        (0 until coroutines).map { c ->
            async {
                repeat(each) {
                    val got = longs[c % 2].increment()
                    assertEquals(got.preValue + 1, got.postValue)
                    assertTrue(seen.add(got.preValue), "two increments saw ${got.preValue}")
                    assertTrue(written.add(counts[c % 2].add(1).value), "two adds wrote the same value")
                }
            }
        }.awaitAll()
        val n = (coroutines * each).toLong()
        assertEquals(n, longs[1].get())
        counts[0].start()
        assertEquals(n.toInt(), counts[0].count)
        assertEquals(Updated(n, n - 5), longs[0].add(-5))
        assertEquals(Updated(n - 5, n - 6), longs[1].decrement())
        assertTrue(longs[0].compareAndSet(n - 6, 100))
        assertFalse(longs[1].compareAndSet(n - 6, 7), "the value moved on")
        longs[1].forceSet(Long.MAX_VALUE)
        assertEquals(Updated(Long.MAX_VALUE, Long.MIN_VALUE), longs[0].increment(), "wraps as Long does")
    }

    @Test
    fun theFlowHearsAnotherClientAndALostTrySetRefreshes(): Unit = Zk.twoClients("shared-count-flow", Dispatchers.Default) { a, b, path ->
        val ours = a.sharedCount(path, 3)
        val theirs = b.sharedCount(path, 99)
        val heard = async(start = CoroutineStart.UNDISPATCHED) { ours.changes.takeWhile { it.value != 42 }.toList() }
        ours.start()
        theirs.start()
        assertEquals(3, theirs.count, "the seed of whoever created the node")
        val seen = ours.versioned()
        theirs.set(42)
        assertEquals(listOf(3), withTimeout(10_000) { heard.await() }.map { it.value })
        assertFalse(ours.trySet(seen, 9))
        // The answer came with the newer value: no need to wait for the watch.
        val now = ours.versioned()
        assertEquals(42, now.value)
        assertTrue(now.version > seen.version)
        val next = async(start = CoroutineStart.UNDISPATCHED) { theirs.changes.first { it.value == 9 } }
        assertTrue(ours.trySet(now, 9))
        assertEquals(now.version + 1, withTimeout(10_000) { next.await() }.version)
        assertFalse(theirs.trySet(VersionedCount(9, now.version), 10), "the version counts, not the value")
        // A collector that reads and writes the count itself.
        val echoed = async(start = CoroutineStart.UNDISPATCHED) {
            ours.changes.first { v -> if (v.value == 50) ours.set(ours.count + 1); v.value == 51 }
        }
        theirs.set(50)
        assertEquals(51, withTimeout(10_000) { echoed.await() }.value)
        Zk.eventually("the collector's write reached the other client") { theirs.count == 51 }
        // Its client's close ends a collection too.
        val tail = async(start = CoroutineStart.UNDISPATCHED) { ours.changes.toList() }
        a.close()
        withTimeout(10_000) { tail.await() }
        assertThrows<ZkException.Closed> { runBlocking { ours.set(1) } }
    }

    @Test
    fun cancelledAddsNeitherCrashNorCountTwice(): Unit = Zk.oneClient("counter-cancel", Dispatchers.Default) { client, path ->
        val counter = client.atomicLong(path)
        val count = client.sharedCount(path + "-count")
        val done = AtomicInteger()
        var tried = 0
        repeat(150) { round ->
            tried++
            if (round % 2 == 0) {
                val adding = launch {
                    counter.add(1)
                    count.add(1)
                    done.incrementAndGet()
                }
                delay((round % 3).toLong())
                adding.cancelAndJoin()
            } else {
                withTimeoutOrNull((round % 4).toLong()) {
                    counter.add(1)
                    count.add(1)
                    done.incrementAndGet()
                }
            }
        }
        // Each coroutine's add applied once or not at all; the counters go on.
        val total = counter.get()
        assertTrue(total in done.get().toLong()..tried.toLong(), "$total outside [${done.get()}, $tried]")
        assertEquals(Updated(total, total + 1), counter.increment())
        count.start()
        val counted = count.count
        assertTrue(counted in done.get()..tried, "$counted outside [${done.get()}, $tried]")
        assertEquals(counted + 1, count.add(1).value)
        count.close()
    }

    @Test
    fun wrongLengthsAndUseAfterCloseAreTyped(): Unit = Zk.oneClient("counter-bad", Dispatchers.Default) { c, path ->
        assertThrows<ZkException.InvalidPath> { c.sharedCount("relative") }
        assertThrows<ZkException.InvalidPath> { c.atomicLong("/trailing/") }
        val count = c.sharedCount(path)
        assertThrows<ZkException.InvalidArgument> { count.count }
        c.atomicLong(path).forceSet(7)
        val eight = assertThrows<ZkException.InvalidArgument> { runBlocking { count.start() } }
        assertTrue("4 bytes" in eight.detail && "8" in eight.detail, eight.detail)
        val four = c.sharedCount(path + "-four", 1)
        four.start()
        val wrong = assertThrows<ZkException.InvalidArgument> { runBlocking { c.atomicLong(path + "-four").increment() } }
        assertTrue("8 bytes" in wrong.detail && "4" in wrong.detail, wrong.detail)
        assertEquals(1, four.count, "never overwritten by a guess")
        // A close mid-add: every add either happened (and returned) or was refused, Closed.
        val added = AtomicInteger()
        val adding = async {
            try {
                while (true) {
                    four.add(1)
                    added.incrementAndGet()
                }
            } catch (e: ZkException.Closed) {
                e
            }
        }
        val ended = async(start = CoroutineStart.UNDISPATCHED) { four.changes.toList() }
        Zk.eventually("some adds went through") { added.get() >= 5 }
        four.close()
        withTimeout(10_000) { adding.await() }
        val heard = withTimeout(10_000) { ended.await() } // the flow ends with the close
        assertEquals(heard.sortedBy { it.version }, heard, "in order")
        assertEquals(1 + added.get(), c.sharedCount(path + "-four").also { it.start() }.count)
        four.close() // twice: harmless
        assertThrows<ZkException.Closed> { four.count }
        assertThrows<ZkException.Closed> { runBlocking { four.start() } }
        assertThrows<ZkException.Closed> { runBlocking { four.set(1) } }
        assertThrows<ZkException.Closed> { runBlocking { four.trySet(VersionedCount(0, 0), 1) } }
        assertThrows<ZkException.Closed> { runBlocking { four.add(1) } }
        assertEquals(listOf<VersionedCount>(), withTimeout(10_000) { four.changes.toList() }, "a closed count's flow is empty")
    }
}
