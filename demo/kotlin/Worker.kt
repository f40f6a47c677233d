// A demo worker in Kotlin: election member, producer when leading, consumer always, in
// coroutines. Compiled with the Kotlin JAR's test classes; run with that JAR on the classpath.
// With ZKRECIPES_DEMO_METRICS_PORT (`run.py --prometheus`) it serves its client's metrics there.
import com.sun.net.httpserver.HttpServer
import io.zkrecipes.kotlin.Client
import io.zkrecipes.kotlin.ClientOptions
import io.zkrecipes.kotlin.ElectionEvent
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.update
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import java.io.BufferedReader
import java.io.InputStreamReader
import java.io.OutputStreamWriter
import java.net.InetSocketAddress
import java.net.Socket
import kotlin.system.exitProcess
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** The demo's shared ledger: one line out, one line back. */
class Ledger(address: String) {
    private val socket = address.split(":").let { Socket(it[0], it[1].toInt()) }
    private val input = BufferedReader(InputStreamReader(socket.getInputStream(), Charsets.UTF_8))
    private val output = OutputStreamWriter(socket.getOutputStream(), Charsets.UTF_8)

    suspend fun ask(line: String): String = withContext(Dispatchers.IO) {
        synchronized(this@Ledger) {
            output.write(line + "\n")
            output.flush()
            input.readLine()
        }
    }
}

/**
 * This client's metrics at http://127.0.0.1:<port>/metrics for the demo's Prometheus, and a wait
 * for a scrape begun after the work, so that Prometheus's last sample is the final count.
 */
class MetricsEndpoint private constructor(client: Client, port: Int) : AutoCloseable {
    // System.nanoTime of the latest scrape served (compared by difference: its origin is arbitrary).
    private val lastScrapeBegan = MutableStateFlow(System.nanoTime())
    private val server = HttpServer.create(InetSocketAddress("127.0.0.1", port), 0).apply {
        createContext("/") { exchange ->
            val began = System.nanoTime()
            try {
                if (exchange.requestURI.path != "/metrics") {
                    exchange.sendResponseHeaders(404, -1)
                    return@createContext
                }
                val body = client.metrics().toPrometheus().toByteArray(Charsets.UTF_8)
                exchange.responseHeaders.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                exchange.sendResponseHeaders(200, body.size.toLong())
                exchange.responseBody.write(body)
            } finally {
                exchange.close()
            }
            // Counted once written: the worker may exit as soon as it is told.
            lastScrapeBegan.update { if (began - it > 0) began else it }
        }
        start()
    }

    suspend fun awaitScrape(timeout: Duration): Boolean {
        val since = System.nanoTime()
        return withTimeoutOrNull(timeout) { lastScrapeBegan.first { it - since > 0 } } != null
    }

    override fun close() = server.stop(0)

    companion object {
        /** The endpoint on the port the demo gave, or null when it asked for none. */
        fun fromEnvironment(client: Client): MetricsEndpoint? =
            System.getenv("ZKRECIPES_DEMO_METRICS_PORT")?.let { MetricsEndpoint(client, it.toInt()) }
    }
}

object KotlinWorker {
    @JvmStatic
    fun main(args: Array<String>) {
        runBlocking(Dispatchers.Default) { work(args[0], args[1], args[2], Ledger(args[3]), args[4].toLong()) }
        exitProcess(0)
    }

    private suspend fun work(connect: String, root: String, name: String, ledger: Ledger, sessionSeconds: Long) = coroutineScope {
        ledger.ask("HELLO $name ${ProcessHandle.current().pid()}")
        Client.connect(connect, ClientOptions(identity = name, sessionTimeout = sessionSeconds.seconds)).use { client ->
            MetricsEndpoint.fromEnvironment(client).use { endpoint ->
                val lock = client.writeLock("$root/lock")
                val audit = client.readWriteLock("$root/audit")
                // At least once: a job whose worker dies is delivered again to another.
                val jobs = client.workQueue("$root/jobs")
                val election = client.leaderElection("$root/election", name)
                val leading = CompletableDeferred<Unit>()
                val watcher = launch(start = CoroutineStart.UNDISPATCHED) {
                    election.events.first { it.type == ElectionEvent.Type.ELECTED_COMPLETE }
                    ledger.ask("LEADER $name")
                    leading.complete(Unit)
                }
                election.start()
                val producer = launch {
                    leading.await()
                    while (ledger.ask("DONE?") == "NO") {
                        val n = ledger.ask("NEXT ${jobs.size()}").toInt()
                        if (n < 0) {
                            delay(200)
                            continue
                        }
                        jobs.offer("job-$n".toByteArray())
                        ledger.ask("OFFERED $n")
                        delay(10)
                    }
                }
                val auditor = launch {
                    while (ledger.ask("DONE?") == "NO") {
                        delay(1000)
                        if (leading.isCompleted) {
                            audit.readLock.withLock { reading ->
                                ledger.ask("AUDIT $name ${reading.fencingToken}")
                                delay(50)
                                ledger.ask("AUDITED $name ${reading.fencingToken}")
                            }
                        }
                    }
                }
                while (ledger.ask("DONE?") == "NO") {
                    val delivery = jobs.consume(500.milliseconds) ?: continue
                    delivery.use { job -> // given back unless acknowledged
                        val n = job.data.decodeToString().split("-")[1].toInt()
                        ledger.ask("TAKEN $n $name")
                        lock.withLock { hold ->
                            audit.writeLock.withLock { writing ->
                                ledger.ask("APPLY $n ${hold.fencingToken} $name ${writing.fencingToken}")
                            }
                        }
                        job.ack()
                    }
                }
                // Shutting down: the helpers stop, and an audit in flight releases its read lock
                // (withLock's finally), before the election stops and the client closes.
                listOf(producer, auditor, watcher).forEach { it.cancelAndJoin() }
                election.stop()
                endpoint?.awaitScrape(5.seconds)
                // What this worker's own metrics say, for the demo's table (the core estimates the
                // percentiles).
                val metrics = client.metrics()
                val lockPath = mapOf("path" to "$root/lock")
                val waits = metrics.histogram("zkrecipes.lock.wait.duration", lockPath)
                val holds = metrics.histogram("zkrecipes.lock.hold.duration", lockPath)
                fun millis(h: io.zkrecipes.kotlin.HistogramPoint?, q: Double) = (h?.quantile(q) ?: 0.0) * 1000
                val acquired = metrics.counter("zkrecipes.lock.acquisitions", lockPath + ("outcome" to "acquired"))
                ledger.ask(
                    String.format(
                        java.util.Locale.ROOT, "METRICS %s %.3f %.3f %.3f %.3f %d %d", name,
                        millis(waits, 0.5), millis(waits, 0.99), millis(holds, 0.5), millis(holds, 0.99),
                        acquired, metrics.counter("zkrecipes.work_queue.redeliveries"),
                    ),
                )
            }
        }
    }
}
