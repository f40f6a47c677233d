package io.zkrecipes.kotlin

import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.Collections
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

class WorkQueueIT {
    @Test
    fun prioritiesAckNackAndTheFlowGivesBack(): Unit = Zk.oneClient("work") { client, path ->
        client.workQueue(path).use { q ->
            q.offerAll(listOf("a".toByteArray(), "b".toByteArray()))
            q.offer("urgent".toByteArray(), priority = 1)
            assertEquals(3, q.size())
            val urgent = present(q.consume(1.seconds))
            assertEquals("urgent" to 1, urgent.data.decodeToString() to urgent.priority)
            urgent.ack()
            assertThrows<ZkException.InvalidArgument> { runBlocking { urgent.ack() } }
            val a = present(q.consume(1.seconds))
            a.nack()
            assertThrows<IllegalStateException> {
                runBlocking { q.jobs(10.seconds).collect { error("failed on ${it.data.decodeToString()}") } }
            }
            // Two jobs are expected (a quiet period of 200 ms ended the flow, too early when
            // the job the failed collection gave back was slow to come).
            val seen = mutableListOf<Pair<String, Int>>()
            q.jobs(10.seconds).take(2).collect {
                seen += it.data.decodeToString() to it.deliveryCount
                it.ack()
            }
            assertEquals(listOf("a" to 3, "b" to 1), seen)
            assertEquals(0, q.size())
            assertThrows<ZkException.InvalidArgument> { runBlocking { q.offer(ByteArray(1), priority = 1000) } }
        }
        assertThrows<ZkException.InvalidArgument> { client.workQueue(path, prefetch = 0) }
    }

    @Test
    fun coroutinesSharingOneQueueAckEachJobOnceAndCancelledConsumesLoseNothing(): Unit = Zk.oneClient("work-shared") { client, path ->
        val q = client.workQueue(path, prefetch = 8)
        q.offerAll((0 until 300).map { it.toString().toByteArray() })
        val got = Collections.synchronizedList(mutableListOf<Int>())
        // Idle the workers are done in a second or two; with jobs lost they would go on for
        // 2000 rounds of up to 300 ms (8 minutes): 60 s at most, the rest loop finds the rest.
        val workersUntil = System.nanoTime() + 60_000_000_000L
        coroutineScope {
            repeat(8) { worker ->
                launch {
                    var round = 0
                    while (got.size < 300 && round < 2000 && System.nanoTime() < workersUntil) {
                        round++
                        if ((round + worker) % 4 == 0) {
                            // Given up at a varying moment: whatever it claimed goes back.
                            // A consume that returned first handed its job to this caller,
                            // which gives it back: dropped, it would wait for the JVM's
                            // garbage collector (7 jobs for 30 s, and 22 never in one run).
                            val giving = launch {
                                q.consume(2.seconds)?.let { withContext(NonCancellable) { it.nack() } }
                            }
                            delay((round % 3).toLong())
                            giving.cancelAndJoin()
                            continue
                        }
                        val job = q.consume(300.milliseconds) ?: continue
                        got += job.data.decodeToString().toInt()
                        job.ack()
                    }
                }
            }
        }
        q.close()
        // Anything a cancelled consume left would be claimed by this live session still.
        // Until all 300 came (a quiet period of 2 s ended this loop), for up to 30 s.
        client.workQueue(path).use { rest ->
            val deadline = System.nanoTime() + 30_000_000_000L
            while (got.size < 300 && System.nanoTime() < deadline) {
                val job = rest.consume(1.seconds) ?: continue
                got += job.data.decodeToString().toInt()
                job.ack()
            }
        }
        assertEquals((0 until 300).toList(), got.sorted(), "each job acknowledged once, none lost")
        assertThrows<ZkException.Closed> { runBlocking { q.consume(10.milliseconds) } }
    }

    @Test
    fun aClosedClientGivesItsJobsBackWithACount(): Unit = runBlocking {
        val path = Zk.path("work-death")
        Zk.client().use { survivor ->
            val doomed = Zk.client()
            doomed.workQueue(path).offerAll(listOf("1".toByteArray(), "2".toByteArray()))
            val held = present(doomed.workQueue(path, prefetch = 2).consume(1.seconds))
            doomed.close()
            assertThrows<ZkException> { runBlocking { held.ack() } }
            // Both come back (a quiet second ended the flow, too early when they were slow to).
            val again = mutableListOf<Pair<String, Int>>()
            survivor.workQueue(path).jobs(10.seconds).take(2).collect {
                again += it.data.decodeToString() to it.deliveryCount
                it.ack()
            }
            assertEquals(listOf("1" to 2, "2" to 2), again)
            assertNull(survivor.workQueue(path).consume(Duration_ZERO))
        }
    }
}

private val Duration_ZERO = kotlin.time.Duration.ZERO
