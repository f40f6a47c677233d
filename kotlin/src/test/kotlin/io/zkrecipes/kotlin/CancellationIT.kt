package io.zkrecipes.kotlin

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.Collections
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * Found by an adversarial run: a coroutine cancelled (or timed out by `withTimeoutOrNull`) just as
 * its hold, item or job arrived lost the item for good, or left the hold and the job claimed.
 * Whatever arrives for a caller that is gone must be undone, on any dispatcher. (A value a
 * `withTimeoutOrNull` block already returned is dropped by kotlinx itself, see the README: the
 * timeout argument is the way to bound a wait.)
 */
class CancellationIT {
    @Test
    fun itemsTakenForCancelledCoroutinesGoBack(): Unit = Zk.oneClient("cancel-take", Dispatchers.Default) { client, path ->
        val q = client.queue(path)
        val n = 150
        repeat(n) { q.offer("$it".toByteArray()) }
        val got = Collections.synchronizedList(mutableListOf<String>())
        repeat(900) { round ->
            if (round % 3 != 0) {
                val waiting = launch { q.take()?.let { got += it.decodeToString() } }
                delay((round % 5).toLong())
                waiting.cancelAndJoin()
            } else {
                q.take((round % 4).milliseconds)?.let { got += it.decodeToString() }
            }
        }
        // Until every item came (one taken for a cancelled coroutine goes back, maybe not at
        // once: a quiet second ended this loop), for up to 30 s; then a chance for an item
        // twice, which must not come.
        val deadline = System.nanoTime() + 30_000_000_000L
        while (got.toSet().size < n && System.nanoTime() < deadline) {
            q.take(1.seconds)?.let { got += it.decodeToString() }
        }
        q.take(500.milliseconds)?.let { got += it.decodeToString() }
        val lost = (0 until n).map { "$it" } - got.toSet()
        assertEquals(listOf<String>(), lost, "none lost")
        assertEquals(n, got.size, "every item once")
    }

    @Test
    fun holdsObtainedForCancelledCoroutinesAreReleased(): Unit = Zk.oneClient("cancel-acquire", Dispatchers.Default) { client, path ->
        val lock = client.writeLock(path)
        repeat(400) { round ->
            if (round % 2 == 0) {
                val waiting = launch { lock.acquire()?.release() }
                delay((round % 4).toLong())
                waiting.cancelAndJoin()
            } else {
                // withTimeoutOrNull around an acquire that succeeds cancels it, like a cancel.
                withTimeoutOrNull((round % 3).toLong()) { lock.acquire()?.release() }
            }
        }
        // Releases of holds that came too late run in the background.
        Zk.eventually("no hold left") { !lock.isHeld && lock.participants().isEmpty() }
        Zk.client().use { other -> present(other.writeLock(path).acquire(5.seconds)).release() }
    }

    @Test
    fun jobsClaimedForCancelledCoroutinesGoBack(): Unit = Zk.oneClient("cancel-consume", Dispatchers.Default) { client, path ->
        val q = client.workQueue(path)
        val n = 100
        q.offerAll((0 until n).map { "$it".toByteArray() })
        val acked = Collections.synchronizedSet(mutableSetOf<String>())
        repeat(600) { round ->
            if (round % 3 != 0) {
                val waiting = launch { q.consume()?.let { acked += it.data.decodeToString(); it.ack() } }
                delay((round % 5).toLong())
                waiting.cancelAndJoin()
            } else {
                q.consume((round % 4).milliseconds)?.let { acked += it.data.decodeToString(); it.ack() }
            }
        }
        // The client's session lives on: a job left claimed would never come. Until every
        // job came (a quiet period of 2 s ended this loop), for up to 30 s.
        val deadline = System.nanoTime() + 30_000_000_000L
        while (acked.size < n && System.nanoTime() < deadline) {
            val job = q.consume(1.seconds) ?: continue
            acked += job.data.decodeToString()
            job.ack()
        }
        assertEquals(n, acked.size, "every job delivered while the session lives")
        assertTrue(q.size() == 0)
    }

    /** A multi-lock cancelled while it waits for its second path gives back its first. */
    @Test
    fun aCancelledMultiLockGivesBackWhatItTook(): Unit = runBlocking(Dispatchers.Default) {
        Zk.client().use { a ->
            Zk.client().use { b ->
                val (x, y) = Zk.path("multi-x") to Zk.path("multi-y")
                val locks = a.multiLock(listOf(y, x))
                locks.withLock { hold ->
                    assertEquals(2, hold.fencingTokens.size)
                    assertTrue(hold.fencingTokens[1] < hold.fencingTokens[0], "taken in path order: x, then y")
                }
                val holderOfY = b.writeLock(y).acquire()!!
                val waiting = launch { locks.acquire() }
                val yLock = b.writeLock(y)
                Zk.eventually("queued on y, so x is taken") { yLock.participants().size == 2 }
                waiting.cancelAndJoin()
                val x2 = b.writeLock(x).acquire(20.seconds)
                assertTrue(x2 != null, "x was given back")
                x2!!.release()
                holderOfY.release()
                assertTrue(!locks.isHeld)
            }
        }
    }
}
