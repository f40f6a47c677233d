package io.zkrecipes.kotlin

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.TestFactory
import java.nio.file.Files
import java.nio.file.Path
import java.util.UUID
import kotlin.io.path.name
import kotlin.io.path.readLines
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/**
 * The behaviour specs of tests/spec, run against the library's JAR: every scenario is a test.
 * The format and the calls are in tests/spec/README.md; the Python, Node.js and Java runners
 * run the same files.
 */
class SpecIT {
    data class Step(val line: Int, val words: List<String>, val expected: String?)

    data class Scenario(
        val file: String,
        val name: String,
        val steps: MutableList<Step> = mutableListOf(),
        val only: MutableList<String> = mutableListOf(),
    )

    private fun scenarios(): List<Scenario> {
        val found = mutableListOf<Scenario>()
        val specs = Path.of(System.getenv("ZKRECIPES_SPECS") ?: "../tests/spec")
        Files.list(specs).use { files -> files.filter { it.name.endsWith(".spec") }.sorted().toList() }.forEach { spec ->
            spec.readLines().forEachIndexed { at, raw ->
                val text = raw.substringBefore('#').trim()
                when {
                    text.isEmpty() -> Unit
                    text.startsWith("scenario ") ->
                        found += Scenario(spec.name.removeSuffix(".spec"), text.removePrefix("scenario "))
                    text.startsWith("only ") -> found.last().only += text.split(Regex("\\s+")).drop(1)
                    else -> {
                        val call = text.substringBefore("=>").trim()
                        val expected = if ("=>" in text) text.substringAfter("=>").trim() else null
                        found.last().steps += Step(at + 1, call.split(Regex("\\s+")), expected)
                    }
                }
            }
        }
        return found.filter { it.only.isEmpty() || "kotlin" in it.only }
    }

    @TestFactory
    fun specs(): List<DynamicTest> = scenarios().map { scenario ->
        DynamicTest.dynamicTest("${scenario.file}: ${scenario.name}") {
            runBlocking {
                val runner = Runner("/spec-${UUID.randomUUID().toString().take(12)}")
                try {
                    scenario.steps.forEach { runner.step(it) }
                } finally {
                    runner.close()
                }
            }
        }
    }

    private class Runner(val root: String) {
        val clients = mutableMapOf<String, Client>()
        val objects = mutableMapOf<String, Any>()
        val lockHolds = mutableMapOf<String, ArrayDeque<LockHold>>()
        val multiHolds = mutableMapOf<String, ArrayDeque<MultiLockHold>>()
        val leases = mutableMapOf<String, ArrayDeque<Lease>>()
        val jobs = mutableMapOf<String, ArrayDeque<Delivery>>()

        fun path(word: String) = if (word.startsWith("=")) word.drop(1) else "$root/$word"

        fun make(client: Client, kind: String, at: String, args: List<String>): Any = when (kind) {
            "lock" -> client.writeLock(at)
            "multi_lock" -> client.multiLock(listOf(at) + args.map(::path))
            "read_lock" -> client.readWriteLock(at).readLock
            "write_lock" -> client.readWriteLock(at).writeLock
            "queue" -> client.queue(at)
            "atomic_long" -> client.atomicLong(at)
            "shared_count" -> client.sharedCount(at, args[0].toInt())
            "semaphore" -> client.semaphore(at, args[0].toInt())
            "latch" -> client.leaderLatch(at)
            "barrier" -> client.barrier(at)
            "double_barrier" -> client.doubleBarrier(at, args[0].toInt())
            "work_queue" -> client.workQueue(at)
            "election" -> client.leaderElection(at, args[0])
            "persistent_node" -> client.persistentNode(at, NodeMode.valueOf(args[0].uppercase()), args[1].toByteArray())
            "node_cache" -> client.nodeCache(at)
            "group_member" -> client.groupMember(at, args[0], args[1].toByteArray())
            "service_discovery" -> client.serviceDiscovery(at)
            else -> error("no kind $kind")
        }

        suspend fun call(name: String, obj: Any, verb: String, args: List<String>): Any? = when (obj) {
            is Semaphore -> {
                val held = leases.getOrPut(name) { ArrayDeque() }
                when (verb) {
                    "acquire" -> obj.tryAcquire(WAIT)?.also { held.addLast(it) } != null
                    "try_acquire" -> obj.tryAcquire()?.also { held.addLast(it) } != null
                    "release" -> held.removeFirst().release()
                    "held" -> obj.held
                    else -> error("no semaphore call $verb")
                }
            }
            is Lock -> {
                val holds = lockHolds.getOrPut(name) { ArrayDeque() }
                when (verb) {
                    "acquire" -> obj.acquire(WAIT)?.also { holds.addLast(it) } != null
                    "try_acquire" -> obj.tryAcquire()?.also { holds.addLast(it) } != null
                    "release" -> holds.removeLast().release()
                    "held" -> obj.isHeld
                    else -> error("no lock call $verb")
                }
            }
            is MultiLock -> {
                val holds = multiHolds.getOrPut(name) { ArrayDeque() }
                when (verb) {
                    "acquire" -> obj.acquire(WAIT)?.also { holds.addLast(it) } != null
                    "try_acquire" -> obj.tryAcquire()?.also { holds.addLast(it) } != null
                    "release" -> holds.removeLast().release()
                    "held" -> obj.isHeld
                    else -> error("no multi-lock call $verb")
                }
            }
            is DistributedQueue -> when (verb) {
                "offer" -> obj.offer(args[0].toByteArray())
                "poll" -> obj.poll()
                "size" -> obj.size()
                else -> error("no queue call $verb")
            }
            is DistributedAtomicLong -> when (verb) {
                "get" -> obj.get()
                "increment" -> obj.increment()
                "add" -> obj.add(args[0].toLong())
                "compare_and_set" -> obj.compareAndSet(args[0].toLong(), args[1].toLong())
                else -> error("no atomic_long call $verb")
            }
            is SharedCount -> when (verb) {
                "start" -> obj.start()
                "get" -> obj.count
                "set" -> obj.set(args[0].toInt())
                "close" -> obj.close()
                else -> error("no shared_count call $verb")
            }
            is LeaderLatch -> when (verb) {
                "start" -> obj.start()
                "await_leadership" -> obj.awaitLeadership(WAIT) != null
                "has_leadership" -> obj.hasLeadership
                "close" -> obj.closeAsync()
                else -> error("no latch call $verb")
            }
            is Barrier -> when (verb) {
                "set" -> obj.set()
                "remove" -> obj.remove()
                "is_set" -> obj.isSet()
                "wait" -> obj.wait(Duration.ZERO)
                else -> error("no barrier call $verb")
            }
            is DoubleBarrier -> when (verb) {
                "enter" -> obj.enter(WAIT)
                "try_enter" -> obj.enter(Duration.ZERO)
                "leave" -> obj.leave(WAIT)
                else -> error("no double_barrier call $verb")
            }
            is WorkQueue -> {
                val kept = jobs.getOrPut(name) { ArrayDeque() }
                when (verb) {
                    "offer" -> obj.offer(args[0].toByteArray())
                    "consume" -> obj.consume(WAIT)?.also { kept.addLast(it) }?.data
                    "try_consume" -> obj.consume(Duration.ZERO)?.also { kept.addLast(it) }?.data
                    "ack" -> kept.removeFirst().ack()
                    "nack" -> kept.removeFirst().nack()
                    "size" -> obj.size()
                    else -> error("no work_queue call $verb")
                }
            }
            is LeaderElectionSupport -> when (verb) {
                "start" -> obj.start()
                "await_leadership" -> obj.awaitLeadership(WAIT)
                "is_leader" -> obj.isLeader
                "stop" -> obj.stop()
                else -> error("no election call $verb")
            }
            is PersistentNode -> when (verb) {
                "start" -> obj.start()
                "close" -> obj.closeAsync()
                else -> error("no persistent_node call $verb")
            }
            is Cache -> when (verb) {
                "start" -> obj.start()
                "data" -> obj[obj.path]?.data
                "close" -> obj.close()
                else -> error("no node_cache call $verb")
            }
            is GroupMember -> when (verb) {
                "start" -> obj.start()
                "members" -> obj.members().keys.sorted().joinToString(",")
                "close" -> obj.closeAsync()
                else -> error("no group_member call $verb")
            }
            is ServiceDiscovery -> discovery(obj, verb, args)
            else -> error("no object $name")
        }

        suspend fun discovery(registry: ServiceDiscovery, verb: String, args: List<String>): Any? {
            fun kept() = registry.registered().firstOrNull { it.name == args[0] && it.id == args[1] }
            return when (verb) {
                "register" -> registry.register(
                    ServiceInstance(args[0], id = args[1], port = args[2].toInt(), serviceType = ServiceType.valueOf(args[3].uppercase())),
                )
                "update" -> registry.update(
                    kept()?.copy(port = args[2].toInt()) ?: ServiceInstance(args[0], id = args[1], port = args[2].toInt()),
                )
                "unregister" -> registry.unregister(ServiceInstance(args[0], id = args[1]))
                "registered" -> kept() != null
                "names" -> registry.queryForNames().sorted().joinToString(",").ifEmpty { null }
                "ids" -> registry.queryForInstances(args[0]).map { it.id }.sorted().joinToString(",").ifEmpty { null }
                "port" -> registry.queryForInstance(args[0], args[1])?.port
                "close" -> registry.closeAsync()
                else -> error("no service_discovery call $verb")
            }
        }

        suspend fun step(step: Step) {
            val words = step.words
            val said = "line ${step.line}: ${words.joinToString(" ")}"
            if (words[0] == "client") {
                clients[words[1]] = Client.connect(Zk.connect)
                return
            }
            val (actor, verb) = words
            val args = words.drop(2)
            val expected = mutated(step.expected)
            val result = try {
                when {
                    actor in clients && verb == "close" -> clients.getValue(actor).closeAsync()
                    actor in clients -> {
                        objects[args[0]] = make(clients.getValue(actor), verb, path(args[1]), args.drop(2))
                        null
                    }
                    else -> call(actor, objects.getValue(actor), verb, args)
                }
            } catch (e: ZkException) {
                assertEquals(expected, "error ${e.code}", "$said threw ${e.message}")
                return
            }
            if (expected != null) assertEquals(expected, if (expected == "ok") "ok" else shown(result), said)
        }

        fun close() = clients.values.forEach { it.close() }
    }

    companion object {
        /** How long an `acquire` or `await_leadership` waits. */
        val WAIT = 10.seconds

        /** ZKRECIPES_SPEC_MUTATE=1: a wrong expectation, to show the runner can fail. */
        fun mutated(expected: String?) =
            if (expected == "true" && System.getenv("ZKRECIPES_SPEC_MUTATE") != null) "false" else expected

        fun shown(value: Any?): String = when (value) {
            null, Unit -> "none"
            is ByteArray -> value.decodeToString()
            is Updated -> value.postValue.toString()
            else -> value.toString()
        }
    }
}
