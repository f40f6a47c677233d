package io.zkrecipes.kotlin

import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

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
    fun cancellingAWaitingTakeLeavesTheItemForOthers(): Unit = runBlocking {
        Zk.client().use { a ->
            Zk.client().use { b ->
                val path = Zk.path("take-cancel")
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
        }
    }

    @Test
    fun electionHandsOverWhenTheLeaderStops(): Unit = runBlocking {
        Zk.client().use { a ->
            Zk.client().use { b ->
                val root = Zk.path("election")
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
