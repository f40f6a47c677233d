package io.zkrecipes.kotlin

import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** The counting semaphore from Kotlin, against a real ZooKeeper. */
class SemaphoreIT {
    @Test
    fun leasesCountAcrossClientsAndAReleaseLetsAWaiterIn(): Unit = Zk.twoClients("semaphore") { a, b, path ->
        val ours = a.semaphore(path, 2)
        val theirs = b.semaphore(path, 2)
        val events = async(start = CoroutineStart.UNDISPATCHED) { ours.events.take(3).toList() }
        val first = ours.acquire()
        val second = present(theirs.tryAcquire(5.seconds))
        assertTrue(first.fencingToken < second.fencingToken)
        assertTrue(first.nodePath.startsWith("$path/leases/_c_"), first.nodePath)
        assertNull(ours.tryAcquire(), "none free: a try answers null")
        assertNull(theirs.tryAcquire(200.milliseconds), "a timeout answers null, never throws")
        assertNull(ours.tryAcquire(2, (-1).seconds), "all or none; a negative timeout is a try")
        assertEquals(2, ours.leaseNodes().size, "refused acquires leave nothing")
        val waiting = async(start = CoroutineStart.UNDISPATCHED) { ours.acquire() }
        Zk.eventually("the waiter lined up") { ours.leaseNodes().size == 3 }
        second.release()
        val third = withTimeout(20_000) { waiting.await() }
        assertTrue(third.isHeld)
        assertEquals(2, ours.held)
        first.release()
        assertFalse(first.isHeld)
        assertThrows<ZkException.NotOwner> { runBlocking { first.release() } }
        third.use { assertTrue(it.isHeld) }
        assertFalse(third.isHeld)
        val seen = withTimeout(5_000) { events.await() }
        // This object's leases: first, then the waiter's third; then first's release.
        assertEquals(listOf(LockEvent.Type.ACQUIRED, LockEvent.Type.ACQUIRED, LockEvent.Type.RELEASED), seen.map { it.type })
        assertEquals(first.fencingToken, seen[0].fencingToken)
        // withLease releases after the block, also when it throws; no lease in time: Timeout.
        val token = ours.withLease { it.fencingToken }
        assertTrue(token > third.fencingToken)
        assertThrows<IllegalStateException> { runBlocking { ours.withLease { error("boom") } } }
        val both = ours.acquire(2)
        assertThrows<ZkException.Timeout> { runBlocking { theirs.withLease(50.milliseconds) { } } }
        both.forEach { it.release() }
        assertEquals(listOf<String>(), ours.leaseNodes())
        assertEquals(0, ours.held)
    }

    @Test
    fun badCountsAreTypedAndACancelledAcquireLeavesNothing(): Unit = Zk.oneClient("semaphore-bad", Dispatchers.Default) { c, path ->
        assertThrows<ZkException.InvalidArgument> { Semaphore(c, path, 0) }
        assertThrows<ZkException.InvalidArgument> { Semaphore(c, path, -1) }
        assertThrows<ZkException.InvalidPath> { Semaphore(c, "relative", 1) }
        val sem = c.semaphore(path, 1)
        assertEquals(Int.MAX_VALUE, c.semaphore(path, Int.MAX_VALUE).maxLeases)
        assertThrows<ZkException.InvalidArgument> { runBlocking { sem.acquire(2) } }
        assertThrows<ZkException.InvalidArgument> { runBlocking { sem.tryAcquire(0) } }
        assertThrows<ZkException.InvalidArgument> { runBlocking { sem.tryAcquire(-1, 1.seconds) } }
        val held = sem.acquire()
        // A waiter cancelled while waiting withdraws its nodes.
        val waiter = launch { sem.acquire() }
        Zk.eventually("the waiter lined up") { sem.leaseNodes().size == 2 }
        waiter.cancelAndJoin()
        Zk.eventually("the cancelled waiter withdrew") { sem.leaseNodes().size == 1 }
        held.release()
        // Leases that arrive for coroutines cancelled at that very moment are released.
        repeat(200) { round ->
            if (round % 2 == 0) {
                val racing = launch { sem.acquire().release() }
                delay((round % 4).toLong())
                racing.cancelAndJoin()
            } else {
                withTimeoutOrNull((round % 3).toLong()) { sem.tryAcquire(Duration.INFINITE)?.release() }
            }
        }
        Zk.eventually("no lease left") { sem.held == 0 && sem.leaseNodes().isEmpty() }
        Zk.client().use { other -> present(other.semaphore(path, 1).tryAcquire(5.seconds)).release() }
    }
}
