package io.zkrecipes.kotlin

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import java.util.concurrent.atomic.AtomicInteger
import kotlin.system.exitProcess
import kotlin.time.Duration.Companion.seconds

/**
 * The Kotlin agent of tests/cross (same line protocol as agent.py): the packaged JAR on a plain
 * classpath, driven by the Python test beside the Python, Node.js and Java agents.
 */
object CrossAgent {
    @JvmStatic
    fun main(args: Array<String>) {
        runBlocking { serve(args[0]) }
        exitProcess(0)
    }

    private suspend fun serve(connect: String) {
        // The secured variant: TLS with a client certificate and SASL DIGEST-MD5 (see agent.py).
        val env = System.getenv()
        val secure = env["ZKRECIPES_AGENT_CA"] != null
        val client = Client.connect(
            connect,
            ClientOptions(
                sessionTimeout = (env["ZKRECIPES_AGENT_SESSION_TIMEOUT"] ?: "5").toDouble().seconds,
                tls = if (secure) Tls(env.getValue("ZKRECIPES_AGENT_CA"), env["ZKRECIPES_AGENT_CERT"], env["ZKRECIPES_AGENT_KEY"]) else null,
                sasl = if (secure) Sasl.DigestMd5(env.getValue("ZKRECIPES_AGENT_USER"), env.getValue("ZKRECIPES_AGENT_PASSWORD").toCharArray()) else null,
                acl = if (secure) AclPolicy.Open else null,
            ),
        )
        // Counted from right after connecting. Kotlin has no connection state listener: `state` is
        // a StateFlow, which conflates, so a LOST followed at once by RECONNECTED could pass
        // unseen here (the session id, asked separately, would still tell). Collected on a
        // thread of its own: this coroutine blocks its thread in readlnOrNull().
        val lost = AtomicInteger()
        val watching = CoroutineScope(Dispatchers.Default)
        watching.launch(start = CoroutineStart.UNDISPATCHED) {
            client.state.collect { if (it == ConnectionState.LOST) lost.incrementAndGet() }
        }
        val locks = HashMap<String, WriteLock>()
        val holds = HashMap<String, LockHold>()
        var election: LeaderElectionSupport? = null
        var semaphore: Semaphore? = null
        var lease: Lease? = null
        var latch: LeaderLatch? = null
        val workQueues = HashMap<String, WorkQueue>()
        var delivery: Delivery? = null
        fun yes(b: Boolean) = if (b) "YES" else "NO"
        while (true) {
            val line = readlnOrNull() ?: break
            val p = line.trim().split(Regex("\\s+"))
            val reply = try {
                when (p[0]) {
                    "lock" -> {
                        val hold = locks.getOrPut(p[1]) { client.writeLock(p[1]) }.acquire()!!
                        holds[p[1]] = hold
                        "HELD ${hold.fencingToken}"
                    }
                    "trylock" -> {
                        val hold = locks.getOrPut(p[1]) { client.writeLock(p[1]) }.tryAcquire()
                        if (hold == null) "BUSY" else "HELD ${hold.fencingToken}".also { holds[p[1]] = hold }
                    }
                    "unlock" -> {
                        holds.remove(p[1])!!.release()
                        "OK"
                    }
                    "offer" -> {
                        client.queue(p[1]).use { it.offer(if (p[2] == "-") ByteArray(0) else p[2].hexToByteArray()) }
                        "OK"
                    }
                    "poll" -> client.queue(p[1]).use { q ->
                        val item = q.poll()
                        if (item == null) "EMPTY" else "ITEM " + (if (item.isEmpty()) "-" else item.toHexString())
                    }
                    "elect" -> {
                        election = client.leaderElection(p[1], p[2]).also { it.start() }
                        "STARTED"
                    }
                    "leader?" -> if (election?.isLeader == true) "YES" else "NO"
                    "stop" -> {
                        election!!.stop()
                        "STOPPED"
                    }
                    "session" -> "SESSION " + client.sessionId.toULong().toString(16)
                    "lost?" -> "LOST ${lost.get()}"
                    "state" -> client.state.value.name
                    "held?" -> yes(locks.getOrPut(p[1]) { client.writeLock(p[1]) }.isHeld)
                    "lease" -> {
                        semaphore = client.semaphore(p[1], 1)
                        "LEASED ${semaphore.acquire().also { lease = it }.fencingToken}"
                    }
                    // Reading the semaphore keeps it reachable while the lease is kept.
                    "leased?" -> yes(semaphore != null && lease?.isHeld == true)
                    "latch" -> {
                        latch = client.leaderLatch(p[1], p[2]).also { it.start() }
                        latch.awaitLeadership(30.seconds)?.let { "LEADING $it" } ?: "NOT_LEADING"
                    }
                    "leading?" -> yes(latch?.hasLeadership == true)
                    "latch-token" -> "TOKEN ${latch?.fencingToken ?: "-"}"
                    "wq-offer" -> {
                        workQueues.getOrPut(p[1]) { client.workQueue(p[1]) }
                            .offer(if (p[2] == "-") ByteArray(0) else p[2].hexToByteArray())
                        "OK"
                    }
                    "wq-take" -> {
                        val job = workQueues.getOrPut(p[1]) { client.workQueue(p[1]) }.consume(30.seconds)
                        delivery = job
                        if (job == null) "EMPTY" else "JOB " + (if (job.data.isEmpty()) "-" else job.data.toHexString())
                    }
                    "wq-done" -> {
                        delivery!!.ack()
                        delivery = null
                        "OK"
                    }
                    "quit" -> break
                    else -> "ERR ${p[0]}"
                }
            } catch (e: Exception) {
                // The test reads a failure as a reply.
                "ERR ${p[0]} $e".replace('\n', ' ')
            }
            println(reply)
            System.out.flush()
        }
        watching.cancel()
        client.close()
    }
}
