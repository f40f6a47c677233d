package io.zkrecipes.kotlin

import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.api.trace.Span
import io.opentelemetry.api.trace.StatusCode
import io.opentelemetry.api.trace.Tracer
import io.opentelemetry.context.Context
import io.opentelemetry.extension.kotlin.asContextElement
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter
import io.opentelemetry.sdk.trace.SdkTracerProvider
import io.opentelemetry.sdk.trace.data.SpanData
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * The OpenTelemetry span around each suspend call that waits, against a real ZooKeeper, read
 * back from the SDK's in-memory exporter: its name (the core's), its parent (the coroutine's
 * context, propagated with the Kotlin extension's `asContextElement()`, or the thread's), its
 * outcome, token and waited time checked against what the test did. A span ends before the call
 * returns or throws, so each check reads the exporter once the call is over. Without a tracer
 * provider (or without the API) a child JVM shows that no span is made and the class that makes
 * them is never loaded.
 */
class OpenTelemetryIT {
    companion object {
        private val PATH = AttributeKey.stringKey("path")
        private val KIND = AttributeKey.stringKey("kind")
        private val OUTCOME = AttributeKey.stringKey("outcome")
        private val TOKEN = AttributeKey.longKey("fencing_token")
        private val WAITED_MS = AttributeKey.longKey("waited_ms")

        private val exporter: InMemorySpanExporter = InMemorySpanExporter.create()
        private lateinit var sdk: OpenTelemetrySdk
        private lateinit var tracer: Tracer

        @JvmStatic
        @BeforeAll
        fun setProvider() {
            sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build()
            GlobalOpenTelemetry.resetForTest()
            GlobalOpenTelemetry.set(sdk)
            tracer = sdk.getTracer("OpenTelemetryIT")
        }

        @JvmStatic
        @AfterAll
        fun resetProvider() {
            GlobalOpenTelemetry.resetForTest()
            sdk.close()
        }
    }

    @BeforeEach
    fun forgetSpans() = exporter.reset()

    /** The finished spans named [name], in the order they ended. */
    private fun spans(name: String): List<SpanData> = exporter.finishedSpanItems.filter { it.name == name }

    private fun only(name: String): SpanData {
        val found = spans(name)
        assertEquals(1, found.size, "one $name span: ${exporter.finishedSpanItems}")
        return found.single()
    }

    /** The one span named [name] under [parent], in its trace. */
    private fun childOf(parent: Span, name: String): SpanData {
        val children = spans(name).filter { it.parentSpanId == parent.spanContext.spanId }
        assertEquals(1, children.size, "one $name span under the caller's: ${exporter.finishedSpanItems}")
        assertEquals(parent.spanContext.traceId, children.single().traceId)
        return children.single()
    }

    private fun assertOutcome(span: SpanData, outcome: String) {
        assertEquals(outcome, span.attributes[OUTCOME], span.toString())
        assertNotNull(span.attributes[WAITED_MS], "waited_ms")
        if (outcome != "error") assertEquals(StatusCode.UNSET, span.status.statusCode, span.toString())
    }

    @Test
    fun aContendedAcquireIsAChildOfTheCoroutinesSpanWithItsTokenAndWait(): Unit =
        Zk.twoClients("otel-contended", Dispatchers.Default) { a, b, path ->
            val held = present(a.writeLock(path).acquire(10.seconds))
            val lock = b.writeLock(path)
            val caller = tracer.spanBuilder("caller").startSpan()
            // The application's context, carried by the coroutine across its suspensions and
            // threads: current on none of the test's own threads.
            val waiter = async(Context.current().with(caller).asContextElement()) {
                yield()
                val hold = lock.acquire(30.seconds)
                hold?.fencingToken.also { hold?.release() }
            }
            Zk.eventually("the waiter queued") { lock.participants().size == 2 }
            val queued = System.nanoTime()
            // The holder keeps the lock a while (the workload, not a synchronisation): the
            // waiter's span must have waited at least as long.
            delay(300)
            val heldMs = (System.nanoTime() - queued) / 1_000_000
            held.release()
            val token = present(withTimeout(30_000) { waiter.await() })
            caller.end()

            val acquire = childOf(caller, "zkrecipes.lock.acquire")
            assertOutcome(acquire, "acquired")
            assertEquals(path, acquire.attributes[PATH])
            assertEquals("lock", acquire.attributes[KIND], "as the core's metrics name an exclusive lock's acquire")
            assertEquals(token, acquire.attributes[TOKEN])
            val waited = present(acquire.attributes[WAITED_MS])
            assertTrue(waited >= heldMs, "waited $waited ms, held $heldMs ms")
            // The holder's acquire, outside any span of the test's: a root of its own.
            val holder = spans("zkrecipes.lock.acquire").first { it.spanId != acquire.spanId }
            assertFalse(holder.parentSpanContext.isValid)
            assertEquals(held.fencingToken, holder.attributes[TOKEN])
        }

    @Test
    fun withoutTheExtensionTheParentIsTheContextCurrentAtTheCall(): Unit = Zk.oneClient("otel-thread") { client, path ->
        val caller = tracer.spanBuilder("caller").startSpan()
        val hold = caller.makeCurrent().use { present(client.writeLock(path).acquire(10.seconds)) }
        hold.release()
        caller.end()
        assertOutcome(childOf(caller, "zkrecipes.lock.acquire"), "acquired")
    }

    @Test
    fun aTimedOutAcquireHasNoToken(): Unit = Zk.twoClients("otel-timeout") { a, b, path ->
        val held = present(a.writeLock(path).acquire(10.seconds))
        val lock = b.writeLock(path)
        exporter.reset()
        assertNull(lock.acquire(100.milliseconds))
        val timed = only("zkrecipes.lock.acquire")
        assertOutcome(timed, "timeout")
        assertNull(timed.attributes[TOKEN])
        assertTrue(present(timed.attributes[WAITED_MS]) >= 100, timed.toString())
        assertNull(lock.tryAcquire(), "a try")
        assertOutcome(spans("zkrecipes.lock.acquire")[1], "timeout")
        held.release()
    }

    @Test
    fun aCancelledWaitAndTheCallersDeadlineAreBothCancelled(): Unit =
        Zk.twoClients("otel-cancel", Dispatchers.Default) { a, b, path ->
            val held = present(a.writeLock(path).acquire(10.seconds))
            val lock = b.writeLock(path)
            exporter.reset()
            val waiting = launch(start = CoroutineStart.UNDISPATCHED) { lock.acquire() }
            Zk.eventually("the waiter queued") { lock.participants().size == 2 }
            waiting.cancelAndJoin()
            val cancelled = only("zkrecipes.lock.acquire")
            assertOutcome(cancelled, "cancelled")
            assertNull(cancelled.attributes[TOKEN])

            exporter.reset()
            // The caller's own deadline gives the wait up from outside: cancelled, as the metrics count it.
            assertThrows<TimeoutCancellationException> { runBlocking { withTimeout(100) { lock.acquire() } } }
            assertOutcome(only("zkrecipes.lock.acquire"), "cancelled")
            Zk.eventually("the metrics count both waits given up as cancelled") {
                b.metrics().counter("zkrecipes.lock.acquisitions", mapOf("path" to path, "outcome" to "cancelled")) == 2L
            }

            // The same through `obtaining` (the queue's take), which cancels its native call itself.
            exporter.reset()
            val queue = b.queue("$path-queue")
            val taking = launch(start = CoroutineStart.UNDISPATCHED) { queue.take() }
            taking.cancelAndJoin()
            assertOutcome(only("zkrecipes.queue.take"), "cancelled")
            held.release()
        }

    @Test
    fun aFailedWaitIsAnErrorWithItsException(): Unit = runBlocking {
        val client = Zk.client()
        val semaphore = client.semaphore(Zk.path("otel-error"), 1)
        val tooMany = assertThrows<ZkException.InvalidArgument> { runBlocking { semaphore.acquire(2) } }
        val failed = only("zkrecipes.semaphore.acquire")
        assertOutcome(failed, "error")
        assertEquals(StatusCode.ERROR, failed.status.statusCode)
        assertTrue(failed.status.description.contains("INVALID_ARGUMENT"), failed.status.toString())
        val exception = failed.events.first { it.name == "exception" }
        assertEquals(tooMany::class.java.canonicalName, exception.attributes[AttributeKey.stringKey("exception.type")])

        exporter.reset()
        val lock = client.writeLock(Zk.path("otel-closed"))
        client.close()
        assertThrows<ZkException.Closed> { runBlocking { lock.acquire() } }
        val closed = only("zkrecipes.lock.acquire")
        assertOutcome(closed, "error")
        assertEquals(StatusCode.ERROR, closed.status.statusCode)
    }

    @Test
    fun everyOtherWaitIsNamedAsTheCoreNamesIt(): Unit = Zk.oneClient("otel-kinds") { client, base ->
        client.semaphore("$base/semaphore", 1).use { semaphore ->
            val lease = semaphore.acquire()
            val acquire = only("zkrecipes.semaphore.acquire")
            assertOutcome(acquire, "acquired")
            assertEquals(lease.fencingToken, acquire.attributes[TOKEN])
            assertNull(semaphore.tryAcquire(50.milliseconds))
            assertOutcome(spans("zkrecipes.semaphore.acquire")[1], "timeout")
            lease.release()
        }

        client.queue("$base/queue").use { queue ->
            assertNull(queue.take(50.milliseconds))
            assertOutcome(only("zkrecipes.queue.take"), "timeout")
            queue.offer("one".toByteArray())
            assertEquals("one", queue.take().decodeToString())
            val take = spans("zkrecipes.queue.take")[1]
            assertOutcome(take, "taken")
            assertEquals("$base/queue", take.attributes[PATH])
            queue.offer("two".toByteArray())
            assertEquals(1, queue.takeMany(10, 10.seconds).size)
            assertOutcome(spans("zkrecipes.queue.take")[2], "taken")
            assertEquals(listOf<ByteArray>(), queue.pollMany(10), "a poll is no wait: no span")
            assertEquals(3, spans("zkrecipes.queue.take").size)
        }

        client.workQueue("$base/jobs").use { jobs ->
            jobs.offer("job".toByteArray())
            present(jobs.consume(10.seconds)).ack()
            assertOutcome(only("zkrecipes.work_queue.consume"), "delivered")
        }

        client.leaderElection("$base/election", "host-a").use { election ->
            election.start()
            assertTrue(election.awaitLeadership(30.seconds))
            val leader = only("zkrecipes.election.await_leadership")
            assertOutcome(leader, "leader")
            assertNull(leader.attributes[TOKEN], "Apache's election has no fencing token")
        }

        client.leaderLatch("$base/latch").use { latch ->
            latch.start()
            val token = present(latch.awaitLeadership(30.seconds))
            val leader = only("zkrecipes.latch.await_leadership")
            assertOutcome(leader, "leader")
            assertEquals(token, leader.attributes[TOKEN])
        }

        client.barrier("$base/barrier").use { barrier ->
            barrier.set()
            assertFalse(barrier.wait(50.milliseconds))
            barrier.remove()
            assertTrue(barrier.wait())
            val waits = spans("zkrecipes.barrier.wait")
            assertOutcome(waits[0], "timeout")
            assertOutcome(waits[1], "passed")
            assertEquals("single", waits[1].attributes[KIND])
        }

        exporter.reset()
        client.doubleBarrier("$base/double", 1).use { pair ->
            assertTrue(pair.enter())
            assertTrue(pair.leave())
            val passes = spans("zkrecipes.barrier.wait")
            assertEquals(listOf("enter", "leave"), passes.map { it.attributes[KIND] })
            passes.forEach { assertOutcome(it, "passed") }
        }

        exporter.reset()
        val dirs = listOf("$base/multi-b", "$base/multi-a")
        client.multiLock(dirs).use { both ->
            val hold = present(both.acquire(10.seconds))
            hold.release()
            val acquire = only("zkrecipes.lock.acquire")
            assertOutcome(acquire, "acquired")
            assertEquals("multi", acquire.attributes[KIND])
            assertEquals(dirs.joinToString(","), acquire.attributes[PATH])
            assertNull(acquire.attributes[TOKEN], "one per path: the core's span has none either")
            val wait = client.metrics().histogram(
                "zkrecipes.lock.wait.duration",
                mapOf("path" to dirs.joinToString(","), "kind" to "multi", "outcome" to "acquired"),
            )
            assertEquals(1L, wait?.count)
        }

        exporter.reset()
        client.readWriteLock("$base/rw").use { rw ->
            present(rw.readLock.acquire(10.seconds)).release()
            present(rw.writeLock.acquire(10.seconds)).release()
            assertEquals(listOf("read", "write"), spans("zkrecipes.lock.acquire").map { it.attributes[KIND] })
        }
    }

    /**
     * Without the API on the classpath the library waits as ever. With it but no provider set, no
     * span is made and the class that makes spans is never loaded (the JVM's class-load log, up
     * to the moment the program sets a provider); a provider set later is seen at once.
     */
    @Test
    fun withoutAProviderNoSpanIsMadeAndNothingOfTheSdkIsLoaded(): Unit = runBlocking {
        val java = Path.of(System.getProperty("java.home"), "bin", "java").toString()
        val bare = listOf(Client::class.java, Unit::class.java, kotlinx.coroutines.CoroutineScope::class.java,
            com.sun.jna.Native::class.java, WithoutOpenTelemetry::class.java)
            .joinToString(File.pathSeparator) { Path.of(it.protectionDomain.codeSource.location.toURI()).toString() }
        val absent = runChild(ProcessBuilder(java, "-cp", bare, WithoutOpenTelemetry::class.java.name, "absent", Zk.connect,
            Zk.path("otel-absent")))
        assertTrue(absent.contains("waited without opentelemetry"), absent)

        val loaded = Files.createTempFile("otel-class-load", ".log")
        try {
            val unset = runChild(ProcessBuilder(java, "-Xlog:class+load=info:file=$loaded", "-cp",
                System.getProperty("java.class.path"), WithoutOpenTelemetry::class.java.name, "unset", Zk.connect,
                Zk.path("otel-unset")))
            assertTrue(unset.contains("untraced waits done; 1 span once a provider was set"), unset)
            val before = Files.readAllLines(loaded).takeWhile { !it.contains(WithoutOpenTelemetry.Traced::class.java.name) }
                .joinToString("\n")
            assertTrue(before.contains("io.zkrecipes.kotlin.OpenTelemetryTracer "), "the provider was looked for")
            assertFalse(before.contains("io.zkrecipes.kotlin.OpenTelemetryWaitSpan"), "the span hook was reached")
            assertFalse(before.contains("io.opentelemetry.sdk."), "the SDK was loaded")
            assertFalse(before.contains("io.opentelemetry.api.trace.SpanBuilder"), "a span was built")
        } finally {
            Files.deleteIfExists(loaded)
        }
    }

    /** Runs a child JVM for at most 60 s; its output, once it exited 0. */
    private suspend fun runChild(builder: ProcessBuilder): String = withContext(Dispatchers.IO) {
        val program = builder.redirectErrorStream(true).start()
        val reading = async { program.inputStream.readAllBytes().decodeToString() }
        if (!program.waitFor(60, TimeUnit.SECONDS)) {
            program.destroyForcibly()
            throw AssertionError("${builder.command()} did not end within 60 s")
        }
        val out = reading.await()
        assertEquals(0, program.exitValue(), out)
        out
    }
}
