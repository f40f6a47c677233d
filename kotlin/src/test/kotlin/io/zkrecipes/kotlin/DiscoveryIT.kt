package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.discoveryNames
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

/** ServiceDiscovery, ServiceCache and ServiceProvider from Kotlin, against a real ZooKeeper. */
class DiscoveryIT {
    private class Heard<E>(private val events: Channel<E> = Channel(Channel.UNLIMITED)) {
        suspend fun next(): E = withTimeout(10_000) { events.receive() }

        fun add(event: E) = events.trySend(event)
    }

    /** An operator's delete, through the harness binary, with a deadline. */
    private fun rm(path: String) {
        val process = ProcessBuilder(System.getenv("ZK_HARNESS"), "rm", Zk.connect, path).redirectErrorStream(true).start()
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "zk-harness rm ended")
        assertEquals(0, process.exitValue(), process.inputStream.readAllBytes().decodeToString())
    }

    @Test
    fun enumsListExactlyTheCoreNames() {
        assertEquals(discoveryNames(0u), DiscoveryEvent.Type.entries.map { it.name })
        assertEquals(discoveryNames(1u), ServiceCacheEvent.Type.entries.map { it.name })
        assertEquals(discoveryNames(2u), ServiceType.entries.map { it.name })
        assertEquals(discoveryNames(3u), ProviderStrategy.entries.map { it.name })
    }

    @Test
    fun anInstanceIsRegisteredSeenUpdatedAndUnregistered(): Unit = Zk.twoClients("services", Dispatchers.Default) { a, b, base ->
        a.serviceDiscovery(base).use { registrant ->
            b.serviceDiscovery(base).use { reader ->
                val cache = reader.serviceCache("api")
                val heard = Heard<ServiceCacheEvent>()
                val collecting = launch(start = CoroutineStart.UNDISPATCHED) { cache.events.collect { heard.add(it) } }
                cache.start()
                assertEquals(ServiceCacheEvent.Type.INITIALIZED, heard.next().type)
                val api = ServiceInstance(
                    "api", id = "one", address = "10.0.0.7", port = 8080, uriSpec = "{scheme}://{address}:{port}",
                    payloadJson = """{"zone":"eu-1"}""",
                )
                assertEquals("http://10.0.0.7:8080", api.uri)
                assertTrue(api.registrationTimeUtc > 0, "the constructor stamps the time")
                assertEquals(api, registrant.register(api))
                val added = heard.next()
                assertEquals(ServiceCacheEvent.Type.ADDED to api, added.type to added.instance)
                assertEquals(listOf("api"), reader.queryForNames())
                assertEquals(listOf(api), reader.queryForInstances("api"))
                assertEquals(api, reader.queryForInstance("api", "one"))
                assertNull(reader.queryForInstance("api", "two"))
                assertEquals(listOf(api), registrant.registered())

                val moved = api.copy(port = 9090, enabled = false)
                registrant.update(moved)
                val changed = heard.next()
                assertEquals(ServiceCacheEvent(ServiceCacheEvent.Type.CHANGED, moved, api), changed)
                assertFalse(changed.instance!!.enabled)
                assertEquals(listOf(moved), cache.instances())

                registrant.unregister(moved)
                assertEquals(ServiceCacheEvent(ServiceCacheEvent.Type.REMOVED, moved), heard.next())
                assertEquals(emptyList<ServiceInstance>(), reader.queryForInstances("api"))
                cache.close()
                withTimeout(10_000) { collecting.join() }
            }
        }
    }

    @Test
    fun theJsonIsCuratorsAndBadFieldsAreNamed() {
        val json = """{"name":"s","id":"i","address":"h","port":1,"sslPort":null,""" +
            """"payload":{"@class":"x.Y","a":[1]},"registrationTimeUTC":5,"serviceType":"PERMANENT",""" +
            """"uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://x","variable":false}]},""" +
            """"enabled":false,"weight":7}"""
        val read = ServiceInstance.fromJson(json.toByteArray())
        assertEquals("""{"weight":7}""", read.extraFieldsJson)
        assertEquals(ServiceType.PERMANENT, read.serviceType)
        assertEquals(json, read.toJson().decodeToString(), "written back byte for byte")
        assertEquals(read, read.copy())
        val spring = ServiceInstance.springPayload("app-1", "app", mapOf("instance_status" to "UP"))
        assertTrue(spring.contains("ZookeeperInstance"), spring)
        val wrong = mapOf<String, () -> ServiceInstance>(
            "a service name" to { ServiceInstance("a/b") },
            "an instance id" to { ServiceInstance("a", id = "..") },
            "port is a port" to { ServiceInstance("a", port = 70000) },
            "not JSON" to { ServiceInstance("a", payloadJson = "{") },
            "not closed" to { ServiceInstance("a", uriSpec = "{a") },
        )
        for ((why, make) in wrong) {
            val e = assertThrows<ZkException.InvalidArgument>(why) { make() }
            assertTrue(e.message!!.contains(why), e.message)
        }
        assertThrows<ZkException.InvalidArgument> { ServiceInstance.fromJson("{".toByteArray()) }
    }

    @Test
    fun aTakenIdIsRefusedAndADeletedOneComesBack(): Unit = Zk.twoClients("services-taken", Dispatchers.Default) { a, b, base ->
        a.serviceDiscovery(base).use { first ->
            b.serviceDiscovery(base).use { second ->
                val told = Heard<DiscoveryEvent>()
                val collecting = launch(start = CoroutineStart.UNDISPATCHED) { first.events.collect { told.add(it) } }
                val api = ServiceInstance("api", id = "one", port = 1)
                first.register(api)
                val taken = assertThrows<ZkException.NodeExists> { runBlocking { second.register(api) } }
                assertTrue(taken.message!!.contains("session"), taken.message)
                rm("$base/api/one")
                assertEquals(DiscoveryEvent(DiscoveryEvent.Type.REREGISTERED, "api", "one"), told.next())
                assertEquals(listOf(api), second.queryForInstances("api"))
                collecting.cancel()
            }
        }
    }

    @Test
    fun aProviderHandsOutUpInstances(): Unit = Zk.oneClient("services-provider", Dispatchers.Default) { a, base ->
        a.serviceDiscovery(base).use { discovery ->
            for (id in listOf("x", "y", "z")) discovery.register(ServiceInstance("api", id = id, port = 1, enabled = id != "z"))
            discovery.serviceProvider("api", ProviderStrategy.ROUND_ROBIN, DownInstancePolicy(5.minutes, 1)).use { provider ->
                provider.start()
                assertEquals(DownInstancePolicy(5.minutes, 1), provider.policy)
                assertEquals(setOf("x", "y", "z"), provider.getAllInstances().map { it.id }.toSet())
                assertEquals(setOf("x", "y"), (1..6).map { provider.getInstance()!!.id }.toSet(), "never a disabled one")
                provider.noteError(discovery.queryForInstance("api", "x")!!)
                repeat(4) { assertEquals("y", provider.getInstance()!!.id, "x is down") }
            }
            assertThrows<ZkException.InvalidArgument> { discovery.serviceProvider("api", policy = DownInstancePolicy(0.seconds)) }
            assertThrows<ZkException.InvalidArgument> { discovery.serviceCache("a/b") }
            assertThrows<ZkException.NoNode>("update before register") {
                runBlocking { discovery.update(ServiceInstance("b")) }
            }
            discovery.closeAsync()
            assertEquals(emptyList<ServiceInstance>(), discovery.registered())
            assertThrows<ZkException.Closed> { runBlocking { discovery.register(ServiceInstance("api")) } }
        }
    }
}
