package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeGranted
import io.zkrecipes.kotlin.ffi.NativeLease
import io.zkrecipes.kotlin.ffi.NativeSemaphore
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.withContext
import kotlin.time.Duration

private val ACQUIRE = waitCall("semaphore.acquire")

/**
 * One held lease of a [Semaphore]. [release] once (a second is [ZkException.NotOwner]; a lost
 * lease's release throws the loss); `use {}` releases too, as does a lease that becomes
 * unreachable. The fencing token increases with every lease, across processes and languages.
 */
class Lease internal constructor(
    private val native: NativeLease,
    /** The czxid of the lease's node: pass it to the resource you protect. */
    val fencingToken: Long,
    /** `<path>/leases/_c_<uuid>-lease-<sequence>`. */
    val nodePath: String,
) : AutoCloseable {
    /** Not released and not lost (the semaphore's [Semaphore.events] tell LOST). */
    val isHeld: Boolean get() = native.isHeld()

    /** Returns once the lease node is gone. */
    suspend fun release() = native { native.release() }

    /** Releases, blocking the thread, unless released already (a lost lease is let go quietly). */
    override fun close() = native.releaseBlocking()

    override fun toString() = "Lease($nodePath, fencingToken=$fencingToken, held=$isHeld)"
}

/**
 * At most [maxLeases] leases held at once among every process on [path], Curator's
 * `InterProcessSemaphoreV2` included (its nodes: a mutex under `path/locks`, leases under
 * `path/leases`). Each permit is a [Lease] with its own fencing token; a lost lease is told
 * (`LOST`). Cancelling a coroutine that waits withdraws its nodes; leases that came anyway are
 * released.
 */
class Semaphore(client: Client, path: String, maxLeases: Int) : AutoCloseable {
    private val native = native { NativeSemaphore(client.native, path, maxLeases.toLong()) }

    val path: String get() = native.path()

    val maxLeases: Int get() = native.maxLeases().toInt()

    /** Leases this object holds now (not released, not lost). */
    val held: Int get() = native.held().toInt()

    /** Waits for one lease as long as it takes. */
    suspend fun acquire(): Lease = acquire(1).single()

    /** Waits for [count] leases, all or none ([ZkException.InvalidArgument] above [maxLeases]). */
    suspend fun acquire(count: Int): List<Lease> =
        obtain(count, Duration.INFINITE) ?: throw ZkException.Internal("an unbounded acquire ended without its leases")

    /** One lease within [timeout] (zero, the default, or negative: a try), else `null`. */
    suspend fun tryAcquire(timeout: Duration = Duration.ZERO): Lease? = obtain(1, timeout)?.single()

    /** [count] leases, all or none, within [timeout]; `null` if not obtained. */
    suspend fun tryAcquire(count: Int, timeout: Duration = Duration.ZERO): List<Lease>? = obtain(count, timeout)

    // Every acquire's one wait; its span's token is the first lease's, as the core's numbers tell it.
    private suspend fun obtain(count: Int, timeout: Duration): List<Lease>? =
        waiting(ACQUIRE, { path }, { it?.firstOrNull()?.fencingToken }) {
            obtaining({ granted: List<NativeGranted> -> granted.forEach { it.lease.abandon() } }) {
                native.acquire(count.toLong(), timeout.toNativeMillis(), it)
            }?.map { Lease(it.lease, it.fencingToken, it.nodePath) }
        }

    /**
     * Runs [block] holding a lease and releases it afterwards, also when [block] throws or the
     * coroutine is cancelled. Not obtained within [timeout]: [ZkException.Timeout].
     */
    suspend fun <T> withLease(timeout: Duration = Duration.INFINITE, block: suspend (Lease) -> T): T {
        val lease = obtain(1, timeout)?.single()
            ?: throw ZkException.Timeout("no lease of semaphore $path within $timeout")
        val result = try {
            block(lease)
        } catch (e: Throwable) {
            withContext(NonCancellable) { runCatching { lease.release() } }
            throw e
        }
        withContext(NonCancellable) { lease.release() }
        return result
    }

    /** Every process's lease nodes on the server now (a waiter's included). */
    suspend fun leaseNodes(): List<String> = native { native.leaseNodes() }

    /** ACQUIRED (with the lease's token), RELEASED, SUSPENDED, RECONNECTED, LOST (with its reason) for this object's leases. */
    val events: Flow<LockEvent>
        get() = eventFlow(native::events) {
            LockEvent(LockEvent.Type.valueOf(it.name), it.fencingToken, it.reasonException())
        }

    /** Releases every lease this object holds. */
    suspend fun releaseAll() = native { native.releaseAll() }

    /** [releaseAll], blocking the thread. */
    override fun close() = native.releaseAllBlocking()

    override fun toString() = "Semaphore($path, maxLeases=$maxLeases, held=$held)"
}
