package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeQueue
import io.zkrecipes.kotlin.ffi.NativeTaken
import io.zkrecipes.kotlin.ffi.NativeTakenMany
import kotlin.time.Duration

private val TAKE = waitCall("queue.take")

/**
 * Apache's `DistributedQueue`: FIFO, an item taken is deleted. An item taken for a coroutine
 * cancelled before it saw the item goes back at its place.
 */
class DistributedQueue(client: Client, private val path: String) : AutoCloseable {
    private val native = native { NativeQueue(client.native, path) }

    /** The largest item, in bytes, that [offer] accepts. */
    val maxPayload: Int get() = native.maxPayload().toInt()

    /** Appends; returns the item's node path. */
    suspend fun offer(data: ByteArray): String = native { native.offer(data) }

    /** The head without taking it; `null` when empty. */
    suspend fun peek(): ByteArray? = native { native.peek() }

    /** Takes the head; `null` when empty. */
    suspend fun poll(): ByteArray? = obtaining(NativeTaken::close) { native.poll(it) }?.let(::handOver)

    /** Waits as long as it takes for an item. */
    suspend fun take(): ByteArray = take(Duration.INFINITE)!!

    /** Waits up to [timeout] for an item; `null` if none came. */
    suspend fun take(timeout: Duration): ByteArray? = waiting(TAKE, { path }, { null }) {
        obtaining(NativeTaken::close) { native.take(timeout.toNativeMillis(), it) }?.let(::handOver)
    }

    /**
     * Takes up to [max] items (1 to 1000) from the head, in queue order, in one transaction (one
     * write for the batch); empty when the queue is. A batch taken for a cancelled coroutine goes
     * back. [ZkException.InvalidArgument] for a [max] out of range.
     */
    suspend fun pollMany(max: Int): List<ByteArray> =
        obtaining(NativeTakenMany::close) { native.pollMany(max.toLong(), it) }?.let(::handOverMany) ?: emptyList()

    /** Waits up to [timeout] for an item, then takes up to [max] as [pollMany] does; empty if none came. */
    suspend fun takeMany(max: Int, timeout: Duration = Duration.INFINITE): List<ByteArray> =
        waiting(TAKE, { path }, { null }) {
            obtaining(NativeTakenMany::close) { native.takeMany(max.toLong(), timeout.toNativeMillis(), it) }
                ?.let(::handOverMany) ?: emptyList()
        }

    /** Items in the queue (one request). */
    suspend fun size(): Int = native { native.size() }.toInt()

    /** Deletes this consumer's claim marker without blocking a thread; the queue stays usable. */
    suspend fun closeAsync() = native { native.closeAsync() }

    /** Deletes this consumer's claim marker; the queue stays usable. */
    override fun close() = native.closeBlocking()

    // Closing a taken item that was never handed over puts it back (see `obtaining`).
    private fun handOver(taken: NativeTaken): ByteArray = taken.use { it.data() }

    private fun handOverMany(taken: NativeTakenMany): List<ByteArray> = taken.use { it.data() }
}
