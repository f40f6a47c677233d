package io.zkrecipes.kotlin

import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.logging.Handler
import java.util.logging.Level
import java.util.logging.LogRecord
import java.util.logging.Logger
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * The library's logs and metrics from Kotlin, against a real ZooKeeper: the events read through
 * the JVM's default System.Logger (java.util.logging, configured by src/test/resources/
 * logging.properties), the numbers through [Client.metrics].
 */
class ObserveIT {
    /** What a JUL logger is handed, with the thread that handed it. */
    private class Recording : Handler() {
        val records = ConcurrentLinkedQueue<Pair<LogRecord, String>>()

        override fun publish(record: LogRecord) {
            records.add(record to Thread.currentThread().name)
        }

        override fun flush() {}

        override fun close() {}
    }

    @Test
    fun lockAcquisitionsAreCountedAndTheContendedOneIsLogged(): Unit = Zk.twoClients("observe-lock") { holder, tester, path ->
        val jul = Logger.getLogger("zkrecipes.lock")
        val recording = Recording()
        jul.addHandler(recording)
        jul.level = Level.INFO
        // The level changed while the program runs: the library takes it again.
        Client.refreshLogLevels()
        try {
            assertEquals(1L, tester.metrics().counter("zkrecipes.session.state_changes", mapOf("to" to "connected")))
            val held = holder.writeLock(path)
            val lock = tester.writeLock(path)
            // Ten acquisitions: three while the other client holds the lock, one waiting behind it.
            repeat(3) {
                val hold = present(held.acquire(5.seconds))
                assertNull(lock.acquire(50.milliseconds), "held by the other client")
                hold.release()
            }
            repeat(6) { present(lock.acquire(5.seconds)).release() }
            val hold = present(held.acquire(5.seconds))
            val waiting = async(start = CoroutineStart.UNDISPATCHED) { lock.acquire(20.seconds) }
            Zk.eventually("the tester waits behind the holder") { lock.participants().size == 2 }
            assertEquals(1L, tester.metrics().gauge("zkrecipes.lock.waiters", mapOf("path" to path)))
            hold.release()
            val contended = present(withTimeout(20_000) { waiting.await() })
            contended.release()

            val seen = tester.metrics()
            val here = mapOf("path" to path)
            assertEquals(3L, seen.counter("zkrecipes.lock.acquisitions", here + ("outcome" to "timeout")))
            assertEquals(7L, seen.counter("zkrecipes.lock.acquisitions", here + ("outcome" to "acquired")))
            assertEquals(0L, seen.gauge("zkrecipes.lock.waiters", here))
            assertEquals(0L, seen.gauge("zkrecipes.lock.holders", here))
            val waits = present(seen.histogram("zkrecipes.lock.wait.duration", here))
            assertEquals(10L, waits.count)
            val p50 = present(waits.quantile(0.5))
            assertTrue(p50 in waits.min..waits.max, "$p50 within $waits")
            val point = seen.points.single {
                it.name == "zkrecipes.lock.acquisitions" && it.attributes["path"] == path && it.attributes["outcome"] == "timeout"
            }
            assertEquals(
                MetricPoint(
                    name = "zkrecipes.lock.acquisitions",
                    instrument = Instrument.COUNTER,
                    unit = "{acquisition}",
                    description = point.description,
                    attributes = mapOf("path" to path, "kind" to "lock", "outcome" to "timeout"),
                    value = 3,
                ),
                point,
            )
            assertEquals(listOf("path", "kind", "outcome"), point.attributes.keys.toList())
            assertTrue(
                seen.toPrometheus().contains("zkrecipes_lock_acquisitions_total{path=\"$path\",kind=\"lock\",outcome=\"timeout\"} 3\n"),
            )
            assertThrows<ZkException.InvalidArgument> { seen.counter("zkrecipes.lock.acquisition") }
            assertThrows<ZkException.InvalidArgument> { waits.quantile(1.5) }

            // The contended acquire, at INFO with its token, on the library's log thread.
            assertTrue(Client.flushLogs(10.seconds), "the events are delivered")
            val (acquired, thread) = recording.records.single { (record, _) ->
                record.message.contains(" path=$path ") && record.message.contains("outcome=acquired")
            }
            assertEquals(Level.INFO, acquired.level)
            assertEquals("zkrecipes.lock", acquired.loggerName)
            assertEquals("zkrecipes-log", thread)
            assertTrue(acquired.message.contains(" fencing_token=${contended.fencingToken}"), acquired.message)
            assertTrue(Regex(" waited_ms=[0-9]+").containsMatchIn(acquired.message), acquired.message)
        } finally {
            jul.removeHandler(recording)
            jul.level = null
            Client.refreshLogLevels()
        }
    }

    @Test
    fun withoutPathsTheNumbersAddUpPerKind(): Unit = runBlocking {
        val path = Zk.path("observe-no-paths")
        Zk.client(ClientOptions(metricPaths = false)).use { client ->
            client.writeLock(path).withLock(5.seconds) { }
            client.writeLock("$path-b").withLock(5.seconds) { }
            val seen = client.metrics()
            val acquisitions = seen.points.filter { it.name == "zkrecipes.lock.acquisitions" }
            assertEquals(listOf(mapOf("kind" to "lock", "outcome" to "acquired")), acquisitions.map { it.attributes })
            assertEquals(2L, seen.counter("zkrecipes.lock.acquisitions", mapOf("outcome" to "acquired")))
            assertTrue(seen.points.none { "path" in it.attributes })
        }
    }

    @Test
    fun aJobNackedTwiceThenAckedIsRedeliveredTwice(): Unit = Zk.oneClient("observe-work") { client, path ->
        client.workQueue(path).use { work ->
            work.offer("job".toByteArray())
            for (attempt in 1..3) {
                val delivery = present(work.consume(10.seconds), "delivery $attempt")
                assertEquals(attempt, delivery.deliveryCount)
                if (attempt < 3) delivery.nack() else delivery.ack()
            }
            val seen = client.metrics()
            val here = mapOf("path" to path)
            assertEquals(3L, seen.counter("zkrecipes.work_queue.deliveries", here))
            assertEquals(2L, seen.counter("zkrecipes.work_queue.redeliveries", here))
            assertEquals(0L, seen.gauge("zkrecipes.work_queue.in_flight", here))
        }
    }
}
