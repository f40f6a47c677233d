package io.zkrecipes.kotlin

import io.micrometer.core.instrument.Tags
import io.micrometer.core.instrument.Timer
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import io.micrometer.prometheusmetrics.PrometheusConfig
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import io.zkrecipes.kotlin.micrometer.ZkrecipesMetrics
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.withContext
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.io.File
import java.nio.file.Path
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * A client's metrics in Micrometer registries from Kotlin, against a real ZooKeeper (the Java
 * library's MicrometerIT checks the same at length): the numbers against what the test did, the
 * Prometheus names against the library's own text, each check after a flush, never a sleep.
 */
class MicrometerIT {
    private val acquisitions = "zkrecipes.lock.acquisitions"
    private val wait = "zkrecipes.lock.wait.duration"

    @Test
    fun lockAcquisitionsReachTheRegistryAndNothingAfterClose(): Unit = Zk.twoClients("micrometer-lock") { holder, tester, path ->
        val held = holder.writeLock(path)
        val lock = tester.writeLock(path)
        val before = tester.writeLock("$path-before")
        repeat(2) { present(before.acquire(5.seconds)).release() }
        val simple = SimpleMeterRegistry()
        val prometheus = PrometheusMeterRegistry(PrometheusConfig.DEFAULT)
        val metrics = ZkrecipesMetrics(tester, Tags.of("app", "orders"))
        metrics.bindTo(simple)
        metrics.bindTo(prometheus)
        // Counted before bindTo: the counters start from it; the durations before are gone.
        assertEquals(2.0, simple.get(acquisitions).tags("path", "$path-before", "app", "orders").counter().count())
        assertNull(simple.find(wait).tags("path", "$path-before").timer())

        // 20 acquisitions, every tenth while the other client holds the lock.
        for (i in 0 until 20) {
            if (i % 10 == 0) {
                val hold = present(held.acquire(5.seconds))
                assertNull(lock.acquire(50.milliseconds), "held by the other client")
                hold.release()
            } else {
                val hold = present(lock.acquire(5.seconds))
                if (i == 5) {
                    assertTrue(metrics.flush(10.seconds))
                    assertEquals(1.0, simple.get("zkrecipes.lock.holders").tags("path", path).gauge().value())
                }
                hold.release()
            }
        }
        assertTrue(metrics.flush(10.seconds), "the recordings reached the meters")
        assertEquals(2.0, simple.get(acquisitions).tags("path", path, "outcome", "timeout").counter().count())
        assertEquals(18.0, simple.get(acquisitions).tags("path", path, "outcome", "acquired").counter().count())
        assertEquals(20L, simple.get(wait).tags("path", path).timers().sumOf(Timer::count))
        assertEquals(0.0, simple.get("zkrecipes.lock.holders").tags("path", path).gauge().value())
        assertTrue(simple.get(wait).tags("path", path, "outcome", "timeout").timer().totalTime(TimeUnit.SECONDS) >= 2 * 0.05)

        // The library's own Prometheus names and values, with the registry's tag added.
        val scraped = prometheus.scrape()
        for (line in tester.metrics().toPrometheus().lines().filter { it.startsWith("zkrecipes_lock_acquisitions_total{path=\"$path\"") }) {
            val (name, value) = line.split(" ")
            val outcome = Regex("outcome=\"([a-z]+)\"").find(name)!!.groupValues[1]
            val theirs = "zkrecipes_lock_acquisitions_total{app=\"orders\",kind=\"lock\",outcome=\"$outcome\",path=\"$path\"} $value.0"
            assertTrue(scraped.contains("$theirs\n"), "$theirs in\n$scraped")
        }
        for (name in listOf("zkrecipes_lock_wait_duration_seconds_bucket{", "zkrecipes_lock_holders{")) {
            assertTrue(scraped.contains("\n$name"), "$name in\n$scraped")
        }

        // Closed: the meters stay and get nothing more.
        metrics.close()
        repeat(3) { present(lock.acquire(5.seconds)).release() }
        assertTrue(metrics.flush(10.seconds), "the delivery thread has passed the recordings")
        assertEquals(21L, tester.metrics().counter(acquisitions, mapOf("path" to path, "outcome" to "acquired")))
        assertEquals(18.0, simple.get(acquisitions).tags("path", path, "outcome", "acquired").counter().count())
        assertThrows<ZkException.Closed> { metrics.bindTo(SimpleMeterRegistry()) }
        assertThrows<ZkException.InvalidArgument> { metrics.flush(0.seconds) }
    }

    @Test
    fun aJobNackedTwiceThenAckedIsRedeliveredTwice(): Unit = Zk.oneClient("micrometer-work") { client, path ->
        val registry = SimpleMeterRegistry()
        ZkrecipesMetrics(client).use { metrics ->
            metrics.bindTo(registry)
            client.workQueue(path).use { work ->
                work.offer("job".toByteArray())
                for (attempt in 1..3) {
                    val delivery = present(work.consume(10.seconds), "delivery $attempt")
                    if (attempt < 3) delivery.nack() else delivery.ack()
                }
            }
            assertTrue(metrics.flush(10.seconds))
            assertEquals(3.0, registry.get("zkrecipes.work_queue.deliveries").tags("path", path).counter().count())
            assertEquals(2.0, registry.get("zkrecipes.work_queue.redeliveries").tags("path", path).counter().count())
            assertEquals(0.0, registry.get("zkrecipes.work_queue.in_flight").tags("path", path).gauge().value())
        }
    }

    /** The JAR without Micrometer: a program with the library and its three dependencies only. */
    @Test
    fun theLibraryWorksWithoutMicrometerOnTheClasspath(): Unit = kotlinx.coroutines.runBlocking {
        val classpath = listOf(Client::class.java, Unit::class.java, kotlinx.coroutines.CoroutineScope::class.java,
            com.sun.jna.Native::class.java, WithoutMicrometer::class.java)
            .joinToString(File.pathSeparator) { Path.of(it.protectionDomain.codeSource.location.toURI()).toString() }
        val java = Path.of(System.getProperty("java.home"), "bin", "java").toString()
        val program = ProcessBuilder(java, "-cp", classpath, WithoutMicrometer::class.java.name, Zk.connect, Zk.path("without-micrometer"))
            .redirectErrorStream(true).start()
        val out = withContext(Dispatchers.IO) {
            val reading = async { program.inputStream.readAllBytes().decodeToString() }
            if (!program.waitFor(60, TimeUnit.SECONDS)) {
                program.destroyForcibly()
                throw AssertionError("the program without Micrometer did not end within 60 s")
            }
            reading.await()
        }
        assertEquals(0, program.exitValue(), out)
        assertTrue(out.contains("acquired 1, no micrometer"), out)
    }
}
