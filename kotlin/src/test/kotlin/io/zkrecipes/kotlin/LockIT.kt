package io.zkrecipes.kotlin

import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.Collections
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

class LockIT {
    @Test
    fun acquireReleaseTryAndTokensThatIncrease(): Unit = Zk.twoClients("lock") { a, b, path ->
        val lockA = a.writeLock(path)
        val lockB = b.writeLock(path)
        val first = present(lockA.acquire(5.seconds))
        assertTrue(first.isHeld && lockA.isHeld)
        assertNull(lockB.tryAcquire(), "held elsewhere: a try answers null")
        assertNull(lockB.acquire(100.milliseconds), "a timeout answers null, never throws")
        val participants = lockB.participants()
        assertEquals(1, participants.size)
        assertEquals(a.identity, participants[0].identity)
        first.release()
        assertFalse(first.isHeld)
        assertThrows<ZkException.NotOwner> { runBlocking { first.release() } }
        val second = present(lockB.acquire(5.seconds))
        assertTrue(second.fencingToken > first.fencingToken)
        second.use { }
        assertFalse(lockB.isHeld)
    }

    /**
     * Each thread reuses one call status (tools/uniffi-bindgen patches uniffi's Kotlin): a
     * failed call must never make the next call on that thread fail, or the other way round,
     * also with calls made while another's arguments are lowered and eight threads at once.
     */
    @Test
    fun failuresAndSuccessesAlternateOnEveryThreadEachWithItsOwnOutcome(): Unit = Zk.oneClient("status") { client, path ->
        val threads = (0 until 8).map { t ->
            Thread {
                repeat(300) { i ->
                    assertThrows<ZkException.InvalidPath> { client.writeLock("no-slash-$t-$i") }
                    val lock = client.writeLock("$path/$t")
                    assertFalse(lock.isHeld)
                    assertEquals("$path/$t", lock.path)
                    runBlocking {
                        val hold = present(lock.acquire(5.seconds))
                        hold.release()
                        assertThrows<ZkException.NotOwner> { runBlocking { hold.release() } }
                        present(lock.acquire(0.milliseconds), "a try of a free lock after NOT_OWNER").release()
                    }
                }
            }
        }
        val failures = Collections.synchronizedList(mutableListOf<Throwable>())
        threads.forEach { it.setUncaughtExceptionHandler { _, e -> failures.add(e) }; it.start() }
        threads.forEach { it.join(120_000) }
        assertTrue(threads.none { it.isAlive }, "a thread still runs after 120 s")
        assertEquals(emptyList<Throwable>(), failures.toList())
    }

    @Test
    fun eightCoroutinesOnOneDispatcherNeverOverlapAndTokensIncrease(): Unit = Zk.oneClient("contended") { client, path ->
        val inside = AtomicInteger()
        val tokens = Collections.synchronizedList(mutableListOf<Long>())
        // Half share one lock object, half have their own: both exclude.
        val shared = client.writeLock(path)
        coroutineScope {
            repeat(8) {
                val lock = if (it % 2 == 0) shared else client.writeLock(path)
                launch {
                    repeat(10) {
                        lock.withLock { hold ->
                            assertEquals(1, inside.incrementAndGet(), "two holders at once")
                            tokens += hold.fencingToken
                            delay(2)
                            inside.decrementAndGet()
                        }
                    }
                }
            }
        }
        assertEquals(80, tokens.size)
        assertEquals(tokens.sorted(), tokens, "fencing tokens increase with every hold")
        assertEquals(80, tokens.toSet().size)
    }

    @Test
    fun cancellingAWaitingAcquireWithdrawsItsNode(): Unit = Zk.twoClients("cancel") { a, b, path ->
        val hold = present(a.writeLock(path).acquire())
        val waiting = launch { b.writeLock(path).acquire() }
        Zk.eventually("the waiter's node is there") { a.writeLock(path).participants().size == 2 }
        waiting.cancelAndJoin()
        Zk.eventually("the waiter's node is gone") { a.writeLock(path).participants().size == 1 }
        hold.release()
        assertTrue(a.writeLock(path).participants().isEmpty())
    }

    @Test
    fun withLockReleasesOnExceptionAndOnCancellation(): Unit = Zk.oneClient("with") { client, path ->
        val lock = client.writeLock(path)
        assertThrows<IllegalStateException> {
            runBlocking { lock.withLock { error("worker failed") } }
        }
        assertFalse(lock.isHeld)
        val job = launch { lock.withLock { delay(60_000) } }
        Zk.eventually("held") { lock.isHeld }
        job.cancelAndJoin()
        assertFalse(lock.isHeld)
        assertTrue(lock.participants().isEmpty(), "released on the server")
        Zk.client().use { other ->
            present(other.writeLock(path).tryAcquire()).release()
            val held = present(other.writeLock(path).acquire())
            assertThrows<ZkException.Timeout> { runBlocking { lock.withLock(50.milliseconds) { } } }
            held.release()
        }
    }

    @Test
    fun eventsFlowCarriesTokensAndEnds(): Unit = runBlocking {
        val client = Zk.client()
        val lock = client.writeLock(Zk.path("events"))
        val events = async(start = CoroutineStart.UNDISPATCHED) { lock.events.take(2).toList() }
        val hold = present(lock.acquire())
        hold.release()
        val seen = withTimeout(5_000) { events.await() }
        assertEquals(listOf(LockEvent.Type.ACQUIRED, LockEvent.Type.RELEASED), seen.map { it.type })
        assertEquals(hold.fencingToken, seen[0].fencingToken)
        assertEquals(ConnectionState.CONNECTED, client.state.value)
        client.close()
        withTimeout(5_000) { client.state.first { it == ConnectionState.CLOSED } }
        assertThrows<ZkException.Closed> { runBlocking { lock.acquire() } }
    }

    @Test
    fun readersShareAndAWriterExcludes(): Unit = Zk.twoClients("rw") { a, b, path ->
        val rwA = a.readWriteLock(path)
        val rwB = b.readWriteLock(path)
        val r1 = present(rwA.readLock.acquire(5.seconds))
        val r2 = present(rwB.readLock.acquire(5.seconds))
        assertNull(b.readWriteLock(path).writeLock.tryAcquire())
        // Every acquire is a holder of its own (issue 48): a write beside this object's
        // read hold is another holder's, which waits for it (a try answers null).
        assertNull(rwB.writeLock.tryAcquire())
        r1.release()
        r2.release()
        val w = present(rwB.writeLock.acquire(5.seconds))
        assertNull(rwA.readLock.tryAcquire())
        w.release()
    }

    @Test
    fun badInputIsTyped(): Unit = runBlocking {
        Zk.client().use { client ->
            assertThrows<ZkException.InvalidPath> { client.writeLock("no-slash") }
            // Negative is zero, as for delay and withTimeout: a try, which takes a free lock.
            present(client.writeLock(Zk.path("negative")).acquire((-5).milliseconds)).release()
            assertThrows<ZkException.InvalidArgument> { runBlocking { client.workQueue(Zk.path("bad")).offer(ByteArray(1), -1) } }
            // Negative infinity is a try as well (timeouts cross as plain numbers, infinity included).
            val path = Zk.path("after-errors")
            val lock = client.writeLock(path)
            val hold = present(lock.acquire(-Duration.INFINITE))
            hold.release()
            // Each thread reuses one call status, read only on failure: a failure must leave the
            // next call clean, a plain one and an awaited one.
            assertThrows<ZkException.NotOwner> { runBlocking { hold.release() } }
            assertEquals(path, lock.path)
            assertThrows<ZkException.InvalidPath> { client.writeLock("") }
            present(lock.acquire()).release()
        }
        assertThrows<ZkException> {
            runBlocking { Client.connect("127.0.0.1:1", ClientOptions(connectTimeout = 300.milliseconds)) }
        }
        Unit
    }

    /** Found by an adversarial run: on Unconfined a coroutine resumes on the library's own thread, where close() did not wait. */
    @Test
    fun closeOnTheLibrarysOwnThreadWaitsForTheClose(): Unit = runBlocking {
        val client = Zk.client()
        val lock = client.writeLock(Zk.path("unconfined"))
        withContext(Dispatchers.Unconfined) {
            val hold = present(lock.acquire())
            client.close()
            assertFalse(hold.isHeld)
            assertEquals(ConnectionState.CLOSED, client.state.value)
        }
    }
}
