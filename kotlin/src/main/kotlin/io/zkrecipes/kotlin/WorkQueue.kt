package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeDelivery
import io.zkrecipes.kotlin.ffi.NativeWorkQueue
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.withContext
import kotlin.time.Duration

private val CONSUME = waitCall("work_queue.consume")

/**
 * A job claimed for this worker: [ack] when done, [nack] to give it back at its place. `use {}`
 * (or [close]) gives back a job that was neither, as does a delivery that becomes unreachable.
 */
class Delivery internal constructor(private val native: NativeDelivery) : AutoCloseable {
    /** The payload. */
    val data: ByteArray = native.data()

    /** The entry's node name, `entry-<priority>-<sequence>`. */
    val name: String = native.name()

    /** 0 (first) to 999. */
    val priority: Int = native.priority().toInt()

    /** How many times this job was delivered, this time included. */
    val deliveryCount: Int = native.deliveryCount().toInt()

    val isSettled: Boolean get() = native.isSettled()

    /** Deletes the job. [ZkException.SessionExpired] if the claim went with its session (delivered again). */
    suspend fun ack() = native { native.ack() }

    /** Gives the job back at its place in line. */
    suspend fun nack() = native { native.nack() }

    /** Gives the job back (in the background) unless it was acknowledged or given back already. */
    override fun close() = native.abandon()

    override fun toString() = "Delivery($name, delivery $deliveryCount, ${data.size} bytes)"
}

/**
 * At-least-once jobs in kazoo's `LockingQueue` layout, shared with Python, Node.js, Java and
 * kazoo: a worker takes a job, works on it and acknowledges it; a job whose worker dies, loses its
 * session or gives it back is delivered again. Lower priority (0-999) first, FIFO within one.
 *
 * [prefetch] jobs are claimed per transaction; a job delivered [maxDeliveries] times (`null`: no
 * limit) moves to [deadLetterPath].
 */
class WorkQueue(client: Client, private val path: String, prefetch: Int = 1, maxDeliveries: Int? = null) : AutoCloseable {
    private val native = native { NativeWorkQueue(client.native, path, prefetch.toLong(), maxDeliveries?.toLong()) }

    val maxPayload: Int get() = native.maxPayload().toInt()

    val deadLetterPath: String get() = native.deadLetterPath()

    /** Appends a job; returns its node path. */
    suspend fun offer(data: ByteArray, priority: Int = DEFAULT_PRIORITY): String =
        native { native.offer(data, priority.toLong()) }

    /** Appends every job in order: one transaction per batch under the server's packet limit. */
    suspend fun offerAll(items: List<ByteArray>, priority: Int = DEFAULT_PRIORITY): List<String> =
        native { native.offerAll(items, priority.toLong()) }

    /**
     * The next job claimed for this worker, or `null` once [timeout] passed (zero: a try).
     * Cancelling the coroutine gives back whatever it claimed.
     */
    suspend fun consume(timeout: Duration = Duration.INFINITE): Delivery? =
        waiting(CONSUME, { path }, { null }) {
            obtaining(NativeDelivery::close) { native.consume(timeout.toNativeMillis(), it) }?.let(::Delivery)
        }

    /**
     * Jobs as they come, until [timeout] passes without one. A job the collector neither
     * acknowledged nor gave back, or left by an exception or cancellation, goes back.
     */
    fun jobs(timeout: Duration = Duration.INFINITE): Flow<Delivery> = flow {
        while (true) {
            val job = consume(timeout) ?: break
            try {
                emit(job)
            } finally {
                if (!job.isSettled) withContext(NonCancellable) { runCatching { job.nack() } }
            }
        }
    }

    /** Jobs in the queue, claimed ones included (one request). */
    suspend fun size(): Int = native { native.size() }.toInt()

    /** Gives back prefetched jobs without blocking a thread; every later call is [ZkException.Closed]. */
    suspend fun closeAsync() = native { native.closeAsync() }

    /** [closeAsync], blocking the thread. Jobs in hand can still be settled. */
    override fun close() = native.closeBlocking()

    companion object {
        const val DEFAULT_PRIORITY = 100
    }
}
