package io.zkrecipes.kotlin

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import java.util.UUID
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext

/** Test helpers: the server from `ZK_CONNECT` (tests/with-zk starts one), unique paths. */
object Zk {
    val connect: String
        get() = System.getenv("ZK_CONNECT")?.takeIf { it.isNotEmpty() }
            ?: error("ZK_CONNECT must point at a ZooKeeper (run the tests through tests/with-zk)")

    suspend fun client(options: ClientOptions = ClientOptions()): Client = Client.connect(connect, options)

    fun path(name: String) = "/kotlin-test/$name-${UUID.randomUUID()}"

    /**
     * A test's body, run blocking on `context`, with a client of its own (closed however the
     * body ends) and a fresh path named after `name`.
     */
    fun oneClient(
        name: String,
        context: CoroutineContext = EmptyCoroutineContext,
        body: suspend CoroutineScope.(client: Client, path: String) -> Unit,
    ): Unit = runBlocking(context) { client().use { c -> body(c, path(name)) } }

    /**
     * A test's body, run blocking on `context`, with two clients of sessions of their own (both
     * closed however the body ends) and a fresh path named after `name`.
     */
    fun twoClients(
        name: String,
        context: CoroutineContext = EmptyCoroutineContext,
        body: suspend CoroutineScope.(a: Client, b: Client, path: String) -> Unit,
    ): Unit = runBlocking(context) { client().use { a -> client().use { b -> body(a, b, path(name)) } } }

    suspend fun eventually(what: String, check: suspend () -> Boolean) {
        val deadline = System.nanoTime() + 10_000_000_000L
        while (System.nanoTime() < deadline) {
            if (check()) return
            delay(20)
        }
        throw AssertionError("not within 10 s: $what")
    }
}

/** The value, or the test fails: JUnit's `assertNotNull` returns nothing to go on with. */
fun <T : Any> present(value: T?, message: String = "expected a value, got null"): T = value ?: throw AssertionError(message)
