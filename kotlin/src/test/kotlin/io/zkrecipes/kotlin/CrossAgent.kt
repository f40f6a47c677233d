package io.zkrecipes.kotlin

import kotlinx.coroutines.runBlocking
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
                sessionTimeout = 5.seconds,
                tls = if (secure) Tls(env.getValue("ZKRECIPES_AGENT_CA"), env["ZKRECIPES_AGENT_CERT"], env["ZKRECIPES_AGENT_KEY"]) else null,
                sasl = if (secure) Sasl.DigestMd5(env.getValue("ZKRECIPES_AGENT_USER"), env.getValue("ZKRECIPES_AGENT_PASSWORD").toCharArray()) else null,
                acl = if (secure) AclPolicy.Open else null,
            ),
        )
        val locks = HashMap<String, WriteLock>()
        val holds = HashMap<String, LockHold>()
        var election: LeaderElectionSupport? = null
        while (true) {
            val line = readlnOrNull() ?: break
            val p = line.trim().split(Regex("\\s+"))
            val reply = when (p[0]) {
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
                "quit" -> break
                else -> "ERR ${p[0]}"
            }
            println(reply)
            System.out.flush()
        }
        client.close()
    }
}
