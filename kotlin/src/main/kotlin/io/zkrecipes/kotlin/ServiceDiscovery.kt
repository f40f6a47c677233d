package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeServiceCache
import io.zkrecipes.kotlin.ffi.NativeServiceDiscovery
import io.zkrecipes.kotlin.ffi.NativeServiceProvider
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/** How a [ServiceProvider] picks an instance (Curator's strategies). */
enum class ProviderStrategy { ROUND_ROBIN, RANDOM, STICKY }

/**
 * When a [ServiceProvider] leaves an instance out (Curator's `DownInstancePolicy`): after
 * [errorThreshold] errors noted for it, for [timeout]. Checked when a provider is made (a timeout
 * above zero, a threshold of at least 1).
 */
data class DownInstancePolicy(val timeout: Duration = 30.seconds, val errorThreshold: Int = 2)

/**
 * What happened to a registration without a call: REREGISTERED (its node was made again after its
 * session expired or somebody deleted it) or REGISTRATION_STOPPED (the server refused its node,
 * [reason] says why; the instance is no longer kept).
 */
data class DiscoveryEvent(val type: Type, val name: String, val id: String, val reason: ZkException? = null) {
    enum class Type { REREGISTERED, REGISTRATION_STOPPED }
}

/**
 * One event of a [ServiceCache]: ADDED and REMOVED carry the [instance], CHANGED the new
 * [instance] and the [old] one; the connection events none.
 */
data class ServiceCacheEvent(val type: Type, val instance: ServiceInstance? = null, val old: ServiceInstance? = null) {
    enum class Type { ADDED, CHANGED, REMOVED, INITIALIZED, SUSPENDED, RECONNECTED, LOST }
}

/**
 * Curator's service discovery registry (`curator-x-discovery`), on its layout: instance
 * `<basePath>/<name>/<id>`, whose data is the instance's JSON as Curator writes it. A registered
 * instance is kept (made again after its session expired or somebody deleted it) until
 * [unregister] or [close]. A DYNAMIC id another live session holds is [ZkException.NodeExists]
 * naming that session, where Curator would take the node over.
 */
class ServiceDiscovery(client: Client, basePath: String) : AutoCloseable {
    private val native = native { NativeServiceDiscovery(client.native, basePath) }

    val basePath: String get() = native.basePath()

    /** Registers [instance] and keeps it; returns once its node exists. A cancelled call leaves the registration to this object. */
    suspend fun register(instance: ServiceInstance): ServiceInstance =
        ServiceInstance.of(native { native.register(instance.native()) })

    /** Writes [instance]'s new fields to its node, and keeps them for every re-create. */
    suspend fun update(instance: ServiceInstance) = native { native.update(instance.native()) }

    /** Stops keeping [instance] and deletes its node (confirmed); an unknown one is no error. */
    suspend fun unregister(instance: ServiceInstance) = native { native.unregister(instance.name, instance.id) }

    /** The instances this object keeps registered. */
    fun registered(): List<ServiceInstance> = native.registered().map(ServiceInstance::of)

    /** The name of every service, sorted. */
    suspend fun queryForNames(): List<String> = native { native.queryForNames() }

    /** Every instance of [name], read now from the server. */
    suspend fun queryForInstances(name: String): List<ServiceInstance> =
        native { native.queryForInstances(name) }.map(ServiceInstance::of)

    /** The instance [id] of [name], `null` if there is none. */
    suspend fun queryForInstance(name: String, id: String): ServiceInstance? =
        native { native.queryForInstance(name, id) }?.let(ServiceInstance::of)

    /** A cache of [name]'s instances; closed with this object. */
    fun serviceCache(name: String): ServiceCache = ServiceCache(native { native.serviceCache(name) })

    /** A [ServiceProvider] of [name]. */
    fun serviceProvider(
        name: String,
        strategy: ProviderStrategy = ProviderStrategy.ROUND_ROBIN,
        policy: DownInstancePolicy = DownInstancePolicy(),
    ): ServiceProvider = ServiceProvider(
        native {
            native.serviceProvider(
                name, strategy.name, policy.timeout.inWholeNanoseconds / 1e6, policy.errorThreshold.toLong(),
            )
        },
    )

    /** Registrations' events; a cold flow that subscribes when collected and ends with the client. */
    val events: Flow<DiscoveryEvent>
        get() = flow {
            native.events().use { events ->
                while (true) {
                    val event = events.next() ?: break
                    val reason = event.reasonCode?.let { ZkException.of(it, event.reason ?: "") }
                    emit(DiscoveryEvent(DiscoveryEvent.Type.valueOf(event.name), event.service, event.id, reason))
                }
            }
        }

    /** Unregisters every instance (each delete confirmed) and closes this object's caches, without blocking a thread. */
    suspend fun closeAsync() = native { native.closeAsync() }

    /** [closeAsync], blocking the thread. Twice: harmless. */
    override fun close() = native.closeBlocking()

    override fun toString() = "ServiceDiscovery(${native.basePath()})"
}

/**
 * A local copy of one service's instances (Curator's `ServiceCache`), kept in sync by a children
 * cache of the service's node. An instance whose JSON cannot be read is left out (and logged).
 */
class ServiceCache internal constructor(private val native: NativeServiceCache) : AutoCloseable {
    val name: String get() = native.name()

    /** Starts following; returns once the first load is in. A cancelled call leaves the cache going. */
    suspend fun start() = native { native.start() }

    /** Every instance in the cache, by id. */
    fun instances(): List<ServiceInstance> = native.instances().map(ServiceInstance::of)

    /** Every event in order, none dropped: a cold flow that subscribes when collected and ends with the cache. */
    val events: Flow<ServiceCacheEvent>
        get() = flow {
            native.events().use { events ->
                while (true) {
                    val event = events.next() ?: break
                    emit(
                        ServiceCacheEvent(
                            ServiceCacheEvent.Type.valueOf(event.name),
                            event.instance?.let(ServiceInstance::of),
                            event.old?.let(ServiceInstance::of),
                        ),
                    )
                }
            }
        }

    /** Stops following; the [events] flows end. Twice: harmless. */
    override fun close() = native.end()

    override fun toString() = "ServiceCache(${native.name()})"
}

/**
 * Hands out one service's instances by a [ProviderStrategy] (Curator's `ServiceProvider`): a
 * disabled instance never, nor one with enough errors noted ([noteError]) until its
 * [DownInstancePolicy] timeout passes.
 */
class ServiceProvider internal constructor(private val native: NativeServiceProvider) : AutoCloseable {
    val strategy: ProviderStrategy get() = ProviderStrategy.valueOf(native.strategy())

    val policy: DownInstancePolicy
        get() = native.policy().let { (ms, errors) -> DownInstancePolicy(ms.toLong().milliseconds, errors.toInt()) }

    /** Loads the service's instances; returns once they are in. */
    suspend fun start() = native { native.start() }

    /** The instance the strategy picks, `null` when none is up. */
    fun getInstance(): ServiceInstance? = native.getInstance()?.let(ServiceInstance::of)

    /** Every instance of the service, down ones included. */
    fun getAllInstances(): List<ServiceInstance> = native.getAllInstances().map(ServiceInstance::of)

    /** Notes that a call to [instance] failed: past the threshold it is left out for the policy's timeout. */
    fun noteError(instance: ServiceInstance) = native { native.noteError(instance.native()) }

    /** Stops following the service. Twice: harmless. */
    override fun close() = native.end()
}
