package io.zkrecipes.kotlin

import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
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
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** LeaderLatch, Barrier and DoubleBarrier from Kotlin, against a real ZooKeeper. */
class LatchBarrierIT {
    @Test
    fun theFirstLeadsUntilItClosesThenTheNextWithAHigherToken(): Unit = Zk.twoClients("latch") { ca, cb, path ->
        val a = ca.leaderLatch(path, "a\tfirst\n")
        val b = cb.leaderLatch(path)
        // Collected from before start(); the flow ends with the close.
        val events = async(start = CoroutineStart.UNDISPATCHED) { a.events.toList() }
        assertEquals(LeaderLatch.State.LATENT, a.state)
        a.start()
        a.start() // a no-op
        val first = present(a.awaitLeadership(10.seconds))
        assertTrue(a.hasLeadership)
        assertEquals(first, a.fencingToken)
        assertTrue(present(a.nodePath).startsWith("$path/_c_"))
        b.start()
        assertNull(b.awaitLeadership(Duration.ZERO), "a zero timeout is a check")
        assertNull(b.awaitLeadership((-5).seconds))
        assertNull(b.awaitLeadership(50.milliseconds))
        assertNull(b.fencingToken)
        val participants = b.participants()
        assertEquals(
            listOf(LatchParticipant("a\tfirst\n", present(a.nodePath).substringAfterLast('/'), true)),
            participants.take(1),
        )
        assertEquals(cb.identity, participants[1].id, "the default id is the client's identity")
        assertEquals("a\tfirst\n", b.leader()?.id)
        val next = async(start = CoroutineStart.UNDISPATCHED) { b.awaitLeadership() }
        a.closeAsync()
        a.closeAsync() // twice: harmless
        a.close()
        assertEquals(LeaderLatch.State.CLOSED, a.state)
        assertFalse(a.hasLeadership)
        val seen = withTimeout(10_000) { events.await() }
        assertEquals(listOf(LatchEvent.Type.IS_LEADER, LatchEvent.Type.NOT_LEADER), seen.map { it.type })
        assertEquals(first, seen[0].fencingToken)
        assertNull(seen[1].reason, "a close is no loss")
        assertThrows<ZkException.Closed> { runBlocking { a.start() } }
        assertThrows<ZkException.Closed> { runBlocking { a.awaitLeadership() } }
        assertTrue(present(withTimeout(10_000) { next.await() }) > first, "tokens increase across leaders")
        assertEquals(1, b.participants().size)
        b.close()
    }

    @Test
    fun badInputIsTypedAndACancelOrACloseEndsAWait(): Unit = Zk.oneClient("latch-bad", Dispatchers.Default) { c, path ->
        assertThrows<ZkException.InvalidPath> { c.leaderLatch("") }
        assertThrows<ZkException.InvalidPath> { c.leaderLatch("relative/path") }
        assertThrows<ZkException.InvalidArgument> { c.leaderLatch(path, "x".repeat(17 * 1024)) }
        val leader = c.leaderLatch(path, "leader")
        val waiting = c.leaderLatch(path, "w")
        assertThrows<ZkException.InvalidArgument> { runBlocking { waiting.awaitLeadership() } }
        leader.start()
        present(leader.awaitLeadership(10.seconds))
        waiting.start()
        // A cancelled wait ends; the participant stays in line.
        val cancelled = launch(start = CoroutineStart.UNDISPATCHED) { waiting.awaitLeadership() }
        cancelled.cancelAndJoin()
        assertEquals(2, leader.participants().size)
        // A close from another coroutine ends a wait with Closed, and withdraws the node.
        val ended = async(start = CoroutineStart.UNDISPATCHED) { runCatching { waiting.awaitLeadership() }.exceptionOrNull() }
        waiting.close()
        assertTrue(withTimeout(10_000) { ended.await() } is ZkException.Closed)
        assertEquals(1, leader.participants().size)
        leader.close()
    }

    @Test
    fun aBarrierHoldsWaitersUntilRemoved(): Unit = Zk.twoClients("barrier") { a, b, path ->
        val ours = a.barrier(path)
        val theirs = b.barrier(path)
        assertThrows<ZkException.InvalidPath> { a.barrier("relative") }
        assertTrue(theirs.wait(Duration.ZERO), "not up: passes at once")
        ours.set()
        ours.set() // up stays up
        assertTrue(theirs.isSet())
        assertFalse(theirs.wait(Duration.ZERO))
        assertFalse(theirs.wait((-1).seconds))
        assertFalse(theirs.wait(100.milliseconds))
        val released = async(start = CoroutineStart.UNDISPATCHED) { theirs.wait() }
        ours.remove()
        ours.remove() // down stays down
        assertTrue(withTimeout(10_000) { released.await() })
        assertFalse(theirs.isSet())
        // Closed while a coroutine waits: it ends with Closed; later calls too.
        ours.set()
        val held = async(start = CoroutineStart.UNDISPATCHED) { runCatching { theirs.wait() }.exceptionOrNull() }
        theirs.close()
        assertTrue(withTimeout(10_000) { held.await() } is ZkException.Closed)
        assertThrows<ZkException.Closed> { runBlocking { theirs.isSet() } }
        ours.remove()
    }

    @Test
    fun membersEnterAndLeaveTogetherAndOneThatGivesUpLeavesNoNode(): Unit = Zk.twoClients("double-barrier", Dispatchers.Default) { ca, cb, path ->
        for (bad in listOf(0, -1, Int.MIN_VALUE)) {
            assertThrows<ZkException.InvalidArgument> { ca.doubleBarrier(path, bad) }
        }
        assertEquals(Int.MAX_VALUE, ca.doubleBarrier(path, Int.MAX_VALUE).memberCount)
        val a = ca.doubleBarrier(path, 2)
        val b = cb.doubleBarrier(path, 2)
        // Timed out: false, and the node withdrawn.
        assertFalse(a.enter(Duration.ZERO))
        assertFalse(a.enter(100.milliseconds))
        assertEquals(listOf<String>(), b.members())
        // Cancelled: the node withdrawn.
        val cancelled = launch { a.enter() }
        Zk.eventually("a entered") { b.members().size == 1 }
        cancelled.cancelAndJoin()
        Zk.eventually("the cancelled member withdrew") { b.members().isEmpty() }
        // Both in: both pass, ready is up; both leave.
        val aIn = async { a.enter() }
        Zk.eventually("a entered") { b.members().size == 1 }
        assertTrue(b.enter(10.seconds))
        assertTrue(withTimeout(10_000) { aIn.await() })
        assertTrue(a.isReady())
        assertEquals(listOf(a.nodePath, b.nodePath).map { it.substringAfterLast('/') }.sorted(), a.members())
        val aOut = async { a.leave() }
        assertTrue(b.leave(10.seconds))
        assertTrue(withTimeout(10_000) { aOut.await() })
        assertFalse(a.isReady(), "the last to leave took ready down")
        // Cancelled at every moment, an enter that opened the barrier or not leaves no node.
        repeat(60) { round ->
            val racing = async { a.enter() }
            delay((round % 6).toLong())
            if (round % 3 == 0) b.enter(20.milliseconds)
            racing.cancelAndJoin()
            // An enter that returned before the cancel is a member that is in (the
            // barrier may have stayed open from an earlier round): it leaves as members do.
            if (!racing.isCancelled && racing.await()) a.leave(Duration.ZERO)
            b.leave(Duration.ZERO)
        }
        Zk.eventually("no member left") { a.members().isEmpty() }
        // Closed while another coroutine enters: that one ends with Closed, no node left.
        val entering = async { runCatching { a.enter() }.exceptionOrNull() }
        Zk.eventually("a entered") { b.members().size == 1 }
        a.close()
        assertTrue(withTimeout(10_000) { entering.await() } is ZkException.Closed)
        Zk.eventually("the closed member withdrew") { b.members().isEmpty() }
        assertThrows<ZkException.Closed> { runBlocking { a.members() } }
    }
}
