package io.zkrecipes.kotlin

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.Collections
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

private val LEADER = listOf("START", "OFFER_START", "OFFER_COMPLETE", "DETERMINE_START", "DETERMINE_COMPLETE", "ELECTED_START", "ELECTED_COMPLETE")

class QueueElectionIT {
    @Test
    fun queueOperationsInOrder(): Unit = runBlocking {
        Zk.client().use { client ->
            client.queue(Zk.path("queue")).use { q ->
                assertNull(q.poll())
                assertNull(q.peek())
                assertNull(q.take(50.milliseconds))
                q.offer("a".toByteArray())
                q.offer("b".toByteArray())
                q.offer("c".toByteArray())
                assertEquals(3, q.size())
                assertArrayEquals("a".toByteArray(), q.peek())
                assertArrayEquals("a".toByteArray(), q.poll())
                assertArrayEquals("b".toByteArray(), q.take())
                assertArrayEquals("c".toByteArray(), q.take(1.seconds))
                assertEquals(0, q.size())
                assertThrows<ZkException.InvalidArgument> {
                    runBlocking { q.offer(ByteArray(q.maxPayload + 1)) }
                }
            }
        }
    }

    @Test
    fun cancellingAWaitingTakeLeavesTheItemForOthers(): Unit = Zk.twoClients("take-cancel") { a, b, path ->
        val q = a.queue(path)
        repeat(30) { round ->
            val waiting = launch { q.take() }
            delay((round % 5).toLong())
            b.queue(path).offer("job-$round".toByteArray())
            waiting.cancelAndJoin()
            if (waiting.isCancelled) {
                // Taken too late for the cancelled waiter: it went back; else it is there.
                val item = b.queue(path).take(5.seconds)
                assertEquals("job-$round", item?.decodeToString(), "round $round")
            }
        }
        assertEquals(0, b.queue(path).size())
    }

    @Test
    fun batchedTakesInOrderWithBadSizesRefused(): Unit = runBlocking {
        Zk.client().use { client ->
            client.queue(Zk.path("queue-batch")).use { q ->
                repeat(7) { q.offer("item-$it".toByteArray()) }
                for (bad in listOf(0, 1001, -1)) {
                    val e = assertThrows<ZkException.InvalidArgument> { runBlocking { q.pollMany(bad) } }
                    assertTrue(e.message!!.contains("between 1 and 1000"), e.message)
                }
                assertEquals(listOf("item-0", "item-1", "item-2"), q.pollMany(3).map { it.decodeToString() })
                assertEquals(listOf("item-3", "item-4", "item-5"), q.takeMany(3, 0.milliseconds).map { it.decodeToString() })
                assertEquals(listOf("item-6"), q.takeMany(3).map { it.decodeToString() })
                assertEquals(listOf<ByteArray>(), q.pollMany(3))
                assertEquals(listOf<ByteArray>(), q.takeMany(3, 50.milliseconds))
            }
        }
    }

    @Test
    fun cancelledBatchedTakesLoseNothing(): Unit = runBlocking(Dispatchers.Default) {
        val path = Zk.path("queue-batch-cancel")
        val expected = (0 until 40).map { "item-%02d".format(it) }
        val got = Collections.synchronizedList(mutableListOf<String>())
        Zk.client().use { client ->
            val q = client.queue(path)
            expected.forEach { q.offer(it.toByteArray()) }
            for (round in 0 until 200) {
                if (got.size == expected.size) break
                val max = 1 + round % 6
                val taking = launch { got.addAll(q.takeMany(max, 5.seconds).map { it.decodeToString() }) }
                delay((round % 4).toLong())
                taking.cancelAndJoin()
            }
        } // close waits for batches on their way back
        Zk.client().use { client ->
            val q = client.queue(path)
            while (true) {
                val rest = q.pollMany(100)
                if (rest.isEmpty()) break
                got.addAll(rest.map { it.decodeToString() })
            }
        }
        assertEquals(expected, got.sorted(), "every item exactly once")
    }

    @Test
    fun electionHandsOverWhenTheLeaderStops(): Unit = Zk.twoClients("election") { a, b, root ->
        val first = a.leaderElection(root, "first")
        val second = b.leaderElection(root, "second")
        val elected = async(start = CoroutineStart.UNDISPATCHED) {
            second.events.first { it.type == ElectionEvent.Type.ELECTED_COMPLETE }
        }
        first.start()
        assertTrue(first.awaitLeadership(5.seconds))
        second.start()
        assertFalse(second.awaitLeadership(100.milliseconds))
        assertEquals("first", second.leaderHostName())
        first.stop()
        assertTrue(second.awaitLeadership(10.seconds))
        withTimeout(5_000) { elected.await() }
        assertEquals("second", first.leaderHostName())
        second.close()
        assertNull(first.leaderHostName())
    }

    /**
     * README "Event order": a call returns before its own events reach the collectors (after
     * start() returns, isLeader already answers while the events may still be on their way);
     * they come in Apache's order; a state read in a collector is at least as new as the event.
     */
    @Test
    fun aCallReturnsBeforeItsEventsWhichComeInOrderWithAStateAtLeastAsNew(): Unit = runBlocking {
        Zk.client().use { client ->
            val member = client.leaderElection(Zk.path("order"), "only")
            val returned = CompletableDeferred<Unit>()
            val gaveUp = AtomicBoolean()
            val seen = Collections.synchronizedList(mutableListOf<String>())
            // Subscribed before start() (UNDISPATCHED); held in its first event until start()
            // returned: a start() that waited for its collectors would have it give up after 10 s.
            val collecting = launch(Dispatchers.Default, start = CoroutineStart.UNDISPATCHED) {
                member.events.collect {
                    if (!gaveUp.get() && withTimeoutOrNull(10.seconds) { returned.await() } == null) gaveUp.set(true)
                    seen += "${it.type} ${member.isLeader}"
                }
            }
            member.start()
            val leader = member.isLeader
            val delivered = seen.toList()
            returned.complete(Unit)
            assertFalse(gaveUp.get(), "start() did not return while its collector was held")
            assertTrue(leader, "start() returns with isLeader already answered")
            assertEquals(listOf<String>(), delivered, "events collected before start() returned")
            Zk.eventually("start events") { seen.size >= 7 }
            assertEquals(LEADER, seen.map { it.substringBefore(' ') })
            assertEquals("ELECTED_COMPLETE true", seen.last())
            member.stop()
            assertFalse(member.isLeader, "stop() returns with isLeader already answered")
            Zk.eventually("stop events") { seen.size >= 9 }
            assertEquals(listOf("STOP_START", "STOP_COMPLETE"), seen.drop(7).map { it.substringBefore(' ') })
            assertEquals("STOP_COMPLETE false", seen.last())
            collecting.cancelAndJoin()
            member.close()
        }
    }

    @Test
    fun theJvmExitsAfterClose() {
        val java = ProcessHandle.current().info().command().orElse("java")
        val process = ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), ExitAfterClose::class.java.name, Zk.connect)
            .inheritIO()
            .start()
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the JVM did not exit after close()")
        assertEquals(0, process.exitValue())
    }
}

/** Connects, holds a lock, collects events, then closes and returns from main: the JVM must end. */
object ExitAfterClose {
    @JvmStatic
    fun main(args: Array<String>) = runBlocking {
        val client = Client.connect(args[0])
        val lock = client.writeLock(Zk.path("exit"))
        val events = launch(start = CoroutineStart.UNDISPATCHED) { lock.events.collect { } }
        lock.acquire()
        val queue = client.queue(Zk.path("exit-queue"))
        val waiting = launch { queue.take() }
        delay(100)
        waiting.cancelAndJoin()
        client.close()
        events.join()
    }
}
